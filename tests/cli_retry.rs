//! Retries through a failure-injecting proxy: 503s, lost replies and 429s are
//! retried with one Idempotency-Key, so a retried upload never stores a
//! second file; 4xx are never retried; `health --wait` waits for ok.

mod cli_common;
mod common;

use cli_common::{write_file, Action, Cli, Proxy};
use common::TestServer;
use std::sync::Arc;
use std::time::{Duration, Instant};

async fn files_on(srv: &TestServer) -> usize {
    let (status, body) = srv.get_json(&srv.secret_key, "/v1/files?limit=100").await;
    assert_eq!(status, 200);
    body["files"].as_array().unwrap().len()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_503s_then_success_store_one_file() {
    let srv = TestServer::start().await;
    let proxy = Proxy::start(
        &srv.base_url,
        Arc::new(|_, path, n| match (path, n) {
            ("/v1/upload", 0 | 1) => Action::Fail(503, vec![]),
            _ => Action::Forward,
        }),
    )
    .await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    let file = write_file(&cli.cwd(), "a.txt", &[7; 4096]);
    let r = cli.run(&["upload", file.to_str().unwrap(), "--json"]).await;
    r.expect(0);
    assert_eq!(r.json_lines().len(), 1);
    assert_eq!(r.stderr.matches("retry ").count(), 2, "{r:?}");
    let keys = proxy.keys_for("/v1/upload");
    assert_eq!(keys.len(), 3);
    assert!(
        keys[0].is_some() && keys.iter().all(|k| k == &keys[0]),
        "one key: {keys:?}"
    );
    assert_eq!(files_on(&srv).await, 1);
    assert_eq!(srv.usage().await["upload_count"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lost_reply_is_answered_from_the_idempotency_key() {
    let srv = TestServer::start().await;
    let proxy = Proxy::start(
        &srv.base_url,
        Arc::new(|_, path, n| match (path, n) {
            // The server stores the file, but its answer never arrives.
            ("/v1/upload", 0) => Action::ForwardThenFail(502),
            _ => Action::Forward,
        }),
    )
    .await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    let dir = cli.cwd().join("tree");
    for i in 0..3 {
        write_file(&dir, &format!("f{i}.txt"), format!("file {i}").as_bytes());
    }
    let r = cli
        .run(&["upload", "-r", dir.to_str().unwrap(), "-j", "1", "--json"])
        .await;
    r.expect(0);
    assert_eq!(r.json_lines().len(), 3);
    assert_eq!(files_on(&srv).await, 3, "no duplicate of the retried file");
    assert_eq!(srv.usage().await["upload_count"], 3, "counted once");
    let keys = proxy.keys_for("/v1/upload");
    assert_eq!(keys.len(), 4);
    assert_eq!(keys[0], keys[1], "the retry reuses the key");
    assert_ne!(keys[1], keys[2], "each file has its own key");
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_after_is_honoured() {
    let srv = TestServer::start().await;
    let proxy = Proxy::start(
        &srv.base_url,
        Arc::new(|_, path, n| match (path, n) {
            ("/v1/usage", 0) => Action::Fail(429, vec![("retry-after", "1".into())]),
            _ => Action::Forward,
        }),
    )
    .await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    let started = Instant::now();
    cli.run(&["usage", "--json"]).await.expect(0);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited for Retry-After"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn client_errors_are_not_retried_and_retries_run_out() {
    let srv = TestServer::start().await;
    let proxy = Proxy::start(
        &srv.base_url,
        Arc::new(|_, path, _| match path {
            "/v1/usage" => Action::Fail(400, vec![]),
            "/v1/files" => Action::Fail(503, vec![]),
            _ => Action::Forward,
        }),
    )
    .await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    cli.run(&["usage"]).await.expect(1);
    assert_eq!(proxy.keys_for("/v1/usage").len(), 1, "a 400 is not retried");
    let r = cli.run(&["list", "--retries", "2"]).await;
    r.expect_error(6, "unavailable");
    assert!(r.stderr.contains("after 2 retries"), "{r:?}");
    assert_eq!(proxy.keys_for("/v1/files").len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn health_wait_waits_for_ok() {
    let srv = TestServer::start().await;
    let proxy = Proxy::start(
        &srv.base_url,
        Arc::new(|_, path, n| match (path, n) {
            ("/v1/health", 0 | 1) => Action::Fail(503, vec![]),
            _ => Action::Forward,
        }),
    )
    .await;
    let cli = Cli::new(&proxy.url, "");
    let r = cli.run(&["health", "--wait", "--timeout", "20s"]).await;
    r.expect(0);
    assert!(r.stdout.starts_with("ok"), "{r:?}");
    assert_eq!(proxy.keys_for("/v1/health").len(), 3);

    // Without --wait, one answer decides.
    let down = Proxy::start(&srv.base_url, Arc::new(|_, _, _| Action::Fail(503, vec![]))).await;
    Cli::new(&down.url, "").run(&["health"]).await.expect(6);
    let started = Instant::now();
    let r = Cli::new(&down.url, "")
        .run(&["health", "--wait", "--timeout", "1s"])
        .await;
    r.expect(6);
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// The (Range, If-Range) headers of each CDN request.
type RangeLog = Arc<std::sync::Mutex<Vec<(Option<String>, Option<String>)>>>;

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupted_download_resumes_with_range() {
    use axum::http::{header, HeaderMap, StatusCode};
    let content = cli_common::pattern(200_000, 5);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let record = serde_json::json!({
        "id": "f_1", "url": format!("{base}/live/acc/f_1/data.bin"), "name": "data.bin",
        "folder": null, "size": 200_000, "type": "application/octet-stream", "private": false,
        "expires_at": null, "created_at": "2025-01-01T00:00:00Z"
    });
    let seen: RangeLog = Default::default();
    let (body, log) = (content.clone(), seen.clone());
    let cdn = move |headers: HeaderMap| {
        let (body, log) = (body.clone(), log.clone());
        async move {
            let text =
                |h: header::HeaderName| headers.get(h).map(|v| v.to_str().unwrap().to_string());
            let range = text(header::RANGE);
            log.lock()
                .unwrap()
                .push((range.clone(), text(header::IF_RANGE)));
            let builder = axum::http::Response::builder().header(header::ETAG, "\"v1\"");
            match range {
                // The first answer breaks off after 50,000 bytes.
                None => {
                    use futures_util::StreamExt;
                    let first = Ok::<_, std::io::Error>(body[..50_000].to_vec());
                    let cut = futures_util::stream::once(async {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        Err(std::io::Error::other("cut"))
                    });
                    let stream = futures_util::stream::iter([first]).chain(cut);
                    builder
                        .header(header::CONTENT_LENGTH, body.len())
                        .body(axum::body::Body::from_stream(stream))
                        .unwrap()
                }
                Some(r) => {
                    let start: usize = r
                        .trim_start_matches("bytes=")
                        .trim_end_matches('-')
                        .parse()
                        .unwrap();
                    builder
                        .status(StatusCode::PARTIAL_CONTENT)
                        .header(
                            header::CONTENT_RANGE,
                            format!("bytes {start}-{}/{}", body.len() - 1, body.len()),
                        )
                        .body(axum::body::Body::from(body[start..].to_vec()))
                        .unwrap()
                }
            }
        }
    };
    let app = axum::Router::new()
        .route(
            "/v1/files/f_1",
            axum::routing::get(move || async move { axum::Json(record) }),
        )
        .route("/live/acc/f_1/data.bin", axum::routing::get(cdn));
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let cli = Cli::new(&base, "sk_any");
    let r = cli.run(&["download", "f_1", "-o", "-"]).await;
    r.expect(0);
    assert!(r.bytes == content, "resumed download differs");
    assert!(r.stderr.contains("retry 1/3"), "{r:?}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        seen[1],
        (Some("bytes=50000-".into()), Some("\"v1\"".into()))
    );
    server.abort();
}
