#!/usr/bin/env python3
"""Webhook delivery latency (docs/decisions.md, "Webhooks"): from commit to receipt, at a steady
upload rate.

Starts `filestore serve` (the binary given, normally a release build) on a
temp data dir (metadata in SQLite there, or on PostgreSQL with
--database-url), creates an account on a plan with limits out of reach, a
secret key and a `file.created` webhook (all with `filestore admin`, while it
serves) pointing at a threaded receiver in this process, then uploads 4 KiB
files at a steady 100/s for 20 s (keep-alive connections, each request sent
at its slot of the schedule). For every event received it records the
receipt time minus the event body's `timestamp` (the commit time, in
milliseconds) and prints count, p50, p99 and max, the upload latency, and
any event missing or received twice. Signatures are checked with the
`standardwebhooks` package when it is installed.

With --hanging (or --failing), a second account gets uploads at the same
rate, interleaved, and a `file.created` webhook to a receiver that accepts
each connection and never answers (or answers 500 at once): the first
account's latency is then the healthy receiver's beside it (p99 must stay
under 1 s), and the bench prints the most requests the hanging receiver
ever had open at once (at most 4) and the attempts the failing one got.
--hanging N gives the second account N such webhooks, each to its own
hanging receiver (one downstream outage across subscriptions); the bench
then prints the most open at once of any one and of all together.

How to run (by hand, not in CI; python3 only, standardwebhooks optional):

    cargo build --release
    python3 benches/webhook_latency.py target/release/filestore
    # on PostgreSQL (an empty database the bench may fill):
    python3 benches/webhook_latency.py target/release/filestore \\
        --database-url postgres://postgres@127.0.0.1:5432/bench

Options: --rate N (uploads/s, default 100), --seconds S (default 20),
--size BYTES (default 4096), --connections N (default 8), --wait S (how long
to wait for the last events after the uploads, default 60), --hanging [N],
--failing (a second account whose receiver hangs, or answers 500).
Exit status 0 when every event of an answered upload arrived, 1 otherwise.
"""

import argparse
import datetime
import http.client
import http.server
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

try:
    import standardwebhooks
except ImportError:  # the bench runs without it; it says so
    standardwebhooks = None

CONFIG = """
[server]
default_plan = "bench"

[plans.bench]
max_file_size = 1_000_000_000
storage = 1_000_000_000_000_000
bandwidth = 1_000_000_000_000_000
uploads = 1_000_000_000
rate_limit = 1_000_000_000
rate_window = "1m"
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def percentile(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    k = min(len(v) - 1, max(0, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


class Receiver:
    """A threaded HTTP/1.1 receiver recording each event's receipt."""

    def __init__(self):
        self.lock = threading.Lock()
        self.events = []  # (received_at, webhook_id, type, data_id, timestamp)
        self.invalid = 0
        self.secret = None
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                received_at = time.time()
                headers = {k.lower(): v for k, v in self.headers.items()}
                status = 204
                if standardwebhooks is not None and receiver.secret:
                    try:
                        standardwebhooks.Webhook(receiver.secret).verify(raw, headers)
                    except Exception:  # noqa: BLE001 - any failure counts
                        status = 401
                try:
                    body = json.loads(raw)
                    record = (
                        received_at,
                        headers.get("webhook-id"),
                        body.get("type"),
                        (body.get("data") or {}).get("id"),
                        body.get("timestamp"),
                    )
                except ValueError:
                    record, status = None, 400
                with receiver.lock:
                    if status == 204 and record:
                        receiver.events.append(record)
                    elif status == 401:
                        receiver.invalid += 1
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def snapshot(self):
        with self.lock:
            return list(self.events), self.invalid


