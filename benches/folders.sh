#!/usr/bin/env bash
# The folder scale goals of issue 22, measured by hand (not in CI) on a
# release build, on SQLite and on PostgreSQL (docs/api.md, "List folders"
# and "Folder delete"):
#  (a) GET /v1/folders p50/p99/max with FILES files (default 1,000,000) in
#      one account, at depth 0 (the root), 1 and 2: the files sit in
#      FANOUT^3 folders dNN/eNN/gNN (FANOUT default 100: every level has
#      100 subfolders, so each request answers a full default page of 100
#      names, 101 seeks of the loose index scan). SAMPLES requests per depth
#      (default 500), one at a time over a keep-alive connection, each at a
#      random parent of that depth, after 50 warm-up requests.
#  (b) DELETE /v1/folders?folder=big of DELETE_FILES files (default
#      100,000; under big/0..big/99) in the same account (so the account
#      holds FILES + DELETE_FILES files; `big` is one more root folder in
#      (a)), with a webhook subscribed to file.deleted (one event per file
#      is queued in the same transaction): the answer's wall time.
# Rows are inserted straight with SQL (an INSERT ... SELECT over a
# generated series), as uploads of non-inline files would leave them.
# Usage: benches/folders.sh [sqlite|postgres|both]   (default both)
# Env: FILES, FANOUT, DELETE_FILES, SAMPLES; WEBHOOK=0 for an account with
# no webhook (no file.deleted event queued); PGBIN (default
# /usr/lib/postgresql/15/bin), PGPORT (default 55463) for the throwaway
# PostgreSQL cluster (as root it runs as the `postgres` user, like
# contrib/pg-test.sh). Needs python3, sqlite3, psql, curl.
set -euo pipefail
which=${1:-both}
files=${FILES:-1000000}
fanout=${FANOUT:-100}
del_files=${DELETE_FILES:-100000}
samples=${SAMPLES:-500}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${FILESTORE_BIN:-$here/target/release/filestore}
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 1; }
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
pgport=${PGPORT:-55463}

work=$(mktemp -d /tmp/filestore-folders.XXXXXX)
srv_pid= pg_dir=
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -c "$*"; else sh -c "$*"; fi; }
cleanup() {
  [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
  [ -n "$pg_dir" ] && as_pg "$PGBIN/pg_ctl -D $pg_dir/data -m immediate stop" >/dev/null 2>&1
  rm -rf "$work" ${pg_dir:+"$pg_dir"}
}
trap cleanup EXIT

cat > "$work/filestore.toml" <<EOF
[plans.bench]
max_file_size = "1GB"
storage = "100TB"
uploads = 100000000
rate_limit = 100000000
EOF

# The columns every seeded row fills; the id is f_ + 44 hex digits.
columns="id, account_id, name, folder, size, content_type, private, sha256, blob_key, created_at, expires_at, inline, metadata"

seed_sql() { # backend account -> SQL seeding FILES files in dNN/eNN/gNN
  local f=$fanout
  if [ "$1" = sqlite ]; then
    cat <<EOF
PRAGMA synchronous = OFF;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $files - 1)
INSERT INTO files ($columns)
SELECT printf('f_%044x', i), '$2', 'n' || i || '.bin',
  printf('d%02d/e%02d/g%02d', i % $f, (i / $f) % $f, (i / ($f * $f)) % $f),
  10, 'application/octet-stream', 0, '00', '$2/b' || i, 1000 + i, NULL, 0, '{}' FROM n;
COMMIT;
EOF
  else
    cat <<EOF
INSERT INTO files ($columns)
SELECT 'f_' || lpad(to_hex(i), 44, '0'), '$2', 'n' || i || '.bin',
  format('d%s/e%s/g%s', lpad((i % $f)::text, 2, '0'), lpad(((i / $f) % $f)::text, 2, '0'),
         lpad(((i / ($f * $f)) % $f)::text, 2, '0')),
  10, 'application/octet-stream', false, '00', '$2/b' || i, 1000 + i, NULL, false, '{}'
FROM generate_series(0, $files - 1) i;
EOF
  fi
}

delete_sql() { # backend account -> SQL seeding DELETE_FILES files under big/
  if [ "$1" = sqlite ]; then
    cat <<EOF
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $del_files - 1)
INSERT INTO files ($columns)
SELECT printf('f_%044x', 100000000 + i), '$2', 'n' || i, 'big/' || (i % 100), 10,
  'text/plain', 0, '00', '$2/big' || i, 1000 + i, NULL, 0, '{}' FROM n;
