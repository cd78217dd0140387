#!/usr/bin/env bash
# Scale-out figures: 4 KiB uploads/s (POST /v1/upload, multipart) and CDN GETs/s
# of one 4 KiB file, with wrk, for
#   - 1 node on SQLite (the embedded default),
#   - 1 node on PostgreSQL,
#   - 2 nodes on one PostgreSQL (the same machine; the load split across both:
#     one wrk per node at once, half the connections each (BENCH_EACH=1: all of them each), the rates summed),
# each with the uploads from one account, then spread over BENCH_ACCOUNTS
# accounts (one key each, taken in turn): an account's uploads commit one at
# a time (its quota row is locked), so one account alone measures that lock.
# The PostgreSQL is a throwaway cluster (like contrib/pg-test.sh), durable by
# default (fsync on, as SQLite's synchronous = FULL). The nodes keep blobs
# in their local store, and a 4 KiB file inline in the metadata database
# (the default inline_max), so either node serves every file.
#
#   benches/nodes.sh
#
# Env: BENCH_DURATION (10 s of load per figure), BENCH_CONNS (32, in all: a
# throughput figure is taken under load that keeps the server busy; one
# account's uploads on one node, uncapped, ran at 3,299/s on PostgreSQL and
# 7,041/s on SQLite with 16 connections, 4,920–5,410 and 7,848–7,934 with
# 32, 6,722 and 9,094 with 64: group commit batches what is in flight, so
# at 16 each of two nodes has 8 uploads to batch, and spent 119–195 µs
# of CPU on each in stop 42's capped runs, against 106–135 µs at 16 each),
# BENCH_ACCOUNTS (16; 1 = the one-account rows only),
# BENCH_THREADS (2 wrk threads, in all), BENCH_PG_FSYNC (on; off for a
# throwaway-speed database), PGBIN (/usr/lib/postgresql/15/bin), BENCH_NO_BUILD=1
# (use target/release/filestore as it is), FILESTORE_BIN (another binary, as
# it is: an A/B of two builds), BENCH_SQLITE (1; 0 skips the
# SQLite rows), BENCH_EACH (0; 1 gives every node BENCH_CONNS connections
# of its own rather than a share of them: two nodes then carry twice the
# load one does, each as much as the one node, as when clients grow with
# the nodes; a node batches the uploads in flight on it, so at half the
# connections each of two nodes spends more CPU per upload), BENCH_NODE_CPU (e.g. 0.5: each
# node in a cgroup v1 CPU group of its own with that many CPUs, through
# cpu.cfs_quota_us under /sys/fs/cgroup/cpu, so that the nodes and not
# PostgreSQL or wrk are the bottleneck; empty = no cap). The last column
# shows how much of its cap the nodes used during the uploads: a ratio of
# two nodes to one means what a second node adds only where both rows show
# about 100 %. On a 2-core machine use 0.15: at 0.25 two nodes outrun what
# PostgreSQL and wrk can do on the rest (about 85 %), and at 0.5 they take a
# whole core.
# On PostgreSQL it also prints, per upload, the top-level statements
# (pg_stat_statements: every statement the nodes ran during the uploads,
# background work included, over the uploads counted) and the WAL flushes
# (pg_stat_wal.wal_sync); BENCH_PG_TOP=1 lists the statements behind that
# figure. It prints the CPU time per upload of the nodes and of PostgreSQL
# (its postmaster and backends, from /proc) during the uploads' load.
# Needs wrk, curl, python3, pgrep.
# Everything it starts is stopped on exit; its work dir is removed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
DURATION=${BENCH_DURATION:-10}
CONNS=${BENCH_CONNS:-32}
THREADS=${BENCH_THREADS:-2}
PG_FSYNC=${BENCH_PG_FSYNC:-on}
ACCOUNTS=${BENCH_ACCOUNTS:-16}
NODE_CPU=${BENCH_NODE_CPU:-}
EACH=${BENCH_EACH:-0}
WITH_SQLITE=${BENCH_SQLITE:-1}
CGROOT=/sys/fs/cgroup/cpu
if [ -n "$NODE_CPU" ]; then
  [ -w "$CGROOT" ] || { echo "nodes.sh: BENCH_NODE_CPU needs a writable $CGROOT (cgroup v1, root)" >&2; exit 1; }
fi
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
for t in wrk curl python3 timeout; do
  command -v "$t" >/dev/null || { echo "nodes.sh: needs $t" >&2; exit 1; }
done
[ -x "$PGBIN/initdb" ] || { echo "nodes.sh: no PostgreSQL server binaries in $PGBIN (set PGBIN)" >&2; exit 1; }
if [ -n "${FILESTORE_BIN:-}" ]; then
  bin=$FILESTORE_BIN
