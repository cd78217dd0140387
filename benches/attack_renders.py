#!/usr/bin/env python3
"""The render attack of issue 43, rerun by hand on a release build.

Crafts five files (a ~37 KB GIF whose screen is 7000x7000, a ~190 KB
PNG of 7000x7000 that compresses well, a ~631-byte JPEG header claiming
7000x7000, a WebP whose canvas claims 7000x7000 over a 64x48 frame, and a
3000x2000 WebP of noise that libwebp's sandboxed child really decodes), uploads them to one or two "attacker" accounts, and has
strangers (no key: the public URLs) flood renders of them, each a new
variant, while a third account asks for a fresh variant of its own photo
every half second. Reports the server's peak RSS (VmHWM), the answers'
statuses, and the third account's latency (p50, max; alone first).

Usage: benches/attack_renders.py [--bin target/release/filestore]
       [--concurrency 2] [--memory 512MiB | --no-memory] [--strangers 2]
       [--seconds 30] [--threads 8]
--no-memory writes no `images.memory` key (a build without it: main).
Needs python3 with requests and Pillow.
"""

import argparse
import io
import json
import os
import random
import socket
import statistics
import struct
import subprocess
import tempfile
import threading
import time
import zlib

import requests
from PIL import Image


def jpeg_claiming(w, h):
    """A 64x48 JPEG's headers, its frame saying w x h, a few bytes of scan, EOI."""
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (9, 99, 199)).save(out, "JPEG", quality=90)
    b = bytearray(out.getvalue())
    sof = b.index(b"\xff\xc0")
    b[sof + 5:sof + 9] = struct.pack(">HH", h, w)
    sos = b.index(b"\xff\xda")
    length = struct.unpack(">H", b[sos + 2:sos + 4])[0]
    body = bytes(b[:sos + 2 + length])
    pad = max(0, 631 - len(body) - 2)
    return body + b"\x55" * pad + b"\xff\xd9"


def png_claiming(w, h):
    """A w x h RGBA PNG of zeros, deflated hard (about w*h*4/1030 bytes)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    z = zlib.compressobj(9)
    row = b"\x00" * (1 + 4 * w)
    idat = b"".join(z.compress(row) for _ in range(h)) + z.flush()
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def gif_claiming(w, h):
    """A GIF whose screen is w x h, its one frame 160x160 of noise."""
    rng = random.Random(43)
    frame = Image.frombytes("P", (160, 160), bytes(rng.randrange(256) for _ in range(160 * 160)))
    frame.putpalette([rng.randrange(256) for _ in range(768)])
    out = io.BytesIO()
    frame.save(out, "GIF")
    b = bytearray(out.getvalue())
    b[6:10] = struct.pack("<HH", w, h)
    return bytes(b)


def webp_claiming(w, h):
    """A WebP whose VP8X canvas is w x h, its one frame 64x48 (libwebp's child refuses it)."""
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (9, 99, 199)).save(out, "WEBP", quality=80)
    frame = out.getvalue()[12:]  # the VP8 chunk
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\0\0\0\0" + (w - 1).to_bytes(3, "little") + (h - 1).to_bytes(3, "little")
    body = b"WEBP" + vp8x + frame
    return b"RIFF" + struct.pack("<I", len(body)) + body


def webp_photo():
    """A 3000x2000 WebP of noise (q 90): each render a real libwebp decode in a child."""
    img = Image.frombytes("RGB", (3000, 2000), os.urandom(3000 * 2000 * 3))
    out = io.BytesIO()
    img.save(out, "WEBP", quality=90)
    return out.getvalue()