COMMIT;
EOF
  else
    cat <<EOF
INSERT INTO files ($columns)
SELECT 'f_' || lpad(to_hex(100000000 + i), 44, '0'), '$2', 'n' || i, 'big/' || (i % 100), 10,
  'text/plain', false, '00', '$2/big' || i, 1000 + i, NULL, false, '{}'
FROM generate_series(0, $del_files - 1) i;
ANALYZE;
EOF
  fi
}

measure() { # backend
  local backend=$1 data="$work/data-$1" sql
  mkdir -m 700 -p "$data"
  if [ "$backend" = postgres ]; then
    pg_dir=$(mktemp -d /tmp/filestore-folders-pg.XXXXXX)
    [ "$(id -u)" = 0 ] && chown postgres "$pg_dir"
    as_pg "$PGBIN/initdb -D $pg_dir/data -A trust -U postgres" >/dev/null
    as_pg "$PGBIN/pg_ctl -D $pg_dir/data -l $pg_dir/log -w -o '-p $pgport -k /tmp -c fsync=off' start" >/dev/null
    export FILESTORE_DATABASE_URL="postgres://postgres@127.0.0.1:$pgport/postgres"
    sql() { psql -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pgport" -U postgres postgres; }
  else
    unset FILESTORE_DATABASE_URL
    sql() { sqlite3 "$data/filestore.db"; }
  fi
  adm() { "$bin" admin "$@" --config "$work/filestore.toml" --data-dir "$data" --json; }
  local acc key
  acc=$(adm account create --name folders --plan bench | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["id"])')
  key=$(adm key create --account "$acc" --kind secret | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["key"])')
  if [ "${WEBHOOK:-1}" = 1 ]; then
    adm webhook create --account "$acc" --url https://hooks.example.invalid/filestore --event file.deleted >/dev/null
  fi
  local t0
  t0=$(date +%s)
  seed_sql "$backend" "$acc" | sql
  delete_sql "$backend" "$acc" | sql
  echo "== $backend: seeded $files + $del_files files in $(( $(date +%s) - t0 )) s"
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$bin" serve --config "$work/filestore.toml" --data-dir "$data" --listen "127.0.0.1:$port" \
    2> "$work/serve-$backend.log" &
  srv_pid=$!
  local base="http://127.0.0.1:$port"
  for _ in $(seq 300); do curl -fs "$base/v1/health" >/dev/null && break; sleep 0.2; done
  python3 - "$port" "$key" "$fanout" "$samples" <<'PY'
import http.client, json, random, sys, time
port, key, fanout, samples = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
conn = http.client.HTTPConnection("127.0.0.1", port)
rng = random.Random(22)
def get(path):
    t = time.perf_counter()
    conn.request("GET", path, headers={"Authorization": "Bearer " + key})
    r = conn.getresponse()
    body = r.read()
    dt = (time.perf_counter() - t) * 1000
    if r.status != 200:
        sys.exit("GET %s: %d %s" % (path, r.status, body[:200]))
    return dt, json.loads(body)
def parent(depth):
    parts = ["d%02d" % rng.randrange(fanout), "e%02d" % rng.randrange(fanout)][:depth]
    return "/".join(parts)
for depth in (0, 1, 2):
    for _ in range(50):
        get("/v1/folders?parent=" + parent(depth))
    ms, n = [], 0
    for _ in range(samples):
        dt, body = get("/v1/folders?parent=" + parent(depth))
        ms.append(dt)
        n = len(body["folders"])
    ms.sort()
    p = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]
    print("GET /v1/folders depth %d (%d names a page): n=%d p50 %.2f ms  p99 %.2f ms  max %.2f ms"
          % (depth, n, len(ms), p(0.5), p(0.99), ms[-1]))
PY
  local took
  took=$(curl -fsS -o "$work/delete.json" -w '%{time_total}' -X DELETE \
    -H "Authorization: Bearer $key" "$base/v1/folders?folder=big")
  echo "DELETE /v1/folders of $del_files files: ${took} s, $(cat "$work/delete.json")"
  kill "$srv_pid"; wait "$srv_pid" 2>/dev/null || true; srv_pid=
}

case $which in
  sqlite|postgres) measure "$which" ;;
  both) measure sqlite; measure postgres ;;
  *) echo "usage: benches/folders.sh [sqlite|postgres|both]" >&2; exit 2 ;;
esac
