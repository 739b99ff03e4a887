#!/bin/sh
# psql's other table styles (\pset border 0 and 2, linestyle unicode, \pset null, numericlocale) of the
# pg_stat_io-16.csv rows, three results each (no \watch: times from --interval and --start), into the
# current directory. Same throw-away PostgreSQL 15 as capture.sh; see README.md.
set -eu
. "$(dirname "$0")/throwaway-pg.sh"
psql -q <<SQL
CREATE TABLE io16 (ord serial, sample_time timestamptz, cluster text, block_size int, server_version_num int,
  backend_type text, object text, context text, reads bigint, read_time float8, writes bigint, write_time float8,
  writebacks bigint, writeback_time float8, extends bigint, extend_time float8, op_bytes bigint, hits bigint,
  evictions bigint, reuses bigint, fsyncs bigint, fsync_time float8, stats_reset timestamptz);
\copy io16 (sample_time, cluster, block_size, server_version_num, backend_type, object, context, reads, read_time, writes, write_time, writebacks, writeback_time, extends, extend_time, op_bytes, hits, evictions, reuses, fsyncs, fsync_time, stats_reset) FROM PROGRAM 'grep -v ^sample_time $IO/pg_stat_io-16.csv' CSV
CREATE VIEW io16_snaps AS SELECT dense_rank() OVER (ORDER BY sample_time) AS snapno, * FROM io16;
SQL
IO16='backend_type, object, context, reads, read_time, writes, write_time, writebacks, writeback_time, extends, extend_time, op_bytes, hits, evictions, reuses, fsyncs, fsync_time, stats_reset'
three() { for i in 1 2 3; do echo "SELECT $IO16 FROM io16_snaps WHERE snapno = $i ORDER BY ord;"; done; }
style() {   # style OUTFILE \pset-commands...
    out=$1; shift
    { for c in "$@"; do echo "$c"; done; three; } | psql -q > "$OUT/$out"
}
style pg_stat_io-16-border0.txt '\pset border 0'
style pg_stat_io-16-border2.txt '\pset border 2'
style pg_stat_io-16-unicode.txt '\pset border 2' '\pset linestyle unicode'
style pg_stat_io-16-x-border2.txt '\x' '\pset border 2'
style pg_stat_io-16-null.txt "\\pset null '(null)'"
style pg_stat_io-16-numericlocale.txt '\pset numericlocale on'
