#!/usr/bin/env bash
# The background scrub's effect on serving (issue 47, CONTRACT §20),
# measured by hand (not in CI) on a release build: one `serve` on SQLite
# and the local store holding 4 x 128 MiB for the scrub to read, and wrk
# GETs (2 threads, 16 connections, DUR seconds) of a 4 KiB file (inline)
# and of a 1 MiB file (a blob), with `[storage] scrub_rate` 0 (off) and
# 16MiB/s (the default), interleaved ROUNDS times (serve restarted for
# each). Prints requests/s and p99 of each run and what the scrub read.
# Usage: benches/scrub.sh        Env: ROUNDS (3), DUR (8),
#   FILESTORE_BIN (default target/release/filestore, built if missing).
# Needs wrk, curl and python3. Everything it starts is stopped on exit; its
# work dir is removed.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${FILESTORE_BIN:-target/release/filestore}
[ -x "$BIN" ] || cargo build --release --bin filestore
ROUNDS=${ROUNDS:-3}
DUR=${DUR:-8}
W=$(mktemp -d /tmp/filestore-scrub.XXXXXX)
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$W"' EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
MPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$W/data"
start() {
  printf '[storage]\nscrub_rate = "%s"\n' "$1" >"$W/config.toml"
  "$BIN" serve --config "$W/config.toml" --data-dir "$W/data" --listen "127.0.0.1:$PORT" \
    --metrics-listen "127.0.0.1:$MPORT" >"$W/serve.log" 2>&1 &
  PID=$!
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$PORT/v1/health" >/dev/null && return
    sleep 0.1
  done
  echo "serve did not start:" >&2; cat "$W/serve.log" >&2; exit 1
}
stop() { kill "$PID"; wait "$PID" 2>/dev/null || true; PID=; }
start 0
KEY=$("$BIN" admin key create --account default --kind secret --data-dir "$W/data" | head -1)
up() {
  curl -sf -H "Authorization: Bearer $KEY" -F "file=@$1" "http://127.0.0.1:$PORT/v1/upload" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])'
}
head -c 4096 /dev/urandom >"$W/small.bin"
head -c 1048576 /dev/urandom >"$W/mid.bin"
head -c 134217728 /dev/urandom >"$W/big.bin"
SMALL=$(up "$W/small.bin")
MID=$(up "$W/mid.bin")
for _ in 1 2 3 4; do up "$W/big.bin" >/dev/null; done
rm "$W/big.bin"
stop
for r in $(seq "$ROUNDS"); do
  for rate in 0 16MiB/s; do
    start "$rate"
    sleep 1
    for what in small mid; do
      url=$SMALL
      [ "$what" = mid ] && url=$MID
      out=$(wrk -t2 -c16 -d"${DUR}s" --latency "$url")
      rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
      p99=$(echo "$out" | awk '$1=="99%"{print $2}')
      echo "round=$r scrub_rate=$rate file=$what rps=$rps p99=$p99"
    done
    read_bytes=$(curl -s "http://127.0.0.1:$MPORT/metrics" | awk '/^filestore_scrub_bytes_total/{print $2}')
    echo "  the scrub read ${read_bytes:-0} bytes in this run"
    stop
  done
done
