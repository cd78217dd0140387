#!/usr/bin/env bash
# The image variant goals of issues 23 and 49, measured by hand (not in CI) on
# a release build, side by side with sharp (npm `sharp@0.34`, libvips):
#  (a) renders per second, interleaved A/B: for each source and each width,
#      filestore and sharp alternate (which goes first alternates too),
#      ROUNDS (default 5) rounds each, 2 renders in flight on both sides; it
#      prints the median and range of renders/s of each and the ratio of
#      the medians. Sources (made by sharp, 4000x3000, photo-like: smooth
#      colour gradients, soft shapes with a few hard edges, gaussian noise of
#      sigma ~6): a baseline JPEG and a progressive JPEG (q 90), a PNG and a
#      WebP (q 90). Widths 256, 640, 1080, 1920 px, WebP out. Each render is
#      a new variant (render i: q = 41 + i % 60, and for filestore copy
#      i / 60 of the source, each copy its own upload: the server caches a
#      variant by file and parameters). filestore: GETs of the CDN URL
#      ?w=W&format=webp&q=N from one node process (keep-alive; the server
#      spools the source from its blob store, renders, stores the variant,
#      answers it). sharp: the same file read from disk and rendered with
#      .rotate().resize({width: W}).webp({quality: q}), its cache off, in one
#      node process. A round's renders are sized from a warm-up of both
#      sides so that a round takes about ROUND_SECS (default 4) seconds.
#  (b) filestore's peak RSS (VmHWM) after all the renders.
#  (c) unless WRK=0: a cached variant against a plain file of its size: wrk,
#      2 threads, 16 connections, DURATION (default 10s) each, on the
#      variant's URL and on the URL of a file of random bytes of the
#      variant's size.
# Usage: benches/images.sh
# Env: FILESTORE_BIN, ROUNDS, ROUND_SECS, WIDTHS (default "256 640 1080 1920"),
#      SOURCES (default "baseline progressive png webp"), WRK, DURATION,
#      SERVER_PID_FILE (the server's pid is written there, for a profiler).
# Needs node and npm (sharp is installed into the work dir from the npm
# registry), curl, wrk, python3.
set -euo pipefail
rounds=${ROUNDS:-5}
round_secs=${ROUND_SECS:-4}
widths=${WIDTHS:-256 640 1080 1920}
sources=${SOURCES:-baseline progressive png webp}
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
cat > "$work/bench.mjs" <<'EOF'
// The node side of benches/images.sh (written into its work dir).
//   make DIR                     the four sources, 4000x3000, photo-like
//   sharp FILE W N FIRST         N renders of FILE to W px wide WebP, 2 at a time
//   fs URLS W N FIRST            the same as GETs of ?w=W&format=webp&q=.. on
//                                the URLs (one a line in the file URLS)
// Render i (FIRST <= i < FIRST+N) uses q = 41 + i % 60 (on both sides) and,
// for filestore, the copy i / 60 of the source (a variant is cached by its
// file and key: each render is a new variant). Prints "renders/s seconds".
import sharp from "sharp";
import { readFile, writeFile } from "node:fs/promises";

const [mode, ...args] = process.argv.slice(2);
sharp.cache(false);
const INFLIGHT = 2;
const qOf = (i) => 41 + (i % 60);

async function timed(n, first, one) {
  let next = first;
  const end = first + n;
  const started = process.hrtime.bigint();
  async function worker() {
    while (next < end) await one(next++);
  }
  await Promise.all(Array.from({ length: INFLIGHT }, worker));
  const secs = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(`${(n / secs).toFixed(3)} ${secs.toFixed(3)}`);
}

