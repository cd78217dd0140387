#!/usr/bin/env python3
"""Downloads that never read (CONTRACT §23, issue 43): many connections GET a
large public file on the CDN route and read nothing, while another account's
health, list and CDN download are timed. Reports the server's peak RSS
(VmHWM), the other account's latencies and the bandwidth the owner was
charged.

    benches/attack_downloads.py [--bin target/release/filestore] [--conns 4090]
        [--size-mb 20] [--hold 20] [--config extra.toml]

Starts its own `filestore serve` on a free port in a temp dir (SQLite, local
store), so the process measured is only that one. Needs an open-file limit
above --conns (the script raises its soft limit to the hard one).
"""

import argparse
import http.client
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def request(port, method, path, key=None, body=None, headers=None):
    """One request on a new connection: (status, body bytes, seconds)."""
    started = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = dict(headers or {})
    if key:
        h["Authorization"] = f"Bearer {key}"
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data, time.monotonic() - started


def upload(port, key, name, data):
    boundary = "AtTaCk"
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode() + data + f"\r\n--{boundary}--\r\n".encode()
    status, out, _ = request(
        port, "POST", "/v1/upload", key, body,
        {"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert status == 201, (status, out[:300])
    url = json.loads(out)["url"]
    return url[url.index("/live/"):]


def admin(binary, config, data_dir, env, *args):
    out = subprocess.run(
        [binary, "admin", *args, "--json", "--config", config, "--data-dir", data_dir],
        env=env, check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout)


def bandwidth(port, key):
    status, out, _ = request(port, "GET", "/v1/usage", key)
    assert status == 200, out
    return json.loads(out)["bandwidth_bytes"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="target/release/filestore")
    ap.add_argument("--conns", type=int, default=4090)
    ap.add_argument("--size-mb", type=int, default=20)
    ap.add_argument("--hold", type=float, default=20.0, help="seconds the attack lasts")
    ap.add_argument("--rcvbuf", type=int, default=0, help="SO_RCVBUF of the attack sockets (0: the kernel's)")
    ap.add_argument("--config", help="TOML appended to the server's config")
    args = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    work = tempfile.mkdtemp(prefix="attack-downloads-")
    data_dir = os.path.join(work, "data")
    config = os.path.join(work, "config.toml")
    with open(config, "w") as f:
        f.write('[plans.bench]\nmax_file_size = "1GB"\nstorage = "100GB"\nuploads = 1000000\n'
                'rate_limit = 1000000\nrate_window = "1m"\nbandwidth = "100TB"\n')
        if args.config:
            f.write(open(args.config).read())
    env = {k: v for k, v in os.environ.items() if not k.startswith("FILESTORE_")}
    env["FILESTORE_DEFAULT_PLAN"] = "bench"
    port = free_port()
    log = open(os.path.join(work, "serve.log"), "w+")
    server = subprocess.Popen(
        [args.bin, "serve", "--config", config, "--data-dir", data_dir,
         "--listen", f"127.0.0.1:{port}"],
        env=env, stderr=log, stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                if request(port, "GET", "/v1/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        log.seek(0)
        owner = next(w for w in log.read().split() if w.startswith("sk_"))
        big = upload(port, owner, "big.bin", os.urandom(args.size_mb * 1_000_000))
        admin(args.bin, config, data_dir, env, "account", "create", "--name", "victim", "--plan", "bench")
        victim = admin(args.bin, config, data_dir, env, "key", "create", "--account", "victim",
                       "--kind", "secret")["key"]
        mine = upload(port, victim, "mine.bin", os.urandom(1_000_000))
        charged_before = bandwidth(port, owner)
        base_hwm = status_kib(server.pid, "VmHWM")
        print(f"server pid {server.pid}; VmHWM before the attack {base_hwm / 1024:.0f} MiB", flush=True)

        socks = []
        head = f"GET {big} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        started = time.monotonic()
        for i in range(args.conns):
            s = socket.socket()
            if args.rcvbuf:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
            s.connect(("127.0.0.1", port))
            s.sendall(head)
            socks.append(s)
        print(f"{len(socks)} downloads opened in {time.monotonic() - started:.1f} s", flush=True)

        times = {"health": [], "list": [], "cdn": []}
        peak_rss = 0
        until = time.monotonic() + args.hold
        while time.monotonic() < until:
            for name, path, key in (("health", "/v1/health", None), ("list", "/v1/files", victim),
                                    ("cdn", mine, None)):
                status, body, took = request(port, "GET", path, key)
                assert status == 200, (name, status, body[:200])
                times[name].append(took)
            peak_rss = max(peak_rss, status_kib(server.pid, "VmRSS"))
            time.sleep(0.2)
        hwm = status_kib(server.pid, "VmHWM")
        for s in socks:
            s.close()
        time.sleep(2.5)  # bandwidth is flushed every second
        charged = bandwidth(port, owner) - charged_before
        print(f"peak RSS (VmHWM) {hwm / 1024:.0f} MiB (before {base_hwm / 1024:.0f} MiB; "
              f"{(hwm - base_hwm) / max(1, len(socks)):.0f} KiB per connection); "
              f"highest VmRSS sampled {peak_rss / 1024:.0f} MiB")
        for name, t in times.items():
            print(f"{name}: {len(t)} requests, p50 {statistics.median(t) * 1000:.0f} ms, "
                  f"max {max(t) * 1000:.0f} ms")
        print(f"bandwidth charged to the owner: {charged / 1e6:.1f} MB "
              f"({charged / max(1, len(socks)) / 1024:.0f} KiB per connection; "
              f"the file is {args.size_mb} MB)")
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
        subprocess.run(["rm", "-rf", work], check=False)


if __name__ == "__main__":
    sys.exit(main())