else
  if [ "${BENCH_NO_BUILD:-0}" != 1 ]; then (cd "$here" && cargo build --release); fi
  bin="$here/target/release/filestore"
fi
[ -x "$bin" ] || { echo "nodes.sh: no $bin" >&2; exit 1; }

log() { printf '[nodes %s] %s\n' "$(date +%T)" "$*" >&2; }
WORK=$(mktemp -d /tmp/filestore-nodes.XXXXXX)
PIDS=() PG_UP=0
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -c "$*"; else sh -c "$*"; fi; }
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  [ "$PG_UP" = 1 ] && as_pg "$PGBIN/pg_ctl -D $WORK/pg/data -m immediate stop" >/dev/null 2>&1
  for g in "$CGROOT"/filestore-nodes-$$-*; do [ -d "$g" ] && rmdir "$g" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# ---------------------------------------------------------------- PostgreSQL
PG_PORT=$(free_port)
mkdir -p "$WORK/pg"
[ "$(id -u)" = 0 ] && chown postgres "$WORK/pg"
chmod 755 "$WORK"
as_pg "$PGBIN/initdb -D $WORK/pg/data -A trust -U postgres" >/dev/null
as_pg "$PGBIN/pg_ctl -D $WORK/pg/data -l $WORK/pg/log -w -o '-p $PG_PORT -k /tmp -c fsync=$PG_FSYNC -c max_connections=200 -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=top' start" >/dev/null
PG_UP=1
PG_ADMIN="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
log "PostgreSQL $("$PGBIN/postgres" --version | awk '{print $NF}') on port $PG_PORT (fsync=$PG_FSYNC)"
new_database() { # NAME -> URL
  "$PGBIN/psql" -q -d "$PG_ADMIN" -c "CREATE DATABASE $1" >/dev/null
  "$PGBIN/psql" -q -d "postgres://postgres@127.0.0.1:$PG_PORT/$1" -c "CREATE EXTENSION pg_stat_statements" >/dev/null
  printf 'postgres://postgres@127.0.0.1:%s/%s' "$PG_PORT" "$1"
}
pg_value() { # URL SQL -> one value
  "$PGBIN/psql" -qtA -d "$1" -c "$2"
}
# cpu_ticks PID...: the CPU time (user + system, every thread) of those
# processes, in clock ticks.
cpu_ticks() {
  python3 - "$@" <<'PY'
import sys
total = 0
for pid in sys.argv[1:]:
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        pass
print(total)
PY
}
# machine_ticks: the machine's busy and idle clock ticks so far, all CPUs
# (/proc/stat; iowait counted as idle).
machine_ticks() {
  awk '/^cpu / {idle = $5 + $6; busy = 0; for (i = 2; i <= NF; i++) busy += $i; print busy - idle, idle}' /proc/stat
}
pg_pids() { # the postmaster and its children (the backends among them)
  local pm
  pm=$(head -1 "$WORK/pg/data/postmaster.pid")
  echo "$pm" $(pgrep -P "$pm")
}
# in_cap N CMD...: runs CMD in node N's own CPU group of NODE_CPU CPUs,
# from its start, as a container runtime does; with as many runtime worker
# threads as whole CPUs it has, at least one (TOKIO_WORKER_THREADS, unless
# set: what the README tells an operator to give a node with a share of the
# cores; Rust's own detection misses a cgroup v1 quota on a hybrid host).
# It execs CMD: call it in a subshell of its own (`in_cap N CMD... &`).
in_cap() {
  local n=$1
  shift
  [ -n "$NODE_CPU" ] || exec "$@"
  : "${TOKIO_WORKER_THREADS:=$(python3 -c "print(max(1, int($NODE_CPU)))")}"
  export TOKIO_WORKER_THREADS
  local g="$CGROOT/filestore-nodes-$$-$n"
  mkdir -p "$g"
  echo 100000 >"$g/cpu.cfs_period_us"
  local quota
  quota=$(python3 -c "print(int($NODE_CPU * 100000))")
  echo "$quota" >"$g/cpu.cfs_quota_us"
  exec sh -c 'echo $$ >"$1/cgroup.procs" || exit 1; shift; exec "$@"' sh "$g" "$@"
}

