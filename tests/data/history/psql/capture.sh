#!/bin/sh
# Captures psql's own output of pg_stat_database (real, under pgbench) and of pg_stat_io-shaped rows
# (PostgreSQL 15 has no pg_stat_io: rows of ../pg_stat_io/*.csv loaded into a table) into the current
# directory. Run as root on a machine with PostgreSQL 15 (Debian's postgresql-15): the server runs as the
# unprivileged `postgres` user in a throw-away directory under /var/tmp, removed on exit. See README.md.
set -eu
EXTRA_CONF="shared_buffers = '16MB'\ntrack_io_timing = on\n"
. "$(dirname "$0")/throwaway-pg.sh"

# Client locales for the localised captures (glibc's locale sources, compiled into the throw-away dir).
mkdir "$D/loc"
for l in fr_FR de_DE en_US; do localedef -i $l -f UTF-8 "$D/loc/$l.UTF-8" >/dev/null 2>&1 || true; done

# \watch of PostgreSQL 15 has no count: watch_snap(N) numbers the executions 1..N (from the sequence
# watch_n of the session's search_path), then fails, which ends \watch.
psql -q <<'SQL'
CREATE FUNCTION watch_snap(n int) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE i bigint := nextval('watch_n');
BEGIN
  IF i > n THEN RAISE EXCEPTION 'watch done'; END IF;
  RETURN i;
END $$;
SQL
watch() {   # watch OUTFILE SCHEMA N SECONDS QUERY [psql options...]: QUERY ... \watch SECONDS, N times
    out=$1; schema=$2; n=$3; every=$4; q=$5; shift 5
    psql -q -c "CREATE SCHEMA $schema; CREATE SEQUENCE $schema.watch_n"
    printf '%s\n' "SET search_path = $schema, public;" "$(printf "$q" "(SELECT watch_snap($n))") \\watch $every" |
        psql -q "$@" > "$OUT/$out" 2>/dev/null || true
}

# -- pg_stat_io-shaped rows: ../pg_stat_io/*.csv in tables of the views' column types, one snapshot (one
# sample_time) a result; 18 gains a fourth snapshot as after pg_stat_reset_shared('io') at 10:02:30 --------
psql -q <<SQL
CREATE TABLE io16 (ord serial, sample_time timestamptz, cluster text, block_size int, server_version_num int,
  backend_type text, object text, context text, reads bigint, read_time float8, writes bigint, write_time float8,
  writebacks bigint, writeback_time float8, extends bigint, extend_time float8, op_bytes bigint, hits bigint,
  evictions bigint, reuses bigint, fsyncs bigint, fsync_time float8, stats_reset timestamptz);
\copy io16 (sample_time, cluster, block_size, server_version_num, backend_type, object, context, reads, read_time, writes, write_time, writebacks, writeback_time, extends, extend_time, op_bytes, hits, evictions, reuses, fsyncs, fsync_time, stats_reset) FROM PROGRAM 'grep -v ^sample_time $IO/pg_stat_io-16.csv' CSV
CREATE TABLE io18 (ord serial, sample_time timestamptz, cluster text, block_size int, server_version_num int,
  backend_type text, object text, context text, reads bigint, read_bytes numeric, read_time float8, writes bigint,
  write_bytes numeric, write_time float8, writebacks bigint, writeback_time float8, extends bigint,
  extend_bytes numeric, extend_time float8, hits bigint, evictions bigint, reuses bigint, fsyncs bigint,
  fsync_time float8, stats_reset timestamptz);
\copy io18 (sample_time, cluster, block_size, server_version_num, backend_type, object, context, reads, read_bytes, read_time, writes, write_bytes, write_time, writebacks, writeback_time, extends, extend_bytes, extend_time, hits, evictions, reuses, fsyncs, fsync_time, stats_reset) FROM PROGRAM 'grep -v ^sample_time $IO/pg_stat_io-18.csv' CSV
INSERT INTO io18 (sample_time, cluster, block_size, server_version_num, backend_type, object, context, reads,
  read_bytes, read_time, writes, write_bytes, write_time, writebacks, writeback_time, extends, extend_bytes,
  extend_time, hits, evictions, reuses, fsyncs, fsync_time, stats_reset)
