#!/usr/bin/env bash
# The public S3 conformance suite ceph/s3-tests against the S3 door (CONTRACT §18),
# for the operations the door has. Not part of `cargo test` or CI.
#
#   tests/s3-tests/run.sh S3TESTS_DIR [FILESTORE_BINARY] [-- PYTEST_ARGS...]
#
# S3TESTS_DIR: a checkout (or an extracted archive) of ceph/s3-tests at $PIN below.
# FILESTORE_BINARY: default target/release/filestore, else target/debug/filestore.
# Runs the node ids in tests/s3-tests/selected.txt (made once from the filters in
# docs/s3-door-research.md §4; regenerate it with S3TESTS_COLLECT=1) and prints
# "N passed, N failed" and the failures grouped by their first error line
# (results in target/s3-tests/: junit.xml, pytest.log, server.log, failures.txt).
#
# The server: SQLite and the local blob store in a temp dir (FILESTORE_DATABASE_URL
# to put the metadata on PostgreSQL), the S3 door on a free port, three accounts
# (main = the bootstrap account "default", alt, tenant) on a plan without limits that
# a test could hit (rate, size, monthly count). Python: a venv in target/s3-tests/venv
# with the system's boto3 and pinned munch, isodate, pytz and pytest.
set -euo pipefail
PIN=8f0ae7b404a3a2fcf7038bf1e6bf29544fe9b6a3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
src=$(cd "${1:?usage: run.sh S3TESTS_DIR [FILESTORE_BINARY] [-- PYTEST_ARGS...]}" && pwd)
shift
bin=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then bin=$1; shift; fi
[ "${1:-}" = "--" ] && shift
if [ -z "$bin" ]; then
  bin=$root/target/release/filestore
  [ -x "$bin" ] || bin=$root/target/debug/filestore
fi
[ -x "$bin" ] || { echo "no filestore binary at $bin (cargo build first)" >&2; exit 2; }
if head=$(git -C "$src" rev-parse HEAD 2>/dev/null); then
  [ "$head" = "$PIN" ] || { echo "$src is at $head, not the pinned $PIN" >&2; exit 2; }
fi
[ -f "$src/s3tests/functional/test_s3.py" ] || { echo "$src holds no s3tests/functional/test_s3.py" >&2; exit 2; }

out=$root/target/s3-tests
mkdir -p "$out"
venv=$out/venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv --system-site-packages "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  boto3==1.43.11 munch==4.0.0 isodate==0.7.2 pytz==2026.6 pytest==9.2.0 pytest-timeout==2.4.0 python-dateutil==2.9.0.post0 requests

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
work=$(mktemp -d /tmp/filestore-s3tests.XXXXXX)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
signing_secret=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
cat >"$work/config.toml" <<TOML
[server]
signing_secret = "$signing_secret"
default_plan = "s3tests"
[plans.s3tests]
max_file_size = "5GiB"
storage = "unlimited"
bandwidth = "unlimited"
uploads = "unlimited"
rate_limit = 1000000
rate_window = "1m"
concurrent_uploads = 512
open_uploads = 4096
public_share = 1
[plans.owner]
rate_limit = 1000000
concurrent_uploads = 512
open_uploads = 4096
TOML
api_port=$(free_port)
s3_port=$(free_port)
fs() { env -u AWS_CA_BUNDLE "$bin" "$@"; }
# Not through fs(): `$!` of a backgrounded function is its subshell's pid,
# and killing that left the server running after the script.
env -u AWS_CA_BUNDLE "$bin" serve --config "$work/config.toml" --data-dir "$work/data" \
  --listen "127.0.0.1:$api_port" --s3-listen "127.0.0.1:$s3_port" >"$out/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
  grep -q "S3 door at" "$out/server.log" && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$out/server.log" >&2; exit 1; }
  sleep 0.1
done
grep -q "S3 door at" "$out/server.log" || { echo "the door did not open" >&2; cat "$out/server.log" >&2; exit 1; }
admin() { fs admin --config "$work/config.toml" --data-dir "$work/data" --json "$@"; }
admin account set default --plan s3tests >/dev/null
admin account create --name alt >"$work/alt.json"
admin account create --name tenant >"$work/tenant.json"

