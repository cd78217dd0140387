//! What a token upload exposes: any origin reads its answers (a page on
//! any site may use a token it was given), and the log never shows a token.

use super::*;
use crate::common::process::Serve;
use std::time::Duration;

both_stores!(any_origin_reads_a_token_upload);

async fn any_origin_reads_a_token_upload(b: Backend) {
    let srv = server(b).await;
    let t = token(&srv, json!({"max_uploads": 4})).await;
    for (via, origin) in [
        (Via::Query, "https://anything.example"),
        (Via::Bearer, "https://other.example.net:8443"),
    ] {
        let r = match via {
            Via::Query => srv
                .http
                .post(format!("{}?token={}", srv.url("/v1/upload"), t.token)),
            Via::Bearer => srv.http.post(srv.url("/v1/upload")).bearer_auth(&t.token),
        }
        .header("origin", origin)
        .multipart(TestServer::form("c.txt", b"c".to_vec(), &[]))
        .send()
        .await
        .unwrap();
        assert_eq!(r.status(), 201);
        assert_eq!(
            r.headers()
                .get("access-control-allow-origin")
                .map(|v| v.to_str().unwrap()),
            Some(origin),
            "{via:?}"
        );
        // The page reads the File record.
        let f: Value = r.json().await.unwrap();
        assert!(f["id"].as_str().unwrap().starts_with("f_"));
    }
    // tus too: the creation and a PATCH with the token, from any origin.
    let r = tus_create(
        &srv,
        &t.token,
        Some("https://anything.example"),
        5,
        &[("filename", "o.bin")],
    )
    .await;
    assert_eq!(r.status(), 201);
    assert_eq!(
        r.headers()
            .get("access-control-allow-origin")
            .map(|v| v.to_str().unwrap()),
        Some("https://anything.example"),
        "tus creation"
    );
    let url = r.headers()["location"].to_str().unwrap().to_string();
    let r = tus_request(&srv, reqwest::Method::PATCH, &url, &t.token)
        .header("origin", "https://anything.example")
        .header(OCTETS.0, OCTETS.1)
        .header("upload-offset", 0)
        .body(b"hello".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(
        r.headers()
            .get("access-control-allow-origin")
            .map(|v| v.to_str().unwrap()),
        Some("https://anything.example"),
        "tus PATCH"
    );
    // The preflight from that origin passes.
    let r = srv
        .http
        .request(reqwest::Method::OPTIONS, srv.url("/v1/upload?token=x"))
        .header("origin", "https://anything.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "https://anything.example"
    );
    // A refusal is readable too (the page shows why).
    let r = srv
        .http
        .post(format!(
            "{}?token=upt_{}",
            srv.url("/v1/upload"),
            "1".repeat(64)
        ))
        .header("origin", "https://anything.example")
        .multipart(TestServer::form("c.txt", b"c".to_vec(), &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.headers()
            .get("access-control-allow-origin")
            .map(|v| v.to_str().unwrap()),
        Some("https://anything.example"),
        "a refused token upload is readable from the page"
    );
}

/// The real binary's log (debug for filestore, JSON) never holds a token:
/// not in request lines (`?token=`), nor in refusals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_never_shows_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let url = crate::common::pg::database_for(dir.path()).await;
    let node = tokio::task::block_in_place(|| {
        Serve::new(dir.path())
            .database_url(url.as_deref())
            .args(&["--log-format", "json"])
            .env("RUST_LOG", "info,filestore=debug,tower_http=debug")
            .start()
    });
    let key = node.key();
    let http = reqwest::Client::new();
    let r = http
        .post(node.url("/v1/upload-tokens"))
        .bearer_auth(&key)
        .json(&json!({"max_uploads": 3, "max_size": 200, "types": ["text/plain"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let rec: Value = r.json().await.unwrap();
    let t = rec["token"].as_str().unwrap().to_string();
    let id = rec["id"].as_str().unwrap().to_string();
    let send = |query: bool, body: Vec<u8>, tok: String| {
        let http = http.clone();
        let url = node.url("/v1/upload");
        async move {
            let req = if query {
                http.post(format!("{url}?token={tok}"))
            } else {
                http.post(url).bearer_auth(tok)
            };
            req.multipart(TestServer::form("a.txt", body, &[]))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(send(true, b"ok".to_vec(), t.clone()).await, 201);
    assert_eq!(send(false, b"ok".to_vec(), t.clone()).await, 201);
    assert_eq!(send(true, vec![b'x'; 201], t.clone()).await, 413);
    assert_eq!(send(true, elf(), t.clone()).await, 415);
    let bogus = format!("upt_{}", "ab".repeat(32));
    assert_eq!(send(true, b"ok".to_vec(), bogus.clone()).await, 401);
    assert_eq!(send(false, b"ok".to_vec(), bogus.clone()).await, 401);
    // A tus upload with the token, and a route it may not use.
    let r = http
        .post(node.url("/v1/uploads"))
        .bearer_auth(&t)
        .header(TUS.0, TUS.1)
        .header("upload-length", 2)
        .header("upload-metadata", encode_metadata(&[("filename", "t.txt")]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let r = http
        .get(format!("{}?token={t}", node.url("/v1/files")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = http
        .delete(node.url(&format!("/v1/upload-tokens/{id}")))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(send(true, b"ok".to_vec(), t.clone()).await, 401);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log = node.log_text();
    assert!(log.lines().count() > 3, "the log was captured:\n{log}");
    for secret in [&t, &bogus] {
        assert!(
            !log.contains(&secret["upt_".len()..]),
            "the log holds a token:\n{log}"
        );
    }
    assert!(!log.contains("upt_"), "the log holds `upt_`:\n{log}");
}
