"""Image variants in a real Chromium against a real `filestore serve` (CI runs it from
.ci/run; issue 23's browser test).

The page is on the server's own origin (its health URL), so it may call the API with the
secret key without CORS. It draws a 1600x1200 photo-like canvas, uploads it as a JPEG, then:
  1. shows it with <img srcset="…?w=320&format=auto 320w, …?w=640&format=auto 640w"
     sizes="320px">: the image decodes at 320 px wide, and the answer Chromium got was AVIF
     (it sends Accept: image/avif,…) with Vary: Accept, far smaller than the source;
  2. uploads the same JPEG as a private file, asks for a signed URL with
     "transform": {"w": 200, "format": "webp"} and shows it: 200 px wide, WebP; the same
     URL with w=201 is refused (the image fails to load);
  3. a variant of a text file fails to load (400), and the page still works.
Screenshots go to the artifacts directory.

Usage: python3 images_test.py path/to/filestore [ARTIFACTS_DIR]
Needs Playwright for Python and Debian's `chromium` (never a browser download). Without one
of them it skips, saying why, unless FILESTORE_REQUIRE_TOOLS=1 (CI), where it fails instead.
"""

import os
import pathlib
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tus_interop"))
from harness import Filestore, check  # noqa: E402

PAGE_JS = """
window.photo = async function (w, h) {
  const c = document.createElement("canvas");
  c.width = w; c.height = h;
  const g = c.getContext("2d");
  const grad = g.createLinearGradient(0, 0, w, h);
  grad.addColorStop(0, "#1e6091"); grad.addColorStop(0.5, "#f9c74f"); grad.addColorStop(1, "#90be6d");
  g.fillStyle = grad; g.fillRect(0, 0, w, h);
  for (let i = 0; i < 400; i++) {
    g.fillStyle = `hsl(${(i * 37) % 360}, 70%, 50%)`;
    g.beginPath(); g.arc((i * 131) % w, (i * 71) % h, 10 + (i % 40), 0, 2 * Math.PI); g.fill();
  }
  return await new Promise((ok) => c.toBlob(ok, "image/jpeg", 0.9));
};
window.upload = async function (key, blob, name, priv) {
  const form = new FormData();
  if (priv) form.append("private", "true");
  form.append("file", blob, name);
  const r = await fetch("/v1/upload", {method: "POST", body: form,
                                       headers: {Authorization: "Bearer " + key}});
  return {status: r.status, body: await r.json()};
};
window.show = function (attrs) {
  return new Promise((ok) => {
    const img = document.createElement("img");
    img.onload = () => ok({loaded: true, w: img.naturalWidth, h: img.naturalHeight,
                           src: img.currentSrc});
    img.onerror = () => ok({loaded: false});
    for (const [k, v] of Object.entries(attrs)) img.setAttribute(k, v);
    img.style.margin = "4px";
    document.body.appendChild(img);
  });
};
"""


def skip_or_fail(reason):
    if os.environ.get("FILESTORE_REQUIRE_TOOLS") == "1":
        raise SystemExit(f"FILESTORE_REQUIRE_TOOLS=1 but {reason}")
    print(f"images: skipped: {reason}")
    raise SystemExit(0)


def main():
    binary = os.path.abspath(sys.argv[1])
    artifacts = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "target/browser-artifacts")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        skip_or_fail("no chromium on PATH (Debian: apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("no Playwright for Python (pip install playwright==1.65.2)")
    artifacts.mkdir(parents=True, exist_ok=True)
    fs = None
    try:
        fs = Filestore(binary, tempfile.mkdtemp(prefix="filestore-images-"), "local")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium,
                                        args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            answers = {}

            def seen(response):
                if "/live/" in response.url:
                    answers[response.url] = (response.status, response.headers)

            page.on("response", seen)
            page.goto(fs.url + "/v1/health")
            page.evaluate("() => {" + PAGE_JS + "}")
            page.evaluate("() => { document.body.innerHTML = '<h1>variants</h1>'; }")

            # 1. A public photo in a srcset: Chromium picks the 320w candidate, gets AVIF.
            up = page.evaluate("async (key) => upload(key, await photo(1600, 1200), 'cat.jpg', false)",
                               fs.secret)
            check(up["status"] == 201 and up["body"]["type"] == "image/jpeg",
                  f"the page uploaded a {up['body'].get('size')}-byte JPEG")
            url = up["body"]["url"]
            srcset = f"{url}?w=320&format=auto 320w, {url}?w=640&format=auto 640w"
            shown = page.evaluate("(a) => show(a)", {"srcset": srcset, "sizes": "320px",
                                                     "src": f"{url}?w=640&format=auto"})
            check(shown.get("loaded") and shown["w"] == 320 and shown["h"] == 240,
                  f"the srcset's 320w variant decodes at {shown.get('w')}x{shown.get('h')}")
            status, headers = answers[shown["src"]]
            check(status == 200 and headers.get("content-type") == "image/avif"
                  and headers.get("vary") == "Accept",
                  f"Chromium got {headers.get('content-type')} (Vary: {headers.get('vary')})")
            size = int(headers.get("content-length", "0"))
            check(0 < size < up["body"]["size"] // 4,
                  f"the variant is {size} bytes, the source {up['body']['size']}")

            # 2. A private photo: a signed URL of one variant, and nothing else.
            priv = page.evaluate("async (key) => upload(key, await photo(1600, 1200), 'p.jpg', true)",
                                 fs.secret)
            check(priv["status"] == 201 and priv["body"]["private"], "a private JPEG uploaded")
            signed = page.evaluate("""async ([key, id]) => {
                const r = await fetch(`/v1/files/${id}/signed-url`, {method: "POST",
                    headers: {Authorization: "Bearer " + key, "Content-Type": "application/json"},
                    body: JSON.stringify({expires_in: 600, transform: {w: 200, format: "webp"}})});
                return (await r.json()).url; }""", [fs.secret, priv["body"]["id"]])
            shown = page.evaluate("(a) => show(a)", {"src": signed})
            check(shown.get("loaded") and shown["w"] == 200 and shown["h"] == 150
                  and answers[signed][1].get("content-type") == "image/webp",
                  f"the signed variant shows at {shown.get('w')}x{shown.get('h')}, WebP")
            tampered = page.evaluate("(a) => show(a)", {"src": signed.replace("w=200", "w=201")})
            check(not tampered.get("loaded"), "the same signature with w=201 does not load")

            # 3. Not an image: the variant fails, the page goes on.
            text = page.evaluate("""async (key) => upload(key, new Blob(["hello"],
                {type: "text/plain"}), "a.txt", false)""", fs.secret)
            broken = page.evaluate("(a) => show(a)", {"src": text["body"]["url"] + "?w=10"})
            status = answers.get(text["body"]["url"] + "?w=10", (None, {}))[0]
            check(not broken.get("loaded") and status == 400,
                  f"a text file's variant does not load ({status})")
            page.screenshot(path=str(artifacts / "images-variants.png"), full_page=True)
            browser.close()
        print("images: all checks passed")
    finally:
        if fs:
            fs.stop()


if __name__ == "__main__":
    main()
