"""A real Chromium against a real `filestore serve` (CI runs it from .ci/run).

Three loopback origins: the server on one port (behind a proxy that can cut a request
mid-body: tests/tus_interop/harness.py), an app page allowed by a public key on another,
and the same page on a third that no key allows. Checks, as a user's browser sees them:
  1. the allowed page uploads with the `pk_` key (fetch + FormData) and reads the File record;
  2. the other page gets a readable 403 `forbidden` (not "Failed to fetch");
  3. a public image shows in an <img> from its CDN URL, and fetch() reads an uploaded JSON file;
  4. an uploaded HTML page, opened from its CDN URL, cannot run script;
  5. tus-js-client (npm, pinned in .ci/run; its tus.min.js served by the app page's own
     server) uploads 50 MiB that the page generates, in 5 MiB chunks, with the `pk_` key;
     the proxy cuts two PATCHes mid-body (see TUS_CUTS: the page sees a 423 or 409 after
     Chromium's own resend of the first, or a plain 204 when the resend wins the upload's
     turn, and a network error for the second); tus-js-client
     resumes on its own each time (retryDelays: HEAD, then PATCH from the server's offset,
     which kept what arrived: > 0, asked of the server);
     the File record's sha256 is the SHA-256 of the page's bytes (computed here too), and
     the page reads the file back from its CDN URL with the same digest;
  6. the same on the S3 store (a SeaweedFS this script starts; skipped without `weed`
     unless FILESTORE_REQUIRE_S3=1).
Screenshots go to the artifacts directory (argv[2], default target/browser-artifacts).

Usage: python3 browser_test.py path/to/filestore [ARTIFACTS_DIR [NODE_MODULES]]
NODE_MODULES (or env FILESTORE_NODE_MODULES; default target/tus-js/node_modules) holds
tus-js-client: npm install --no-save --prefix target/tus-js tus-js-client@4.3.1.
Needs Playwright for Python and Debian's `chromium` (never a browser download).
"""

import base64
import hashlib
import http.server
import json
import os
import pathlib
import shutil
import struct
import sys
import tempfile
import threading
import time
import urllib.request

from playwright.sync_api import sync_playwright

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tus_interop"))
from harness import CutProxy, Filestore, MiB, Seaweed, free_ports, weed_or_skip  # noqa: E402

# A 2x2 red PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)

APP_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>uploader</title></head>
<body>
<h1>Upload from a page</h1>
<pre id="out">waiting</pre>
<script src="/tus.min.js"></script>
<script>
async function upload(server, key, name, text) {
  const form = new FormData();
  form.append("folder", "browser");
  form.append("file", new Blob([text], {type: "text/plain"}), name);
  try {
    const r = await fetch(server + "/v1/upload", {
      method: "POST", headers: {"Authorization": "Bearer " + key}, body: form});
    const body = await r.json();
    document.getElementById("out").textContent = r.status + " " + JSON.stringify(body, null, 1);
    return {status: r.status, body};
  } catch (e) {
    document.getElementById("out").textContent = "error " + e;
    return {status: 0, error: String(e)};
  }
}

// size bytes, the same as tus_bytes() in browser_test.py: a 1 MiB block of xorshift32
// words (little-endian) from seed; MiB block k is the block turned by k*4099 bytes, XOR k.
function tusBytes(size, seed) {
  const MiB = 1 << 20;
  const base = new Uint8Array(MiB);
  const view = new DataView(base.buffer);
  let x = seed >>> 0;
  for (let i = 0; i < MiB; i += 4) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    view.setUint32(i, x, true);
  }
  const out = new Uint8Array(size);
  for (let k = 0; k * MiB < size; k++) {
    const turn = (k * 4099) % MiB, xor = k & 255, end = Math.min(MiB, size - k * MiB);
    for (let p = 0; p < end; p++) out[k * MiB + p] = base[(p + turn) % MiB] ^ xor;
  }
  return out;
}

function hex(buf) {
  return Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
}