# ---------------------------------------------------------------- load
head -c 4096 /dev/urandom >"$WORK/small.bin"
BOUNDARY=----filestorenodes7MA4YWxkTrZu0gW
{
  printf -- '--%s\r\nContent-Disposition: form-data; name="file"; filename="small.bin"\r\nContent-Type: application/octet-stream\r\n\r\n' "$BOUNDARY"
  cat "$WORK/small.bin"
  printf -- '\r\n--%s--\r\n' "$BOUNDARY"
} >"$WORK/multipart.body"
# wrk scripts: non-2xx answers counted exactly, one machine-readable line.
cat >"$WORK/count.lua" <<'EOF'
local threads = {}
function setup(thread) table.insert(threads, thread) end
non2xx = 0
function response(status, headers, body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
end
function done(summary, latency, requests)
  local bad = 0
  for _, t in ipairs(threads) do bad = bad + (t:get("non2xx") or 0) end
  local e = summary.errors
  io.write(string.format("RESULT requests=%d duration_us=%d non2xx=%d sockerr=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.duration, bad, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
EOF
# uploads: the keys of BENCH_KEYS (a file, one a line) in turn
cat >"$WORK/upload.lua" <<EOF
dofile("$WORK/count.lua")
local f = assert(io.open("$WORK/multipart.body", "rb"))
local body = f:read("*a")
f:close()
local keys = {}
for k in io.lines(os.getenv("BENCH_KEYS")) do table.insert(keys, k) end
local n = 0
function request()
  n = n + 1
  return wrk.format("POST", nil, {
    ["Content-Type"] = "multipart/form-data; boundary=$BOUNDARY",
    ["Authorization"] = "Bearer " .. keys[n % #keys + 1],
  }, body)
end
EOF
cp "$WORK/count.lua" "$WORK/get.lua"

# wrk_all TAG SCRIPT URL... : one wrk per URL at once (the connections and
# threads shared out), DURATION seconds; prints "rate non2xx sockerr p50_ms p99_ms"
# (2xx responses/s summed over the wrks; the worst p50/p99).
wrk_all() {
  local tag=$1 script=$2 n i; shift 2
  n=$#
  local c=$(((CONNS + n - 1) / n)) t=$(((THREADS + n - 1) / n)) pids=()
  [ "$EACH" = 1 ] && c=$CONNS
  ((t >= 1)) || t=1
  i=0
  for url in "$@"; do
    i=$((i + 1))
    BENCH_KEYS=$KEYS timeout -k 2 $((DURATION + 10)) wrk -t"$t" -c"$c" -d"${DURATION}s" --timeout 10s \
      -s "$WORK/$script" "$url" >"$WORK/wrk-$tag-$i.out" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || true; done
  python3 - "$WORK" "$tag" "$n" <<'PY'
import re, sys
work, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rate = bad = sockerr = p50 = p99 = 0
for i in range(1, n + 1):
    text = open(f"{work}/wrk-{tag}-{i}.out").read()
    m = re.search(r"^RESULT (.*)$", text, re.M)
    if not m:
        sys.stderr.write(f"wrk {tag} #{i} gave no result:\n{text[-500:]}\n")
        print("0 -1 -1 0 0")
        sys.exit(0)
    kv = dict(x.split("=") for x in m.group(1).split())
    req, dur = int(kv["requests"]), int(kv["duration_us"])
    bad += int(kv["non2xx"]); sockerr += int(kv["sockerr"])
    rate += (req - int(kv["non2xx"])) / (dur / 1e6)
    p50 = max(p50, int(kv["p50_us"])); p99 = max(p99, int(kv["p99_us"]))
print(f"{rate:.0f} {bad} {sockerr} {p50/1000:.1f} {p99/1000:.1f}")
PY
}

# ---------------------------------------------------------------- nodes
# start_nodes NAME COUNT ACCOUNTS [DATABASE_URL]: COUNT nodes on one config;
# sets BASES, KEY (the bootstrap account's) and KEYS (a file: one key per account)
start_nodes() {
  local name=$1 count=$2 accounts=$3 url=${4:-} d="$WORK/$1" i port acc
  mkdir -p "$d"
  {
    printf '[server]\ndefault_plan = "bench"\n'
    [ -n "$url" ] && printf '\n[database]\nurl = "%s"\n' "$url"
    printf '\n[plans.bench]\nmax_file_size = 100_000_000\nstorage = 100_000_000_000\n'
    printf 'bandwidth = 100_000_000_000_000\nuploads = 100_000_000\nrate_limit = 100_000_000\nrate_window = "1m"\nconcurrent_uploads = 100_000\n'
    # The bootstrap account (its key loads the nodes) is on the owner plan.
    printf '\n[plans.owner]\nmax_file_size = 100_000_000\nstorage = 100_000_000_000\n'
    printf 'bandwidth = 100_000_000_000_000\nuploads = 100_000_000\nrate_limit = 100_000_000\nrate_window = "1m"\nconcurrent_uploads = 100_000\n'
  } >"$d/config.toml"
  BASES=()
  for ((i = 1; i <= count; i++)); do
    port=$(free_port)
    # One at a time: the first one makes the schema and the bootstrap key.
    in_cap "$i" env -u FILESTORE_DATABASE_URL -u FILESTORE_CONFIG RUST_LOG=warn \
      "$bin" serve --config "$d/config.toml" --data-dir "$d/node$i" --listen "127.0.0.1:$port" \
      >"$d/node$i.log" 2>&1 </dev/null &
    PIDS+=($!)
    for _ in $(seq 300); do
      curl -fs -o /dev/null "http://127.0.0.1:$port/v1/health" && break
      kill -0 "${PIDS[-1]}" 2>/dev/null || { echo "node $i of $name exited:" >&2; tail -5 "$d/node$i.log" >&2; exit 1; }
      sleep 0.1
    done
    curl -fs -o /dev/null "http://127.0.0.1:$port/v1/health" || { echo "node $i of $name not healthy" >&2; exit 1; }
    BASES+=("http://127.0.0.1:$port")
  done
  KEY=$(grep -o 'sk_[0-9a-f]*' "$d/node1.log" | head -1)
  [ -n "$KEY" ] || { echo "no bootstrap key from $name" >&2; exit 1; }
  KEYS="$d/keys.txt"
  echo "$KEY" >"$KEYS"
  for ((i = 2; i <= accounts; i++)); do
    acc=$(admin "$d" account create --name "a$i" | json_field id)
    admin "$d" key create --account "$acc" --kind secret | json_field key >>"$KEYS"
  done
}
admin() { # DIR args...: filestore admin on that run's config
  local d=$1; shift
  env -u FILESTORE_DATABASE_URL -u FILESTORE_CONFIG "$bin" admin "$@" --json --config "$d/config.toml" --data-dir "$d/node1"
}
json_field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
stop_nodes() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}

# measure NAME COUNT ACCOUNTS [DATABASE_URL]: appends a table row
ROWS=()
measure() {
  local name=$1 count=$2 accounts=$3 url=${4:-} file_url urls=() b k stored=0 up get
  start_nodes "$name" "$count" "$accounts" "$url"
  log "$name: ${#BASES[@]} node(s) up: ${BASES[*]}; $accounts account(s)"
  file_url=$(curl -fsS -H "Authorization: Bearer $KEY" -F "file=@$WORK/small.bin;filename=small.bin" \
    "${BASES[0]}/v1/upload" | json_field url)
  for b in "${BASES[@]}"; do
    # the file's URL names node 1; each node serves it under its own address
    urls+=("$b${file_url#"${BASES[0]}"}")
    curl -fsS "${urls[-1]}" | cmp -s - "$WORK/small.bin" || { echo "$name: GET on $b gave other bytes" >&2; exit 1; }
  done
  log "$name: 4 KiB uploads, ${DURATION}s, $CONNS connections over ${#BASES[@]} node(s)"
  local before=0 after=0 stmts=- flushes=- wal0=0 wal1=0
  if [ -n "$url" ]; then
    before=$(pg_value "$url" "SELECT count(*) FROM files")
    pg_value "$url" "SELECT pg_stat_statements_reset()" >/dev/null
    wal0=$(pg_value "$url" "SELECT wal_sync FROM pg_stat_wal")
  fi
  local node_cpu0 pg_cpu0=0 node_cpu1 pg_cpu1=0 cpu
  node_cpu0=$(cpu_ticks "${PIDS[@]}")
  [ -n "$url" ] && pg_cpu0=$(cpu_ticks $(pg_pids))
  local t0 t1
  local m0 m1
  m0=$(machine_ticks)
  t0=$(date +%s.%N)
  up=$(wrk_all "$name-up" upload.lua "${BASES[@]/%//v1/upload}")
  m1=$(machine_ticks)
  node_cpu1=$(cpu_ticks "${PIDS[@]}")
  t1=$(date +%s.%N)
  [ -n "$url" ] && pg_cpu1=$(cpu_ticks $(pg_pids))
  if [ -n "$url" ]; then
    after=$(pg_value "$url" "SELECT count(*) FROM files")
    wal1=$(pg_value "$url" "SELECT wal_sync FROM pg_stat_wal")
    local calls
    calls=$(pg_value "$url" "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND query NOT LIKE '%pg_stat_statements%'")
    stmts=$(python3 -c "n=$after-$before; print(f'{$calls/n:.1f}' if n else '-')")
    if [ "${BENCH_PG_TOP:-0}" = 1 ]; then # the statements behind the figure
      log "$name: statements per upload, most called first (calls, then µs of execution, per upload)"
      pg_value "$url" "SELECT round(calls::numeric / greatest($after - $before, 1), 2) || '  ' ||
          round((total_exec_time * 1000 / greatest($after - $before, 1))::numeric, 1) || '  ' ||
          regexp_replace(left(query, 110), '\s+', ' ', 'g')
        FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC LIMIT 25" >&2
    fi
    flushes=$(python3 -c "n=$after-$before; print(f'{($wal1-$wal0)/n:.2f}' if n else '-')")
  fi
  while read -r k; do # what the nodes counted, all accounts together
    stored=$((stored + $(curl -fsS -H "Authorization: Bearer $k" "${BASES[-1]}/v1/usage" | json_field upload_count)))
  done <"$KEYS"
  # CPU per upload counted, in µs: the nodes, then PostgreSQL; and with a
  # cap, how much of it the nodes used (near 100 %: they were the bottleneck)
  cpu=$(python3 -c "import os
n = $stored
hz = os.sysconf('SC_CLK_TCK')
us = lambda t: f'{t * 1e6 / hz / n:.0f}' if n else '-'
cap = '${NODE_CPU}'
busy = f'{($node_cpu1 - $node_cpu0) / hz / ($count * float(cap) * ($t1 - $t0)) * 100:.0f}%' if cap else '-'
b0, i0 = map(int, '$m0'.split()); b1, i1 = map(int, '$m1'.split())
other = (b1 - b0) - ($node_cpu1 - $node_cpu0) - ($pg_cpu1 - $pg_cpu0)
idle = f'{(i1 - i0) / ((b1 - b0) + (i1 - i0)) * 100:.0f}%'
print(us($node_cpu1 - $node_cpu0), us($pg_cpu1 - $pg_cpu0) if '$url' else '-', us(other), busy, idle)" 2>/dev/null || echo "- - - - -")
  log "$name: CDN GETs of one 4 KiB file, ${DURATION}s"
  get=$(wrk_all "$name-get" get.lua "${urls[@]}")
  stop_nodes
  ROWS+=("$name|$count|$accounts|$up|$get|$stored|$stmts|$flushes|$cpu")
}

for accounts in $( ( echo 1; echo "$ACCOUNTS" ) | sort -nu); do
  [ "$WITH_SQLITE" = 0 ] || measure "sqlite-$accounts" 1 "$accounts"
  measure "pg1-$accounts" 1 "$accounts" "$(new_database "bench_one_$accounts")"
  measure "pg2-$accounts" 2 "$accounts" "$(new_database "bench_two_$accounts")"
done

# ---------------------------------------------------------------- table
conns="$CONNS connections"
[ "$EACH" = 1 ] && conns="$CONNS connections for each node"
printf '\n4 KiB uploads/s and CDN GETs/s, %ss each, %s and %s wrk threads in all, on %s cores shared by servers, database and wrk (PostgreSQL fsync=%s)\n\n' \
  "$DURATION" "$conns" "$THREADS" "$(nproc)" "$PG_FSYNC"
[ -n "$NODE_CPU" ] && printf 'each node held to %s CPU (cgroup v1 cpu.cfs_quota_us); PostgreSQL and wrk outside\n\n' "$NODE_CPU"
printf '%-10s %5s %8s | %10s %6s %7s %7s | %10s %6s %7s %7s | %s | %s | %s | %s\n' metadata nodes accounts "uploads/s" non2xx "p50 ms" "p99 ms" "GETs/s" non2xx "p50 ms" "p99 ms" "uploads counted" "statements, WAL flushes per upload" "CPU µs per upload: nodes, PostgreSQL, the rest (wrk, kernel)" "nodes' cap used, machine idle, uploads"
for r in "${ROWS[@]}"; do
  IFS='|' read -r name count accounts up get stored stmts flushes cpu <<<"$r"
  read -r cn cp co cb ci <<<"$cpu"
  read -r ur ub us u50 u99 <<<"$up"
  read -r gr gb gs g50 g99 <<<"$get"
  case $name in sqlite*) db=SQLite ;; *) db=PostgreSQL ;; esac
  printf '%-10s %5s %8s | %10s %6s %7s %7s | %10s %6s %7s %7s | %15s | %34s | %62s | %s\n' "$db" "$count" "$accounts" "$ur" "$ub" "$u50" "$u99" "$gr" "$gb" "$g50" "$g99" "$stored" "$stmts, $flushes" "$cn, $cp, $co" "$cb, $ci"
  [ "$us" = 0 ] && [ "$gs" = 0 ] || log "$name: socket errors: uploads $us, GETs $gs"
done