if (mode === "make") {
  // Photo-like: smooth colour gradients and large soft shapes, a few hard
  // edges, and moderate noise (sigma ~6), from a fixed seed.
  const [dir] = args;
  const W = 4000, H = 3000;
  const px = Buffer.alloc(W * H * 3);
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
  const gauss = () => {
    const u = rnd() || 1e-9, v = rnd();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  const noise = new Float32Array(4096);
  for (let i = 0; i < noise.length; i++) noise[i] = gauss() * 6;
  let k = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const fx = x / W, fy = y / H;
      let r = 60 + 150 * fx + 30 * Math.sin(fy * 7 + fx * 3);
      let g = 80 + 100 * fy + 40 * Math.cos(fx * 5 - fy * 2);
      let b = 140 - 80 * fx * fy + 35 * Math.sin((fx + fy) * 9);
      const dx = x - 2600, dy = y - 1300;
      if (dx * dx + dy * dy < 700 * 700) { r = r * 0.5 + 110; g *= 0.6; b *= 0.5; }
      if (x > 500 && x < 1500 && y > 1800 && y < 2700) { r *= 0.4; g = g * 0.5 + 90; b = b * 0.5 + 60; }
      const n = noise[(Math.imul(x, 2654435761) ^ Math.imul(y, 40503) ^ (k >>> 3)) & 4095];
      const clamp = (v) => (v < 0 ? 0 : v > 255 ? 255 : v);
      px[k++] = clamp(r + n);
      px[k++] = clamp(g + n * 0.8);
      px[k++] = clamp(b + n * 1.1);
    }
  }
  const raw = { raw: { width: W, height: H, channels: 3 } };
  await sharp(px, raw).jpeg({ quality: 90 }).toFile(`${dir}/baseline.jpg`);
  await sharp(px, raw).jpeg({ quality: 90, progressive: true }).toFile(`${dir}/progressive.jpg`);
  await sharp(px, raw).png().toFile(`${dir}/source.png`);
  await sharp(px, raw).webp({ quality: 90 }).toFile(`${dir}/source.webp`);
} else if (mode === "sharp") {
  const [path, w, n, first] = args;
  const width = Number(w);
  await timed(Number(n), Number(first), async (i) => {
    const input = await readFile(path);
    await sharp(input).rotate().resize({ width }).webp({ quality: qOf(i) }).toBuffer();
  });
} else if (mode === "fs") {
  const [urlsFile, w, n, first] = args;
  const urls = (await readFile(urlsFile, "utf8")).split("\n").filter(Boolean);
  await timed(Number(n), Number(first), async (i) => {
    const copy = Math.floor(i / 60);
    if (copy >= urls.length) throw new Error(`render ${i}: only ${urls.length} copies uploaded`);
    const url = `${urls[copy]}?w=${w}&format=webp&q=${qOf(i)}`;
    const res = await fetch(url);
    const body = await res.arrayBuffer();
    if (res.status !== 200) {
      throw new Error(`${url}: ${res.status} ${Buffer.from(body).toString().slice(0, 300)}`);
    }
    if (res.headers.get("content-type") !== "image/webp") {
      throw new Error(`${url}: ${res.headers.get("content-type")}`);
    }
  });
} else {
  throw new Error(`unknown mode ${mode}`);
}
EOF
node "$work/bench.mjs" make "$work"
declare -A file_of=([baseline]=baseline.jpg [progressive]=progressive.jpg [png]=source.png
                    [webp]=source.webp)
for s in $sources; do
  [ -n "${file_of[$s]:-}" ] || { echo "unknown source $s" >&2; exit 1; }
  echo "source $s: $(stat -c %s "$work/${file_of[$s]}") bytes, 4000x3000" >&2
