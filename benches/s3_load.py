#!/usr/bin/env python3
"""The S3 client of benches/s3.sh: boto3, the same for every server measured.

  s3_load.py rates ENDPOINT BUCKET [--objects N] [--size B] [--procs P]
      PUT N objects of B bytes from P processes (one boto3 client each, its
      default checksums), then GET each; prints PUT/s and GET/s as JSON.
  s3_load.py list ENDPOINT BUCKET [--samples N]
      ListObjectsV2 pages of 1000 keys, one request at a time on a kept-alive
      connection: the first page and pages from random start-after keys, and
      a delimiter page; p50/p99/max (ms) to the last byte, as JSON. The request
      is signed once per page as a presigned V4 URL (so signing and XML
      parsing in Python are not in the time).
  s3_load.py presign ENDPOINT BUCKET PREFIX N METHOD OUT [--first K]
      N presigned V4 URLs (path?query, one a line, valid an hour) for the keys
      PREFIX<K> … PREFIX<K+N-1>, METHOD get_object or put_object: the requests
      benches/s3_wrk.lua sends.
  s3_load.py seed DB ACCOUNT BUCKET N
      N objects straight into a filestore SQLite database (64 bytes each,
      inline, MD5 filled): keys BUCKET/dNNN/objNNNNNNN (1000 folders).

Credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
"""

import argparse
import hashlib
import http.client
import json
import os
import random
import secrets
import sqlite3
import sys
import time
import urllib.parse
from multiprocessing import Pool


def client(endpoint, v4=False):
    import boto3
    import botocore.config

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        config=botocore.config.Config(
            signature_version="s3v4" if v4 else None,
            s3={"addressing_style": "path"},
            retries={"max_attempts": 1, "mode": "standard"},
            max_pool_connections=4,
        ),
    )


def _put(args):
    endpoint, bucket, keys, size = args
    s3 = client(endpoint)
    body = os.urandom(size)
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=body)
    return len(keys)


def _get(args):
    endpoint, bucket, keys, size = args
    s3 = client(endpoint)
    for k in keys:
        got = s3.get_object(Bucket=bucket, Key=k)["Body"].read()
        assert len(got) == size, (k, len(got))
    return len(keys)


def rates(a):
    run = secrets.token_hex(4)
    keys = [f"rates-{run}/d{i % 50}/o{i}.bin" for i in range(a.objects)]
    chunks = [(a.endpoint, a.bucket, keys[i :: a.procs], a.size) for i in range(a.procs)]
    with Pool(a.procs) as pool:
        pool.map(_put, [(a.endpoint, a.bucket, keys[:a.procs], a.size)])  # warm-up
        t = time.perf_counter()
        assert sum(pool.map(_put, chunks)) == a.objects
        put = a.objects / (time.perf_counter() - t)
        t = time.perf_counter()
        assert sum(pool.map(_get, chunks)) == a.objects
        get = a.objects / (time.perf_counter() - t)
    print(json.dumps({"put_per_s": round(put, 1), "get_per_s": round(get, 1), "objects": a.objects,
                      "size": a.size, "procs": a.procs}))


def pct(ms, q):
    ms = sorted(ms)
    return round(ms[min(len(ms) - 1, int(q * len(ms)))], 2)


