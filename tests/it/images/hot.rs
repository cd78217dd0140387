//! A variant kept in memory is answered on the CDN's hot path
//! (`server::hot`: before the router, without a lookup, a render or a
//! store read): header for header and byte for byte what the full path
//! answers (which a conditional request still takes), counted the same,
//! and never after its file changed on this node.

use super::jpeg;
use crate::cdn::{hot_or_full, Answer};
use crate::common::{Backend, TestServer};

both_stores!(a_kept_variants_answer_is_the_full_paths);

async fn ask(
    srv: &TestServer,
    method: reqwest::Method,
    url: &str,
    accept: &str,
    full: bool,
) -> Answer {
    hot_or_full(srv, method, url, Some(accept), full).await
}

fn header<'a>(a: &'a Answer, name: &str) -> Option<&'a str> {
    a.1.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

async fn a_kept_variants_answer_is_the_full_paths(b: Backend) {
    let srv = TestServer::on(b).await;
    // Large enough to live in the blob store, not in its row.
    let f = srv.upload_ok("photo.jpg", jpeg(640, 480), &[]).await;
    let (id, url) = (f["id"].as_str().unwrap(), f["url"].as_str().unwrap());
    assert!(!url.contains('%'), "{url}");
    let mut sent = 0;
    for (query, accept, vary) in [
        ("w=64&format=webp&q=80", "*/*", false),
        ("w=96&format=auto", "image/webp,*/*", true),
        ("w=96&format=auto", "image/avif,image/webp,*/*", true),
        ("h=50&fit=cover&w=50&format=png", "*/*", false),
    ] {
        let u = format!("{url}?{query}");
        let get = reqwest::Method::GET;
        let first = ask(&srv, get.clone(), &u, accept, false).await;
        let hot = ask(&srv, get.clone(), &u, accept, false).await;
        let again = ask(&srv, get.clone(), &u, accept, false).await;
        let full = ask(&srv, get.clone(), &u, accept, true).await;
        assert_eq!(
            first.0,
            200,
            "{query}: {}",
            String::from_utf8_lossy(&first.2)
        );
        assert_eq!(hot, full, "{query}");
        assert_eq!(hot, first, "{query}");
        assert_eq!(again, first, "{query}");
        assert_eq!(header(&hot, "vary") == Some("Accept"), vary, "{query}");
        assert_eq!(header(&hot, "access-control-allow-origin"), Some("*"));
        assert_eq!(header(&hot, "x-request-id"), Some("hot-or-full"));
        assert_eq!(
            header(&hot, "content-length"),
            Some(hot.2.len().to_string().as_str())
        );
        sent += 4 * hot.2.len();
        let head = ask(&srv, reqwest::Method::HEAD, &u, accept, false).await;
        let full_head = ask(&srv, reqwest::Method::HEAD, &u, accept, true).await;
        assert_eq!(head, full_head, "{query}");
        assert_eq!(
            (head.0, head.1.clone(), head.2.len()),
            (200, hot.1.clone(), 0)
        );
    }
    // Another key in the query (what a signature brings): the same answer.
    let u = format!("{url}?w=64&format=webp&q=80");
    let plain = ask(&srv, reqwest::Method::GET, &u, "*/*", false).await;
    let other = ask(
        &srv,
        reqwest::Method::GET,
        &format!("{u}&x=1"),
        "*/*",
        false,
    )
    .await;
    assert_eq!(other, plain);
    sent += 2 * plain.2.len();
    // Every variant's bytes counted once per GET; the HEADs count nothing.
    srv.eventually(5, "bandwidth of the variants' GETs", || async {
        srv.usage().await["bandwidth_bytes"] == sent
    })
    .await;

    // Renamed on this node: the old name's variant is gone at once, the new
    // name's answered.
    let r = srv
        .http
        .patch(srv.url(&format!("/v1/files/{id}")))
        .bearer_auth(&srv.secret_key)
        .json(&serde_json::json!({"name": "renamed.jpg"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let renamed: serde_json::Value = r.json().await.unwrap();
    assert_eq!(
        ask(&srv, reqwest::Method::GET, &u, "*/*", false).await.0,
        404
    );
    let new = format!("{}?w=64&format=webp&q=80", renamed["url"].as_str().unwrap());
    let moved = ask(&srv, reqwest::Method::GET, &new, "*/*", false).await;
    assert_eq!((moved.0, &moved.2), (200, &plain.2));
    let named = header(&moved, "content-disposition").unwrap_or("");
    assert!(named.contains("renamed.webp"), "{named}");
    // Deleted: never answered again, from memory or not.
    assert_eq!(srv.delete_as(&srv.secret_key, id).await.status(), 200);
    assert_eq!(
        ask(&srv, reqwest::Method::GET, &new, "*/*", false).await.0,
        404
    );
    assert_eq!(
        ask(&srv, reqwest::Method::HEAD, &new, "*/*", false).await.0,
        404
    );
}
