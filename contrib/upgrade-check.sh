#!/usr/bin/env bash
# By hand (not in CI: it builds an older release from this repository's
# history): shows that a node of an older release keeps working on a
# PostgreSQL schema this release migrated (README, "Upgrades").
#   1. the older release's `serve` sets up a fresh database and runs;
#   2. this release's `admin migrate` moves the schema on;
#   3. this release's `serve` starts beside it;
#   4. the older node restarts on the migrated schema, and uploads, reads,
#      serves and deletes a folder, while the new node sees what it did.
# Usage: contrib/upgrade-check.sh [REV]   (default: the previous release,
# 17673d7). Needs git history, PostgreSQL 15 (PGBIN), curl, python3; as root
# the cluster runs as the `postgres` user (initdb refuses root).
set -euo pipefail
rev=${1:-17673d7}
here=$(cd "$(dirname "$0")/.." && pwd)
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
work=$(mktemp -d /tmp/filestore-upgrade.XXXXXX)
chmod 755 "$work"
pids=
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -c "$*"; else sh -c "$*"; fi; }
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  as_pg "$PGBIN/pg_ctl -D $work/pg/data -m immediate stop" >/dev/null 2>&1 || true
  git -C "$here" worktree remove --force "$work/old" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== building $rev and this checkout (debug, one target dir)"
git -C "$here" worktree add --detach "$work/old" "$rev" -q
(cd "$work/old" && CARGO_TARGET_DIR="$here/target" cargo build -q --bin filestore)
cp "$here/target/debug/filestore" "$work/old-filestore"
(cd "$here" && cargo build -q --bin filestore)
old="$work/old-filestore" new="$here/target/debug/filestore"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/pg" && { [ "$(id -u)" != 0 ] || chown postgres "$work/pg"; }
as_pg "$PGBIN/initdb -D $work/pg/data -A trust -U postgres" >/dev/null
as_pg "$PGBIN/pg_ctl -D $work/pg/data -l $work/pg/log -w -o '-p $port -k /tmp' start" >/dev/null
export FILESTORE_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres"
sql() { psql -h 127.0.0.1 -p "$port" -U postgres -tAc "$1" postgres; }

serve() { # BIN NAME -> pid in $started, base URL in $base
  local p
  p=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$1" serve --data-dir "$work/data-$2" --listen "127.0.0.1:$p" > "$work/$2.log" 2>&1 &
  started=$! base="http://127.0.0.1:$p"
  pids="$pids $started"
  for _ in $(seq 100); do curl -fs "$base/v1/health" >/dev/null && return 0; sleep 0.1; done
  echo "FAIL: $2 did not start:"; tail -3 "$work/$2.log"; exit 1
}

serve "$old" old-first; old_pid=$started old_base=$base
key=$(grep -m 1 -o 'sk_[0-9a-f]*' "$work/old-first.log")
echo "ok: the $rev node set up schema $(sql 'SELECT max(version) FROM schema_version')"
"$new" admin migrate --json
echo "ok: this release migrated it to $(sql 'SELECT max(version) FROM schema_version') (readable from $(sql 'SELECT readable_from FROM schema_compat'))"
serve "$new" new; new_base=$base
kill "$old_pid"; wait "$old_pid" 2>/dev/null || true
serve "$old" old-again; old_base=$base
echo "ok: the $rev node restarted on the migrated schema"
echo hello > "$work/hello.txt"
rec=$(curl -fsS -H "Authorization: Bearer $key" -F "file=@$work/hello.txt" -F folder=rel "$old_base/v1/upload")
id=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$rec")
url=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["url"])' "$rec")
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code -H "Authorization: Bearer $key" "$new_base/v1/files/$id")" = 200 ] && echo "ok: its upload is read by the new node"
[ "$(code "$url")" = 200 ] && echo "ok: and served by its CDN"
deleted=$(curl -fsS -X DELETE -H "Authorization: Bearer $key" "$old_base/v1/folders?folder=rel")
echo "ok: its folder delete: $deleted"
[ "$(code -H "Authorization: Bearer $key" "$new_base/v1/files/$id")" = 404 ] && echo "ok: gone for the new node too"
echo "every step passed"
