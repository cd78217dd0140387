"""The console (CONTRACT §19, issue 48) in a real Chromium against a real `filestore serve`
(CI runs it from .ci/run).

Each screen is a step of its own; a failing step is reported and the others still run
(the exit status says whether all passed). The steps: sign in (a wrong key first; the key
is never kept by the page), browse (breadcrumbs, subfolders first, the table's headers,
thumbnails of a public and a private image, the filter), upload with the button (a small
file as one POST, a large one with tus) and by dropping a folder (progress bars), preview
an image and a PDF, a signed link opened in a fresh context, rename, move, delete (one file,
a selection, a folder), download a selection as a zip, keys (create, revoke; the revoked
key's session ends), upload tokens, webhooks (and their deliveries), usage (bars, the
30-day chart), a cross-origin form post carrying the session that changes nothing, a
folder of 100,000 files (inserted into the database: each page shown within 2 s), and sign
out. axe-core checks each screen at 375 and 1440 px wide (and the Files screen in the dark
scheme): no serious or critical violation. Screenshots of each screen at both widths go to
SCREENSHOT_DIR (NAME-375.png, NAME-1440.png).

Usage: python3 console_test.py path/to/filestore SCREENSHOT_DIR path/to/axe.min.js
Needs Playwright for Python and Debian's `chromium` (never a browser download), and
axe-core's axe.min.js (npm axe-core, which .ci/run installs into target/axe). Without one
of them it skips, saying why, unless FILESTORE_REQUIRE_TOOLS=1 (CI), where it fails instead.
"""

import json
import os
import pathlib
import shutil
import struct
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tus_interop"))
from harness import Filestore, check  # noqa: E402

WIDTHS = (375, 1440)
HEIGHT = {375: 812, 1440: 900}


def skip_or_fail(reason):
    if os.environ.get("FILESTORE_REQUIRE_TOOLS") == "1":
        raise SystemExit(f"FILESTORE_REQUIRE_TOOLS=1 but {reason}")
    print(f"console: skipped: {reason}")
    raise SystemExit(0)


