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
SCREENSHOT_DIR (NAME-375.png, NAME-1440.png), axe's findings to SCREENSHOT_DIR/axe-report.json.
The steps are in console_files.py and console_account.py; this file runs them.

Usage: python3 console_test.py path/to/filestore SCREENSHOT_DIR path/to/axe.min.js
Needs Playwright for Python and Debian's `chromium` (never a browser download), and
axe-core's axe.min.js (npm axe-core, which .ci/run installs into target/axe). Without one
of them it skips, saying why, unless FILESTORE_REQUIRE_TOOLS=1 (CI), where it fails instead.
"""

import json
import os
import pathlib
import shutil
import sys
import tempfile
import types
import time
import traceback
import urllib.error
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tus_interop"))
from harness import Filestore, check  # noqa: E402

import console_account  # noqa: E402
import console_files  # noqa: E402

WIDTHS = (375, 1440)
HEIGHT = {375: 812, 1440: 900}


def skip_or_fail(reason):
    if os.environ.get("FILESTORE_REQUIRE_TOOLS") == "1":
        raise SystemExit(f"FILESTORE_REQUIRE_TOOLS=1 but {reason}")
    print(f"console: skipped: {reason}")
    raise SystemExit(0)


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
    def __init__(self, page, shots):
        self.page = page
        self.shots = shots
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
        photo = console_files.seed(api)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            context = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
            context.add_init_script(script=axe_js)
            page = context.new_page()
            page.set_default_timeout(10_000)
            expect.set_options(timeout=10_000)
            run = Run(page, shots)
            t = types.SimpleNamespace(page=page, context=context, browser=browser, fs=fs, api=api,
                                      run=run, shots=shots, console=fs.url + "/console",
                                      expect=expect, photo=photo)
            files, account = console_files.steps(t), console_account.steps(t)
            # The folder of 100,000 files last but for sign-out (it slows every listing after).
            for name, step in files[:-1] + account[:-1] + files[-1:] + account[-1:]:
                run.step(name, step)

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
