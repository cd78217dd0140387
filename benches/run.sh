#!/usr/bin/env bash
# The performance figures of the project, by hand (not in CI), on a release build:
#  1. the side-by-side comparison with SeaweedFS and nginx (small uploads and
#     downloads, 256 MiB transfers, peak RSS): the shared harness, run
#     BENCH_RUNS times (default 1; use 3 and take the median of a figure
#     within 20 % of its goal);
#  2. the scale run: latencies with 1,000,000 files in one account.
# Env: BENCH_HARNESS (default ../shared/bench/run.sh beside the checkout),
#      BENCH_RUNS, SCALE_FILES (default 1000000); the harness's own BENCH_* too.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
cargo build --release
bin="$here/target/release/filestore"
harness=${BENCH_HARNESS:-$here/../shared/bench/run.sh}
if [ -x "$harness" ]; then
  for i in $(seq "${BENCH_RUNS:-1}"); do
    echo "== side by side, run $i"
    FILESTORE_BIN=$bin BENCH_OUT=/tmp/filestore-bench-$i.json "$harness"
  done
else
  echo "no side-by-side harness at $harness (set BENCH_HARNESS); skipping it" >&2
fi
echo "== scale"
python3 "$here/benches/scale.py" --bin "$bin" --files "${SCALE_FILES:-1000000}"
