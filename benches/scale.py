#!/usr/bin/env python3
"""Latency at scale: one account with N files (default 1,000,000).

Seeds the files straight into a fresh data dir's SQLite database (rows with
small inline bytes, as uploads of small files store them), starts
`filestore serve` on it, and measures, one request at a time over a
keep-alive connection, p50/p99/max of:

- GET /v1/files/{id} of random files,
- a CDN GET of random files,
- the first list page, a list page with a folder filter,
- list pages deep in the account: page 10,000 (limit 100) reached through the
  cursor, timed against page 2 (their cost must not grow with depth).

Usage: benches/scale.py [--files N] [--bin target/release/filestore] [--samples 2000]
Run by hand (not in CI). Needs python3 only.
"""

import argparse
import hashlib
import http.client
import json
import os
import random
import secrets
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

FOLDERS = 100  # files spread over this many folders


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def admin(binary, data_dir, *args):
    out = subprocess.run(
        [binary, "admin", *args, "--json", "--data-dir", data_dir],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out.splitlines()[0])


def seed(db_path, account, n):
    """N files for `account`, created 1 ms apart, each with 64 inline bytes."""
    con = sqlite3.connect(db_path)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = OFF")
    data = b"x" * 64
    sha = hashlib.sha256(data).hexdigest()
    start = int(time.time() * 1000) - n - 60_000
    ids = []

    def rows():
        for i in range(n):
            ms = start + i
            fid = "f_%012x%s" % (ms, secrets.token_hex(16))
            ids.append(fid)
            yield (fid, account, "file%d.txt" % i, "folder%d" % (i % FOLDERS), len(data),
                   "text/plain", 0, sha, "%s/%s" % (account, fid), ms, None, 1)

    con.execute("BEGIN")
    con.executemany(
        "INSERT INTO files (id, account_id, name, folder, size, content_type, private, sha256,"
        " blob_key, created_at, expires_at, inline) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows())
    con.execute("INSERT INTO inline_blobs (blob_key, data) SELECT blob_key, ? FROM files", (data,))
    con.execute("UPDATE accounts SET storage_bytes = ? WHERE id = ?", (n * len(data), account))
    con.execute("COMMIT")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return ids


class Client:
    def __init__(self, port, key):
        self.conn = http.client.HTTPConnection("127.0.0.1", port)
        self.key = key

    def get(self, path, auth=True):
        headers = {"Authorization": "Bearer " + self.key} if auth else {}
        t = time.perf_counter()
        self.conn.request("GET", path, headers=headers)
        r = self.conn.getresponse()
        body = r.read()
        dt = (time.perf_counter() - t) * 1000
        if r.status != 200:
            sys.exit("GET %s: %d %s" % (path, r.status, body[:200]))
        return dt, body


def stats(name, ms):
    ms = sorted(ms)
    p = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]
    print("%-34s n=%-6d p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms" % (name, len(ms), p(0.5), p(0.99), ms[-1]))
    return p(0.99)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "filestore"))
    ap.add_argument("--samples", type=int, default=2000)
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    work = tempfile.mkdtemp(prefix="filestore-scale.")
    data_dir = os.path.join(work, "data")
    # `admin` works on an existing data dir only (it refuses to make one up).
    os.makedirs(data_dir, mode=0o700)
    server = None
    try:
        acc = admin(binary, data_dir, "account", "create", "--name", "scale")["id"]
        key = admin(binary, data_dir, "key", "create", "--account", acc, "--kind", "secret")["key"]
        t = time.time()
        ids = seed(os.path.join(data_dir, "filestore.db"), acc, a.files)
        print("seeded %d files in %.1f s" % (a.files, time.time() - t))
        port = free_port()
        server = subprocess.Popen(
            [binary, "serve", "--data-dir", data_dir, "--listen", "127.0.0.1:%d" % port],
            stderr=open(os.path.join(work, "serve.log"), "w"))
        c = Client(port, key)
        for _ in range(300):
            try:
                c.get("/v1/health", auth=False)
                break
            except (ConnectionError, OSError):
                c = Client(port, key)
                time.sleep(0.1)
        sample = random.sample(ids, min(a.samples, len(ids)))
        worst = {}
        # Warm up the page cache the way a running server would have it.
        for fid in sample[:200]:
            c.get("/v1/files/" + fid)
        worst["get"] = stats("GET /v1/files/{id}", [c.get("/v1/files/" + f)[0] for f in sample])
        rec = json.loads(c.get("/v1/files/" + ids[0])[1])
        cdn = urllib.parse.urlsplit(rec["url"]).path.rsplit("/", 2)[0]
        idx = {f: i for i, f in enumerate(ids)}
        worst["cdn"] = stats("CDN GET", [c.get("%s/%s/file%d.txt" % (cdn, f, idx[f]), auth=False)[0] for f in sample])
        n = max(200, a.samples // 10)
        worst["list"] = stats("list, first page (100)", [c.get("/v1/files?limit=100")[0] for _ in range(n)])
        worst["folder"] = stats("list, folder filter (100)",
                                [c.get("/v1/files?limit=100&folder=folder%d" % random.randrange(FOLDERS))[0] for _ in range(n)])
        # Walk the cursor to page 10,000 (or as deep as the files go), then
        # time that page against page 2.
        depth = min(10_000, a.files // 100)
        cursor, second = None, None
        t = time.time()
        for page in range(1, depth):
            q = "/v1/files?limit=100" + ("&cursor=" + cursor if cursor else "")
            body = json.loads(c.get(q)[1])
            cursor = body["cursor"]
            if page == 1:
                second = cursor
            if not cursor:
                break
        print("walked %d pages in %.1f s" % (depth, time.time() - t))
        worst["page2"] = stats("list, page 2 via cursor", [c.get("/v1/files?limit=100&cursor=" + second)[0] for _ in range(n)])
        worst["deep"] = stats("list, page %d via cursor" % depth, [c.get("/v1/files?limit=100&cursor=" + cursor)[0] for _ in range(n)])
        over = {k: v for k, v in worst.items() if v >= 5.0}
        print("p99 under 5 ms: %s" % ("yes" if not over else "NO: %s" % over))
        return 1 if over else 0
    finally:
        if server:
            server.terminate()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
