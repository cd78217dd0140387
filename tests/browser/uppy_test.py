"""Uppy in a real Chromium against a real `filestore serve`, with upload tokens (CI runs it
from .ci/run; issue 21's "real browser clients").

Two loopback origins: the server on one port, and an "app server" on another that serves
the page and the Uppy bundle and, on `POST /token`, mints an upload token by calling
`POST /v1/upload-tokens` with the account's SECRET key (server-side: the page never sees a
key) and hands the page `{url, token}`. Its policy: folder "avatars", types ["image/*"],
metadata {"user": "u42"}, one upload, max_size 2 MiB ("avatar") or 32 MiB ("photo").
Checks, as the page sees them (and then through the API with the secret key):
  1. Uppy + @uppy/xhr-upload posts a canvas-made PNG to the token's url; the File record
     says folder "avatars", metadata.user "u42", type image/png; the page shows the image
     from the record's url in an <img> whose naturalWidth is the canvas's;
  2. Uppy + @uppy/tus, `Authorization: Bearer upt_…`, 20 MiB in 5 MiB chunks to /v1/uploads:
     the file is a real 24-bit BMP made in the page (the image policy sniffs the bytes, so the
     image policy itself is tested on tus too, and the <img> decoding it proves it is one);
     the File record has its size and the SHA-256 the page computed (crypto.subtle);
  3. refusals Uppy reports (upload-error): the used-up token (max_uploads 1, second upload)
     -> 401; text bytes named x.png under types ["image/*"] -> 415, the token's use not
     spent (the same token then takes a real PNG); neither refusal stores anything;
  4. timing: the same ~1 MiB PNG uploaded N times with Uppy XHRUpload, with a fresh token
     (by its url, and in an `Authorization: Bearer upt_…` header) and with a public key for the
     app's origin (`Authorization: Bearer pk_…`), interleaved; prints the median ms of each
     (and of minting a token; the minting is not in the upload's time). Nothing is asserted
     about speed.
Screenshots go to the artifacts directory.

Usage: python3 uppy_test.py path/to/filestore [ARTIFACTS_DIR [UPPY_BUNDLE]]
UPPY_BUNDLE defaults to target/uppy/uppy-bundle.js (built by .ci/run from
tests/browser/uppy-entry.js). Needs Playwright for Python and Debian's `chromium` (never a
browser download). Without one of those three it skips, saying why, unless
FILESTORE_REQUIRE_TOOLS=1 (CI), where it fails instead.
"""

import http.server
import json
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tus_interop"))
from harness import Filestore, MiB, check, free_ports  # noqa: E402

TIMING_RUNS = 20

# What the app server asks for; the page only names one.
POLICIES = {
    "avatar": {"folder": "avatars", "types": ["image/*"], "max_size": 2 * MiB,
               "max_uploads": 1, "metadata": {"user": "u42"}},
    "photo": {"folder": "avatars", "types": ["image/*"], "max_size": 32 * MiB,
              "max_uploads": 1, "metadata": {"user": "u42"}},
}

APP_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>avatar uploader</title></head>
<body>
<h1>Uppy with an upload token</h1>
<img id="img" style="max-width: 320px; max-height: 240px"><pre id="out">waiting</pre>
<script src="/uppy.js"></script>
<script>
const { Uppy, XHRUpload, Tus } = globalThis.UppyLib;
const say = (text) => { document.getElementById("out").textContent = text; };

// The app server mints the token with its secret key; the page gets {url, token}.
async function mint(kind) {
  const r = await fetch("/token", {method: "POST", headers: {"Content-Type": "application/json"},
                                   body: JSON.stringify({kind})});
  if (r.status !== 201) throw new Error("app server: " + r.status + " " + await r.text());
  return r.json();
}