class Hanging:
    """Accepts connections, reads what comes and never answers; counts the
    requests open at once (until the sender closes the connection), its own
    and those of every Hanging together."""

    all_lock = threading.Lock()
    all_open = all_most = 0

    def __init__(self):
        self.lock = threading.Lock()
        self.open = self.most = self.requests = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1024)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self.hold, args=(conn,), daemon=True).start()

    def hold(self, conn):
        seen, counted = b"", False
        try:
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                seen += chunk
                if not counted and b"\r\n\r\n" in seen:
                    counted = True
                    with self.lock:
                        self.requests += 1
                        self.open += 1
                        self.most = max(self.most, self.open)
                    with Hanging.all_lock:
                        Hanging.all_open += 1
                        Hanging.all_most = max(Hanging.all_most, Hanging.all_open)
        except OSError:
            pass
        finally:
            conn.close()
            if counted:
                with self.lock:
                    self.open -= 1
                with Hanging.all_lock:
                    Hanging.all_open -= 1


class Failing:
    """Answers 500 to every request; counts them."""

    def __init__(self):
        self.requests = 0
        failing = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                failing.requests += 1
                self.send_response(500)
                self.send_header("content-length", "0")
                self.end_headers()

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def multipart(name, data):
    boundary = "----bench%s" % os.urandom(8).hex()
    head = (
        "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n" % (boundary, name)
    ).encode()
    tail = ("\r\n--%s--\r\n" % boundary).encode()
    return "multipart/form-data; boundary=%s" % boundary, head + data + tail


