#!/usr/bin/env bash
# Measures the server's peak RSS (VmHWM) and throughput while one large file
# is uploaded and downloaded through it. Usage:
#   benches/upload_rss.sh [SIZE_MB] [CONFIG_TOML]
# SIZE_MB defaults to 300; CONFIG_TOML (optional) selects e.g. the S3 store.
# Needs: a release build (cargo build --release), curl.
set -euo pipefail
size_mb=${1:-300}
config=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
bin="$here/target/release/filestore"
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
url=$(curl -fsS -H "Authorization: Bearer $key" -F "file=@$work/big.bin" "http://127.0.0.1:$port/v1/upload" \
  | python3 -c 'import sys, json; print(json.load(sys.stdin)["url"])')
mid=$(date +%s.%N)
echo "upload:   $(rss)"
curl -fsS "$url" -o "$work/back.bin"
end=$(date +%s.%N)
echo "download: $(rss)"
cmp "$work/big.bin" "$work/back.bin" && echo "round trip byte-exact"
python3 - "$size_mb" "$start" "$mid" "$end" <<PY
import sys
mb, a, b, c = float(sys.argv[1]), *map(float, sys.argv[2:])
print(f"upload {mb:.0f} MiB in {b-a:.2f}s ({mb/(b-a):.0f} MiB/s); download in {c-b:.2f}s ({mb/(c-b):.0f} MiB/s)")
PY
