#!/usr/bin/env bash
# Backup and restore figures (issue 47, CONTRACT §20), measured by hand (not
# in CI) on a release build:
#  - FILES small files (default 100,000 of SIZE bytes, default 4096: inline
#    in the database, as uploads of small files store them), each of other
#    bytes, uploaded through the API by CONNS clients at once (default 16)
#    to one `serve` on SQLite;
#  - `admin backup REPO` twice while that `serve` runs: the first copies
#    every blob, the second (nothing new) only the metadata;
#  - `admin restore REPO` into a fresh data dir (SQLite), then into an empty
#    PostgreSQL database (a throwaway cluster, fsync on, like
#    contrib/pg-test.sh's).
# Prints for each step its wall time (the process, start to exit), files/s
# and MB/s (of the snapshot's files and bytes; MB = 10^6 bytes).
# Usage: benches/backup.sh        Env: FILES, SIZE, CONNS, PGBIN,
#   BENCH_NO_BUILD=1 (use target/release/filestore as it is), FILESTORE_BIN.
# Needs python3, curl and PostgreSQL's server binaries (PGBIN, default
# /usr/lib/postgresql/15/bin). Everything it starts is stopped on exit; its
# work dir is removed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
FILES=${FILES:-100000}
SIZE=${SIZE:-4096}
CONNS=${CONNS:-16}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
for t in curl python3; do
  command -v "$t" >/dev/null || { echo "backup.sh: needs $t" >&2; exit 1; }
done
[ -x "$PGBIN/initdb" ] || { echo "backup.sh: no PostgreSQL server binaries in $PGBIN (set PGBIN)" >&2; exit 1; }
if [ -z "${FILESTORE_BIN:-}" ] && [ "${BENCH_NO_BUILD:-0}" != 1 ]; then
  (cd "$here" && cargo build --release --bin filestore)
fi
bin=${FILESTORE_BIN:-$here/target/release/filestore}
[ -x "$bin" ] || { echo "backup.sh: no $bin" >&2; exit 1; }

