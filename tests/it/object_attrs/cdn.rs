//! The CDN routes send what a file carries from S3 (docs/api.md, "CDN
//! routes"): its own content headers and, for a public file, its caching;
//! a private file stays `private, no-store`; a variant gets neither the
//! file's `Content-Encoding` nor its `Content-Disposition`. Files are
//! stored through the service's upload pipeline with attributes (as the S3
//! door stores them; /v1 cannot set them), on either database.

use super::every_attr;
use crate::common::TestServer;
use crate::images::png;
use filestore::testing::domain::object::ObjectAttrs;
use filestore::testing::service::upload::{put, Put};
use reqwest::header::HeaderMap;
use reqwest::Method;

/// Headers that the attributes decide, as (name, value), sorted.
fn decided(h: &HeaderMap) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = [
        "cache-control",
        "expires",
        "content-disposition",
        "content-encoding",
        "content-language",
    ]
    .iter()
    .filter_map(|n| Some((n.to_string(), h.get(*n)?.to_str().ok()?.to_string())))
    .collect();
    out.sort();
    out
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut out: Vec<_> = p
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    out.sort();
    out
}

/// Every file attribute a CDN answer of a public file carries.
fn own_headers() -> Vec<(String, String)> {
    pairs(&[
        ("cache-control", "public, max-age=31536000, immutable"),
        ("expires", "Wed, 21 Oct 2037 07:28:00 GMT"),
        ("content-disposition", "attachment; filename=\"report.txt\""),
        ("content-encoding", "gzip"),
        ("content-language", "fr-CA"),
    ])
}

async fn stored(
    s: &TestServer,
    folder: &str,
    name: &str,
    bytes: Vec<u8>,
    p: (bool, ObjectAttrs),
) -> String {
    let put_ = Put {
        folder: Some(folder.into()),
        name: name.into(),
        bytes,
        private: p.0,
        attrs: p.1,
        md5_now: true,
    };
    put(&s.app, &s.secret_key, put_).await.unwrap().id
}

