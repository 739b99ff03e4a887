#!/bin/sh
# psql's other table styles (\pset border 0 and 2, linestyle unicode, \pset null, numericlocale) of the
# pg_stat_io-16.csv rows, three results each (no \watch: times from --interval and --start), into the
# current directory. Same throw-away PostgreSQL 15 as capture.sh; see README.md.
set -eu
OUT=$(pwd)
IO=$(cd "$(dirname "$0")/../pg_stat_io" && pwd)
B=/usr/lib/postgresql/15/bin
D=$(mktemp -d /var/tmp/dbtier-psqlcap-XXXXXX)
cleanup() {
    runuser -u postgres -- $B/pg_ctl -D "$D/pgdata" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$D"
}
trap cleanup EXIT INT TERM
chmod 755 "$D"; chown postgres "$D"
runuser -u postgres -- $B/initdb -D "$D/pgdata" -U dbtier --auth=trust -E UTF8 --locale=C --no-sync >/dev/null
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf "listen_addresses = ''\nport = $PORT\nunix_socket_directories = '$D'\n" >> "$D/pgdata/postgresql.auto.conf"
runuser -u postgres -- $B/pg_ctl -D "$D/pgdata" -l "$D/server.log" -w start >/dev/null
export PGHOST="$D" PGPORT="$PORT" PGUSER=dbtier PGDATABASE=postgres PSQLRC=/dev/null
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
