#!/usr/bin/env bash
# The image variant goals of issue 23, measured by hand (not in CI) on a
# release build, side by side with sharp (npm `sharp`, libvips):
#  (a) renders per second: the same 12-megapixel JPEG (4000x3000, noisy, made
#      by sharp) to 256-px-wide WebP thumbnails, RENDERS of them (default 40),
#      2 in flight, each a new variant (q = 41, 42, ...). filestore: GETs of
#      the CDN URL with ?w=256&format=webp&q=N (the server spools the source
#      from its blob store, renders, stores the variant, answers it). sharp:
#      the same file read from disk and rendered with the same parameters in
#      one node process, 2 at a time, its cache off.
#  (b) filestore's peak RSS (VmHWM) after the renders.
#  (c) a cached variant against a plain file of its size: wrk, 2 threads, 16
#      connections, DURATION (default 10s) each, on the variant's URL and on
#      the URL of a file of random bytes of the variant's size.
# Usage: benches/images.sh        Env: RENDERS, DURATION, FILESTORE_BIN.
# Needs node and npm (sharp is installed into the work dir from the npm
# registry), curl, wrk, python3.
set -euo pipefail
renders=${RENDERS:-40}
duration=${DURATION:-10s}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${FILESTORE_BIN:-$here/target/release/filestore}
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 1; }

work=$(mktemp -d /tmp/filestore-images.XXXXXX)
srv_pid=
cleanup() {
  [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

echo "== sharp (npm) into $work" >&2
(cd "$work" && npm install --no-save --no-audit --no-fund --silent sharp@0.34 >/dev/null)
cat > "$work/sharp.mjs" <<'EOF'
import sharp from "sharp";
import { readFile } from "node:fs/promises";
const [mode, path, n] = process.argv.slice(2);
sharp.cache(false);
if (mode === "make") {
  await sharp({ create: { width: 4000, height: 3000, channels: 3,
                          noise: { type: "gaussian", mean: 128, sigma: 40 } } })
    .jpeg({ quality: 90 }).toFile(path);
  process.exit(0);
}
const total = Number(n);
let next = 0;
const started = process.hrtime.bigint();
async function worker() {
  while (next < total) {
    const q = 41 + next++;
    const input = await readFile(path);
    await sharp(input).rotate().resize({ width: 256 }).webp({ quality: q }).toBuffer();
  }
}
await Promise.all([worker(), worker()]);
const secs = Number(process.hrtime.bigint() - started) / 1e9;
console.log(`${(total / secs).toFixed(2)} ${secs.toFixed(2)}`);
EOF
node "$work/sharp.mjs" make "$work/photo.jpg"
echo "source: $(stat -c %s "$work/photo.jpg") bytes, 4000x3000 JPEG" >&2

cat > "$work/filestore.toml" <<EOF
[plans.bench]
max_file_size = "1GB"
storage = "100TB"
uploads = 100000000
rate_limit = 100000000
[images]
variants_per_file = 100000
EOF
data="$work/data"
mkdir -m 700 "$data"
adm() { "$bin" admin "$@" --config "$work/filestore.toml" --data-dir "$data" --json; }
acc=$(adm account create --name images --plan bench | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["id"])')
key=$(adm key create --account "$acc" --kind secret | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["key"])')
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --config "$work/filestore.toml" --data-dir "$data" --listen "127.0.0.1:$port" \
  2> "$work/serve.log" &
srv_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 300); do curl -fs "$base/v1/health" >/dev/null && break; sleep 0.2; done
url_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])'; }
photo=$(curl -fsS -H "Authorization: Bearer $key" -F "file=@$work/photo.jpg" "$base/v1/upload" | url_of)

echo "== renders: $renders thumbnails, 2 in flight" >&2
sharp_out=$(node "$work/sharp.mjs" run "$work/photo.jpg" "$renders")
t0=$(date +%s.%N)
seq 41 $((40 + renders)) | xargs -P 2 -I{} sh -c \
  "curl -fsS -o /dev/null '$photo?w=256&format=webp&q={}' || echo FAILED {}" > "$work/fails"
t1=$(date +%s.%N)
[ -s "$work/fails" ] && { echo "renders failed: $(cat "$work/fails")" >&2; exit 1; }
fs_rps=$(python3 -c "print(f'{$renders / ($t1 - $t0):.2f}')")
rss=$(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$srv_pid/status")

echo "== cached variant against a plain file of its size: wrk $duration each" >&2
variant="$photo?w=256&format=webp&q=41"
size=$(curl -fsS -o /dev/null -w '%{size_download}' "$variant")
head -c "$size" /dev/urandom > "$work/plain.bin"
plain=$(curl -fsS -H "Authorization: Bearer $key" -F "file=@$work/plain.bin" "$base/v1/upload" | url_of)
rate() { wrk -t2 -c16 -d"$duration" "$1" | awk '/Requests\/sec/ {print $2}'; }
variant_rps=$(rate "$variant")
plain_rps=$(rate "$plain")

python3 - "$fs_rps" "$sharp_out" "$rss" "$size" "$variant_rps" "$plain_rps" <<'PY'
import sys
fs, sharp, rss, size, v, p = sys.argv[1:]
sharp_rps, sharp_secs = sharp.split()
print("| figure | filestore | sharp | ratio |")
print("|---|---|---|---|")
print(f"| 12 MP JPEG -> 256 px WebP, renders/s (2 in flight) | {fs} | {sharp_rps} | {float(fs)/float(sharp_rps):.2f} |")
print(f"| peak server RSS after the renders | {rss} MiB | | |")
print(f"| cached variant ({size} B) GETs/s vs a plain file of its size | {float(v):.0f} | {float(p):.0f} (plain) | {float(v)/float(p):.2f} |")
PY