/// `method` of `url` with `headers`: (status, headers, body).
async fn fetch(
    s: &TestServer,
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
) -> (u16, HeaderMap, Vec<u8>) {
    let mut req = s.http.request(method, url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.unwrap();
    let (status, h) = (r.status().as_u16(), r.headers().clone());
    (status, h, r.bytes().await.unwrap().to_vec())
}

/// GET, HEAD, a range and a revalidation of `url`: each answer's status
/// and decided headers, and the 304 kept them too.
async fn every_answer(s: &TestServer, url: &str, want: &[(String, String)]) {
    let (status, h, body) = fetch(s, Method::GET, url, &[]).await;
    assert_eq!(status, 200, "{url}");
    assert_eq!(decided(&h), want, "GET {url}");
    let etag = h["etag"].to_str().unwrap().to_string();
    let (status, h, _) = fetch(s, Method::HEAD, url, &[]).await;
    assert_eq!((status, decided(&h)), (200, want.to_vec()), "HEAD {url}");
    let (status, h, part) = fetch(s, Method::GET, url, &[("range", "bytes=1-3")]).await;
    assert_eq!((status, decided(&h)), (206, want.to_vec()), "range {url}");
    assert_eq!(part, body[1..4]);
    let (status, h, _) = fetch(s, Method::GET, url, &[("if-none-match", &etag)]).await;
    assert_eq!((status, decided(&h)), (304, want.to_vec()), "304 {url}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cdn_routes_send_a_files_own_headers_by_the_rule() {
    let s = TestServer::start().await;
    let acc = s.account_id.clone();
    let live = |id: &str, name: &str| s.url(&format!("/live/{acc}/{id}/{name}"));
    let path = |p: &str| s.url(&format!("/p/{acc}/{p}"));
    let bytes = b"hello, attributes".to_vec();
    let public = stored(&s, "site", "a.txt", bytes.clone(), (false, every_attr())).await;
    // Both routes, every kind of answer: the file's own headers.
    every_answer(&s, &live(&public, "a.txt"), &own_headers()).await;
    every_answer(&s, &path("site/a.txt"), &own_headers()).await;
    // The hot path's answer (the file was served within the second) is the
    // same, header for header.
    let (_, first, _) = fetch(&s, Method::GET, &live(&public, "a.txt"), &[]).await;
    let (_, hot, body) = fetch(&s, Method::GET, &live(&public, "a.txt"), &[]).await;
    assert_eq!((decided(&hot), body), (own_headers(), bytes.clone()));
    assert_eq!(first.len(), hot.len());

    // A /v1 file: the routes' defaults, nothing more.
    let plain = s
        .upload_ok("b.txt", bytes.clone(), &[("folder", "site")])
        .await;
    let plain_id = plain["id"].as_str().unwrap();
    let inline = "inline; filename=\"b.txt\"; filename*=UTF-8''b.txt";
    let defaults = pairs(&[
        ("cache-control", "public, max-age=300"),
        ("content-disposition", inline),
    ]);
    every_answer(&s, &live(plain_id, "b.txt"), &defaults).await;
    let on_path = pairs(&[
        ("cache-control", "no-cache"),
        ("content-disposition", inline),
    ]);
    every_answer(&s, &path("site/b.txt"), &on_path).await;

    // An Expires alone replaces the default Cache-Control.
    let expires = ObjectAttrs {
        expires: Some("Wed, 21 Oct 2037 07:28:00 GMT".into()),
        ..ObjectAttrs::default()
    };
    let e = stored(&s, "site", "e.txt", bytes.clone(), (false, expires)).await;
    let only = pairs(&[
        ("expires", "Wed, 21 Oct 2037 07:28:00 GMT"),
        (
            "content-disposition",
            "inline; filename=\"e.txt\"; filename*=UTF-8''e.txt",
        ),
    ]);
    every_answer(&s, &live(&e, "e.txt"), &only).await;
    every_answer(&s, &path("site/e.txt"), &only).await;

    // A private file, signed: its content headers, never cached.
    let private = stored(&s, "site", "c.txt", bytes.clone(), (true, every_attr())).await;
    let signed = s.signed_url(&private, 600).await;
    let never = pairs(&[
        ("cache-control", "private, no-store"),
        ("content-disposition", "attachment; filename=\"report.txt\""),
        ("content-encoding", "gzip"),
        ("content-language", "fr-CA"),
    ]);
    every_answer(&s, &signed, &never).await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_variant_keeps_the_caching_not_the_encoding_or_name() {
    let s = TestServer::start().await;
    let acc = s.account_id.clone();
    let id = stored(&s, "img", "cat.png", png(8, 6), (false, every_attr())).await;
    let variant = pairs(&[
        ("cache-control", "public, max-age=31536000, immutable"),
        ("expires", "Wed, 21 Oct 2037 07:28:00 GMT"),
        (
            "content-disposition",
            "inline; filename=\"cat.png\"; filename*=UTF-8''cat.png",
        ),
        ("content-language", "fr-CA"),
    ]);
    for url in [
        s.url(&format!("/live/{acc}/{id}/cat.png?w=4")),
        s.url(&format!("/p/{acc}/img/cat.png?w=4")),
    ] {
        every_answer(&s, &url, &variant).await;
        let (_, h, body) = fetch(&s, Method::GET, &url, &[]).await;
        assert_eq!(h["content-type"], "image/png");
        assert!(body.starts_with(b"\x89PNG"), "a PNG, not encoded");
    }
    // The file itself still has its own.
    let (_, h, _) = fetch(
        &s,
        Method::GET,
        &s.url(&format!("/live/{acc}/{id}/cat.png")),
        &[],
    )
    .await;
    assert_eq!(decided(&h), own_headers());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_keeps_the_attributes_and_the_records_stay_as_they_were() {
    let s = TestServer::start().await;
    let acc = s.account_id.clone();
    // Past the inline limit: the blob store copies the bytes.
    for (name, len) in [("small.txt", 10), ("large.bin", 300 * 1024)] {
        let id = stored(&s, "site", name, vec![b'y'; len], (false, every_attr())).await;
        let r = s
            .http
            .post(s.url(&format!("/v1/files/{id}/copy")))
            .bearer_auth(&s.secret_key)
            .json(&serde_json::json!({ "name": format!("copy-{name}") }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        let copy: serde_json::Value = r.json().await.unwrap();
        let copy_id = copy["id"].as_str().unwrap();
        let now = s.clock.now_ms();
        let row = s.app.meta.file(&acc, copy_id, now).await.unwrap().unwrap();
        assert_eq!(row.attrs, every_attr(), "{name}");
        let url = s.url(&format!("/live/{acc}/{copy_id}/copy-{name}"));
        let (status, h, _) = fetch(&s, Method::GET, &url, &[]).await;
        assert_eq!((status, decided(&h)), (200, own_headers()), "{name}");
        // The /v1 record is the one every file has.
        let (_, record) = s.get_json(&s.secret_key, &format!("/v1/files/{id}")).await;
        let plain = s.upload_ok("p.txt", b"p".to_vec(), &[]).await;
        let keys =
            |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&record), keys(&plain));
        assert_eq!(keys(&copy), keys(&plain));
    }
    // Empty attributes stay NULL in the column.
    assert_eq!(s.count("SELECT COUNT(*) FROM files WHERE attrs IS NULL"), 2);
    assert_eq!(
        s.count("SELECT COUNT(*) FROM files WHERE attrs IS NOT NULL"),
        4
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_asked_for_md5_now_commits_with_it_past_the_inline_limit() {
    let s = TestServer::start().await;
    let bytes = vec![b'z'; 300 * 1024];
    let want = hex::encode(<md5::Md5 as md5::Digest>::digest(&bytes));
    for md5_now in [true, false] {
        let put_ = Put {
            name: format!("{md5_now}.bin"),
            bytes: bytes.clone(),
            md5_now,
            ..Put::default()
        };
        let f = put(&s.app, &s.secret_key, put_).await.unwrap();
        // What the commit returned: known at once only when asked for.
        assert_eq!(
            f.md5.as_deref(),
            md5_now.then_some(want.as_str()),
            "{md5_now}"
        );
    }
    s.stop().await;
}