// w x h canvas as a PNG blob: a drawing, or xorshift noise (which PNG cannot shrink).
function canvasPng(w, h, noise) {
  const c = document.createElement("canvas");
  c.width = w; c.height = h;
  const g = c.getContext("2d");
  if (noise) {
    const img = g.createImageData(w, h);
    let x = 0x2545f491;
    for (let i = 0; i < img.data.length; i += 4) {
      x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
      img.data[i] = x & 255; img.data[i + 1] = (x >>> 8) & 255; img.data[i + 2] = (x >>> 16) & 255;
      img.data[i + 3] = 255;
    }
    g.putImageData(img, 0, 0);
  } else {
    g.fillStyle = "#2a6"; g.fillRect(0, 0, w, h);
    g.fillStyle = "#fd3"; g.beginPath(); g.arc(w / 2, h / 2, h / 3, 0, 2 * Math.PI); g.fill();
  }
  return new Promise((done) => c.toBlob(done, "image/png"));
}

// A 24-bit bottom-up BMP, w x h, of xorshift pixels: a real image of a known size.
function bmp(w, h) {
  const row = Math.ceil(w * 3 / 4) * 4, size = 54 + row * h;
  const bytes = new Uint8Array(size);
  const v = new DataView(bytes.buffer);
  bytes[0] = 0x42; bytes[1] = 0x4d;                       // "BM"
  v.setUint32(2, size, true); v.setUint32(10, 54, true);  // file size, pixel offset
  v.setUint32(14, 40, true); v.setInt32(18, w, true); v.setInt32(22, h, true);
  v.setUint16(26, 1, true); v.setUint16(28, 24, true);    // planes, bits per pixel
  v.setUint32(34, row * h, true); v.setInt32(38, 2835, true); v.setInt32(42, 2835, true);
  let x = 0x9e3779b9;
  for (let p = 54; p < size; p += 4) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    v.setUint32(p, x, true);
  }
  return bytes;
}

function hex(buf) {
  return Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
}

let timingPng = null;
async function blobFor(what) {
  if (what === "avatar") return {name: "me.png", type: "image/png", data: await canvasPng(64, 48, false), w: 64, h: 48};
  if (what === "text") return {name: "x.png", type: "image/png",
                               data: new Blob(["just some words, not a picture\\n"], {type: "image/png"})};
  if (what === "timing") {
    timingPng ??= await canvasPng(550, 550, true);
    return {name: "noise.png", type: "image/png", data: timingPng, w: 550, h: 550};
  }
  throw new Error("no such file: " + what);
}

// One Uppy XHRUpload of `what` to endpoint (with an Authorization header when key is
// given). Resolves with the response Uppy saw, or the upload-error it emitted.
async function xhrUpload(endpoint, key, what) {
  const file = await blobFor(what);
  // Uppy's default: a refused request is tried 3 more times (the status of each is kept).
  const statuses = [];
  const uppy = new Uppy().use(XHRUpload, {
    endpoint, limit: 1, headers: key ? {Authorization: "Bearer " + key} : {},
    onAfterResponse: (xhr) => { statuses.push(xhr.status); }});
  let failure = null;
  uppy.on("upload-error", (f, err, xhr) => {
    const request = xhr ?? err.request;
    let body = null;
    try { body = JSON.parse(request.responseText); } catch (e) { body = request?.responseText ?? null; }
    failure = {message: String(err), status: request?.status ?? 0, body};
  });
  uppy.addFile({name: file.name, type: file.type, data: file.data});
  const started = performance.now();
  const result = await uppy.upload();
  const ms = performance.now() - started;
  uppy.destroy();
  const ok = result.successful?.[0];
  if (ok) {
    say(`${what}: ${ok.response.status} in ${Math.round(ms)} ms\\n` + JSON.stringify(ok.response.body, null, 1));
    return {status: ok.response.status, body: ok.response.body, url: ok.response.uploadURL,
            size: file.data.size, w: file.w, h: file.h, ms};
  }
  say(`${what}: refused, ${JSON.stringify(failure)}`);
  return {failed: true, uploadErrors: failure ? 1 : 0, ...failure, statuses, ms};
}

// Shows url in the page's <img>; resolves with its natural size.
async function show(url) {
  const img = document.getElementById("img");
  img.src = url;
  try { await img.decode(); } catch (e) { return {error: String(e)}; }
  return {w: img.naturalWidth, h: img.naturalHeight};
}