SELECT sample_time + interval '3 minutes', cluster, block_size, server_version_num, backend_type, object, context,
  reads / 10, round(read_bytes / 10), read_time / 10, writes / 10, round(write_bytes / 10), write_time / 10, writebacks / 10,
  writeback_time / 10, extends / 10, round(extend_bytes / 10), extend_time / 10, hits / 10, evictions / 10, reuses / 10,
  fsyncs / 10, fsync_time / 10, timestamptz '2026-11-20 10:02:30+00'
FROM io18 WHERE sample_time = (SELECT min(sample_time) FROM io18) ORDER BY ord;
CREATE VIEW io16_snaps AS SELECT dense_rank() OVER (ORDER BY sample_time) AS snapno, * FROM io16;
CREATE VIEW io18_snaps AS SELECT dense_rank() OVER (ORDER BY sample_time) AS snapno, * FROM io18;
SQL
IO16='backend_type, object, context, reads, read_time, writes, write_time, writebacks, writeback_time, extends, extend_time, op_bytes, hits, evictions, reuses, fsyncs, fsync_time, stats_reset'
IO18='backend_type, object, context, reads, read_bytes, read_time, writes, write_bytes, write_time, writebacks, writeback_time, extends, extend_bytes, extend_time, hits, evictions, reuses, fsyncs, fsync_time, stats_reset'
watch pg_stat_io-16-watch.txt w16 3 60 "SELECT $IO16 FROM io16_snaps WHERE snapno = %s ORDER BY ord" &
watch pg_stat_io-18-x-watch.txt w18 4 60 "SELECT $IO18 FROM io18_snaps WHERE snapno = %s ORDER BY ord" -x &
for i in 1 2 3; do echo "SELECT $IO16 FROM io16_snaps WHERE snapno = $i ORDER BY ord;"; done |
    psql -A -F "$(printf '\t')" > pg_stat_io-17-unaligned-tab.txt
for i in 1 2 3 4; do echo "SELECT $IO18 FROM io18_snaps WHERE snapno = $i ORDER BY ord;"; done |
    psql --csv > pg_stat_io-18.csv

# -- pg_stat_database, real, while pgbench runs (2 clients, 100 transactions/s); pg_stat_reset() on bench
# 35 s in (its counters go back to 0 and its stats_reset moves) -------------------------------------------------
createdb bench
pgbench -i -q -s 5 bench >/dev/null 2>&1
six() { for i in 1 2 3 4 5 6; do printf '%s;\n' "$1"; [ $i = 6 ] || printf '\\! sleep 10\n'; done; }
pgbench -c 2 -R 100 -T 75 bench >/dev/null 2>&1 &
sleep 2
six 'SELECT * FROM pg_stat_database' | psql > database-aligned.txt &
six 'SELECT now(), * FROM pg_stat_database' | psql > database-aligned-now.txt &
six 'SELECT now(), * FROM pg_stat_database' | psql -A > database-unaligned-now.txt &
six 'SELECT now(), * FROM pg_stat_database' | PGOPTIONS='-c DateStyle=SQL,DMY -c TimeZone=Europe/Paris' \
    psql -A -F ';' > database-unaligned-semicolon-sql-dmy.txt &
six 'SELECT now(), * FROM pg_stat_database' | psql --csv > database-now.csv &
ALL='SELECT * FROM pg_stat_database WHERE %s > 0'
watch database-watch.txt d1 6 10 "$ALL" &
watch database-watch-x.txt d2 6 10 "$ALL" -x &
watch database-watch.csv d3 6 10 "$ALL" --csv &
watch database-watch-unaligned-minimal.txt d4 6 10 \
    'SELECT datname, blks_read, blk_read_time FROM pg_stat_database WHERE %s > 0' -A &
LANGUAGE=fr LOCPATH="$D/loc" LC_ALL=fr_FR.UTF-8 TZ=Europe/Paris watch database-watch-fr.txt d5 6 10 "$ALL" &
LANGUAGE=de LOCPATH="$D/loc" LC_ALL=de_DE.UTF-8 TZ=Europe/Berlin watch database-watch-de.txt d6 6 10 "$ALL" &
LOCPATH="$D/loc" LC_ALL=en_US.UTF-8 TZ=America/New_York \
    watch database-watch-en_US-x-unaligned.txt d7 6 10 "$ALL" -A -x &
(sleep 35; psql -q -d bench -c 'SELECT pg_stat_reset()' >/dev/null) &
psql -c 'SELECT * FROM pg_stat_database' > database-one.txt
wait
