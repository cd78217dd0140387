#!/usr/bin/env bash
# A 256 MiB upload three ways, each on a fresh server (so that each peak RSS
# is its own): the plain multipart upload and a tus upload with the filestore
# CLI (the same client work: read, hash, send), and a tus upload with curl
# (one creation and one PATCH of the whole file, streamed with -T: the
# server's cost alone, against curl's multipart POST). Prints the median of RUNS tries and the
# server's peak RSS (VmHWM). Usage:
#   benches/tus_upload.sh [SIZE_MB] [RUNS] [CONFIG_TOML]
# Needs a release build (cargo build --release) and curl.
set -euo pipefail
size_mb=${1:-256}
runs=${2:-3}
config=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
bin="$here/target/release/filestore"
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
head -c "$((size_mb * 1024 * 1024))" /dev/urandom > "$work/big.bin"
bytes=$((size_mb * 1024 * 1024))

start_server() {
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  rm -rf "$work/data" "$work/home"
  printf '[plans.bench]\nmax_file_size = "10GB"\nstorage = "100GB"\nuploads = 1000000\nrate_limit = 1000000\n' > "$work/cfg.toml"
  [ -n "$config" ] && cat "$config" >> "$work/cfg.toml"
  FILESTORE_DEFAULT_PLAN=bench "$bin" serve --config "$work/cfg.toml" --data-dir "$work/data" \
    --listen "127.0.0.1:$port" 2> "$work/serve.log" &
  pid=$!
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/v1/health" >/dev/null && break; sleep 0.1; done
  key=$(grep -o 'sk_[0-9a-f]*' "$work/serve.log" | head -1)
  base="http://127.0.0.1:$port"
}
stop_server() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
peak() { awk '/VmHWM/ {printf "%d", $2/1024}' "/proc/$pid/status"; }
now() { date +%s.%N; }

cli() { HOME="$work/home" FILESTORE_URL="$base" FILESTORE_API_KEY="$key" "$bin" upload -q "$@" "$work/big.bin" >/dev/null; }
curl_multipart() { curl -fsS -o /dev/null -H "Authorization: Bearer $key" -F "file=@$work/big.bin" "$base/v1/upload"; }
curl_tus() {
  loc=$(curl -fsS -D - -o /dev/null -X POST -H "Authorization: Bearer $key" -H "Tus-Resumable: 1.0.0" \
    -H "Upload-Length: $bytes" "$base/v1/uploads" | tr -d '\r' | awk 'tolower($1)=="location:" {print $2}')
  curl -fsS -o /dev/null -X PATCH -H "Authorization: Bearer $key" -H "Tus-Resumable: 1.0.0" \
    -H "Upload-Offset: 0" -H "Content-Type: application/offset+octet-stream" \
    -H "Expect:" -T "$work/big.bin" "$loc"
}

declare -A median peakmb
for mode in "cli_multipart:cli --chunk-size 0" "cli_tus:cli --chunk-size 64MiB" \
            "curl_multipart:curl_multipart" "curl_tus:curl_tus"; do
  name=${mode%%:*}; cmd=${mode#*:}
  start_server
  times=()
  for _ in $(seq "$runs"); do
    a=$(now); $cmd; b=$(now)
    times+=("$(python3 -c "print($b - $a)")")
  done
  median[$name]=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  peakmb[$name]=$(peak)
  stop_server
  printf '%-15s median %.3fs (%4.0f MiB/s)  tries: %s  peak RSS %s MiB\n' "$name" "${median[$name]}" \
    "$(python3 -c "print($size_mb / ${median[$name]})")" "${times[*]}" "${peakmb[$name]}"
done
python3 - "${median[cli_multipart]}" "${median[cli_tus]}" "${median[curl_multipart]}" "${median[curl_tus]}" <<'PY'
import sys
cm, ct, um, ut = map(float, sys.argv[1:])
print(f"tus / multipart speed: CLI {cm / ct:.2f}x, curl {um / ut:.2f}x (goal >= 0.8x)")
PY