def photo():
    rng = random.Random(7)
    img = Image.frombytes("RGB", (1600, 1200), bytes(rng.randrange(256) for _ in range(1600 * 1200 * 3)))
    out = io.BytesIO()
    img.save(out, "JPEG", quality=85)
    return out.getvalue()


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--bin", default=os.path.join(here, "target/release/filestore"))
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--memory", default="512MiB")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--strangers", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--threads", type=int, default=8)
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="attack-renders.")
    data = os.path.join(work, "data")
    os.mkdir(data, 0o700)
    conf = os.path.join(work, "filestore.toml")
    memory = "" if args.no_memory else f'memory = "{args.memory}"\n'
    with open(conf, "w") as f:
        f.write('[plans.bench]\nmax_file_size = "1GB"\nstorage = "100TB"\nuploads = 100000000\n'
                'rate_limit = 100000000\nbandwidth = "100TB"\n'
                f"[images]\nvariants_per_file = 100000\nconcurrency = {args.concurrency}\n{memory}")

    def admin(*a):
        out = subprocess.run([args.bin, "admin", *a, "--config", conf, "--data-dir", data, "--json"],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out.splitlines()[0])

    keys = {}
    for name in ["a", "b", "c"]:
        acc = admin("account", "create", "--name", name, "--plan", "bench")["id"]
        keys[name] = admin("key", "create", "--account", acc, "--kind", "secret")["key"]
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    log = open(os.path.join(work, "serve.log"), "w")
    srv = subprocess.Popen([args.bin, "serve", "--config", conf, "--data-dir", data,
                            "--listen", f"127.0.0.1:{port}"], stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if requests.get(base + "/v1/health", timeout=1).ok:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.2)

        def upload(key, name, body):
            r = requests.post(base + "/v1/upload", headers={"Authorization": f"Bearer {key}"},
                              files={"file": (name, body)})
            r.raise_for_status()
            return r.json()["url"]

        attack = [("x.gif", gif_claiming(7000, 7000)), ("x.png", png_claiming(7000, 7000)),
                  ("x.jpg", jpeg_claiming(7000, 7000)), ("x.webp", webp_claiming(7000, 7000)),
                  ("noise.webp", webp_photo())]
        for name, body in attack:
            print(f"{name}: {len(body)} bytes")
        targets = []
        for who in ["a", "b"][:args.strangers]:
            targets.append([upload(keys[who], n, b) for n, b in attack])
        mine = upload(keys["c"], "photo.jpg", photo())

        def fresh(k):
            t = time.monotonic()
            r = requests.get(f"{mine}?w={200 + k}&format=webp", timeout=120)
            return time.monotonic() - t, r.status_code

        alone = [fresh(k)[0] for k in range(5)]
        stop = threading.Event()
        statuses = {}
        counter = iter(range(10**9))
        lock = threading.Lock()

        def flood(urls):
            http = requests.Session()
            while not stop.is_set():
                with lock:
                    n = next(counter)
                url = urls[n % len(urls)]
                w = 64 + n % 4000
                try:
                    code = http.get(f"{url}?w={w}&format=webp", timeout=120).status_code
                except requests.RequestException:
                    code = "error"
                with lock:
                    statuses[code] = statuses.get(code, 0) + 1

        threads = [threading.Thread(target=flood, args=(urls,), daemon=True)
                   for urls in targets for _ in range(args.threads)]
        for t in threads:
            t.start()
        time.sleep(2)
        lat = []
        k = 100
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            took, code = fresh(k)
            k += 1
            lat.append((took, code))
            time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join(timeout=130)
        with open(f"/proc/{srv.pid}/status") as f:
            hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))
        took = sorted(t for t, _ in lat)
        print(json.dumps({
            "concurrency": args.concurrency, "memory": None if args.no_memory else args.memory,
            "strangers": args.strangers, "peak_rss_mib": hwm // 1024,
            "flood_statuses": {str(k): v for k, v in statuses.items()},
            "third_alone_p50_ms": round(statistics.median(alone) * 1000),
            "third_p50_ms": round(statistics.median(took) * 1000),
            "third_max_ms": round(took[-1] * 1000),
            "third_statuses": sorted({c for _, c in lat}),
        }))
    finally:
        srv.terminate()
        srv.wait()


if __name__ == "__main__":
    main()