done

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
[ -n "${SERVER_PID_FILE:-}" ] && echo "$srv_pid" > "$SERVER_PID_FILE"
base="http://127.0.0.1:$port"
for _ in $(seq 300); do curl -fs "$base/v1/health" >/dev/null && break; sleep 0.2; done
url_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])'; }
upload() { curl -fsS -H "Authorization: Bearer $key" -F "file=@$1" "$base/v1/upload" | url_of; }
# Copies of source $1 uploaded until there are $2 (their URLs in $work/$1.urls).
copies() {
  touch "$work/$1.urls"
  while [ "$(wc -l < "$work/$1.urls")" -lt "$2" ]; do
    upload "$work/${file_of[$1]}" >> "$work/$1.urls"
  done
}
# A round of $3 renders of source $1 at width $2, from render $4: "renders/s secs".
fs() { node "$work/bench.mjs" fs "$work/$1.urls" "$2" "$3" "$4"; }
sh_() { node "$work/bench.mjs" sharp "$work/${file_of[$1]}" "$2" "$3" "$4"; }

echo "== renders: $rounds rounds each side, ~${round_secs}s a round, 2 in flight" >&2
: > "$work/results"
for s in $sources; do
  # A copy of its own for the warm-ups (their variants are not reused).
  upload "$work/${file_of[$s]}" > "$work/$s-warm.urls"
  for w in $widths; do
    # Warm-up, both sides (not counted): sizes the rounds.
    warm=$((w == 256 ? 8 : 4))
    fw=$(node "$work/bench.mjs" fs "$work/$s-warm.urls" "$w" "$warm" 0 | cut -d' ' -f1)
    sw=$(sh_ "$s" "$w" "$warm" 0 | cut -d' ' -f1)
    n=$(python3 -c "print(max(4, round($round_secs * ($fw + $sw) / 2)))")
    copies "$s" $(( (rounds * n + 59) / 60 ))
    for r in $(seq 0 $((rounds - 1))); do
      first=$((r * n))
      if [ $((r % 2)) -eq 0 ]; then
        a=$(fs "$s" "$w" "$n" "$first"); b=$(sh_ "$s" "$w" "$n" "$first")
      else
        b=$(sh_ "$s" "$w" "$n" "$first"); a=$(fs "$s" "$w" "$n" "$first")
      fi
      echo "$s $w filestore ${a% *}" >> "$work/results"
      echo "$s $w sharp ${b% *}" >> "$work/results"
      echo "  $s ${w}px round $((r + 1)): $n renders, filestore ${a% *}/s, sharp ${b% *}/s" >&2
    done
  done
done
rss=$(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$srv_pid/status")

python3 - "$work/results" "$rss" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
cells = {}
for s, w, side, rate in rows:
    cells.setdefault((s, int(w)), {}).setdefault(side, []).append(float(rate))
def fmt(v):
    return f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})"
print("| source (4000x3000) | width | filestore renders/s, median (range) | sharp renders/s, median (range) | ratio of medians |")
print("|---|---|---|---|---|")
for (s, w), c in cells.items():
    f, p = c["filestore"], c["sharp"]
    print(f"| {s} | {w} | {fmt(f)} | {fmt(p)} | {statistics.median(f) / statistics.median(p):.2f} |")
print(f"\nfilestore peak RSS (VmHWM) after the renders: {sys.argv[2]} MiB (goal <= 256)")
PY

[ "${WRK:-1}" = 0 ] && exit 0
echo "== cached variant against a plain file of its size: wrk $duration each" >&2
first_source=${sources%% *}
photo=$(head -n1 "$work/$first_source.urls")
variant="$photo?w=256&format=webp&q=41"
size=$(curl -fsS -o /dev/null -w '%{size_download}' "$variant")
head -c "$size" /dev/urandom > "$work/plain.bin"
plain=$(upload "$work/plain.bin")
rate() { wrk -t2 -c16 -d"$duration" "$1" | awk '/Requests\/sec/ {print $2}'; }
variant_rps=$(rate "$variant")
plain_rps=$(rate "$plain")

python3 - "$size" "$variant_rps" "$plain_rps" <<'PY'
import sys
size, v, p = sys.argv[1:]
print()
print("| figure | filestore | plain file | ratio |")
print("|---|---|---|---|")
print(f"| cached variant ({size} B) GETs/s vs a plain file of its size | {float(v):.0f} | {float(p):.0f} | {float(v)/float(p):.2f} |")
PY