# One secret key per account; its S3 secret as `admin key create` prints it, or
# derived from the signing secret as the door does (Signer::s3_secret).
section() { # NAME ACCOUNT
  local key_json kid sec acc_json acc_id
  key_json=$(admin key create --account "$2" --kind secret)
  kid=$(printf '%s' "$key_json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  sec=$(printf '%s' "$key_json" | python3 -c '
import base64, hashlib, hmac, json, sys
k = json.load(sys.stdin)
s = k.get("s3_secret_access_key")
if not s:
    m = hmac.new(sys.argv[1].encode(), ("s3-secret\n" + k["id"]).encode(), hashlib.sha256).digest()
    s = base64.urlsafe_b64encode(m[:30]).decode().rstrip("=")[:40]
print(s)' "$signing_secret")
  acc_id=$(admin account list | python3 -c '
import json, sys
for line in sys.stdin:
    a = json.loads(line)
    if a.get("name") == sys.argv[1]:
        print(a["id"])' "$2")
  printf '[%s]\ndisplay_name = %s\nuser_id = %s\nemail = %s@example.invalid\naccess_key = %s\nsecret_key = %s\n' \
    "$1" "$2" "$acc_id" "$2" "$kid" "$sec"
}
{
  printf '[DEFAULT]\nhost = 127.0.0.1\nport = %s\nis_secure = False\nssl_verify = False\n' "$s3_port"
  printf '[fixtures]\nbucket prefix = s3t-{random}-\n'
  section "s3 main" default
  section "s3 alt" alt
  section "s3 tenant" tenant
  printf 'tenant = unused\n'
  printf '[iam]\nemail = iam@example.invalid\nuser_id = unused\naccess_key = unused\nsecret_key = unused\ndisplay_name = unused\n'
  printf '[iam root]\naccess_key = unused\nsecret_key = unused\nuser_id = unused\nemail = root@example.invalid\n'
  printf '[iam alt root]\naccess_key = unused\nsecret_key = unused\nuser_id = unused\nemail = altroot@example.invalid\n'
} >"$out/s3tests.conf"

cd "$src"
export S3TEST_CONF=$out/s3tests.conf
unset AWS_CA_BUNDLE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_ENDPOINT_URL AWS_PROFILE
if [ "${S3TESTS_COLLECT:-}" = 1 ]; then
  # Regenerates selected.txt from the filters (docs/s3-door-research.md §4).
  M='not fails_on_aws and not lifecycle and not lifecycle_expiration and not lifecycle_transition and not encryption and not sse_s3 and not bucket_encryption and not tagging and not bucket_policy and not bucket_logging and not bucket_logging_cleanup and not object_lock and not versioning and not cloud_transition and not cloud_restore and not target_by_bucket and not iam_account and not iam_user and not object_ownership and not delete_marker and not conditional_write and not s3select and not s3website and not auth_aws2 and not storage_class'
  K='not (acl or version or object_lock or public_block or block_public or cors or bucket_policy or bucketv2_policy or policy_status or with_policy or tagging or _tags or tags_ or logging or lifecycle or sse or encrypt or kms or torrent or attributes or website or ownership or storage_class or restore or usage or read_through or access_bucket or grant or (anonymous and not anonymous_fail) or copy_enc or copy_part_enc or obj_enc_ or nonowner or not_owned or tenant or object_anon_put or (raw_get and not x_amz_expires) or raw_authenticated or key_bucket_gone or list_multipart_upload_owner or expected_bucket_owner or expires_out_max_range or expires_out_positive_range)'
  "$venv/bin/python" -m pytest s3tests/functional/test_s3.py s3tests/functional/test_headers.py \
    -m "$M" -k "$K" --collect-only -q -p no:cacheprovider | grep '::' >"$here/selected.txt"
  wc -l "$here/selected.txt"
  exit 0
fi
set +e
mapfile -t ids <"$here/selected.txt"
"$venv/bin/python" -m pytest -p no:cacheprovider -q -rN --tb=line --timeout=300 --junitxml="$out/junit.xml" \
  "$@" "${ids[@]}" >"$out/pytest.log" 2>&1
set -e
"$venv/bin/python" - "$out/junit.xml" "$out/failures.txt" <<'PY'
import collections, sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
passed, failed, skipped, causes = 0, 0, 0, collections.defaultdict(list)
for c in cases:
    bad = c.find("failure") if c.find("failure") is not None else c.find("error")
    if c.find("skipped") is not None:
        skipped += 1
    elif bad is None:
        passed += 1
    else:
        failed += 1
        text = (bad.get("message") or bad.text or "").strip().splitlines()
        first = text[0][:160] if text else "?"
        causes[first].append(c.get("name"))
with open(sys.argv[2], "w") as f:
    for cause, names in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        f.write(f"{len(names):4}  {cause}\n      {' '.join(sorted(names))}\n")
print(open(sys.argv[2]).read(), end="")
print(f"s3-tests: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
PY
