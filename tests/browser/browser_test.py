"""A real Chromium against a real `filestore serve` (CI runs it: tests/browser/run.sh).

Three loopback origins: the server on one port, an app page allowed by a public key on
another, and the same page on a third that no key allows. Checks, as a user's browser sees
them:
  1. the allowed page uploads with the `pk_` key (fetch + FormData) and reads the File record;
  2. the other page gets a readable 403 `forbidden` (not "Failed to fetch");
  3. a public image shows in an <img> from its CDN URL, and fetch() reads an uploaded JSON file;
  4. an uploaded HTML page, opened from its CDN URL, cannot run script.
Screenshots go to the artifacts directory (argv[2], default target/browser-artifacts).

Usage: python3 browser_test.py path/to/filestore [ARTIFACTS_DIR]
Needs Playwright for Python and Debian's `chromium` (never a browser download).
"""

import base64
import http.server
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from playwright.sync_api import sync_playwright

# A 2x2 red PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)

APP_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>uploader</title></head>
<body>
<h1>Upload from a page</h1>
<pre id="out">waiting</pre>
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
</script>
</body></html>
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_page(port):
    """A static server for the app page on 127.0.0.1:port (its own origin)."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = APP_PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
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


def main():
    binary = sys.argv[1]
    artifacts = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "target/browser-artifacts")
    artifacts.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise SystemExit("no chromium on PATH (Debian: apt-get install chromium)")

    data = tempfile.mkdtemp()
    api_port, app_port, other_port = free_port(), free_port(), free_port()
    server_url = f"http://127.0.0.1:{api_port}"
    app_origin = f"http://127.0.0.1:{app_port}"
    other_origin = f"http://127.0.0.1:{other_port}"
    log = open(os.path.join(data, "serve.log"), "w+")
    serve = subprocess.Popen(
        [binary, "serve", "--data-dir", os.path.join(data, "d"), "--listen", f"127.0.0.1:{api_port}"],
        stderr=log,
    )
    try:
        secret = None
        for _ in range(200):
            log.seek(0)
            for line in log.read().splitlines():
                if line.startswith("filestore login "):
                    secret = line.split()[-1]
            if secret:
                break
            time.sleep(0.05)
        check(secret and secret.startswith("sk_"), "serve started and printed its key")
        made = subprocess.run(
            [binary, "admin", "key", "create", "--account", "default", "--kind", "public",
             "--origin", app_origin, "--json", "--data-dir", os.path.join(data, "d")],
            check=True, capture_output=True, text=True,
        )
        public = json.loads(made.stdout)["key"]
        check(public.startswith("pk_"), "a public key for the app's origin")
        serve_page(app_port)
        serve_page(other_port)

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
            browser.close()
        print("browser: 4 passed, 0 failed")
    finally:
        serve.terminate()
        serve.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