// tus-js-client uploads the bytes; it retries (and so resumes) by itself on a broken
// connection. Resolves with what the page saw: every request and response, the upload's
// URL, the File record (GET /v1/uploads/{id} with the public key) and the SHA-256 of the
// file read back from its CDN URL.
function tusUpload(server, key, size, chunk, seed, name) {
  const out = document.getElementById("out");
  const bytes = tusBytes(size, seed);
  const seen = [];
  const trace = () => seen.map((e) => e.phase === "request" ? `> ${e.method} ${e.offset ?? ""}`
    : e.phase === "response" ? `< ${e.status} ${e.offset ?? ""}` : `! ${e.error}`).join("\\n");
  const started = performance.now();
  return new Promise((done) => {
    const upload = new tus.Upload(new Blob([bytes]), {
      endpoint: server + "/v1/uploads",
      headers: {Authorization: "Bearer " + key},
      chunkSize: chunk,
      retryDelays: [1000, 2000, 4000],
      removeFingerprintOnSuccess: true,
      metadata: {filename: name, filetype: "application/octet-stream", folder: "browser-tus"},
      onBeforeRequest: (req) => {
        seen.push({phase: "request", method: req.getMethod(), offset: req.getHeader("Upload-Offset") ?? null});
      },
      onAfterResponse: (req, res) => {
        seen.push({phase: "response", method: req.getMethod(), status: res.getStatus(),
                   offset: res.getHeader("Upload-Offset") ?? null});
      },
      onShouldRetry: (err, attempt, options) => {
        seen.push({phase: "error", error: String(err.message || err).split(", originated")[0]});
        return tus.defaultOptions.onShouldRetry(err, attempt, options);
      },
      onProgress: (sent, total) => {
        out.textContent = `tus-js-client, ${name}: ${sent} / ${total} bytes\\n` + trace();
      },
      onError: (e) => done({error: String(e), seen}),
      onSuccess: async (payload) => {
        const ms = performance.now() - started;
        const fileId = payload.lastResponse.getHeader("X-File-Id");
        try {
          const st = await fetch(upload.url, {headers: {Authorization: "Bearer " + key}});
          const status = await st.json();
          const cdn = await fetch(status.file.url);
          const digest = hex(await crypto.subtle.digest("SHA-256", await cdn.arrayBuffer()));
          out.textContent = `tus-js-client: ${name}, ${size} bytes, uploaded in ${Math.round(ms)} ms\\n` +
            `file ${fileId}, sha256 ${status.file.sha256}\\n` +
            `read back from its CDN URL: sha256 ${digest}\\n` + trace();
          done({url: upload.url, fileId, status, cdnStatus: cdn.status, cdnDigest: digest, ms, seen});
        } catch (e) {
          done({error: "after the upload: " + e, url: upload.url, fileId, seen});
        }
      },
    });
    setTimeout(() => done({error: "no end after 180 s", seen}), 180000);
    upload.start();
  });
}
</script>
</body></html>
"""


TUS_SIZE = 50 * MiB + 4321  # the last chunk is short
TUS_CHUNK = 5 * MiB
# The two cuts of each upload: (the first PATCH at or past this offset, bytes of its body
# passed on, fresh). The first falls on a reused keep-alive connection, which Chromium
# answers by sending the PATCH again by itself (unseen by the page's script): the server,
# at a new offset, says 409 and tus-js-client asks again. The second is made the first
# request of a new connection (fresh), so the page sees a network error itself.
TUS_CUTS = ((15 * MiB, 2 * MiB + 12345, False), (30 * MiB, 1 * MiB + 777, True))


def tus_bytes(size, seed):
    """The page's tusBytes(size, seed), in Python."""
    words = []
    x = seed
    for _ in range(MiB // 4):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        words.append(x)
    base = struct.pack(f"<{len(words)}I", *words)
    blocks = []
    for k in range((size + MiB - 1) // MiB):
        turn = (k * 4099) % MiB
        table = bytes(b ^ (k & 255) for b in range(256))
        blocks.append((base[turn:] + base[:turn]).translate(table))
    return b"".join(blocks)[:size]


def serve_page(port, tus_js):
    """A static server for the app page (and tus.min.js) on 127.0.0.1:port (its own origin)."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/tus.min.js":
                body, kind = tus_js, "text/javascript"
            else:
                body, kind = APP_PAGE.encode(), "text/html; charset=utf-8"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what.split("\n")[0])


def tus_check(page, label, fs, proxy, public, app_origin, artifacts, shot, seed):
    """Check 5 or 6 (see the docstring) against fs, behind proxy; returns its figures."""
    page.goto(app_origin + "/")
    name = f"tus-{label}.bin"

    cuts_before = len(proxy.cuts())
    for from_offset, cut_at, fresh in TUS_CUTS:
        proxy.arm(cut_at=cut_at, from_offset=from_offset, fresh=fresh, on_cut=fs.offset_after_cut)
    started = time.time()
    result = page.evaluate(
        "([s, k, size, chunk, seed, name]) => tusUpload(s, k, size, chunk, seed, name)",
        [proxy.url, public, TUS_SIZE, TUS_CHUNK, seed, name],
    )
    seconds = time.time() - started
    page.screenshot(path=str(artifacts / shot))
    seen = result.get("seen", [])
    print(f"   {label}, what the page saw: " + ", ".join(
        f"{e['method']} {e['offset']}" if e["phase"] == "request"
        else f"-> {e['status']} {e['offset']}" if e["phase"] == "response" else f"({e['error']})"
        for e in seen))
    check("error" not in result, f"{label}: tus-js-client finished the upload"
          + (f"; no: {result['error']}" if "error" in result else ""))
    upload_id = result["url"].rsplit("/", 1)[1]
    check(result["url"] == f"{proxy.url}/v1/uploads/{upload_id}",
          f"{label}: the upload's URL is the server's Location ({result['url']})")
    check(proxy.wait_cuts(cuts_before + len(TUS_CUTS)),
          f"{label}: the proxy cut {len(TUS_CUTS)} PATCHes mid-body")
    cuts = proxy.cuts()[cuts_before:]
    errors = [e["error"] for e in seen if e["phase"] == "error"]
    figures = []
    for n, (cut, (from_offset, cut_at, fresh)) in enumerate(zip(cuts, TUS_CUTS), 1):
        what = f"{label}, cut {n}"
        at = int(cut["offset"])
        check(cut["path"].endswith(upload_id) and at >= from_offset and cut["sent"] == cut_at
              and cut["length"] == min(TUS_CHUNK, TUS_SIZE - at),
              f"{what}: the PATCH at {at} was cut after {cut_at} of its {cut['length']} bytes"
              + (" as the first request of its connection" if fresh else ""))
        if " 409 " in f" {cut['answer']} ":
            # Chromium resent the cut PATCH by itself on a new connection (the cut one was on a
            # reused connection), and the resend took the upload's turn first: it stored the
            # whole chunk, then the cut one found the offset moved (409). Nothing was lost and
            # the page saw a plain 204; the other cut (a fresh connection, never resent) still
            # shows the server keeping what arrived.
            check(not fresh and cut["after"] >= at + cut_at,
                  f"{what}: Chromium's own resend of the cut PATCH was served first (the cut one "
                  f"answered {cut['answer']!r}); the server is at {cut['after']}, nothing lost")
            figures.append({"patch_at": at, "cut_after_bytes": cut_at,
                            "server_offset_after_cut": cut["after"],
                            "client_saw": "204 (Chromium's resend served first)",
                            "resumed_from": cut["after"]})
            continue
        if " 423 " in f" {cut['answer']} ":
            # The same race, caught earlier: Chromium's resend (a new connection) took the
            # upload's turn while the cut PATCH was still being authenticated, so the cut
            # one was answered 423 at once, before reading its body, and the server was
            # then still where the PATCH found it (or, had the resend been quicker than
            # our look, past its whole chunk: never part of one).
            # The resend, the same PATCH whole, follows in the proxy's log; the file's
            # bytes are checked whole below.
            resend = next((e for e in proxy.requests_after(cut)
                           if e["path"].endswith(upload_id) and e["method"] == "PATCH"
                           and e["offset"] == cut["offset"] and not e["cut"]), None)
            check(not fresh and cut["after"] in (at, at + cut["length"]) and resend is not None
                  and resend["sent"] == resend["length"] == cut["length"],
                  f"{what}: Chromium's own resend of the cut PATCH took the upload's turn "
                  f"first (the cut one answered {cut['answer']!r} before its body, the server "
                  f"at {cut['after']}); the resend sent the chunk whole")
            figures.append({"patch_at": at, "cut_after_bytes": cut_at,
                            "server_offset_after_cut": cut["after"],
                            "client_saw": "204 (Chromium's resend served first; the cut one 423)",
                            "resumed_from": at})
            continue
        check(cut["after"] == at + cut_at,
              f"{what}: after the cut (answered {cut['answer']!r}) the server is at {cut['after']} "
              "(> 0: it kept what arrived)")
        after = [e for e in proxy.requests_after(cut) if e["path"].endswith(upload_id)]
        if n < len(cuts):
            after = after[:next(i for i, e in enumerate(after) if e is cuts[n])]
        head = next((i for i, e in enumerate(after) if e["method"] == "HEAD"), None)
        check(head is not None, f"{what}: tus-js-client asked for the offset again (HEAD)")
        replays = [e for e in after[:head] if e["method"] == "PATCH"]
        resumed = next((e for e in after[head + 1:] if e["method"] == "PATCH"), None)
        if replays:
            # The resend meets the cut PATCH still running on the server (423 locked: one
            # PATCH of an upload at a time, the second answered at once, not queued), or
            # comes after it (409 offset_mismatch); tus-js-client then asks for the offset.
            answers = sorted({e.get("status") for e in seen} & {409, 423})
            check(not fresh and all(e["offset"] == cut["offset"] for e in replays)
                  and "tus: unexpected response while uploading chunk" in errors
                  and bool(answers),
                  f"{what}: Chromium sent the cut PATCH again by itself ({len(replays)}x): "
                  f"{answers} (423 locked or 409 offset_mismatch), the server being at {cut['after']}")
            saw = f"{answers} (Chromium's own resend)"
        else:
            check(any(e.startswith(f"tus: failed to upload chunk at offset {at},") for e in errors),
                  f"{what}: the page saw the network error itself")
            saw = "a network error"
        check(resumed is not None and resumed["offset"] == str(cut["after"])
              and all(e["offset"] != "0" for e in after if e["method"] == "PATCH"),
              f"{what}: tus-js-client resumed at {cut['after']}, not at 0: "
              + ", ".join(f"{e['method']} {e['offset']}" for e in after))
        figures.append({"patch_at": at, "cut_after_bytes": cut_at,
                        "server_offset_after_cut": cut["after"], "client_saw": saw,
                        "resumed_from": int(resumed["offset"])})
    expected = hashlib.sha256(tus_bytes(TUS_SIZE, seed)).hexdigest()
    record = result["status"]["file"]
    check(result["status"]["offset"] == TUS_SIZE and record["size"] == TUS_SIZE
          and record["sha256"] == expected and record["id"] == result["fileId"],
          f"{label}: GET /v1/uploads/{{id}} from the page: {TUS_SIZE} bytes, sha256 {expected[:16]}… "
          f"(the page's bytes), X-File-Id {result['fileId']}")
    listed = fs.json("/v1/files?folder=browser-tus")["files"]
    check(any(f["id"] == record["id"] and f["sha256"] == expected and f["size"] == TUS_SIZE
              for f in listed), f"{label}: the file is listed with its size and sha256")
    check(fs.json(f"/v1/files/{record['id']}")["sha256"] == expected,
          f"{label}: GET /v1/files/{{id}} says the same sha256")
    check(result["cdnStatus"] == 200 and result["cdnDigest"] == expected,
          f"{label}: the page read the file back from its CDN URL: sha256 {result['cdnDigest'][:16]}…")
    return {"seconds": round(seconds, 2), "upload_ms_in_page": round(result["ms"]), "cuts": figures}


def main():
    binary = os.path.abspath(sys.argv[1])
    artifacts = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "target/browser-artifacts")
    artifacts.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise SystemExit("no chromium on PATH (Debian: apt-get install chromium)")
    node_modules = pathlib.Path(
        sys.argv[3] if len(sys.argv) > 3
        else os.environ.get("FILESTORE_NODE_MODULES", "target/tus-js/node_modules"))
    tus_min = node_modules / "tus-js-client" / "dist" / "tus.min.js"
    if not tus_min.is_file():
        raise SystemExit(f"no {tus_min}: npm install --no-save --prefix target/tus-js tus-js-client@4.3.1")
    tus_version = json.loads((node_modules / "tus-js-client" / "package.json").read_text())["version"]

    data = tempfile.mkdtemp(prefix="filestore-browser-")
    app_port, other_port = free_ports(2)
    app_origin = f"http://127.0.0.1:{app_port}"
    other_origin = f"http://127.0.0.1:{other_port}"
    # The server answers through a proxy (its base URL, so File and upload URLs point
    # there) that can cut a request mid-body; the proxy learns the server's port after.
    proxy = CutProxy(0)
    servers, weed, passed, skipped = [], None, 0, 0
    try:
        fs = Filestore(binary, data, "local", base_url=proxy.url)
        servers.append(fs)
        proxy.upstream_port = fs.port
        server_url, secret = proxy.url, fs.secret
        check(secret.startswith("sk_"), "serve started and printed its key")
        public = fs.public_key(app_origin)
        check(public.startswith("pk_"), "a public key for the app's origin")
        tus_js = tus_min.read_bytes()
        serve_page(app_port, tus_js)
        serve_page(other_port, tus_js)

        def upload_with_secret(name, content, content_type):
            boundary = "----filestorebrowsertest"
            body = (
                f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
                f"Content-Type: {content_type}\r\n\r\n"
            ).encode() + content + f"\r\n--{boundary}--\r\n".encode()
            req = urllib.request.Request(
                server_url + "/v1/upload", data=body, method="POST",
                headers={"Authorization": "Bearer " + secret,
                         "Content-Type": "multipart/form-data; boundary=" + boundary},
            )
            with urllib.request.urlopen(req) as r:
                return json.loads(r.read())

        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page()

            # 1. The allowed origin uploads and reads the record.
            page.goto(app_origin + "/")
            result = page.evaluate(
                "([s, k]) => upload(s, k, 'hello.txt', 'hello from a browser')",
                [server_url, public],
            )
            page.screenshot(path=str(artifacts / "1-allowed-origin-upload.png"))
            check(result["status"] == 201, f"allowed origin: 201, got {result}")
            record = result["body"]
            check(record["name"] == "hello.txt" and record["folder"] == "browser"
                  and record["size"] == 20 and record["url"].startswith(server_url + "/live/"),
                  f"the page read the File record: {record}")

            # 2. Another origin: a readable 403.
            page.goto(other_origin + "/")
            refused = page.evaluate(
                "([s, k]) => upload(s, k, 'nope.txt', 'nope')", [server_url, public]
            )
            page.screenshot(path=str(artifacts / "2-other-origin-refused.png"))
            check(refused["status"] == 403 and refused["body"]["error"]["code"] == "forbidden",
                  f"other origin: a readable 403 forbidden, got {refused}")

            # 3. A public image shows; an uploaded JSON file can be fetched.
            image = upload_with_secret("red.png", PNG, "image/png")
            doc = upload_with_secret("data.json", b'{"answer": 42}', "application/json")
            page.goto(app_origin + "/")
            shown = page.evaluate(
                """(src) => new Promise((done) => {
                     const img = new Image();
                     img.onload = () => { document.body.appendChild(img); img.style.width = '64px';
                                          done({w: img.naturalWidth, h: img.naturalHeight}); };
                     img.onerror = () => done({w: 0, h: 0});
                     img.src = src; })""",
                image["url"],
            )
            fetched = page.evaluate(
                "async (u) => { const r = await fetch(u); return {status: r.status, body: await r.json()}; }",
                doc["url"],
            )
            page.screenshot(path=str(artifacts / "3-public-image.png"))
            check(shown == {"w": 2, "h": 2}, f"the public image shows, got {shown}")
            check(fetched == {"status": 200, "body": {"answer": 42}},
                  f"fetch() reads an uploaded JSON file across origins, got {fetched}")

            # 4. An uploaded HTML page cannot run script.
            html = upload_with_secret(
                "page.html",
                b"<!doctype html><title>untouched</title><h1>uploaded page</h1>"
                b"<script>document.title = 'script ran'; document.body.append('SCRIPT RAN');</script>",
                "text/html",
            )
            messages = []
            page.on("console", lambda m: messages.append(m.text))
            page.goto(html["url"])
            page.screenshot(path=str(artifacts / "4-uploaded-html.png"))
            title = page.evaluate("document.title")
            text = page.evaluate("document.body.innerText")
            check(title == "untouched" and "SCRIPT RAN" not in text,
                  f"an uploaded HTML page cannot run script (title {title!r}, text {text!r})")
            passed = 4

            # 5. tus-js-client: 50 MiB in 5 MiB chunks, cut mid-PATCH, resumed; local store.
            print(f"tus-js-client {tus_version}, {TUS_SIZE} bytes in {TUS_CHUNK}-byte chunks")
            figures = {"local": tus_check(page, "local", fs, proxy, public, app_origin, artifacts,
                                          "5-tus-resumed-local.png", seed=0x5EED1)}
            passed += 1

            # 6. The same on S3 (SeaweedFS), its own server, proxy and public key.
            weed_path = weed_or_skip()
            if weed_path:
                weed = Seaweed(weed_path, data)
                s3_proxy = CutProxy(0)
                s3 = Filestore(binary, data, "s3", s3=weed, base_url=s3_proxy.url)
                servers.append(s3)
                s3_proxy.upstream_port = s3.port
                check("s3 blob store" in s3.log_text(), "a second server on the S3 store (SeaweedFS)")
                figures["s3"] = tus_check(page, "s3", s3, s3_proxy, s3.public_key(app_origin),
                                          app_origin, artifacts, "6-tus-resumed-s3.png", seed=0x5EED2)
                passed += 1
            else:
                skipped += 1
            browser.close()
        for store, fig in figures.items():
            print(f"   tus-js-client on {store}: {fig}")
        print(f"browser: {passed} passed, 0 failed" + (f", {skipped} skipped" if skipped else ""))
    except BaseException:
        for s in servers:
            print(f"--- serve.log ({s.store}) ---\n{s.log_tail(40)}")
        if weed:
            print(f"--- weed.log ---\n{weed.log_tail()}")
        raise
    finally:
        for s in servers:
            s.stop()
        if weed:
            weed.stop()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
