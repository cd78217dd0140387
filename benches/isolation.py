#!/usr/bin/env python3
"""Isolation II, the attacks of issue 43 rerun as strangers would make them.

Starts `filestore serve` on a fresh data dir and, while a victim account's
health, list and CDN GET are timed every 200 ms and the server's RSS is
sampled every 100 ms (VmHWM, VmRSS from /proc):

- downloads: N connections (default 4,090) ask for a 20 MB public file of
  another account, with no key, and never read; held for --hold seconds.
  Reports peak RSS, the victim's latencies, and the bandwidth charged to
  the file's owner (usage's bandwidth_bytes) against the bytes the
  connections could have received.
- renders: the three files of the issue (a GIF whose screen claims
  7000x7000, a ~190 KB PNG of 7000x7000 RGBA, a 631-byte JPEG whose header
  claims 7000x7000, from benches/attack_renders.py) uploaded by two stranger accounts, each flooding
  renders of new widths from 4 threads; a third account's fresh variant (a
  new width of a 1600x1200 photo-like JPEG each time) is timed alone first,
  then during the flood. Reports statuses, peak RSS and the latencies.

Usage: benches/isolation.py [--bin target/release/filestore] [--phase all]
       [--conns 4090] [--hold 20] [--flood 20] [--config-extra 'toml lines']
Run by hand (not in CI). Needs python3, and Pillow and requests (PyPI) for the
images, which benches/attack_renders.py crafts.
"""

import argparse
import http.client
import json
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, binary, extra):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="fs-isolation-")
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        self.cfg = os.path.join(self.dir, "config.toml")
        base = "http://127.0.0.1:%d" % self.port
        with open(self.cfg, "w") as f:
            f.write(
                '[server]\nbase_url = "%s"\ncdn_url = "%s"\ndefault_plan = "big"\n%s\n'
                '[plans.big]\nmax_file_size = 2000000000\nstorage = 100000000000\n'
                'bandwidth = 1000000000000\nuploads = 100000000\nrate_limit = 100000000\n'
                'rate_window = "1m"\n' % (base, base, extra)
            )
        self.log = open(os.path.join(self.dir, "serve.log"), "w")
        self.proc = subprocess.Popen(
            [binary, "serve", "--config", self.cfg, "--data-dir", self.data,
             "--listen", "127.0.0.1:%d" % self.port],
            stdout=self.log, stderr=self.log,
        )
        for _ in range(300):
            try:
                if self.get("/v1/health")[0] in (200, 503):
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit("the server did not start: see %s" % self.log.name)

    def admin(self, *args):
        out = subprocess.run(
            [self.binary, "admin", *args, "--json", "--config", self.cfg, "--data-dir", self.data],
            check=True, capture_output=True, text=True,
        ).stdout
        return json.loads(out.splitlines()[0])

    def account(self, name):
        acc = self.admin("account", "create", "--name", name, "--plan", "big")["id"]
        return acc, self.admin("key", "create", "--account", acc, "--kind", "secret")["key"]

    def get(self, path, key=None, timeout=30):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {"Authorization": "Bearer " + key} if key else {}
        c.request("GET", path, headers=headers)
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, body

    def upload(self, key, name, data):
        boundary = "----isolation%d" % random.getrandbits(48)
        head = ('--%s\r\nContent-Disposition: form-data; name="file"; filename="%s"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n" % (boundary, name)).encode()
        body = head + data + ("\r\n--%s--\r\n" % boundary).encode()
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        c.request("POST", "/v1/upload", body=body, headers={
            "Authorization": "Bearer " + key,
            "Content-Type": "multipart/form-data; boundary=" + boundary,
        })
        r = c.getresponse()
        rec = json.loads(r.read())
        c.close()
        if r.status != 201:
            raise SystemExit("upload of %s: %s %s" % (name, r.status, rec))
        return rec

    def memory(self):
        """(VmHWM, VmRSS) in MiB."""
        out = {}
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith(("VmHWM:", "VmRSS:")):
                    k, v = line.split(":")
                    out[k] = int(v.split()[0]) / 1024
        return out.get("VmHWM", 0), out.get("VmRSS", 0)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def path_of(url):
    return urllib.parse.urlsplit(url).path


class Watch(threading.Thread):
    """The victim's health, list and CDN GET every 200 ms; the RSS every 100 ms."""

    def __init__(self, srv, key, cdn_path):
        super().__init__(daemon=True)
        self.srv, self.key, self.cdn_path = srv, key, cdn_path
        self.stop_at = None
        self.times = {"health": [], "list": [], "cdn": []}
        self.errors = []
        self.peak_rss = 0.0
        self.running = True
        threading.Thread(target=self.rss, daemon=True).start()

    def rss(self):
        while self.running:
            try:
                self.peak_rss = max(self.peak_rss, self.srv.memory()[1])
            except OSError:
                return
            time.sleep(0.1)

    def run(self):
        probes = [("health", "/v1/health", None), ("list", "/v1/files?limit=10", self.key),
                  ("cdn", self.cdn_path, None)]
        while self.running:
            for name, path, key in probes:
                t = time.monotonic()
                try:
                    status, _ = self.srv.get(path, key, timeout=10)
                    if status not in (200,):
                        self.errors.append("%s %s" % (name, status))
                except OSError as e:
                    self.errors.append("%s %s" % (name, e))
                self.times[name].append(time.monotonic() - t)
            time.sleep(0.2)

    def report(self, what):
        self.running = False
        self.join(15)
        print("  victim during %s (%d rounds): " % (what, len(self.times["health"])) + ", ".join(
            "%s p50 %.0f ms max %.0f ms" % (n, 1000 * statistics.median(v), 1000 * max(v))
            for n, v in self.times.items() if v))
        if self.errors:
            print("  victim errors: %d, first: %s" % (len(self.errors), self.errors[:3]))
        print("  peak RSS sampled %.0f MiB; VmHWM %.0f MiB" % (self.peak_rss, self.srv.memory()[0]))


def downloads(srv, victim_key, victim_cdn, args):
    print("== downloads: %d connections on a %d MB public file, never reading" % (
        args.conns, args.file_mb))
    owner, owner_key = srv.account("owner")
    rec = srv.upload(owner_key, "big.bin", os.urandom(args.file_mb * 1000 * 1000))
    target = path_of(rec["url"])
    before = json.loads(srv.get("/v1/usage", owner_key)[1])["bandwidth_bytes"]
    watch = Watch(srv, victim_key, victim_cdn)
    watch.start()
    socks, failed = [], 0
    t0 = time.monotonic()
    for _ in range(args.conns):
        try:
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(10)
            s.connect(("127.0.0.1", srv.port))
            s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % target).encode())
            socks.append(s)
        except OSError:
            failed += 1
    print("  %d connected, %d failed, in %.1f s" % (len(socks), failed, time.monotonic() - t0))
    time.sleep(args.hold)
    closed = 0
    for s in socks:
        # What is queued for it is read now, to its end: a connection the
        # server closed ends there (or was reset).
        s.setblocking(False)
        try:
            while True:
                if s.recv(65536) == b"":
                    closed += 1
                    break
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    print("  closed by the server after %d s: %d of %d" % (args.hold, closed, len(socks)))
    watch.report("downloads")
    for s in socks:
        s.close()
    time.sleep(2)
    after = json.loads(srv.get("/v1/usage", owner_key)[1])["bandwidth_bytes"]
    print("  bandwidth charged to the owner: %.1f MB (the connections asked for %.0f MB)" % (
        (after - before) / 1e6, len(socks) * args.file_mb))


