-- dbtier collector: PostgreSQL I/O statistics, for `dbtier history import --source postgres`.
--
-- One snapshot of the cumulative statistics views per run, each appended (with its header) to
-- a CSV file in the current directory:
--
--   pg_stat_database.csv   pg_stat_database (blks_read, blk_read_time, temp_bytes, ...) + database size
--   pg_statio_tables.csv   pg_statio_all_tables summed over the connected database's tables
--                          (heap/index/toast blocks read: which part of the data is read from disk)
--   pg_stat_wal.csv        pg_stat_wal (PostgreSQL 14 and later: WAL writes, bytes, write time)
--   pg_stat_io.csv         pg_stat_io (PostgreSQL 16 and later: reads/writes/extends/fsyncs per backend type,
--                          object and context; 16/17 and 18 column sets both read, 18's WAL rows too)
--   pg_stat_bgwriter.csv   pg_stat_bgwriter (PostgreSQL 15 and earlier: data pages written)
--
-- Every row carries sample_time (one now() for the whole snapshot: it runs in one transaction),
-- cluster (cluster_name, else host:port), so a file set from several servers stays apart,
-- block_size and server_version_num.
-- Needs a role with pg_monitor (or a superuser). Run it every 5 minutes with psql:
--
--   while :; do
--     psql -X -q -v ON_ERROR_STOP=1 -d "host=db01 dbname=postgres user=monitor" -f postgres_stats.sql
--     sleep 300
--   done
--
-- then: dbtier history import --source postgres pg_stat_*.csv pg_statio_tables.csv
-- (The header repeats at every snapshot; dbtier skips the repeats.) Turn on track_io_timing
-- (and track_wal_io_timing) to get latencies.

\set QUIET on
\pset pager off
SELECT current_setting('server_version_num')::int >= 140000 AS has_wal,
       current_setting('server_version_num')::int >= 160000 AS has_io \gset
BEGIN ISOLATION LEVEL REPEATABLE READ;

CREATE TEMP VIEW dbtier_snap AS
SELECT now() AS sample_time,
       coalesce(nullif(current_setting('cluster_name'), ''),
                coalesce(host(inet_server_addr()), 'local') || ':' || current_setting('port')) AS cluster,
       current_setting('block_size')::int AS block_size,
       current_setting('server_version_num')::int AS server_version_num;

\copy (SELECT s.*, d.*, CASE WHEN d.datid <> 0 AND has_database_privilege(d.datid, 'CONNECT') THEN pg_database_size(d.datid) END AS size_bytes FROM dbtier_snap s, pg_stat_database d) TO PROGRAM 'cat >> pg_stat_database.csv' WITH (FORMAT csv, HEADER)

\copy (SELECT s.*, current_database() AS datname, sum(heap_blks_read) AS heap_blks_read, sum(heap_blks_hit) AS heap_blks_hit, sum(idx_blks_read) AS idx_blks_read, sum(idx_blks_hit) AS idx_blks_hit, sum(toast_blks_read) AS toast_blks_read, sum(toast_blks_hit) AS toast_blks_hit, sum(tidx_blks_read) AS tidx_blks_read, sum(tidx_blks_hit) AS tidx_blks_hit FROM dbtier_snap s, pg_statio_all_tables GROUP BY s.sample_time, s.cluster, s.block_size, s.server_version_num) TO PROGRAM 'cat >> pg_statio_tables.csv' WITH (FORMAT csv, HEADER)

\if :has_wal
\copy (SELECT s.*, w.* FROM dbtier_snap s, pg_stat_wal w) TO PROGRAM 'cat >> pg_stat_wal.csv' WITH (FORMAT csv, HEADER)
\endif

\if :has_io
\copy (SELECT s.*, i.* FROM dbtier_snap s, pg_stat_io i) TO PROGRAM 'cat >> pg_stat_io.csv' WITH (FORMAT csv, HEADER)
\else
\copy (SELECT s.*, b.* FROM dbtier_snap s, pg_stat_bgwriter b) TO PROGRAM 'cat >> pg_stat_bgwriter.csv' WITH (FORMAT csv, HEADER)
\endif

COMMIT;
