#!/usr/bin/env python3
"""A bounded soak: mixed load on a release `filestore serve` for a while, then
the verdict: errors (any answer that is not the expected one) and the growth
of the server's RSS after its warm-up.

Load (8 threads, keep-alive): uploads of 1 KiB to 2 MiB (inline and blob
files, some with `expires`), CDN downloads (whole and ranged), metadata GETs,
list pages with and without a folder, signed URLs, usage, deletes; plus a
slow client that stalls a header every few seconds (it must be closed) and
health checks.

Usage: benches/soak.py [--minutes 10] [--bin target/release/filestore]
Passes (exit 0) with 0 errors and RSS growth under 10 % from the end of the
first minute to the end. Run by hand (not in CI).
"""

import argparse
import http.client
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

BOUNDARY = "soakBOUNDARY7f3a"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def form(name, data, fields):
    parts = []
    for k, v in fields.items():
        parts.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n" % (BOUNDARY, k, v)).encode())
    parts.append(("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\n"
                  "Content-Type: application/octet-stream\r\n\r\n" % (BOUNDARY, name)).encode())
    parts.append(data)
    parts.append(("\r\n--%s--\r\n" % BOUNDARY).encode())
    return b"".join(parts)


class Worker(threading.Thread):
    def __init__(self, port, key, stop, stats, seed):
        super().__init__(daemon=True)
        self.port, self.key, self.stop, self.stats = port, key, stop, stats
        self.rng = random.Random(seed)
        self.mine = []  # (id, url, bytes)
        self.conn = None

    def req(self, method, path, body=None, headers=None, expect=(200,)):
        h = {"Authorization": "Bearer " + self.key}
        h.update(headers or {})
        for attempt in range(2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                self.conn.request(method, path, body=body, headers=h)
                r = self.conn.getresponse()
                data = r.read()
                break
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                # A keep-alive connection the server closed while idle: retry
                # once on a new one; anything else is an error.
                self.conn = None
                if attempt == 1:
                    self.error("%s %s: %s" % (method, path, e))
                    return None, None
        self.stats["ops"] += 1
        if r.status not in expect:
            self.error("%s %s: %d %s" % (method, path, r.status, data[:200]))
            return None, None
        return r, data

    def error(self, what):
        self.stats["errors"] += 1
        if self.stats["errors"] <= 20:
            print("error:", what, file=sys.stderr)

    def run(self):
        while not self.stop.is_set():
            op = self.rng.random()
            if op < 0.25 or not self.mine:
                self.upload()
            elif op < 0.55:
                self.download()
            elif op < 0.65:
                self.req("GET", "/v1/files/" + self.rng.choice(self.mine)[0])
            elif op < 0.75:
                folder = "&folder=soak%d" % self.rng.randrange(4) if self.rng.random() < 0.5 else ""
                self.req("GET", "/v1/files?limit=100" + folder)
            elif op < 0.8:
                fid = self.rng.choice(self.mine)[0]
                self.req("POST", "/v1/files/%s/signed-url" % fid, json.dumps({"expires_in": 60}),
                         {"Content-Type": "application/json"})
            elif op < 0.83:
                self.req("GET", "/v1/usage")
            else:
                fid, _, _ = self.mine.pop(self.rng.randrange(len(self.mine)))
                self.req("DELETE", "/v1/files/" + fid)

    def upload(self):
        size = self.rng.choice([1024, 4096, 60_000, 300_000, 2_000_000])
        data = os.urandom(16) * (size // 16)
        fields = {"folder": "soak%d" % self.rng.randrange(4)}
        if self.rng.random() < 0.2:
            fields["expires"] = "30s"
        body = form("f.bin", data, fields)
        r, out = self.req("POST", "/v1/upload", body,
                          {"Content-Type": "multipart/form-data; boundary=" + BOUNDARY}, expect=(201,))
        if r is not None:
            rec = json.loads(out)
            if "expires" not in fields:
                self.mine.append((rec["id"], rec["url"], data))
            if len(self.mine) > 200:
                fid = self.mine.pop(0)[0]
                self.req("DELETE", "/v1/files/" + fid)

    def download(self):
        fid, url, data = self.rng.choice(self.mine)
        path = url.split(str(self.port), 1)[1]
        if self.rng.random() < 0.3 and len(data) > 100:
            a = self.rng.randrange(len(data) - 1)
            r, out = self.req("GET", path, headers={"Range": "bytes=%d-" % a}, expect=(206,))
            if r is not None and out != data[a:]:
                self.error("ranged download of %s: wrong bytes" % fid)
        else:
            r, out = self.req("GET", path)
            if r is not None and out != data:
                self.error("download of %s: wrong bytes" % fid)


def slow_client(port, stop, stats):
    while not stop.is_set():
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        s.settimeout(30)
        t = time.time()
        try:
            while s.recv(4096):
                pass
        except OSError:
            pass
        if time.time() - t > 15:
            stats["errors"] += 1
            print("error: a stalled header was not closed within 15 s", file=sys.stderr)
        s.close()
        stop.wait(5)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "filestore"))
    ap.add_argument("--threads", type=int, default=8)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="filestore-soak.")
    cfg = os.path.join(work, "config.toml")
    with open(cfg, "w") as f:
        f.write('[server]\ndefault_plan = "soak"\nreap_interval = "1s"\nheader_timeout = "5s"\n'
                '[plans.soak]\nmax_file_size = "10MB"\nstorage = "100GB"\nuploads = 100000000\n'
                'rate_limit = 100000000\nrate_window = "1m"\n')
    port = free_port()
    log = open(os.path.join(work, "serve.log"), "w+")
    server = subprocess.Popen([os.path.abspath(a.bin), "serve", "--config", cfg, "--data-dir",
                               os.path.join(work, "data"), "--listen", "127.0.0.1:%d" % port], stderr=log)
    try:
        key = None
        for _ in range(300):
            log.seek(0)
            for w in log.read().split():
                if w.startswith("sk_"):
                    key = w
            if key:
                try:
                    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                    c.request("GET", "/v1/health")
                    if c.getresponse().status == 200:
                        break
                except OSError:
                    pass
            time.sleep(0.1)
        stats = {"ops": 0, "errors": 0}
        stop = threading.Event()
        threads = [Worker(port, key, stop, stats, i) for i in range(a.threads)]
        threads.append(threading.Thread(target=slow_client, args=(port, stop, stats), daemon=True))
        for t in threads:
            t.start()
        total = a.minutes * 60
        start = time.time()
        warm = None
        samples = []
        while time.time() - start < total:
            time.sleep(5)
            rss = rss_kib(server.pid)
            samples.append((time.time() - start, rss))
            if warm is None and time.time() - start >= min(60, total / 2):
                warm = rss
            print("t=%4.0fs ops=%d errors=%d rss=%.1f MiB" % (time.time() - start, stats["ops"], stats["errors"], rss / 1024), flush=True)
        stop.set()
        for t in threads:
            t.join(timeout=40)
        end = rss_kib(server.pid)
        growth = (end - warm) / warm * 100 if warm else 0.0
        peak = max(r for _, r in samples) if samples else end
        print("soak: %.1f min, %d requests, %d errors, RSS after warm-up %.1f MiB, at the end %.1f MiB "
              "(%+.1f %%), peak %.1f MiB" % (a.minutes, stats["ops"], stats["errors"], warm / 1024,
                                             end / 1024, growth, peak / 1024))
        ok = stats["errors"] == 0 and growth < 10
        print("soak:", "PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
