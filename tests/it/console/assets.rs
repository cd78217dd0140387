//! The page and its assets: served from the binary with a strict CSP, never
//! framed; small enough; off with `[console] enabled = false`.

use super::server_with;
use crate::common::{error_code, TestServer};

/// The headers every console response carries.
fn assert_protected(r: &reqwest::Response) {
    let h = r.headers();
    let csp = h
        .get("content-security-policy")
        .expect("a CSP header")
        .to_str()
        .unwrap();
    assert!(csp.contains("default-src 'self'"), "{csp}");
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(csp.contains("object-src 'none'"), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert!(!csp.contains("unsafe-eval"), "{csp}");
    assert_eq!(h["x-frame-options"], "DENY");
    assert_eq!(h["x-content-type-options"], "nosniff");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_and_its_assets_are_served_with_a_strict_csp() {
    let srv = TestServer::start().await;
    let r = srv.http.get(srv.url("/console")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_protected(&r);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let html = r.text().await.unwrap();
    assert!(html.contains("Secret key") && html.contains("Sign in"));
    // No inline script: every script is a file of the page's own.
    assert!(
        !html.contains("<script>")
            && html.contains(r#"<script type="module" src="/console/assets/main.js">"#)
    );
    // Every asset the page names is there, with its type and the headers;
    // the first load (page, style, the Files screen's modules) is small.
    let mut first_load = html.len();
    for (name, kind) in [
        ("console.css", "text/css"),
        ("main.js", "text/javascript"),
        ("api.js", "text/javascript"),
        ("ui.js", "text/javascript"),
        ("files.js", "text/javascript"),
        ("preview.js", "text/javascript"),
        ("upload.js", "text/javascript"),
        ("keys.js", "text/javascript"),
        ("tokens.js", "text/javascript"),
        ("webhooks.js", "text/javascript"),
        ("usage.js", "text/javascript"),
        ("icon.svg", "image/svg+xml"),
    ] {
        let r = srv
            .http
            .get(srv.url(&format!("/console/assets/{name}")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{name}");
        assert_protected(&r);
        assert!(
            r.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with(kind),
            "{name}"
        );
        let body = r.bytes().await.unwrap();
        assert!(!body.is_empty(), "{name}");
        if !["keys.js", "tokens.js", "webhooks.js", "usage.js"].contains(&name) {
            first_load += body.len();
        }
    }
    assert!(first_load < 300_000, "first load {first_load} bytes");
    let r = srv.http.get(srv.url("/console/")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    // Revalidated at each load: the same bytes are a 304.
    let etag = r.headers()["etag"].clone();
    let r = srv
        .http
        .get(srv.url("/console"))
        .header("if-none-match", etag.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);
    assert_eq!(r.headers()["etag"], etag);
    assert_protected(&r);
    assert!(r.bytes().await.unwrap().is_empty());
    let r = srv
        .http
        .get(srv.url("/console/assets/nothing.js"))
        .send()
        .await
        .unwrap();
    assert_protected(&r);
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_turned_off_is_not_served() {
    let srv = server_with("[console]\nenabled = false\n").await;
    for path in ["/console", "/console/assets/main.js"] {
        let r = srv.http.get(srv.url(path)).send().await.unwrap();
        assert_eq!(error_code(r).await, (404, "not_found".into()), "{path}");
    }
    let r = super::sign_in_raw(&srv, &srv.secret_key).await;
    assert_eq!(r.status(), 404);
    srv.stop().await;
}
