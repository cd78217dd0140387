#!/usr/bin/env bash
# The S3 door against SeaweedFS's S3 gateway (`weed mini`), same client, same
# concurrency, same machine (CONTRACT §18, "Speed"). By hand, not in CI:
#
#   benches/s3.sh [FILESTORE_BINARY]      (default target/release/filestore)
#
# Env: OBJECTS (small PUT/GET count, default 2000), SIZE (bytes, 4096), PROCS
# (client processes, 8), FILES (rclone/aws sync file count, 1000), LIST_OBJECTS
# (objects for the ListObjectsV2 latency, 1000000; 0 skips it), SAMPLES (500),
# WRK_CONNS (16), WRK_SECONDS (10), WRK_ROUNDS (3), WRK_KEYS (presigned PUT
# URLs a round, 40000; WRK_ROUNDS=0 skips it), SYNC_ROUNDS (interleaved rclone/aws rounds, 5),
# SKIP_BOTO3=1 / SKIP_SYNC=1 leave those parts out.
#
# 1. Small PUT and GET rates: benches/s3_load.py `rates`, boto3 in PROCS processes
#    (one client each, its default checksums), against each server. The client is
#    Python, on the same 2 cores as the server: the rates are the client's ceiling
#    as much as the server's; the ratio is what compares.
#    wrk then sends presigned V4 PUTs (each to a new key) and GETs, the same
#    way to both servers, in interleaved rounds (median and range): the client
#    costs next to nothing, so these rates are the servers'.
# 2. `rclone copy` and `aws s3 sync` of FILES small files (1-4 KiB) into each: wall time.
# 3. ListObjectsV2 page latency (1000 keys a page) over LIST_OBJECTS objects in one
#    bucket: seeded straight into a fresh filestore SQLite database (s3_load.py
#    `seed`, as benches/scale.py seeds 1 M files for /v1), then timed one request at
#    a time (s3_load.py `list`): first page, random start-after, prefix+delimiter.
#    filestore only (filling SeaweedFS with 1 M objects through S3 takes hours here).
#
# Both servers: SQLite/filer metadata on this machine's disk, local blobs; SeaweedFS
# with one identity (signed requests, as filestore's door always is).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin=$(realpath "${1:-$root/target/release/filestore}")
OBJECTS=${OBJECTS:-2000} SIZE=${SIZE:-4096} PROCS=${PROCS:-8} FILES=${FILES:-1000}
LIST_OBJECTS=${LIST_OBJECTS:-1000000} SAMPLES=${SAMPLES:-500}
WRK_CONNS=${WRK_CONNS:-16} WRK_SECONDS=${WRK_SECONDS:-10} WRK_ROUNDS=${WRK_ROUNDS:-3} WRK_KEYS=${WRK_KEYS:-40000}
SKIP_BOTO3=${SKIP_BOTO3:-0} SKIP_SYNC=${SKIP_SYNC:-0} SYNC_ROUNDS=${SYNC_ROUNDS:-5}
scripts=$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
export PATH="$scripts:$PATH"
unset AWS_CA_BUNDLE AWS_PROFILE AWS_ENDPOINT_URL
for t in weed aws rclone python3; do command -v "$t" >/dev/null || { echo "needs $t" >&2; exit 2; }; done
[ -x "$bin" ] || { echo "no filestore binary at $bin" >&2; exit 2; }

