"""The console's browser test, its Files steps (see console_test.py): sign-in, browse, upload,
preview, a signed link, rename, move and delete, a zip, a folder of 100,000 files."""

import os
import sqlite3
import struct
import time
import zipfile
import zlib

from harness import check


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


def seed(api):
    """The files the steps start from; the public photo's record."""
    photo = api.upload("photo.png", png(320, 240), mime="image/png")
    api.upload("secret.png", png(200, 150), private=True, mime="image/png")
    api.upload("readme.txt", b"Hello from the console test.\n", folder="docs", mime="text/plain")
    api.upload("report.pdf", PDF, folder="docs", mime="application/pdf")
    api.upload("notes.txt", b"notes\n", folder="docs/old", mime="text/plain")
    return photo


def helpers(t):
    """files_at(folder): the Files screen of a folder, loaded; row_action(name, action): a
    file's "More actions" menu item."""
    page, context, browser, fs, api, run, shots, console, expect = (
        t.page, t.context, t.browser, t.fs, t.api, t.run, t.shots, t.console, t.expect)
    role = page.get_by_role
    dialog = lambda name: role("dialog", name=name)  # noqa: E731

    def files_at(folder=""):
        page.goto(console + ("#/files?folder=" + folder if folder else "#/files"))
        expect(role("navigation", name="Folder path")).to_be_visible()
        page.wait_for_load_state("networkidle")

    def row_action(name, action):
        role("button", name=f"More actions for {name}", exact=True).click()
        role("menuitem", name=action, exact=True).click()
    return files_at, row_action


def steps(t):
    """The Files steps, as [(name, function)] in their order."""
    page, context, browser, fs, api, run, shots, console, expect = (
        t.page, t.context, t.browser, t.fs, t.api, t.run, t.shots, t.console, t.expect)
    role = page.get_by_role
    dialog = lambda name: role("dialog", name=name)  # noqa: E731
    photo = t.photo
    files_at, row_action = helpers(t)
    steps = []

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
    steps.append(("sign-in", sign_in))

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
    steps.append(("browse", browse))

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
    steps.append(("upload", upload))

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
    steps.append(("preview", preview))

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
    steps.append(("signed-link", signed_link))

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
    steps.append(("rename-move-delete", manage))

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
    steps.append(("zip", download_zip))

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
    steps.append(("folder-of-100000", big_folder))
    return steps
