#!/usr/bin/env python3
"""A webhook receiver for the tests of docs/decisions.md, "Webhooks" (tests/it/webhooks/).

Verifies every request with an implementation nobody here wrote, the
`standardwebhooks` package on PyPI (pinned in .ci/run):
`standardwebhooks.Webhook(secret).verify(body, headers)`; answers 401 when the
signature does not verify.

    python3 tests/webhooks/receiver.py --port-file F --log L \
        [--secret whsec_… | --secret-file S] [--port P] [--read-files] \
        [--fail-first N [--fail-status CODE]] [--down-until-file D] [--delay-ms MS] [--arrivals F]

--secret-file is read again on every request (the secret is only known after
`admin webhook create`, which needs this receiver's URL first); while it is
missing or empty, requests are answered 503. --port-file: the port it bound
(127.0.0.1, port 0 unless --port) is written there once it listens.

--log: one JSON line per request, written when the answer has been sent:
  webhook_id, webhook_timestamp (the header, as sent), type, data_id, data
  (the body's data), timestamp (the body's), valid (signature verified; null
  when no secret was known), attempt (1, 2, … per webhook-id), status (the
  answer), received_at / answered_at (unix seconds, float), method, path,
  content_type, and with --read-files on a valid file.created with a url:
  read = {"status", "size", "sha256", "ok"} (ok: the bytes at data.url are
  data.size long and hash to data.sha256).

Failure injection, in this order, after counting the attempt:
  --down-until-file D: 503 while D does not exist;
  --fail-first N: 500 (or --fail-status, a 3xx with a Location to
    /elsewhere on this receiver) to the first N attempts of every webhook-id;
  --delay-ms MS: sleep that long before answering (any answer).

--arrivals F: one JSON line per request as soon as its body has arrived
(webhook_id, attempt, received_at), before any delay: what is in flight.
"""

import argparse
import hashlib
import http.server
import json
import os
import sys
import threading
import time
import urllib.request

import standardwebhooks


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.attempts = {}
        self.log = open(args.log, "a", encoding="utf-8") if args.log else None
        self.arrivals = open(args.arrivals, "a", encoding="utf-8") if args.arrivals else None

    def secret(self):
        if self.args.secret:
            return self.args.secret
        if self.args.secret_file:
            try:
                with open(self.args.secret_file, encoding="utf-8") as f:
                    return f.read().strip() or None
            except FileNotFoundError:
                return None
        return None

    def attempt(self, webhook_id):
        with self.lock:
            n = self.attempts.get(webhook_id, 0) + 1
            self.attempts[webhook_id] = n
            return n

    def arrived(self, record):
        if self.arrivals:
            line = json.dumps(record, sort_keys=True) + "\n"
            with self.lock:
                self.arrivals.write(line)
                self.arrivals.flush()

    def write(self, record):
        line = json.dumps(record, sort_keys=True) + "\n"
        with self.lock:
            if self.log:
                self.log.write(line)
                self.log.flush()
            else:
                sys.stdout.write(line)
                sys.stdout.flush()


def read_file(url, size, sha256):
    """GET url: what came back, and whether it is the file the event names."""
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            body = r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        return {"status": e.code, "ok": False, "error": str(e)}
    except Exception as e:  # noqa: BLE001 - reported, never raised
        return {"status": None, "ok": False, "error": repr(e)}
    digest = hashlib.sha256(body).hexdigest()
    return {
        "status": status,
        "size": len(body),
        "sha256": digest,
        "ok": status == 200 and len(body) == size and digest == sha256,
    }


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None  # set in main

    def log_message(self, format, *args):  # noqa: A002 - the base's name
        pass

    def answer(self, status, text):
        body = (text + "\n").encode()
        self.send_response(status)
        if 300 <= status < 400:
            self.send_header("location", "/elsewhere")
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_GET(self):
        # Not a delivery (a sender following a redirect would show here).
        self.state.write({
            "method": self.command, "path": self.path, "status": 405,
            "received_at": time.time(), "answered_at": time.time(),
            "webhook_id": self.headers.get("webhook-id"), "type": None,
            "data_id": None, "attempt": None, "valid": None,
        })
        self.answer(405, "POST only")

    do_PUT = do_GET
    do_PATCH = do_GET
    do_DELETE = do_GET

    def do_POST(self):
        received_at = time.time()
        st = self.state
        args = st.args
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        webhook_id = headers.get("webhook-id")
        attempt = st.attempt(webhook_id)
        st.arrived({"webhook_id": webhook_id, "attempt": attempt, "received_at": received_at})
        record = {
            "webhook_id": webhook_id,
            "webhook_timestamp": headers.get("webhook-timestamp"),
            "webhook_signature": headers.get("webhook-signature"),
            "content_type": headers.get("content-type"),
            "method": self.command,
            "path": self.path,
            "attempt": attempt,
            "received_at": received_at,
            "type": None,
            "data_id": None,
            "data": None,
            "timestamp": None,
            "valid": None,
            "read": None,
        }
        try:
            body = json.loads(raw)
            record["type"] = body.get("type")
            record["timestamp"] = body.get("timestamp")
            record["data"] = body.get("data")
            if isinstance(record["data"], dict):
                record["data_id"] = record["data"].get("id")
        except Exception as e:  # noqa: BLE001 - logged
            record["body_error"] = repr(e)
            record["body"] = raw.decode("utf-8", "replace")

        secret = st.secret()
        if secret is None:
            status, text = 503, "no secret yet"
        else:
            try:
                standardwebhooks.Webhook(secret).verify(raw, headers)
                record["valid"] = True
                status, text = 200, "ok"
            except Exception as e:  # noqa: BLE001 - any failure is a bad signature
                record["valid"] = False
                record["verify_error"] = repr(e)
                status, text = 401, "invalid signature"

        if status == 200 and args.down_until_file and not os.path.exists(args.down_until_file):
            status, text = 503, "down"
        if status == 200 and attempt <= args.fail_first:
            status, text = args.fail_status, "failing on purpose"
        if (
            status == 200
            and args.read_files
            and record["type"] == "file.created"
            and isinstance(record["data"], dict)
            and record["data"].get("url")
        ):
            d = record["data"]
            record["read"] = read_file(d["url"], d.get("size"), d.get("sha256"))
        if args.delay_ms:
            time.sleep(args.delay_ms / 1000.0)
        record["status"] = status
        try:
            self.answer(status, text)
        finally:
            record["answered_at"] = time.time()
            st.write(record)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def die_with_parent():
    """Linux: the receiver ends when the test that started it does."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - elsewhere the test kills it
        pass


def main():
    die_with_parent()
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--secret")
    p.add_argument("--secret-file")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    p.add_argument("--log")
    p.add_argument("--read-files", action="store_true")
    p.add_argument("--fail-first", type=int, default=0)
    p.add_argument("--fail-status", type=int, default=500)
    p.add_argument("--down-until-file")
    p.add_argument("--delay-ms", type=int, default=0)
    p.add_argument("--arrivals")
    args = p.parse_args()
    Handler.state = State(args)
    server = Server(("127.0.0.1", args.port), Handler)
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    else:
        print(f"listening on http://127.0.0.1:{port}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