work=$(mktemp -d /tmp/filestore-s3bench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work" /tmp/seaweedfs-*-grpc-"${wport:-x}"*.sock 2>/dev/null || true
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_line() { # FILE PATTERN
  for _ in $(seq 1 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "no '$2' in $1:" >&2; tail -20 "$1" >&2; exit 1
}
s3_secret() { # SIGNING_SECRET KEY_ID: the door's S3 secret (Signer::s3_secret)
  python3 - "$1" "$2" <<'PY'
import base64, hashlib, hmac, sys
m = hmac.new(sys.argv[1].encode(), ("s3-secret\n" + sys.argv[2]).encode(), hashlib.sha256).digest()
print(base64.urlsafe_b64encode(m[:30]).decode().rstrip("=")[:40])
PY
}

signing=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
cat >"$work/config.toml" <<TOML
[server]
signing_secret = "$signing"
default_plan = "bench"
[plans.bench]
max_file_size = "5GiB"
storage = "unlimited"
bandwidth = "unlimited"
uploads = "unlimited"
rate_limit = 100000000
rate_window = "1m"
concurrent_uploads = 512
open_uploads = 4096
TOML

start_filestore() { # DATA_DIR: sets FS_EP, FS_PID
  local port s3port
  port=$(free_port); s3port=$(free_port)
  "$bin" serve --config "$work/config.toml" --data-dir "$1" --listen "127.0.0.1:$port" \
    --s3-listen "127.0.0.1:$s3port" >"$1.log" 2>&1 &
  FS_PID=$!; pids+=("$FS_PID")
  wait_line "$1.log" "S3 door at"
  FS_EP="http://127.0.0.1:$s3port"
}
fs_key() { # DATA_DIR ACCOUNT: sets FS_KEY, FS_SECRET
  FS_KEY=$("$bin" admin --config "$work/config.toml" --data-dir "$1" --json key create --account "$2" --kind secret |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  FS_SECRET=$(s3_secret "$signing" "$FS_KEY")
}

echo "== filestore $("$bin" --version 2>/dev/null | head -1) ($bin), SeaweedFS $(weed version 2>/dev/null | head -1)"
mkdir -p "$work/fs"
start_filestore "$work/fs"
"$bin" admin --config "$work/config.toml" --data-dir "$work/fs" account set default --plan bench >/dev/null
fs_key "$work/fs" default

# SeaweedFS: `weed mini` with one identity, ports of its own.
wport=$(free_port)
mkdir -p "$work/weed/data" "$work/weed/log"
cat >"$work/weed/s3.json" <<JSON
{"identities":[{"name":"bench","credentials":[{"accessKey":"benchaccess","secretKey":"benchsecretbenchsecret"}],
 "actions":["Admin","Read","List","Tagging","Write"]}]}
JSON
weed -logdir="$work/weed/log" mini -dir="$work/weed/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
  -master.telemetry=false -s3.port="$wport" -master.port="$(free_port)" -volume.port="$(free_port)" \
  -filer.port="$(free_port)" -admin.port="$(free_port)" -webdav=false -admin.ui=false \
  -s3.port.iceberg=0 -s3.port.lance=0 -s3.config="$work/weed/s3.json" >"$work/weed/weed.log" 2>&1 &
pids+=($!)
SW_EP="http://127.0.0.1:$wport"

as_fs() { env AWS_ACCESS_KEY_ID="$FS_KEY" AWS_SECRET_ACCESS_KEY="$FS_SECRET" AWS_DEFAULT_REGION=us-east-1 "$@"; }
as_sw() { env AWS_ACCESS_KEY_ID=benchaccess AWS_SECRET_ACCESS_KEY=benchsecretbenchsecret AWS_DEFAULT_REGION=us-east-1 "$@"; }
for _ in $(seq 1 600); do
  as_sw aws --endpoint-url "$SW_EP" s3 mb s3://bench >/dev/null 2>&1 && break
  sleep 0.2
done
as_sw aws --endpoint-url "$SW_EP" s3 ls s3://bench >/dev/null
as_fs aws --endpoint-url "$FS_EP" s3 mb s3://bench >/dev/null

if [ "$SKIP_BOTO3" != 1 ]; then
echo "== small objects: $OBJECTS × $SIZE B PUT then GET, boto3 in $PROCS processes"
fs_rates=$(as_fs python3 "$here/s3_load.py" rates "$FS_EP" bench --objects "$OBJECTS" --size "$SIZE" --procs "$PROCS")
sw_rates=$(as_sw python3 "$here/s3_load.py" rates "$SW_EP" bench --objects "$OBJECTS" --size "$SIZE" --procs "$PROCS")
echo "filestore  $fs_rates"
echo "seaweedfs  $sw_rates"
python3 - "$fs_rates" "$sw_rates" <<'PY'
import json, sys
f, s = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print("ratio filestore/seaweedfs: PUT %.2f×, GET %.2f× (contract: ≥ 2×)" % (
    f["put_per_s"] / s["put_per_s"], f["get_per_s"] / s["get_per_s"]))
PY
fi

if [ "$WRK_ROUNDS" -gt 0 ]; then
echo "== small objects under wrk: presigned V4 PUT then GET of $SIZE B, $WRK_CONNS connections, ${WRK_SECONDS}s × $WRK_ROUNDS interleaved rounds"
wrk_rate() { # EP METHOD URLS -> requests/s (exits if any request failed)
  local out
  out=$(S3_URLS="$3" S3_METHOD="$2" S3_SIZE="$SIZE" timeout $((WRK_SECONDS + 60)) wrk -t"$(( WRK_CONNS < 2 ? 1 : 2 ))" -c"$WRK_CONNS" -d"${WRK_SECONDS}s" -s "${S3_LUA:-$here/s3_wrk.lua}" "$1" | grep "^JSON ")
  python3 -c '
import json, sys
j = json.loads(sys.argv[1][5:])
if j["errors"] or j["non2xx"]: sys.exit("wrk %s: %s" % (sys.argv[2], j))
print("%.0f %.2f" % (j["requests"] / j["seconds"], j["p99_ms"]))' "$out" "$2 $1"
}
declare -A wrk_put wrk_get
for r in $(seq 1 "$WRK_ROUNDS"); do
  for who in fs sw; do
    if [ $who = fs ]; then ep=$FS_EP; run=as_fs; else ep=$SW_EP; run=as_sw; fi
    $run python3 "$here/s3_load.py" presign "$ep" bench "wrk$r/o" "$WRK_KEYS" put_object "$work/put-$who.txt"
    $run python3 "$here/s3_load.py" presign "$ep" bench "wrk$r/o" 2000 get_object "$work/get-$who.txt" --first 100
    wrk_put[$who]+="$(wrk_rate "$ep" PUT "$work/put-$who.txt") "
    wrk_get[$who]+="$(wrk_rate "$ep" GET "$work/get-$who.txt") "
  done
done
python3 - "${wrk_put[fs]}" "${wrk_put[sw]}" "${wrk_get[fs]}" "${wrk_get[sw]}" <<'PY'
import statistics, sys
def runs(s):
    v = s.split()
    return [float(x) for x in v[0::2]], [float(x) for x in v[1::2]]
(fp, fpl), (sp, spl), (fg, fgl), (sg, sgl) = map(runs, sys.argv[1:])
for name, f, s, fl, sl in (("PUT", fp, sp, fpl, spl), ("GET", fg, sg, fgl, sgl)):
    print("%s/s   filestore median %.0f (%.0f-%.0f, p99 %.1f ms)  seaweedfs median %.0f (%.0f-%.0f, p99 %.1f ms)  ratio %.2f× (contract: ≥ 2×)" % (
        name, statistics.median(f), min(f), max(f), statistics.median(fl),
        statistics.median(s), min(s), max(s), statistics.median(sl), statistics.median(f) / statistics.median(s)))
PY
fi

if [ "$SKIP_SYNC" != 1 ]; then
echo "== $FILES small files (1-4 KiB): rclone copy and aws s3 sync, wall time"
python3 - "$work/files" "$FILES" <<'PY'
import os, random, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    p = os.path.join(d, "d%02d" % (i % 20), "f%05d.bin" % i)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "wb").write(os.urandom(random.randint(1024, 4096)))
PY
timed() { local t0; t0=$(date +%s.%N); "$@" >/dev/null 2>"$work/last.err" || { cat "$work/last.err" >&2; exit 1; }; python3 -c "import sys,time; print('%.2f' % (time.time() - float(sys.argv[1])))" "$t0"; }
rclone_to() { # EP KEY SECRET DEST
  env RCLONE_CONFIG="$work/none.conf" RCLONE_CONFIG_R_TYPE=s3 RCLONE_CONFIG_R_PROVIDER=Other RCLONE_CONFIG_R_ENDPOINT="$1" \
    RCLONE_CONFIG_R_ACCESS_KEY_ID="$2" RCLONE_CONFIG_R_SECRET_ACCESS_KEY="$3" RCLONE_CONFIG_R_REGION=us-east-1 \
    RCLONE_CONFIG_R_FORCE_PATH_STYLE=true rclone copy --log-level ERROR "$work/files" "r:$4"
}
# Interleaved rounds (filestore, SeaweedFS, filestore, …), each into a new
# prefix: the median and range of each, as for wrk (one run moved 1.27–1.77×
# between runs on this shared machine).
fs_r=() sw_r=() fs_s=() sw_s=()
for round in $(seq 1 "$SYNC_ROUNDS"); do
  fs_r+=("$(timed rclone_to "$FS_EP" "$FS_KEY" "$FS_SECRET" "bench/rclone$round")")
  sw_r+=("$(timed rclone_to "$SW_EP" benchaccess benchsecretbenchsecret "bench/rclone$round")")
  fs_s+=("$(timed as_fs aws --endpoint-url "$FS_EP" s3 sync --only-show-errors "$work/files" "s3://bench/awssync$round/")")
  sw_s+=("$(timed as_sw aws --endpoint-url "$SW_EP" s3 sync --only-show-errors "$work/files" "s3://bench/awssync$round/")")
done
python3 - "${fs_r[*]}" "${sw_r[*]}" "${fs_s[*]}" "${sw_s[*]}" <<'PY'
import statistics, sys
fr, sr, fs, ss = ([float(x) for x in a.split()] for a in sys.argv[1:])
def show(name, f, s):
    print("%-12s filestore median %.2fs (%.2f–%.2f), seaweedfs median %.2fs (%.2f–%.2f): %.2f× (round ratios %s)" % (
        name, statistics.median(f), min(f), max(f), statistics.median(s), min(s), max(s),
        statistics.median(s) / statistics.median(f), " ".join("%.2f" % (b / a) for a, b in zip(f, s))))
show("rclone copy:", fr, sr)
show("aws s3 sync:", fs, ss)
print("contract: ≥ 1.5× on both")
PY
fi

if [ "$LIST_OBJECTS" -gt 0 ]; then
  echo "== ListObjectsV2 over $LIST_OBJECTS objects in one bucket (filestore, seeded into SQLite)"
  mkdir -m 700 "$work/big"
  acc=$("$bin" admin --config "$work/config.toml" --data-dir "$work/big" --json account create --name big --plan bench |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  fs_key "$work/big" big
  python3 "$here/s3_load.py" seed "$work/big/filestore.db" "$acc" huge "$LIST_OBJECTS"
  start_filestore "$work/big"
  as_fs python3 "$here/s3_load.py" list "$FS_EP" huge --samples "$SAMPLES" | python3 -c '
import json, sys
for k, v in json.load(sys.stdin).items():
    print("%-20s n=%-5d p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms" % (k, v["n"], v["p50_ms"], v["p99_ms"], v["max_ms"]))
print("(contract: a page over 1 M objects p99 ≤ 20 ms)")'
fi