log() { printf '[backup %s] %s\n' "$(date +%T)" "$*" >&2; }
WORK=$(mktemp -d /tmp/filestore-backup-bench.XXXXXX)
SERVE= PG_UP=0
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -c "$*"; else sh -c "$*"; fi; }
cleanup() {
  [ -n "$SERVE" ] && { kill "$SERVE" 2>/dev/null; wait "$SERVE" 2>/dev/null || true; }
  [ "$PG_UP" = 1 ] && as_pg "$PGBIN/pg_ctl -D $WORK/pg/data -m immediate stop" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
now() { date +%s.%N; }
json_field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

# A plan without limits that would refuse the seeding.
cat >"$WORK/config.toml" <<'EOF'
[server]
default_plan = "bench"
[plans.bench]
max_file_size = 100_000_000
storage = 1_000_000_000_000
bandwidth = 1_000_000_000_000_000
uploads = 100_000_000
rate_limit = 100_000_000
rate_window = "1m"
concurrent_uploads = 10_000
open_uploads = 10_000
EOF
DATA="$WORK/data" REPO="$WORK/repo"
PORT=$(free_port)
env -u FILESTORE_DATABASE_URL -u FILESTORE_CONFIG RUST_LOG=warn \
  "$bin" serve --config "$WORK/config.toml" --data-dir "$DATA" --listen "127.0.0.1:$PORT" \
  >"$WORK/serve.log" 2>&1 </dev/null &
SERVE=$!
for _ in $(seq 300); do
  curl -fs -o /dev/null "http://127.0.0.1:$PORT/v1/health" && break
  kill -0 "$SERVE" 2>/dev/null || { echo "serve exited:" >&2; tail -5 "$WORK/serve.log" >&2; exit 1; }
  sleep 0.1
done
adm() { env -u FILESTORE_DATABASE_URL -u FILESTORE_CONFIG "$bin" admin "$@" --json --config "$WORK/config.toml"; }
# An account on the bench plan (the bootstrap one's plan has a rate limit).
ACC=$(adm account create --name bench --data-dir "$DATA" | json_field id)
KEY=$(adm key create --account "$ACC" --kind secret --data-dir "$DATA" | json_field key)

log "seeding $FILES files of $SIZE bytes through the API, $CONNS at once"
python3 - "$PORT" "$KEY" "$FILES" "$SIZE" "$CONNS" <<'PY'
import http.client, os, sys, threading, time
port, key, files, size, conns = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
boundary = "----filestorebackupbench7MA4YWxk"
head = ("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.bin\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n" % boundary).encode()
tail = ("\r\n--%s--\r\n" % boundary).encode()
lock, state = threading.Lock(), {"next": 0, "failed": 0}
def worker():
    c = http.client.HTTPConnection("127.0.0.1", int(port))
    while True:
        with lock:
            i = state["next"]
            if i >= files:
                return
            state["next"] = i + 1
        body = head + os.urandom(size) + tail
        for attempt in range(5):
            try:
                c.request("POST", "/v1/upload", body, {
                    "Authorization": "Bearer " + key,
                    "Content-Type": "multipart/form-data; boundary=" + boundary})
                r = c.getresponse()
                answer = r.read()
                if r.status in (200, 201):
                    break
                with lock:
                    if not state.get("said"):
                        state["said"] = 1
                        sys.stderr.write("upload: %d %s\n" % (r.status, answer[:300]))
            except (OSError, http.client.HTTPException):
                c = http.client.HTTPConnection("127.0.0.1", int(port))
        else:
            with lock:
                state["failed"] += 1
t = time.time()
threads = [threading.Thread(target=worker) for _ in range(conns)]
for th in threads: th.start()
for th in threads: th.join()
dt = time.time() - t
if state["failed"]:
    sys.exit("%d uploads failed" % state["failed"])
sys.stderr.write("[backup] seeded %d files in %.1f s (%.0f uploads/s)\n" % (files, dt, files / dt))
PY

ROWS=()
# step NAME CMD...: runs CMD (an admin command printing one JSON record),
# timed; appends a row of the table.
step() {
  local name=$1 t0 t1 out
  shift
  log "$name"
  t0=$(now)
  out=$("$@")
  t1=$(now)
  ROWS+=("$(python3 - "$name" "$t0" "$t1" "$out" <<'PY'
import json, sys
name, t0, t1, rec = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), json.loads(sys.argv[4])
wall = t1 - t0
extra = ""
if "new_blobs" in rec:
    extra = "new blobs %d (%.1f MB)" % (rec["new_blobs"], rec["new_bytes"] / 1e6)
print("%-30s %8d %9.1f %9.2f %10.0f %8.2f  %s" % (
    name, rec["files"], rec["bytes"] / 1e6, wall, rec["files"] / wall, rec["bytes"] / 1e6 / wall, extra))
PY
)")
}
step "backup 1 (while serving)" adm backup "$REPO" --data-dir "$DATA"
step "backup 2 (nothing new)" adm backup "$REPO" --data-dir "$DATA"
kill "$SERVE"; wait "$SERVE" 2>/dev/null || true; SERVE=
step "restore into SQLite" adm restore "$REPO" --data-dir "$WORK/restored-sqlite"

PG_PORT=$(free_port)
mkdir -p "$WORK/pg"
[ "$(id -u)" = 0 ] && chown postgres "$WORK/pg"
chmod 755 "$WORK"
as_pg "$PGBIN/initdb -D $WORK/pg/data -A trust -U postgres" >/dev/null
as_pg "$PGBIN/pg_ctl -D $WORK/pg/data -l $WORK/pg/log -w -o '-p $PG_PORT -k /tmp' start" >/dev/null
PG_UP=1
step "restore into PostgreSQL" adm restore "$REPO" --data-dir "$WORK/restored-pg" \
  --database "postgres://postgres@127.0.0.1:$PG_PORT/postgres"

printf '\n%-30s %8s %9s %9s %10s %8s\n' step files MB seconds files/s MB/s
for r in "${ROWS[@]}"; do printf '%s\n' "$r"; done
printf 'repository: %s MB on disk\n' "$(du -sm "$REPO" | cut -f1)"
