#!/usr/bin/env bash
# Measures the server's peak RSS (VmHWM) and throughput while one large file
# is uploaded and downloaded through it, then downloaded again as the zip of
# its folder (GET /v1/folders/zip). Usage:
#   benches/upload_rss.sh [SIZE_MB] [CONFIG_TOML]
# SIZE_MB defaults to 300; CONFIG_TOML (optional) selects e.g. the S3 store.
# Needs: a release build (cargo build --release; FILESTORE_BIN names another
# binary), curl, python3.
set -euo pipefail
size_mb=${1:-300}
config=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${FILESTORE_BIN:-$here/target/release/filestore}
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/plans.toml" <<TOML
[plans.bench]
max_file_size = "1GB"
storage = "10GB"
TOML
[ -n "$config" ] && cat "$config" >> "$work/plans.toml"
FILESTORE_DEFAULT_PLAN=bench "$bin" serve --config "$work/plans.toml" --data-dir "$work/data" \
  --listen "127.0.0.1:$port" 2> "$work/serve.log" &
pid=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/v1/health" >/dev/null && break; sleep 0.1; done
key=$(grep -o 'sk_[0-9a-f]*' "$work/serve.log" | head -1)
head -c "$((size_mb * 1024 * 1024))" /dev/urandom > "$work/big.bin"
rss() { awk '/VmRSS|VmHWM/ {printf "%s %d MiB  ", $1, $2/1024}' "/proc/$pid/status"; echo; }
echo "before:   $(rss)"
start=$(date +%s.%N)
url=$(curl -fsS -H "Authorization: Bearer $key" -F "file=@$work/big.bin" -F folder=bench "http://127.0.0.1:$port/v1/upload" \
  | python3 -c 'import sys, json; print(json.load(sys.stdin)["url"])')
mid=$(date +%s.%N)
echo "upload:   $(rss)"
curl -fsS "$url" -o "$work/back.bin"
end=$(date +%s.%N)
echo "download: $(rss)"
cmp "$work/big.bin" "$work/back.bin" && echo "round trip byte-exact"
rm "$work/back.bin"
zstart=$(date +%s.%N)
curl -fsS -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/folders/zip?folder=bench" -o "$work/bench.zip"
zend=$(date +%s.%N)
echo "zip:      $(rss)"
python3 - "$work/bench.zip" "$work/big.bin" <<PY
import hashlib, sys, zipfile
def sha(f):
    h = hashlib.sha256()
    for b in iter(lambda: f.read(1 << 20), b""):
        h.update(b)
    return h.hexdigest()
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "rb") as big:
    (info,) = z.infolist()
    with z.open(info) as f:  # checks the CRC-32 at the end
        ok = info.filename == "big.bin" and sha(f) == sha(big)
print("zip entry byte-exact" if ok else "zip entry DIFFERS")
PY
python3 - "$size_mb" "$start" "$mid" "$end" "$zstart" "$zend" <<PY
import sys
mb, a, b, c, d, e = float(sys.argv[1]), *map(float, sys.argv[2:])
print(f"upload {mb:.0f} MiB in {b-a:.2f}s ({mb/(b-a):.0f} MiB/s); download in {c-b:.2f}s ({mb/(c-b):.0f} MiB/s); "
      f"zip in {e-d:.2f}s ({mb/(e-d):.0f} MiB/s)")
PY