def attack_images():
    """The issue's three files, as benches/attack_renders.py crafts them."""
    from attack_renders import gif_claiming, jpeg_claiming, png_claiming

    return [("bomb.gif", gif_claiming(7000, 7000)), ("bomb.png", png_claiming(7000, 7000)),
            ("bomb.jpg", jpeg_claiming(7000, 7000))]


def renders(srv, victim_key, victim_cdn, args):
    print("== renders: two strangers flood renders of the issue's files; a third account's fresh variant")
    files = attack_images()
    print("  files: " + ", ".join("%s %d bytes" % (n, len(d)) for n, d in files))
    # A file holds at most [images] variants_per_file variants (16 by
    # default): copies that differ in a byte past the image's end, and
    # widths spread over them, keep every request a fresh render.
    paths = []
    for who in ("stranger1", "stranger2"):
        _, key = srv.account(who)
        paths.append([path_of(srv.upload(key, "%d-%s" % (i, n), d + bytes([i]))["url"])
                      for n, d in files for i in range(8)])
    _, third_key = srv.account("third")
    from attack_renders import photo

    # Copies that differ past the JPEG's end, as the strangers' files.
    jpeg = photo()
    thirds = [path_of(srv.upload(third_key, "photo%d.jpg" % i, jpeg + bytes([i]))["url"])
              for i in range(6)]
    asked = iter(range(100000))

    def fresh():
        n = next(asked)
        t = time.monotonic()
        status, _ = srv.get("%s?w=%d&format=webp" % (thirds[n % len(thirds)], 200 + n), timeout=60)
        return status, time.monotonic() - t

    alone = [fresh() for _ in range(5)]
    print("  third's fresh variant alone: %s" % ", ".join("%d %.0f ms" % (s, 1000 * t) for s, t in alone))
    statuses = {}
    running = [True]
    lock = threading.Lock()

    def flood(own):
        w = random.randrange(100, 4000)
        while running[0]:
            w += 1
            for p in own:
                try:
                    status, _ = srv.get("%s?w=%d" % (p, w), timeout=60)
                except OSError as e:
                    status = type(e).__name__
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1

    watch = Watch(srv, victim_key, victim_cdn)
    watch.start()
    threads = [threading.Thread(target=flood, args=(own,), daemon=True)
               for own in paths for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(2)
    during = []
    end = time.monotonic() + args.flood
    while time.monotonic() < end:
        during.append(fresh())
        time.sleep(0.5)
    running[0] = False
    for t in threads:
        t.join(60)
    watch.report("renders")
    times = [t for _, t in during]
    print("  flood answers: %s" % statuses)
    print("  third's fresh variant during the flood (%d): statuses %s, p50 %.0f ms, max %.0f ms" % (
        len(during), sorted({s for s, _ in during}), 1000 * statistics.median(times), 1000 * max(times)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/filestore")
    ap.add_argument("--phase", choices=["all", "downloads", "renders"], default="all")
    ap.add_argument("--conns", type=int, default=4090)
    ap.add_argument("--file-mb", type=int, default=20)
    ap.add_argument("--hold", type=int, default=20)
    ap.add_argument("--flood", type=int, default=20)
    ap.add_argument("--config-extra", default="")
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, args.conns + 1024)), hard))
    srv = Server(args.bin, args.config_extra.replace("\\n", "\n"))
    try:
        _, victim_key = srv.account("victim")
        victim_cdn = path_of(srv.upload(victim_key, "small.bin", os.urandom(20000))["url"])
        if args.phase in ("all", "downloads"):
            downloads(srv, victim_key, victim_cdn, args)
        if args.phase in ("all", "renders"):
            renders(srv, victim_key, victim_cdn, args)
        print("== the server's VmHWM over the whole run: %.0f MiB" % srv.memory()[0])
    finally:
        srv.stop()


if __name__ == "__main__":
    sys.exit(main())
