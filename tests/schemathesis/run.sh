#!/usr/bin/env bash
# Schemathesis against a real server over the whole OpenAPI document.
#   bash tests/schemathesis/run.sh [path/to/filestore]   (default target/debug/filestore)
# Needs `st` (pip install schemathesis==4.32.5). Every check is on (see
# schemathesis.toml beside this file); any failure or 5xx fails the run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../../target/debug/filestore}"
command -v st >/dev/null || { echo "schemathesis (st) is not installed" >&2; exit 1; }
data="$(mktemp -d)"
log="$data/serve.log"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$bin" serve --config "$here/server.toml" --data-dir "$data/data" --listen "127.0.0.1:$port" 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 1 100); do
  grep -q "^filestore login " "$log" && break
  sleep 0.1
done
key="$(grep "^filestore login " "$log" | awk '{print $NF}')"
[ -n "$key" ] || { cat "$log" >&2; exit 1; }
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=hooks \
st --config-file "$here/schemathesis.toml" run "http://127.0.0.1:$port/v1/openapi.json" \
  -H "Authorization: Bearer $key" \
  --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-200}" --seed "${SCHEMATHESIS_SEED:-1}" --no-color
# The server logged no error (a 5xx or a panic would show here too). The webhook sender's
# warnings are expected: schemathesis subscribes made-up receivers (POST /v1/webhooks, e.g.
# https://0.com/) to the files it uploads, and their failing deliveries are logged as such.
if grep -E " (ERROR|WARN) " "$log" | grep -v "filestore::access" \
  | grep -v "filestore::service::webhooks: webhook \(receiver failing\|delivery failed\|event given up\)"; then
  echo "the server logged errors during the run" >&2
  exit 1
fi
