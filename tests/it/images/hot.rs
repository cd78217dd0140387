//! A variant kept in memory is answered on the CDN's hot path
//! (`server::hot`: before the router, without a lookup, a render or a
//! store read): header for header and byte for byte what the full path
//! answers (which a conditional request still takes), counted the same,
//! and never after its file changed on this node.

use super::jpeg;
use crate::common::{Backend, TestServer};

both_stores!(a_kept_variants_answer_is_the_full_paths);

/// Status, headers (but `Date`) sorted, and body of a request.
type Answer = (u16, Vec<(String, String)>, Vec<u8>);

async fn ask(
    srv: &TestServer,
    method: reqwest::Method,
    url: &str,
    accept: &str,
    full: bool,
) -> Answer {
    // The same request id each time: both paths answer with it.
    let mut req = srv
        .http
        .request(method, url)
        .header("x-request-id", "hot-or-full")
        .header("accept", accept);
    if full {
        // Not modified since long before: a 200 all the same, by the full path.
        req = req.header("if-modified-since", "Sat, 01 Jan 2000 00:00:00 GMT");
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let mut headers: Vec<(String, String)> = r
        .headers()
        .iter()
        .filter(|(k, _)| k.as_str() != "date")
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string()))
        .collect();
    headers.sort();
    (status, headers, r.bytes().await.unwrap().to_vec())
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