def main():
    p = argparse.ArgumentParser(description="webhook delivery latency at a steady upload rate")
    p.add_argument("binary", help="the filestore binary (target/release/filestore)")
    p.add_argument("--database-url", help="PostgreSQL metadata (an empty database)")
    p.add_argument("--rate", type=float, default=100.0)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--connections", type=int, default=8)
    p.add_argument("--wait", type=float, default=60.0)
    p.add_argument("--hanging", nargs="?", type=int, const=1, default=0, metavar="N",
                   help="a second account with N webhooks (default 1), each to its own "
                        "receiver that never answers")
    p.add_argument("--failing", action="store_true",
                   help="a second account whose webhook receiver answers 500")
    args = p.parse_args()
    if args.hanging and args.failing:
        sys.exit("--hanging or --failing, not both")

    work = tempfile.mkdtemp(prefix="webhook-bench.")
    data_dir = os.path.join(work, "data")
    config = os.path.join(work, "config.toml")
    with open(config, "w") as f:
        f.write(CONFIG)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FILESTORE_")}
    if args.database_url:
        env["FILESTORE_DATABASE_URL"] = args.database_url
    port = free_port()
    server = None
    try:
        server = subprocess.Popen(
            [args.binary, "serve", "--config", config, "--data-dir", data_dir,
             "--listen", "127.0.0.1:%d" % port],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(work, "serve.log"), "w"),
        )
        deadline = time.time() + 60
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/v1/health")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            if server.poll() is not None or time.time() > deadline:
                sys.exit("serve did not start:\n" + open(os.path.join(work, "serve.log")).read())
            time.sleep(0.05)

        def admin(*a):
            out = subprocess.run(
                [args.binary, "admin", *a, "--json", "--config", config, "--data-dir", data_dir],
                env=env, check=True, capture_output=True, text=True,
            ).stdout
            return json.loads(out.splitlines()[0])

        receiver = Receiver()
        account = admin("account", "create", "--name", "bench", "--plan", "bench")["id"]
        key = admin("key", "create", "--account", account, "--kind", "secret")["key"]
        hook = admin("webhook", "create", "--account", account, "--url",
                     "http://127.0.0.1:%d/hook" % receiver.port, "--event", "file.created")
        receiver.secret = hook["secret"]
        keys, noisy = [key], None
        if args.hanging or args.failing:
            noisy = [Hanging() for _ in range(args.hanging)] if args.hanging else [Failing()]
            other = admin("account", "create", "--name", "noisy", "--plan", "bench")["id"]
            keys.append(admin("key", "create", "--account", other, "--kind", "secret")["key"])
            for rx in noisy:
                admin("webhook", "create", "--account", other, "--url",
                      "http://127.0.0.1:%d/hook" % rx.port, "--event", "file.created")

        # Upload i goes to account i % len(keys): each account at --rate.
        total = int(args.rate * args.seconds) * len(keys)
        rate = args.rate * len(keys)
        payload = os.urandom(args.size)
        lock = threading.Lock()
        state = {"next": 0}
        uploaded = {}  # file id -> answered at
        upload_lat, late, failures = [], [], []
        start = time.time() + 0.5

        def worker():
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            while True:
                with lock:
                    i = state["next"]
                    state["next"] += 1
                if i >= total:
                    break
                slot = start + i / rate
                wait = slot - time.time()
                if wait > 0:
                    time.sleep(wait)
                ctype, body = multipart("bench-%06d.bin" % i, payload)
                sent = time.time()
                try:
                    conn.request("POST", "/v1/upload", body=body, headers={
                        "Authorization": "Bearer " + keys[i % len(keys)],
                        "Content-Type": ctype})
                    r = conn.getresponse()
                    answer = r.read()
                except (OSError, http.client.HTTPException) as e:
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    with lock:
                        failures.append(repr(e))
                    continue
                done = time.time()
                with lock:
                    if r.status != 201:
                        failures.append("%d %s" % (r.status, answer[:200]))
                    elif i % len(keys) == 0:
                        uploaded[json.loads(answer)["id"]] = done
                    upload_lat.append(done - sent)
                    late.append(max(0.0, sent - slot))
            conn.close()

        threads = [threading.Thread(target=worker) for _ in range(args.connections)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.time() - start

        deadline = time.time() + args.wait
        while time.time() < deadline:
            events, _ = receiver.snapshot()
            if set(uploaded) <= {e[3] for e in events}:
                break
            time.sleep(0.2)
        events, invalid = receiver.snapshot()

        lat, seen, dups = [], {}, 0
        for received_at, wid, typ, fid, ts in events:
            if typ != "file.created":
                continue
            if fid in seen:
                dups += 1
                continue
            seen[fid] = wid
            commit = datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
            lat.append((received_at - commit) * 1000.0)
        missing = [fid for fid in uploaded if fid not in seen]

        print("webhook delivery latency, commit (event timestamp) to receipt")
        print("  store: %s" % ("PostgreSQL" if args.database_url else "SQLite"))
        if noisy and isinstance(noisy[0], Hanging):
            print("  beside: a second account's %d receivers that never answer: %d requests, "
                  "at most %d open at once at one, %d at all together"
                  % (len(noisy), sum(rx.requests for rx in noisy),
                     max(rx.most for rx in noisy), Hanging.all_most))
        elif noisy:
            print("  beside: a second account's receiver answering 500: %d attempts"
                  % noisy[0].requests)
        print("  uploads: %d of %d answered 201 in %.1f s (%.1f/s target %.0f/s), %d failed"
              % (len(uploaded), total // len(keys), elapsed, len(uploaded) / elapsed,
                 args.rate, len(failures)))
        print("  upload latency ms: p50 %.1f  p99 %.1f  max %.1f; sent behind schedule p99 %.1f ms"
              % (percentile(upload_lat, 50) * 1000, percentile(upload_lat, 99) * 1000,
                 max(upload_lat or [0]) * 1000, percentile(late, 99) * 1000))
        print("  events received: %d (duplicates %d, bad signatures %d%s)"
              % (len(lat), dups, invalid,
                 "" if standardwebhooks else ", signatures not checked: no standardwebhooks"))
        if lat:
            print("  latency ms: p50 %.1f  p99 %.1f  max %.1f  mean %.1f  min %.1f"
                  % (percentile(lat, 50), percentile(lat, 99), max(lat),
                     statistics.mean(lat), min(lat)))
        print("  missing: %d%s" % (len(missing), (" e.g. " + ", ".join(missing[:5])) if missing else ""))
        if failures:
            print("  first failures: %s" % failures[:3])
        return 0 if not missing and not failures and invalid == 0 else 1
    finally:
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