def png(w, h):
    """A w x h RGB PNG: a gradient with stripes."""
    rows = b"".join(
        b"\0" + bytes(v for x in range(w) for v in ((x * 255) // w, (y * 255) // h, 160 if (x // 16) % 2 else 60))
        for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
       b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
       b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\n"
       b"trailer<</Root 1 0 R>>\n%%EOF\n")


class Api:
    """The /v1 API with the secret key, from the test (not the page)."""

    def __init__(self, fs):
        self.fs = fs

    def call(self, method, path, body=None, headers=None):
        h = {"Authorization": f"Bearer {self.fs.secret}", **(headers or {})}
        data = None
        if isinstance(body, (dict, list)):
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        elif body is not None:
            data = body
        req = urllib.request.Request(self.fs.url + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def upload(self, name, data, folder=None, private=False, mime="application/octet-stream"):
        boundary = "consoletestboundary"
        parts = []
        if folder:
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="folder"\r\n\r\n{folder}\r\n'.encode())
        if private:
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="private"\r\n\r\ntrue\r\n'.encode())
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                     f'Content-Type: {mime}\r\n\r\n'.encode() + data + b"\r\n")
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        status, rec = self.call("POST", "/v1/upload", body,
                                {"Content-Type": f"multipart/form-data; boundary={boundary}"})
        check(status == 201, f"uploaded {folder or ''}/{name} ({status} {rec})")
        return rec

    def names(self, folder):
        status, r = self.call("GET", f"/v1/files?folder={urllib.request.quote(folder or '/', safe='')}&limit=100")
        return sorted(f["name"] for f in r["files"])


class Run:
    def __init__(self, page, shots, axe_js):
        self.page = page
        self.shots = shots
        self.axe_js = axe_js
        self.results = []
        self.axe_report = {}

    def step(self, name, f):
        started = time.time()
        try:
            f()
            self.results.append((name, "passed", time.time() - started, ""))
            print(f"console: step {name}: passed ({time.time() - started:.1f} s)")
        except Exception as e:  # noqa: BLE001: a step's failure is reported, the next runs
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            self.results.append((name, "FAILED", time.time() - started, detail))
            print(f"console: step {name}: FAILED: {detail}")
            traceback.print_exc()
            try:
                self.page.screenshot(path=str(self.shots / f"failed-{name}.png"))
                # Close what a failed step left open.
                for _ in range(3):
                    self.page.keyboard.press("Escape")
            except Exception:  # noqa: BLE001
                pass

    def axe(self, screen):
        """axe-core on the page as it is: no serious or critical violation."""
        # axe comes in as an init script (the page's CSP refuses an inline one).
        res = self.page.evaluate("""async () => {
            const r = await axe.run(document, {resultTypes: ['violations']});
            return r.violations.map(v => ({id: v.id, impact: v.impact, n: v.nodes.length,
                                           target: v.nodes[0] && v.nodes[0].target.join(' ')}));
        }""")
        bad = [v for v in res if v["impact"] in ("serious", "critical")]
        self.axe_report[screen] = res
        check(not bad, f"axe on {screen}: no serious or critical violation {bad}")

    def each_width(self, screen, prepare=None):
        """At 375 and 1440 px: (prepare,) axe, screenshot."""
        for w in WIDTHS:
            self.page.set_viewport_size({"width": w, "height": HEIGHT[w]})
            if prepare:
                prepare()
            self.page.wait_for_timeout(150)
            self.axe(f"{screen}-{w}")
            self.page.screenshot(path=str(self.shots / f"{screen}-{w}.png"))
        self.page.set_viewport_size({"width": 1440, "height": 900})


def main():
    if len(sys.argv) < 4:
        raise SystemExit("usage: console_test.py path/to/filestore SCREENSHOT_DIR path/to/axe.min.js")
    binary = os.path.abspath(sys.argv[1])
    shots = pathlib.Path(sys.argv[2])
    axe_path = pathlib.Path(sys.argv[3])
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        skip_or_fail("no chromium on PATH (Debian: apt-get install chromium)")
    if not axe_path.is_file():
        skip_or_fail(f"no axe-core at {axe_path} (npm install --prefix target/axe axe-core@4)")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        skip_or_fail("no Playwright for Python (pip install playwright==1.65.2)")
    shots.mkdir(parents=True, exist_ok=True)
    axe_js = axe_path.read_text()
    started = time.time()
    fs = None
    try:
        fs = Filestore(binary, tempfile.mkdtemp(prefix="filestore-console-"), "local")
        api = Api(fs)
        photo = api.upload("photo.png", png(320, 240), mime="image/png")
        api.upload("secret.png", png(200, 150), private=True, mime="image/png")
        api.upload("readme.txt", b"Hello from the console test.\n", folder="docs", mime="text/plain")
        api.upload("report.pdf", PDF, folder="docs", mime="application/pdf")
        api.upload("notes.txt", b"notes\n", folder="docs/old", mime="text/plain")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            context = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
            context.add_init_script(script=axe_js)
            page = context.new_page()
            page.set_default_timeout(10_000)
            expect.set_options(timeout=10_000)
            run = Run(page, shots, axe_js)
            console = fs.url + "/console"
            role = page.get_by_role
            dialog = lambda name: role("dialog", name=name)  # noqa: E731

            def files_at(folder=""):
                page.goto(console + ("#/files?folder=" + folder if folder else "#/files"))
                expect(role("navigation", name="Folder path")).to_be_visible()
                page.wait_for_load_state("networkidle")

            def row_action(name, action):
                role("button", name=f"More actions for {name}", exact=True).click()
                role("menuitem", name=action, exact=True).click()

            # -- sign in
            def sign_in():
                page.goto(console)
                expect(role("button", name="Sign in")).to_be_visible()
                run.each_width("signin")
                page.get_by_label("Secret key").fill("sk_not_a_key")
                role("button", name="Sign in").click()
                expect(role("alert")).to_contain_text("invalid")
                page.get_by_label("Secret key").fill(fs.secret)
                role("button", name="Sign in").click()
                nav = role("navigation", name="Console")
                for link in ("Files", "Keys", "Upload tokens", "Webhooks", "Usage"):
                    expect(nav.get_by_role("link", name=link, exact=True)).to_be_visible()
                expect(role("button", name="Sign out")).to_be_visible()
                kept = page.evaluate("""() => JSON.stringify([document.cookie,
                    Object.entries(localStorage), Object.entries(sessionStorage)])""")
                check(fs.secret not in kept and "cs_" not in kept,
                      "the page keeps neither the key nor the session where scripts read")
                cookie = [c for c in context.cookies() if c["name"] == "filestore_console"][0]
                check(cookie["httpOnly"] and cookie["sameSite"] == "Strict",
                      "the session cookie is HttpOnly, SameSite=Strict")
            run.step("sign-in", sign_in)

            # -- browse
            def browse():
                files_at()
                crumbs = role("navigation", name="Folder path")
                expect(crumbs.get_by_role("link", name="All files")).to_be_visible()
                for header in ("Name", "Size", "Type", "Created"):
                    expect(role("columnheader", name=header, exact=True)).to_be_visible()
                rows = page.locator("table.files tbody tr")
                expect(rows).to_have_count(3)
                check(rows.nth(0).get_attribute("class") == "folder", "the subfolder comes first")
                expect(rows.nth(0).get_by_role("link", name="docs")).to_be_visible()
                expect(page.locator("table.files")).to_contain_text("photo.png")
                expect(page.locator("table.files")).to_contain_text("KB")
                # Thumbnails: the public image's variant, the private one signed.
                for name in ("photo.png", "secret.png"):
                    img = page.locator("tr", has_text=name).locator("img.thumb")
                    page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=img.element_handle())
                    src = img.get_attribute("src")
                    check("w=80" in src and ("signature=" in src) == (name == "secret.png"),
                          f"{name}'s thumbnail is a variant{' (signed)' if name == 'secret.png' else ''}")
                run.each_width("files")
                # By keyboard: a row's menu opens on Enter, arrows move, Escape closes it.
                more = role("button", name="More actions for photo.png", exact=True)
                more.focus()
                page.keyboard.press("Enter")
                expect(role("menuitem", name="Copy link")).to_be_focused()
                page.keyboard.press("ArrowDown")
                expect(role("menuitem", name="Signed link")).to_be_focused()
                page.keyboard.press("Escape")
                expect(role("menu")).to_have_count(0)
                expect(more).to_be_focused()
                page.emulate_media(color_scheme="dark")
                run.axe("files-dark-1440")
                page.screenshot(path=str(shots / "files-dark-1440.png"))
                page.emulate_media(color_scheme="light")
                # Into a folder: breadcrumbs, its subfolder, the filter.
                rows.nth(0).get_by_role("link", name="docs").click()
                expect(crumbs.get_by_role("link", name="docs")).to_have_attribute("aria-current", "page")
                expect(page.locator("table.files tbody tr")).to_have_count(3)
                page.get_by_label("Filter by name").fill("read")
                expect(page.locator("table.files tbody tr")).to_have_count(1)
                expect(page.locator("table.files")).to_contain_text("readme.txt")
                page.get_by_label("Filter by name").fill("")
                crumbs.get_by_role("link", name="All files").click()
                expect(page.locator("table.files tbody tr")).to_have_count(3)
            run.step("browse", browse)

            # -- upload: the button (a small file, a large one by tus), a dropped folder
            def upload():
                files_at()
                role("button", name="Upload", exact=True).click()
                big = os.urandom(9 * 1000 * 1000)
                page.get_by_label("Upload files").set_input_files([
                    {"name": "small.txt", "mimeType": "text/plain", "buffer": b"small file\n"},
                    {"name": "big.bin", "mimeType": "application/octet-stream", "buffer": big},
                ])
                expect(role("progressbar", name="Uploading small.txt")).to_be_visible()
                expect(role("progressbar", name="Uploading big.bin")).to_be_visible()
                expect(page.locator("table.files")).to_contain_text("big.bin", timeout=30_000)
                expect(page.locator("table.files")).to_contain_text("small.txt")
                check(page.evaluate("() => [...document.querySelectorAll('progress')].every(p => p.value === p.max)"),
                      "every progress bar is full")
                run.each_width("upload")
                # A dropped folder (entries as webkitGetAsEntry gives them), kept whole.
                page.evaluate("""() => {
                    const file = (name, text) => ({isFile: true, isDirectory: false, name,
                        file: (ok) => ok(new File([text], name, {type: 'text/plain'}))});
                    const dir = (name, children) => ({isFile: false, isDirectory: true, name,
                        createReader: () => { let done = false;
                            return {readEntries: (ok) => { ok(done ? [] : children); done = true; }}; }});
                    const tree = dir('dropped', [file('one.txt', '1'), file('two.txt', '22'),
                                                 dir('inner', [file('three.txt', '333')])]);
                    const dt = {items: [{kind: 'file', webkitGetAsEntry: () => tree}], files: []};
                    const area = document.querySelector('.files-area');
                    const ev = new Event('drop', {bubbles: true, cancelable: true});
                    Object.defineProperty(ev, 'dataTransfer', {value: dt});
                    area.dispatchEvent(ev);
                }""")
                expect(role("progressbar", name="Uploading dropped/inner/three.txt")).to_be_visible()
                expect(page.locator("table.files tbody tr.folder", has_text="dropped")).to_be_visible(timeout=15_000)
                check(api.names("dropped") == ["one.txt", "two.txt"] and api.names("dropped/inner") == ["three.txt"],
                      "the dropped folder's files are in dropped/ and dropped/inner/")
            run.step("upload", upload)

            # -- preview: an image, a PDF
            def preview():
                files_at()
                role("button", name="photo.png", exact=True).click()
                d = dialog("photo.png")
                expect(d).to_be_visible()
                img = d.get_by_role("img", name="Preview of photo.png")
                page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=img.element_handle())
                expect(d).to_contain_text(photo["sha256"])
                expect(d).to_contain_text(photo["id"])
                run.each_width("preview")
                page.keyboard.press("Escape")
                expect(d).to_be_hidden()
                files_at("docs")
                role("button", name="report.pdf", exact=True).click()
                frame = dialog("report.pdf").locator("iframe[title='Preview of report.pdf']")
                expect(frame).to_be_visible()
                check("/live/" in frame.get_attribute("src"), "the PDF shows in a frame from the CDN")
                page.keyboard.press("Escape")
                role("button", name="readme.txt", exact=True).click()
                expect(dialog("readme.txt")).to_contain_text("Hello from the console test.")
                page.keyboard.press("Escape")
            run.step("preview", preview)

            # -- a signed link, opened in a fresh context
            def signed_link():
                files_at()
                row_action("secret.png", "Signed link")
                d = dialog("Signed link: secret.png")
                d.get_by_label("Expires in").select_option(label="1 day")
                d.get_by_role("button", name="Create signed link").click()
                url = d.get_by_label("Signed link").input_value()
                check("signature=" in url, "a signed link is made")
                fresh = browser.new_context()
                r = fresh.request.get(url)
                check(r.status == 200 and r.body() == png(200, 150), "the signed link opens in a fresh context")
                fresh.close()
                page.keyboard.press("Escape")
            run.step("signed-link", signed_link)

            # -- rename, move, delete (a file, a selection, a folder)
            def manage():
                files_at()
                row_action("small.txt", "Rename")
                d = dialog("Rename small.txt")
                d.get_by_label("Name").fill("renamed.txt")
                d.get_by_role("button", name="Rename").click()
                expect(page.locator("table.files")).to_contain_text("renamed.txt")
                row_action("renamed.txt", "Move")
                d = dialog("Move renamed.txt")
                d.get_by_label("Folder").fill("moved")
                d.get_by_role("button", name="Move").click()
                expect(page.locator("table.files tbody tr.folder", has_text="moved")).to_be_visible()
                check(api.names("moved") == ["renamed.txt"], "the file moved to moved/")
                row_action("photo.png", "Delete")
                d = dialog("Delete photo.png?")
                expect(d.get_by_role("button", name="Cancel")).to_be_visible()
                run.each_width("confirm")
                d.get_by_role("button", name="Delete", exact=True).click()
                expect(role("button", name="photo.png", exact=True)).to_have_count(0)
                # A selection.
                files_at("dropped")
                page.get_by_label("Select one.txt").check()
                page.get_by_label("Select two.txt").check()
                role("group", name="Selected files").get_by_role("button", name="Delete").click()
                dialog("Delete 2 files?").get_by_role("button", name="Delete", exact=True).click()
                expect(page.locator("table.files tbody tr:not(.folder)")).to_have_count(0)
                # The folder: asks first.
                role("button", name="Delete folder").click()
                d = dialog("Delete folder dropped?")
                d.get_by_role("button", name="Cancel").click()
                check(api.names("dropped/inner") == ["three.txt"], "cancelled: nothing deleted")
                role("button", name="Delete folder").click()
                dialog("Delete folder dropped?").get_by_role("button", name="Delete folder").click()
                expect(role("navigation", name="Folder path").get_by_role("link", name="All files")).to_have_attribute("aria-current", "page")
                check(api.names("dropped/inner") == [], "the folder's files are gone")
            run.step("rename-move-delete", manage)

            # -- a selection as a zip (POST /v1/files/zip)
            def download_zip():
                files_at("docs")
                page.get_by_label("Select all files on this page").check()
                with page.expect_download() as dl:
                    role("button", name="Download zip").click()
                path = dl.value.path()
                import zipfile
                with zipfile.ZipFile(path) as z:
                    names = sorted(z.namelist())
                check(names == ["readme.txt", "report.pdf"], f"the zip holds the selection: {names}")
            run.step("zip", download_zip)

            # -- keys: create (shown once), revoke (asks); the revoked key's session ends
            def keys():
                page.goto(console + "#/keys")
                expect(role("heading", name="Keys")).to_be_visible()
                page.wait_for_load_state("networkidle")
                role("button", name="Create key").click()
                d = dialog("Create key")
                d.get_by_label("Kind").select_option(label="Secret")
                d.get_by_label("Name").fill("from the console")
                d.get_by_role("button", name="Create key").click()
                shown = dialog("New key")
                key = shown.get_by_label("Key", exact=True).input_value()
                check(key.startswith("sk_"), "the new key is shown once")
                expect(shown.get_by_role("button", name="Copy key")).to_be_visible()
                page.keyboard.press("Escape")
                expect(page.locator("table")).to_contain_text("from the console")
                run.each_width("keys")
                # A second browser signs in with the new key; revoking it ends that session.
                other = browser.new_context()
                op = other.new_page()
                op.goto(console)
                op.get_by_label("Secret key").fill(key)
                op.get_by_role("button", name="Sign in").click()
                expect(op.get_by_role("button", name="Sign out")).to_be_visible()
                row = page.locator("tr", has_text="from the console")
                row.get_by_role("button", name="Revoke").click()
                d = page.get_by_role("dialog")
                expect(d.get_by_role("button", name="Cancel")).to_be_visible()
                d.get_by_role("button", name="Revoke").click()
                expect(page.locator("tr", has_text="from the console")).to_have_count(0)
                op.goto(console + "#/usage")
                op.reload()
                expect(op.get_by_role("button", name="Sign in")).to_be_visible()
                other.close()
            run.step("keys", keys)

            def tokens():
                page.goto(console + "#/tokens")
                expect(role("heading", name="Upload tokens")).to_be_visible()
                role("button", name="Create token").click()
                d = dialog("Create token")
                d.get_by_label("Folder").fill("inbox")
                d.get_by_role("button", name="Create token").click()
                url = dialog("New upload token").get_by_label("URL").input_value()
                check("token=upt_" in url, "the token's URL is shown once")
                page.keyboard.press("Escape")
                expect(page.locator("table")).to_contain_text("inbox")
                run.each_width("tokens")
                page.locator("tr", has_text="inbox").get_by_role("button", name="Revoke").click()
                page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
                expect(page.get_by_text("No active upload tokens.")).to_be_visible()
            run.step("upload-tokens", tokens)

            def webhooks():
                page.goto(console + "#/webhooks")
                expect(role("heading", name="Webhooks")).to_be_visible()
                role("button", name="Create webhook").click()
                d = dialog("Create webhook")
                d.get_by_label("URL").fill("http://127.0.0.1:9/hook")
                d.get_by_role("button", name="Create webhook").click()
                secret = dialog("New webhook").get_by_label("Secret", exact=True).input_value()
                check(len(secret) > 8, "the webhook's signing secret is shown once")
                page.keyboard.press("Escape")
                card = page.locator("article", has_text="http://127.0.0.1:9/hook")
                expect(card).to_be_visible()
                api.upload("hooked.txt", b"event\n", mime="text/plain")
                card.get_by_role("button", name="Recent deliveries").click()
                expect(card.locator("table, .empty")).to_be_visible()
                run.each_width("webhooks")
                card.get_by_role("button", name="Delete").click()
                page.get_by_role("dialog").get_by_role("button", name="Delete").click()
                expect(card).to_have_count(0)
            run.step("webhooks", webhooks)

            def usage():
                page.goto(console + "#/usage")
                expect(role("heading", name="Usage")).to_be_visible()
                expect(page.locator(".usage-bar")).to_have_count(3)
                expect(page.locator("svg.chart")).to_be_visible()
                expect(page.locator("svg.chart rect.bar")).to_have_count(30)
                run.each_width("usage")
            run.step("usage", usage)

            # -- a cross-origin form post carrying the session changes nothing
            def cross_origin():
                victim = api.upload("victim.txt", b"keep me\n", mime="text/plain")
                evil = "http://evil.test/"
                page.route(evil, lambda route: route.fulfill(content_type="text/html", body=(
                    f'<form method="post" action="{fs.url}/v1/files/delete" enctype="text/plain">'
                    f'<input name=\'{{"ids": ["{victim["id"]}"], "x": "\' value=\'"}}\'>'
                    '<button>go</button></form>'
                    f'<form id="d" method="post" action="{fs.url}/v1/files/{victim["id"]}?_method=DELETE"></form>')))
                page.goto(evil)
                with page.expect_navigation():
                    page.get_by_role("button", name="go").click()
                body = page.content()
                check("forbidden" in body or "unauthorized" in body, "the cross-origin post is refused")
                page.goto(evil)
                with page.expect_navigation():
                    page.evaluate("() => document.getElementById('d').submit()")
                status, _ = api.call("GET", f"/v1/files/{victim['id']}")
                check(status == 200, "the file is still there")
                # The same with the header, by fetch from that origin: refused before it is sent.
                page.goto(evil)
                sent = page.evaluate("""async ([url, id]) => {
                    try {
                        const r = await fetch(url + '/v1/files/' + id, {method: 'DELETE', credentials: 'include',
                            headers: {'X-Filestore-Console': '1'}});
                        return r.status;
                    } catch (e) { return 'blocked'; }
                }""", [fs.url, victim["id"]])
                check(sent != 200, f"a cross-origin fetch with the header does nothing ({sent})")
                status, _ = api.call("GET", f"/v1/files/{victim['id']}")
                check(status == 200, "the file is still there")
                page.unroute(evil)
            run.step("cross-origin", cross_origin)

            # -- a folder of 100,000 files: each page shows within 2 s
            def big_folder():
                status, who = api.call("GET", "/v1/whoami")
                check(status == 200, "whoami")
                import sqlite3
                db = sqlite3.connect(os.path.join(fs.data, "filestore.db"), timeout=30)
                with db:
                    db.execute(
                        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99999) "
                        "INSERT INTO files (id, account_id, name, folder, size, content_type, private, sha256, "
                        "blob_key, created_at, expires_at, inline, metadata) "
                        "SELECT printf('f_%044x', i), ?, printf('row-%06d.txt', i), 'big', 10, 'text/plain', 0, "
                        "'00', 'bk' || i, 1000 + i, NULL, 0, '{}' FROM n", (who["account"]["id"],))
                db.close()
                times = []
                t = time.time()
                page.goto(console + "#/files?folder=big")
                expect(page.locator("table.files tbody tr")).to_have_count(50)
                expect(page.locator("table.files")).to_contain_text("row-099999.txt")
                times.append(time.time() - t)
                for _ in range(3):
                    t = time.time()
                    role("button", name="Next page").click()
                    expect(page.get_by_text(f"Page {len(times) + 1}", exact=True)).to_be_visible()
                    expect(page.locator("table.files tbody tr")).to_have_count(50)
                    times.append(time.time() - t)
                expect(page.locator("table.files")).to_contain_text("row-099800.txt")
                print(f"console: the folder of 100,000 files: pages shown in {', '.join(f'{x:.2f}' for x in times)} s")
                check(max(times) <= 2.0, "each page of a folder of 100,000 files shows within 2 s")
            run.step("folder-of-100000", big_folder)

            def sign_out():
                files_at()
                cookie = [c for c in context.cookies() if c["name"] == "filestore_console"][0]
                role("button", name="Sign out").click()
                expect(role("button", name="Sign in")).to_be_visible()
                check(not [c for c in context.cookies() if c["name"] == "filestore_console"],
                      "the cookie is cleared")
                r = context.request.get(fs.url + "/v1/files", headers={
                    "Cookie": f"filestore_console={cookie['value']}", "X-Filestore-Console": "1"})
                check(r.status == 401, "the ended session opens nothing")
            run.step("sign-out", sign_out)

            browser.close()
        (shots / "axe-report.json").write_text(json.dumps(run.axe_report, indent=1))
        failed = [r for r in run.results if r[1] != "passed"]
        print(f"console: {len(run.results) - len(failed)} of {len(run.results)} steps passed "
              f"in {time.time() - started:.1f} s; screenshots in {shots}")
        for name, _, _, detail in failed:
            print(f"console: FAILED {name}: {detail}")
        if failed:
            raise SystemExit(1)
    finally:
        if fs:
            fs.stop()


if __name__ == "__main__":
    main()
