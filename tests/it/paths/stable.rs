//! Stable links (docs/api.md, "Paths and stable links"):
//! `{cdn_url}/p/<account>/<path>` serves the newest file at the path when
//! it is public, with the CDN's headers, ranges, conditionals and variants,
//! and `Cache-Control: no-cache`; a private newest is 404 unless the link
//! is signed by path (`"by_path": true`), which then follows the path until
//! it expires (then 403). The File record's `path_url`; `PATCH {"private"}` both ways.

use crate::common::{error_code, TestServer};
use serde_json::{json, Value};
use std::time::Duration;

async fn get(srv: &TestServer, url: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut req = srv.http.get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.unwrap()
}

fn url_of<'a>(f: &'a Value, field: &str) -> &'a str {
    f[field]
        .as_str()
        .unwrap_or_else(|| panic!("no {field}: {f}"))
}

async fn patch(srv: &TestServer, id: &str, body: Value) -> reqwest::Response {
    srv.http
        .patch(srv.url(&format!("/v1/files/{id}")))
        .bearer_auth(&srv.secret_key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn sign(srv: &TestServer, id: &str, body: Value) -> (u16, Value) {
    let r = srv.sign_as(&srv.secret_key, id, body).await;
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stable_link_serves_the_newest_file_with_no_cache() {
    let srv = TestServer::start().await;
    let rel = [("folder", "releases/latest")];
    let v1 = srv
        .upload_ok("app.tar.gz", b"version one".to_vec(), &rel)
        .await;
    let link = url_of(&v1, "path_url").to_string();
    assert_eq!(
        link,
        format!(
            "{}/p/{}/releases/latest/app.tar.gz",
            srv.app.config.cdn_url, srv.account_id
        )
    );
    let r = get(&srv, &link, &[]).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "no-cache");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    let etag = r.headers()["etag"].to_str().unwrap().to_string();
    assert_eq!(etag, format!("\"{}\"", v1["sha256"].as_str().unwrap()));
    assert_eq!(r.bytes().await.unwrap(), &b"version one"[..]);
    let r = get(&srv, &link, &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 304);
    let r = get(&srv, &link, &[("range", "bytes=0-6")]).await;
    assert_eq!(r.status(), 206);
    assert_eq!(r.bytes().await.unwrap(), &b"version"[..]);
    let r = srv.http.head(&link).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-length"], "11");
    // A new file at the path is served at once (no replace: the newest).
    let v2 = srv
        .upload_ok("app.tar.gz", b"version two".to_vec(), &rel)
        .await;
    assert_eq!(url_of(&v2, "path_url"), link);
    let r = get(&srv, &link, &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 200, "the old ETag no longer matches");
    assert_eq!(r.bytes().await.unwrap(), &b"version two"[..]);
    // Deleting the newest shows the one before it.
    let r = srv.delete_as(&srv.secret_key, url_of(&v2, "id")).await;
    assert_eq!(r.status(), 200);
    let r = get(&srv, &link, &[]).await;
    assert_eq!(r.bytes().await.unwrap(), &b"version one"[..]);
    // No file there, another account, a path no file can have: 404.
    let root = format!("{}/p/{}", srv.app.config.cdn_url, srv.account_id);
    for missing in [
        format!("{root}/releases/latest/none.tar.gz"),
        format!("{root}/releases/latest"),
        format!("{root}/releases/../latest/app.tar.gz"),
        format!(
            "{}/p/acc_nobody/releases/latest/app.tar.gz",
            srv.app.config.cdn_url
        ),
    ] {
        let r = get(&srv, &missing, &[]).await;
        assert_eq!(r.status(), 404, "{missing}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paths_of_any_characters_round_trip() {
    let srv = TestServer::start().await;
    let folder = "my docs/ünï+%?#&=";
    let name = "a b+c%d?e#f&é.txt";
    let f = srv
        .upload_ok(name, b"odd".to_vec(), &[("folder", folder)])
        .await;
    let link = url_of(&f, "path_url");
    assert!(
        link.ends_with(
            "/my%20docs/%C3%BCn%C3%AF%2B%25%3F%23%26%3D/a%20b%2Bc%25d%3Fe%23f%26%C3%A9.txt"
        ),
        "{link}"
    );
    let r = get(&srv, link, &[]).await;
    assert_eq!(r.status(), 200, "{link}");
    assert_eq!(r.bytes().await.unwrap(), &b"odd"[..]);
    // A `+` is itself in a path, never a space.
    let plus = srv.upload_ok("x y.txt", b"space".to_vec(), &[]).await;
    let spaced = url_of(&plus, "path_url").replace("%20", "+");
    assert_eq!(get(&srv, &spaced, &[]).await.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variants_of_a_stable_link_revalidate() {
    let srv = TestServer::start().await;
    let v1 = srv
        .upload_ok("logo.png", crate::images::png(64, 32), &[])
        .await;
    let link = format!("{}?w=16", url_of(&v1, "path_url"));
    let r = get(&srv, &link, &[]).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "no-cache");
    assert_eq!(r.headers()["content-type"], "image/png");
    let etag = r.headers()["etag"].to_str().unwrap().to_string();
    let img = image::load_from_memory(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(img.width(), 16);
    let r = get(&srv, &link, &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 304);
    // Re-published: the same link's variant is the new file's.
    srv.upload_ok(
        "logo.png",
        crate::images::png(32, 32),
        &[("replace", "true")],
    )
    .await;
    let r = get(&srv, &link, &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 200);
    let img = image::load_from_memory(&r.bytes().await.unwrap()).unwrap();
    assert_eq!((img.width(), img.height()), (16, 16));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_newest_is_served_only_by_a_link_signed_by_path() {
    let srv = TestServer::start().await;
    let public = srv.upload_ok("r.txt", b"public".to_vec(), &[]).await;
    let link = url_of(&public, "path_url").to_string();
    let private = srv
        .upload_ok("r.txt", b"private".to_vec(), &[("private", "true")])
        .await;
    assert_eq!(private["path_url"], Value::Null);
    assert_eq!(private["url"], Value::Null);
    let r = get(&srv, &link, &[]).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    let pid = url_of(&private, "id");
    let (status, signed) = sign(&srv, pid, json!({"expires_in": 60, "by_path": true})).await;
    assert_eq!(status, 200, "{signed}");
    let signed_url = url_of(&signed, "url").to_string();
    assert!(
        signed_url.starts_with(&format!("{link}?expires=")),
        "{signed_url}"
    );
    let r = get(&srv, &signed_url, &[]).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.bytes().await.unwrap(), &b"private"[..]);
    // It follows the path: a newer private file there is served by it.
    srv.upload_ok("r.txt", b"newer".to_vec(), &[("private", "true")])
        .await;
    let r = get(&srv, &signed_url, &[]).await;
    assert_eq!(r.bytes().await.unwrap(), &b"newer"[..]);
    // A file's signature (by id) is no path's, and a tampered one is none.
    let by_id = srv.signed_url(pid, 60).await;
    let query = by_id.split_once('?').unwrap().1;
    let r = get(&srv, &format!("{link}?{query}"), &[]).await;
    assert_eq!(r.status(), 404, "a file's signature");
    let other = srv
        .upload_ok("s.txt", b"s".to_vec(), &[("private", "true")])
        .await;
    let (_, theirs) = sign(
        &srv,
        url_of(&other, "id"),
        json!({"expires_in": 60, "by_path": true}),
    )
    .await;
    let their_query = url_of(&theirs, "url")
        .split_once('?')
        .unwrap()
        .1
        .to_string();
    let r = get(&srv, &format!("{link}?{their_query}"), &[]).await;
    assert_eq!(r.status(), 404, "another path's signature");
    // The signed-URL rules stand: expiry bounds, a bad by_path, expiry.
    for bad in [
        json!({"expires_in": 0, "by_path": true}),
        json!({"expires_in": 60, "by_path": "yes"}),
    ] {
        let (status, body) = sign(&srv, pid, bad.clone()).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &json!("bad_request")),
            "{bad}"
        );
    }
    let (status, _) = sign(
        &srv,
        "f_missing",
        json!({"expires_in": 60, "by_path": true}),
    )
    .await;
    assert_eq!(status, 404);
    srv.clock.advance(Duration::from_secs(61));
    let r = get(&srv, &signed_url, &[]).await;
    assert_eq!(r.status(), 403, "expired");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_private_both_ways() {
    let srv = TestServer::start().await;
    let f = srv.upload_ok("p.txt", b"bytes".to_vec(), &[]).await;
    let id = url_of(&f, "id").to_string();
    let (live, stable) = (
        url_of(&f, "url").to_string(),
        url_of(&f, "path_url").to_string(),
    );
    for url in [&live, &stable] {
        assert_eq!(get(&srv, url, &[]).await.status(), 200);
    }
    let r = patch(&srv, &id, json!({"private": true})).await;
    assert_eq!(r.status(), 200);
    let made: Value = r.json().await.unwrap();
    assert_eq!(
        (&made["private"], &made["url"], &made["path_url"]),
        (&json!(true), &Value::Null, &Value::Null)
    );
    assert_eq!(get(&srv, &live, &[]).await.status(), 403);
    assert_eq!(get(&srv, &stable, &[]).await.status(), 404);
    let r = patch(&srv, &id, json!({"private": false})).await;
    let made: Value = r.json().await.unwrap();
    assert_eq!(made["private"], false);
    assert_eq!(
        (made["url"].as_str(), made["path_url"].as_str()),
        (Some(&*live), Some(&*stable))
    );
    for url in [&live, &stable] {
        let r = get(&srv, url, &[]).await;
        assert_eq!(r.status(), 200);
        assert_eq!(r.bytes().await.unwrap(), &b"bytes"[..]);
    }
    for bad in [json!({"private": "yes"}), json!({"private": 1}), json!({})] {
        let r = patch(&srv, &id, bad.clone()).await;
        assert_eq!(error_code(r).await, (400, "bad_request".into()), "{bad}");
    }
    let (_, still) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
        .await;
    assert_eq!(still["private"], false);
}
