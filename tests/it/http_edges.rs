//! HTTP-level behaviour: health, CORS preflights, unknown routes and methods,
//! oversized headers — always the error envelope, never a 500.

use crate::common::{error_code, TestServer};
use std::time::Duration;

#[tokio::test]
async fn health_needs_no_key_and_reports_each_check() {
    let srv = TestServer::start().await;
    let r = srv.http.get(srv.url("/v1/health")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let h: serde_json::Value = r.json().await.unwrap();
    assert_eq!(h["status"], "ok");
    assert!(chrono::DateTime::parse_from_rfc3339(h["timestamp"].as_str().unwrap()).is_ok());
    for check in ["database", "storage"] {
        assert_eq!(h["checks"][check]["status"], "ok", "{check}");
        assert!(h["checks"][check]["latency_ms"].is_u64(), "{check}");
    }
}

#[tokio::test]
async fn health_is_degraded_when_the_store_fails() {
    let srv = TestServer::start().await;
    // Make the local store unusable: its directory becomes a file.
    let blobs = srv.data_dir.join("blobs");
    std::fs::remove_dir_all(&blobs).unwrap();
    std::fs::write(&blobs, b"not a directory").unwrap();
    let r = srv.http.get(srv.url("/v1/health")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    let h: serde_json::Value = r.json().await.unwrap();
    assert_eq!(h["status"], "degraded");
    assert_eq!(h["checks"]["storage"]["status"], "error");
    assert_eq!(h["checks"]["database"]["status"], "ok");
    // Recovers when the store does.
    std::fs::remove_file(&blobs).unwrap();
    std::fs::create_dir(&blobs).unwrap();
    assert_eq!(
        srv.http
            .get(srv.url("/v1/health"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
}

#[tokio::test]
async fn cors_preflight_for_public_key_origins() {
    let srv = TestServer::start().await;
    srv.new_key("public", &["https://app.example.com"]).await;
    let preflight = |origin: &'static str| {
        srv.http
            .request(reqwest::Method::OPTIONS, srv.url("/v1/upload"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type",
            )
            .send()
    };
    let r = preflight("https://app.example.com").await.unwrap();
    assert_eq!(r.status(), 204);
    let h = r.headers();
    assert_eq!(h["access-control-allow-origin"], "https://app.example.com");
    assert!(h["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .contains("POST"));
    let allowed = h["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(allowed.contains("authorization") && allowed.contains("content-type"));
    // Another origin's preflight passes too (it carries no key), so that
    // the upload's refusal reaches the page as a readable 403.
    let r = preflight("https://evil.example.net").await.unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "https://evil.example.net"
    );
    let pk = srv.new_key("public", &["https://app.example.com"]).await;
    let refused = srv
        .upload_with_origin(&pk, "https://evil.example.net", "a.txt", b"a".to_vec())
        .await;
    assert_eq!(
        refused.headers()["access-control-allow-origin"],
        "https://evil.example.net"
    );
    assert_eq!(error_code(refused).await, (403, "forbidden".into()));
    // A success is readable by an allowed origin only.
    let sk = srv.secret_key.clone();
    let stored = srv
        .upload_with_origin(&sk, "https://evil.example.net", "b.txt", b"b".to_vec())
        .await;
    assert_eq!(stored.status(), 201);
    assert!(stored
        .headers()
        .get("access-control-allow-origin")
        .is_none());
    let ok = srv
        .upload_with_origin(&pk, "https://app.example.com", "c.txt", b"c".to_vec())
        .await;
    assert_eq!(ok.status(), 201);
    assert_eq!(
        ok.headers()["access-control-allow-origin"],
        "https://app.example.com"
    );
    // Error responses to an allowed origin carry CORS headers, so the app can read them.
    let r = srv
        .http
        .post(srv.url("/v1/upload"))
        .header("origin", "https://app.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "https://app.example.com"
    );
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
}

#[tokio::test]
async fn unknown_routes_methods_and_huge_headers_get_envelopes() {
    let srv = TestServer::start().await;
    // The root sends a visitor to the API reference.
    let root = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(srv.url("/"))
        .send()
        .await
        .unwrap();
    assert_eq!(root.status(), 303);
    assert_eq!(root.headers()["location"], "/v1/docs/");
    for path in ["/v2/upload", "/v1/nothing", "/live/a/b", "/live/a/b/c/d"] {
        let r = srv.http.get(srv.url(path)).send().await.unwrap();
        assert_eq!(error_code(r).await, (404, "not_found".into()), "{path}");
    }
    let r = srv.http.put(srv.url("/v1/usage")).send().await.unwrap();
    assert_eq!(error_code(r).await.0, 405);
    let r = srv.http.get(srv.url("/v1/upload")).send().await.unwrap();
    assert_eq!(error_code(r).await.0, 405);
    let big = "x".repeat(64 * 1024);
    let r = srv
        .http
        .get(srv.url("/v1/usage"))
        .header("x-big", big)
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (431, "bad_request".into()));
    // The server is still fine.
    assert_eq!(srv.usage().await["storage_bytes"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_large_upload_reads_413_not_a_reset() {
    // The server answers before the client has sent its body; the client must
    // still read the 413 (not a broken pipe or a reset connection).
    let srv = crate::common::TestServer::start_with(crate::common::TestOptions {
        plans_toml: Some("[plans.free]\nmax_file_size = 1000\n".into()),
        ..Default::default()
    })
    .await;
    for round in 0..5 {
        let r = srv
            .upload("big.bin", vec![0u8; 40 * 1024 * 1024], &[])
            .await;
        assert_eq!(
            error_code(r).await,
            (413, "file_too_large".into()),
            "round {round}"
        );
        // Chunked, without Content-Length: refused mid-stream.
        let chunks = (0..640).map(|_| Ok::<_, std::io::Error>(vec![1u8; 64 * 1024]));
        let part = reqwest::multipart::Part::stream(reqwest::Body::wrap_stream(
            futures_util::stream::iter(chunks),
        ))
        .file_name("s.bin");
        let form = reqwest::multipart::Form::new().part("file", part);
        let r = srv
            .http
            .post(srv.url("/v1/upload"))
            .bearer_auth(&srv.secret_key)
            .multipart(form)
            .send()
            .await
            .expect("a response, not a reset");
        assert_eq!(
            error_code(r).await,
            (413, "file_too_large".into()),
            "round {round}"
        );
    }
    assert_eq!(srv.leftovers(), (0, 0, 0));
}

/// Requests hyper cannot parse (it answers them itself, before any handler)
/// still get the envelope with the right status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_the_http_parser_refuses_get_envelopes_too() {
    use std::fmt::Write as _;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let srv = TestServer::start().await;
    let long_uri = format!("GET /v1/{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70_000));
    let many_headers = format!(
        "GET /v1/health HTTP/1.1\r\nHost: x\r\n{}\r\n",
        (0..200).fold(String::new(), |mut out, i| {
            let _ = write!(out, "X-H{i}: v\r\n");
            out
        })
    );
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            b"POST /v1/upload HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n".to_vec(),
            "400",
        ),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n".to_vec(),
            "400",
        ),
        (long_uri.into_bytes(), "414"),
        (many_headers.into_bytes(), "431"),
    ];
    for (request, status) in cases {
        let mut s = tokio::net::TcpStream::connect(srv.base_url.trim_start_matches("http://"))
            .await
            .unwrap();
        let _ = s.write_all(&request).await;
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
        let text = String::from_utf8_lossy(&out);
        assert!(text.starts_with(&format!("HTTP/1.1 {status}")), "{text}");
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
        let v: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{text}"));
        assert!(
            v["error"]["code"].is_string() && v["error"]["message"].is_string(),
            "{text}"
        );
    }
    // The server is fine afterwards.
    let r = srv.http.get(srv.url("/v1/health")).send().await.unwrap();
    assert_eq!(r.status(), 200);
}
