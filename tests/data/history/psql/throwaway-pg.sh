# Sourced by capture.sh and capture-styles.sh: a throw-away PostgreSQL 15 as the unprivileged `postgres` user,
# in a directory under /var/tmp that is removed on exit, on a free loopback port and a socket there; extra
# server settings in EXTRA_CONF (lines of postgresql.conf). Leaves PG* set for psql and $D, $B, $OUT, $IO.
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
printf "listen_addresses = ''\nport = $PORT\nunix_socket_directories = '$D'\n${EXTRA_CONF:-}" >> "$D/pgdata/postgresql.auto.conf"
runuser -u postgres -- $B/pg_ctl -D "$D/pgdata" -l "$D/server.log" -w start >/dev/null
export PGHOST="$D" PGPORT="$PORT" PGUSER=dbtier PGDATABASE=postgres PSQLRC=/dev/null