def list_latency(a):
    s3 = client(a.endpoint, v4=True)
    first = s3.list_objects_v2(Bucket=a.bucket, MaxKeys=1000)
    assert first["KeyCount"] == 1000, first["KeyCount"]
    u = urllib.parse.urlsplit(a.endpoint)
    conns = [http.client.HTTPConnection(u.hostname, u.port, timeout=a.timeout)]

    def timed(params):
        conn = conns[0]
        url = s3.generate_presigned_url("list_objects_v2", Params={"Bucket": a.bucket, **params}, ExpiresIn=600)
        p = urllib.parse.urlsplit(url)
        t = time.perf_counter()
        try:
            conn.request("GET", p.path + "?" + p.query)
            r = conn.getresponse()
            body = r.read()
        except TimeoutError:
            conns[0] = http.client.HTTPConnection(u.hostname, u.port, timeout=a.timeout)
            return None
        dt = (time.perf_counter() - t) * 1000
        if r.status != 200:
            sys.exit(f"{params}: {r.status} {body[:300]!r}")
        return dt

    out = {}
    for _ in range(20):
        timed({"MaxKeys": 1000})
    out["first_page"] = [timed({"MaxKeys": 1000}) for _ in range(a.samples)]
    out["start_after_random"] = [
        timed({"MaxKeys": 1000, "StartAfter": f"d{random.randrange(1000):03d}/obj{random.randrange(10**7):07d}"})
        for _ in range(a.samples)
    ]
    out["prefix_delimiter"] = [
        timed({"MaxKeys": 1000, "Prefix": f"d{random.randrange(1000):03d}/", "Delimiter": "/"})
        for _ in range(a.samples)
    ]
    # The bucket's top with a delimiter: 1000 CommonPrefixes a page (few
    # samples, at most --timeout seconds in all; a request past --timeout
    # counts as timed out and ends the series).
    out["delimiter_top"] = []
    spent = time.perf_counter()
    for _ in range(10):
        dt = timed({"MaxKeys": 1000, "Delimiter": "/"})
        if dt is None:
            out["delimiter_top_timeouts"] = [a.timeout * 1000.0]
            break
        out["delimiter_top"].append(dt)
        if time.perf_counter() - spent > a.timeout:
            break
    print(json.dumps({k: {"n": len(v), "p50_ms": pct(v, 0.5), "p99_ms": pct(v, 0.99), "max_ms": round(max(v), 2)}
                      for k, v in out.items() if v}))


def presign(a):
    s3 = client(a.endpoint, v4=True)
    with open(a.out, "w") as out:
        for i in range(a.first, a.first + a.n):
            url = s3.generate_presigned_url(a.method, Params={"Bucket": a.bucket, "Key": f"{a.prefix}{i}"},
                                            ExpiresIn=3600)
            p = urllib.parse.urlsplit(url)
            out.write(p.path + "?" + p.query + "\n")


def seed(a):
    con = sqlite3.connect(a.db)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = OFF")
    data = b"x" * 64
    sha = hashlib.sha256(data).hexdigest()
    md5 = hashlib.md5(data).hexdigest()
    start = int(time.time() * 1000) - a.n - 60_000

    def rows():
        for i in range(a.n):
            ms = start + i
            fid = "f_%012x%s" % (ms, secrets.token_hex(16))
            yield (fid, a.account, "obj%07d" % i, "%s/d%03d" % (a.bucket, i % 1000), len(data),
                   "application/octet-stream", 1, sha, md5, "%s/%s" % (a.account, fid), ms, None, 1)

    t = time.time()
    con.execute("BEGIN")
    con.executemany(
        "INSERT INTO files (id, account_id, name, folder, size, content_type, private, sha256, md5,"
        " blob_key, created_at, expires_at, inline) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows())
    con.execute("INSERT INTO inline_blobs (blob_key, data) SELECT blob_key, ? FROM files WHERE account_id = ?",
                (data, a.account))
    con.execute("UPDATE accounts SET storage_bytes = storage_bytes + ? WHERE id = ?", (a.n * len(data), a.account))
    con.execute("COMMIT")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    print(json.dumps({"seeded": a.n, "seconds": round(time.time() - t, 1)}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rates")
    r.add_argument("endpoint"); r.add_argument("bucket")
    r.add_argument("--objects", type=int, default=2000)
    r.add_argument("--size", type=int, default=4096)
    r.add_argument("--procs", type=int, default=8)
    l = sub.add_parser("list")
    l.add_argument("endpoint"); l.add_argument("bucket")
    l.add_argument("--samples", type=int, default=500)
    l.add_argument("--timeout", type=float, default=60.0, help="seconds a request may take")
    p = sub.add_parser("presign")
    for n in ("endpoint", "bucket", "prefix"):
        p.add_argument(n)
    p.add_argument("n", type=int); p.add_argument("method", choices=["get_object", "put_object"]); p.add_argument("out")
    p.add_argument("--first", type=int, default=0)
    s = sub.add_parser("seed")
    s.add_argument("db"); s.add_argument("account"); s.add_argument("bucket"); s.add_argument("n", type=int)
    a = ap.parse_args()
    {"rates": rates, "list": list_latency, "presign": presign, "seed": seed}[a.cmd](a)


if __name__ == "__main__":
    main()
