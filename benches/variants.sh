#!/usr/bin/env bash
# Cached image variants against plain files (issue 49), by hand on a release
# build: GETs/s with wrk of
#   - a variant rendered once and then kept (`?w=W&format=webp&q=80` of a
#     photo-like JPEG), and
#   - a plain file of random bytes of the variant's size (VARIANT),
#   - the same against a plain 20 KB file (what an outside check compared:
#     `?w=249&format=webp&q=80` beside a 20 KB file),
# at 8 and 64 connections (CONNS), alternating variant and plain ROUNDS
# times (default 5) for DURATION each (default 5s); prints the median and
# range of each and the ratio of the medians.
#   benches/variants.sh [BIN]       Env: ROUNDS, DURATION, CONNS, WIDTH (249).
# Needs curl, wrk, python3.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-${FILESTORE_BIN:-$here/target/release/filestore}}
rounds=${ROUNDS:-5}
duration=${DURATION:-5s}
conns=${CONNS:-8 64}
width=${WIDTH:-249}
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 1; }
work=$(mktemp -d /tmp/filestore-variants.XXXXXX)
srv_pid=
cleanup() {
  [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/filestore.toml" <<TOML
[plans.bench]
max_file_size = "1GB"
storage = "100TB"
uploads = 100000000
rate_limit = 1000000000
TOML
data="$work/data"
mkdir -m 700 "$data"
adm() { "$bin" admin "$@" --config "$work/filestore.toml" --data-dir "$data" --json; }
acc=$(adm account create --name variants --plan bench | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["id"])')
key=$(adm key create --account "$acc" --kind secret | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["key"])')
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --config "$work/filestore.toml" --data-dir "$data" --listen "127.0.0.1:$port" \
  2> "$work/serve.log" &
srv_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 300); do curl -fs "$base/v1/health" >/dev/null && break; sleep 0.2; done
upload() {
  curl -fsS -H "Authorization: Bearer $key" -F "file=@$1" "$base/v1/upload" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])'
}
# A photo-like 1600x1200 JPEG: smooth gradients and some texture.
python3 - "$work/photo.jpg" <<'PY'
import sys
from PIL import Image
w, h = 1600, 1200
img = Image.new("RGB", (w, h))
px = img.load()
for y in range(h):
    for x in range(w):
        px[x, y] = (x * 255 // w, y * 255 // h, ((x * 7) ^ (y * 3)) & 0xff)
img.save(sys.argv[1], quality=90)
PY
photo=$(upload "$work/photo.jpg")
variant="$photo?w=$width&format=webp&q=80"
size=$(curl -fsS -o /dev/null -w '%{size_download}' "$variant")
head -c "$size" /dev/urandom > "$work/same.bin"
head -c 20000 /dev/urandom > "$work/20k.bin"
same=$(upload "$work/same.bin")
k20=$(upload "$work/20k.bin")
echo "variant $size B: $variant" >&2

rate() { wrk -t2 -c"$1" -d"$duration" "$2" | awk '/Requests\/sec/ {print $2}'; }
for c in $conns; do
  for pair in "same:$same" "20k:$k20"; do
    label=${pair%%:*}; plain=${pair#*:}
    v=(); p=()
    for _ in $(seq "$rounds"); do
      v+=("$(rate "$c" "$variant")")
      p+=("$(rate "$c" "$plain")")
    done
    python3 - "$c" "$label" "$size" "${v[*]}" "${p[*]}" <<'PY'
import statistics, sys
c, label, size, v, p = sys.argv[1:]
v = [float(x) for x in v.split()]; p = [float(x) for x in p.split()]
mv, mp = statistics.median(v), statistics.median(p)
plain = f"plain {size} B" if label == "same" else "plain 20,000 B"
print(f"| {c} conns | variant {size} B {mv:,.0f} ({min(v):,.0f}-{max(v):,.0f}) "
      f"| {plain} {mp:,.0f} ({min(p):,.0f}-{max(p):,.0f}) | {mv/mp:.2f} |")
PY
  done
done
