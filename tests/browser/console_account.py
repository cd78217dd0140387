"""The console's browser test, its account steps (see console_test.py): keys, upload tokens,
webhooks, usage, a cross-origin post, sign-out."""

from console_files import helpers
from harness import check


def steps(t):
    """The account steps, as [(name, function)] in their order."""
    page, context, browser, fs, api, run, shots, console, expect = (
        t.page, t.context, t.browser, t.fs, t.api, t.run, t.shots, t.console, t.expect)
    role = page.get_by_role
    dialog = lambda name: role("dialog", name=name)  # noqa: E731
    files_at, _ = helpers(t)
    steps = []

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
    steps.append(("keys", keys))

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
    steps.append(("upload-tokens", tokens))

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
    steps.append(("webhooks", webhooks))

    def usage():
        page.goto(console + "#/usage")
        expect(role("heading", name="Usage")).to_be_visible()
        expect(page.locator(".usage-bar")).to_have_count(3)
        expect(page.locator("svg.chart")).to_be_visible()
        expect(page.locator("svg.chart rect.bar")).to_have_count(30)
        run.each_width("usage")
    steps.append(("usage", usage))

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
    steps.append(("cross-origin", cross_origin))

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
    steps.append(("sign-out", sign_out))
    return steps
