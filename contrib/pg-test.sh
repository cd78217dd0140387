#!/bin/sh
# Runs the integration suite with its metadata on a throwaway PostgreSQL:
#   contrib/pg-test.sh [cargo test args...]
# Needs PostgreSQL's server binaries (PGBIN, default /usr/lib/postgresql/15/bin).
# initdb refuses root: as root the cluster runs as the `postgres` user.
set -eu
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PORT=${PGPORT:-55433}
DIR=$(mktemp -d /tmp/filestore-pg.XXXXXX)
as_pg() {
    if [ "$(id -u)" = 0 ]; then su postgres -c "$*"; else sh -c "$*"; fi
}
[ "$(id -u)" = 0 ] && chown postgres "$DIR"
as_pg "$PGBIN/initdb -D $DIR/data -A trust -U postgres" >/dev/null
as_pg "$PGBIN/pg_ctl -D $DIR/data -l $DIR/log -w -o '-p $PORT -k /tmp -c fsync=off -c max_connections=500' start" >/dev/null
trap 'as_pg "$PGBIN/pg_ctl -D $DIR/data -m immediate stop" >/dev/null; rm -rf "$DIR"' EXIT
FILESTORE_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$PORT/postgres" cargo test --test it "$@"