// Uppy + @uppy/tus with a token: a w x h BMP in chunk-byte PATCHes. The X-File-Id of the
// last PATCH is read inside upload-success (Uppy aborts the finished request after it).
async function tusUpload(server, token, w, h, chunk) {
  const bytes = bmp(w, h);
  const digest = hex(await crypto.subtle.digest("SHA-256", bytes));
  const uppy = new Uppy().use(Tus, {
    endpoint: server + "/v1/uploads", headers: {Authorization: "Bearer " + token},
    chunkSize: chunk, retryDelays: [1000, 2000], removeFingerprintOnSuccess: true});
  let fileId = null, failure = null, patches = 0;
  uppy.on("upload-success", (f, response) => {
    fileId = response.body.xhr.getResponseHeader("X-File-Id");
  });
  uppy.on("upload-error", (f, err, response) => {
    failure = {message: String(err).slice(0, 300), status: response?.status ?? 0};
  });
  uppy.on("upload-progress", (f, progress) => {
    say(`tus: ${progress.bytesUploaded} / ${progress.bytesTotal} bytes`);
  });
  uppy.addFile({name: "photo.bmp", type: "image/bmp", data: new Blob([bytes], {type: "image/bmp"})});
  const started = performance.now();
  const result = await uppy.upload();
  const ms = performance.now() - started;
  const ok = result.successful?.[0];
  uppy.destroy();
  if (!ok) return {failed: true, ...failure};
  // The upload's status, asked with the same token.
  const st = await fetch(ok.response.uploadURL, {headers: {Authorization: "Bearer " + token}});
  const status = await st.json();
  say(`tus: ${bytes.length} bytes in ${Math.round(ms)} ms, file ${fileId}, sha256 ${digest}`);
  return {uploadURL: ok.response.uploadURL, fileId, size: bytes.length, digest, ms,
          statusCode: st.status, status};
}
</script>
</body></html>
"""


def serve_app(port, bundle, fs):
    """The app on 127.0.0.1:port (its own origin): the page, /uppy.js, and POST /token,
    which mints a token with the secret key. Every minted record is kept in .minted."""

    class App(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/uppy.js":
                self.reply(200, bundle, "text/javascript")
            else:
                self.reply(200, APP_PAGE.encode(), "text/html; charset=utf-8")

        def do_POST(self):
            if self.path != "/token":
                return self.reply(404, b"not found", "text/plain")
            asked = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, _, body = fs.request(
                "POST", "/v1/upload-tokens", json.dumps(POLICIES[asked["kind"]]).encode(),
                {"Content-Type": "application/json"})
            if status != 201:
                return self.reply(502, f"the store said {status}: {body[:300]!r}".encode(), "text/plain")
            record = json.loads(body)
            server.minted.append(record)
            answer = {"url": record["url"], "token": record["token"]}
            self.reply(201, json.dumps(answer).encode(), "application/json")

        def reply(self, status, body, kind):
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), App)
    server.minted = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def check_got(cond, what, got):
    """check(), showing what was got only when it fails."""
    check(cond, what if cond else f"{what}; got {got}")


def skip_or_fail(reason):
    if os.environ.get("FILESTORE_REQUIRE_TOOLS") == "1":
        raise SystemExit(f"FILESTORE_REQUIRE_TOOLS=1 but {reason}")
    print(f"uppy: skipped: {reason}")
    raise SystemExit(0)


def avatar_files(fs):
    """The ids of the files in folder "avatars" (asked with the secret key)."""
    ids, cursor = set(), None
    while True:
        page = fs.json("/v1/files?folder=avatars&limit=100" + (f"&cursor={cursor}" if cursor else ""))
        ids |= {f["id"] for f in page["files"]}
        cursor = page.get("cursor")
        if not cursor:
            return ids


def token_record(fs, record):
    return fs.json(f"/v1/upload-tokens/{record['id']}")


def median_ms(values):
    return round(statistics.median(values), 1)


def main():
    binary = os.path.abspath(sys.argv[1])
    artifacts = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "target/browser-artifacts")
    bundle_path = pathlib.Path(sys.argv[3] if len(sys.argv) > 3 else "target/uppy/uppy-bundle.js")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        skip_or_fail("no chromium on PATH (Debian: apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("no Playwright for Python (pip install playwright==1.65.2)")
    if not bundle_path.is_file():
        skip_or_fail(f"no {bundle_path} (.ci/run builds it from tests/browser/uppy-entry.js)")
    artifacts.mkdir(parents=True, exist_ok=True)

    data = tempfile.mkdtemp(prefix="filestore-uppy-")
    app_port, = free_ports(1)
    app_origin = f"http://127.0.0.1:{app_port}"
    fs, app = None, None
    try:
        fs = Filestore(binary, data, "local")
        server = fs.url
        public = fs.public_key(app_origin)
        check(public.startswith("pk_"), "serve started; a public key for the app's origin")
        app = serve_app(app_port, bundle_path.read_bytes(), fs)

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.goto(app_origin + "/")
            check(page.evaluate("typeof globalThis.UppyLib.Uppy") == "function",
                  "the page loaded the Uppy bundle")

            # 1. XHRUpload to the token's url; the page shows the image.
            minted = page.evaluate("() => mint('avatar')")
            check(set(minted) == {"url", "token"} and minted["token"].startswith("upt_")
                  and minted["url"] == f"{server}/v1/upload?token={minted['token']}",
                  f"the app server minted a token; the page got only its url and token: {minted['url'][:60]}…")
            got = page.evaluate("(url) => xhrUpload(url, null, 'avatar')", minted["url"])
            check_got(not got.get("failed") and got["status"] == 201, "XHRUpload with the token's url: 201", got)
            record = got["body"]
            check_got(record["folder"] == "avatars" and record["metadata"] == {"user": "u42"}
                      and record["type"] == "image/png" and record["size"] == got["size"],
                      f"the File record: folder {record['folder']}, metadata {record['metadata']}, "
                      f"type {record['type']}, {record['size']} bytes", record)
            shown = page.evaluate("(url) => show(url)", got["url"])
            page.screenshot(path=str(artifacts / "uppy-1-token-avatar.png"))
            check(got["url"] == record["url"] and shown == {"w": got["w"], "h": got["h"]},
                  f"the page shows the image from the record's url: {shown}")
            check(fs.json(f"/v1/files/{record['id']}")["metadata"] == {"user": "u42"},
                  "GET /v1/files/{id} (secret key) says the same metadata")
            check(fs.secret not in page.content() and public not in page.content(),
                  "no key anywhere in the page")

            # 3a. The token is used up: the second upload is a 401 that Uppy reports.
            before = avatar_files(fs)
            again = page.evaluate("(url) => xhrUpload(url, null, 'avatar')", minted["url"])
            page.screenshot(path=str(artifacts / "uppy-3a-used-up-token.png"))
            check_got(again.get("failed") and again["uploadErrors"] == 1 and again["status"] == 401
                      and set(again["statuses"]) == {401},
                      f"a used-up token: Uppy's upload-error says 401 (each of its {len(again.get('statuses', []))} "
                      f"tries was a 401: {again.get('body')})", again)
            check(avatar_files(fs) == before, "the refused upload stored nothing")
            left = token_record(fs, app.minted[-1])
            check_got(left["uploads_left"] == 0 and "token" not in left and "url" not in left,
                      "the token's record: uploads_left 0, no secret in it", left)

            # 3b. Text named x.png under types ["image/*"]: 415; the use is not spent.
            minted = page.evaluate("() => mint('avatar')")
            refused = page.evaluate("(url) => xhrUpload(url, null, 'text')", minted["url"])
            page.screenshot(path=str(artifacts / "uppy-3b-not-an-image.png"))
            check_got(refused.get("failed") and refused["uploadErrors"] == 1 and refused["status"] == 415
                      and set(refused["statuses"]) == {415},
                      f"text bytes named x.png: Uppy's upload-error says 415 (each of its "
                      f"{len(refused.get('statuses', []))} tries was a 415: {refused.get('body')})", refused)
            check(avatar_files(fs) == before, "the refused upload stored nothing")
            check(token_record(fs, app.minted[-1])["uploads_left"] == 1, "the 415 did not spend the token's use")
            after = page.evaluate("(url) => xhrUpload(url, null, 'avatar')", minted["url"])
            check_got(not after.get("failed") and after["status"] == 201,
                      "the same token then takes a real PNG", after)

            # 2. tus with a token: a 20 MiB BMP in 5 MiB chunks.
            minted = page.evaluate("() => mint('photo')")
            width, height = 2048, 3413  # 54 + 6144 * 3413 bytes, just under 20 MiB
            tus = page.evaluate("([s, t, w, h, c]) => tusUpload(s, t, w, h, c)",
                                [server, minted["token"], width, height, 5 * MiB])
            check_got(not tus.get("failed"),
                      f"Uppy + @uppy/tus with the token finished in {round(tus.get('ms', 0))} ms", tus)
            size = 54 + 6144 * height
            record = fs.json(f"/v1/files/{tus['fileId']}")
            check(tus["size"] == size and record["size"] == size and record["sha256"] == tus["digest"],
                  f"the file ({tus['fileId']}, read inside upload-success) has {size} bytes and the "
                  f"page's sha256 {tus['digest'][:16]}…")
            check_got(record["folder"] == "avatars" and record["metadata"] == {"user": "u42"}
                      and record["type"] == "image/bmp",
                      f"the tus File record: folder {record['folder']}, metadata {record['metadata']}, "
                      f"type {record['type']}", record)
            check_got(tus["statusCode"] == 200 and tus["status"]["offset"] == size
                      and tus["status"]["file"]["id"] == tus["fileId"],
                      "the page read the upload's status with the same token", tus)
            shown = page.evaluate("(url) => show(url)", record["url"])
            page.screenshot(path=str(artifacts / "uppy-2-token-tus-bmp.png"))
            check(shown == {"w": width, "h": height}, f"the page shows the BMP from its url: {shown}")

            # 4. Timing: the same ~1 MiB PNG, a fresh token each time (its url; and in the
            # Authorization header, as the public key goes) vs the public key, interleaved.
            times = {"token url": [], "token header": [], "public key": [], "minting": []}
            for n in range(TIMING_RUNS + 2):  # the first two rounds are a warm-up
                started = time.perf_counter()
                minted = page.evaluate("() => mint('avatar')")
                minting = (time.perf_counter() - started) * 1000
                by_url = page.evaluate("(url) => xhrUpload(url, null, 'timing')", minted["url"])
                minted = page.evaluate("() => mint('avatar')")
                by_header = page.evaluate("([s, t]) => xhrUpload(s + '/v1/upload', t, 'timing')",
                                          [server, minted["token"]])
                by_key = page.evaluate("([s, k]) => xhrUpload(s + '/v1/upload', k, 'timing')", [server, public])
                statuses = [r.get("status") for r in (by_url, by_header, by_key)]
                if statuses != [201, 201, 201]:
                    raise AssertionError(f"timing round {n + 1}: not all three 201: {statuses}")
                if n >= 2:
                    times["token url"].append(by_url["ms"])
                    times["token header"].append(by_header["ms"])
                    times["public key"].append(by_key["ms"])
                    times["minting"].append(minting)
            check(True, f"timing: {TIMING_RUNS + 2} rounds of three uploads, each 201")
            page.screenshot(path=str(artifacts / "uppy-4-timing.png"))
            browser.close()

        print(f"   timing: Uppy XHRUpload of the same {by_key['size']}-byte PNG, {TIMING_RUNS} runs each, "
              "in-page ms (median, min, max):")
        for label, what in (("upload token, its url (?token=)", "token url"),
                            ("upload token, Authorization header", "token header"),
                            ("public key, Authorization header", "public key"),
                            ("minting a token (page -> app -> store)", "minting")):
            ms = times[what]
            print(f"     {label:40} {median_ms(ms):7} ms  ({round(min(ms), 1)}, {round(max(ms), 1)})")
        print("uppy: all checks passed")
    except BaseException:
        if fs:
            print(f"--- serve.log ---\n{fs.log_tail(40)}")
        raise
    finally:
        if app:
            app.shutdown()
            app.server_close()
        if fs:
            fs.stop()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
