//! Retries through a failure-injecting proxy: 503s, lost replies and 429s are
//! retried with one Idempotency-Key, so a retried upload never stores a
//! second file; 4xx are never retried; `health --wait` waits for ok.

use crate::cli_common::{names_in, write_file, Action, Cli, Proxy};
use crate::common::TestServer;
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
    cli.run(&["usage", "--json"]).await.expect(0);
    let hits = proxy.hits_for("/v1/usage");
    assert_eq!(hits.len(), 2, "{hits:?}");
    let gap = hits[1].at - hits[0].at;
    assert!(
        gap >= Duration::from_secs(1),
        "the retry waited for Retry-After: {gap:?}"
    );
}

/// A 429 pauses every transfer of the run, not only the one that got it:
/// parallel uploads do not spend their retries on a spent rate window.
#[tokio::test(flavor = "multi_thread")]
async fn a_429_pauses_all_parallel_uploads() {
    let srv = TestServer::start().await;
    let proxy = Proxy::start(
        &srv.base_url,
        Arc::new(|_, path, n| match (path, n) {
            ("/v1/upload", 0) => Action::Fail(429, vec![("retry-after", "3".into())]),
            _ => Action::Forward,
        }),
    )
    .await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    let dir = cli.cwd().join("three");
    for name in ["a.txt", "b.txt", "c.txt"] {
        write_file(&dir, name, name.as_bytes());
    }
    let r = cli
        .run(&["upload", "-r", dir.to_str().unwrap(), "-j", "2", "--json"])
        .await;
    r.expect(0);
    assert_eq!(r.json_lines().len(), 3);
    let hits = proxy.hits_for("/v1/upload");
    assert_eq!(hits.len(), 4, "three files and one retry: {hits:?}");
    // The two first requests left together; every later one waited for the pause.
    for later in &hits[2..] {
        let gap = later.at - hits[0].at;
        assert!(
            gap >= Duration::from_millis(1500),
            "a request went out during the pause: {gap:?}"
        );
    }
    assert_eq!(srv.usage().await["upload_count"], 3);
    // The held ones say so (the one that got the 429 says it retries).
    assert!(
        r.stderr.contains("for the rate limit window before"),
        "{r:?}"
    );
    assert!(r.stderr.contains("retry 1/3 of"), "{r:?}");
}

/// A unix time an hour from now.
fn in_an_hour() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    (now.as_secs() + 3600).to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limit_headers_on_a_503_do_not_delay_its_retry() {
    // The server sends X-RateLimit-* on every upload answer, 5xx included:
    // there the reset is when the rate window turns over, not a wait hint.
    let srv = TestServer::start().await;
    let reset = in_an_hour();
    let proxy = Proxy::start(
        &srv.base_url,
        Arc::new(move |_, path, n| match (path, n) {
            ("/v1/upload", 0) => Action::Fail(
                503,
                vec![
                    ("x-ratelimit-limit", "100".into()),
                    ("x-ratelimit-remaining", "99".into()),
                    ("x-ratelimit-reset", reset.clone()),
                ],
            ),
            _ => Action::Forward,
        }),
    )
    .await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    let file = write_file(&cli.cwd(), "a.txt", b"hello");
    let started = Instant::now();
    let r = cli.run(&["upload", file.to_str().unwrap(), "--json"]).await;
    r.expect(0);
    assert_eq!(r.json_lines().len(), 1);
    assert_eq!(proxy.keys_for("/v1/upload").len(), 2, "retried once");
    assert_eq!(files_on(&srv).await, 1);
    // Backoff is at most a few seconds; the reset was an hour away.
    assert!(
        started.elapsed() < Duration::from_mins(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retried_delete_whose_reply_was_lost_succeeds() {
    let srv = TestServer::start().await;
    let id = srv.upload_ok("a.txt", b"a".to_vec(), &[]).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/v1/files/{id}");
    let proxy = Proxy::start(
        &srv.base_url,
        Arc::new(move |method, _, n| match (method, n) {
            // Deleted upstream, but the answer is lost on the way back; the
            // retry then finds the file gone.
            ("DELETE", 0) => Action::ForwardThenFail(502),
            _ => Action::Forward,
        }),
    )
    .await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    let r = cli.run(&["delete", &id]).await;
    r.expect(0);
    assert_eq!(r.stdout, format!("deleted {id}\n"));
    assert_eq!(proxy.hits_for(&path).len(), 2, "one retry");
    assert_eq!(files_on(&srv).await, 0);
    // A first-attempt 404 is still not found.
    cli.run(&["delete", &id]).await.expect_error(4, "not_found");
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
    // A server that never gets well: `--wait` waits the whole timeout (not
    // until the next pause would pass it), then gives up.
    let started = Instant::now();
    let r = Cli::new(&down.url, "")
        .run(&["health", "--wait", "--timeout", "3s"])
        .await;
    r.expect(6);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(3) && waited < Duration::from_secs(8),
        "waited {waited:?}"
    );
}

/// The (Range, If-Range) headers of each CDN request.
type RangeLog = Arc<std::sync::Mutex<Vec<(Option<String>, Option<String>)>>>;

/// How the CDN's first answer (no `Range`) ends after its first 50,000 bytes.
#[derive(Clone, Copy)]
enum FirstAnswer {
    /// The connection breaks 200 ms later.
    Cut,
    /// Nothing more comes, ever.
    Stalls,
}

/// The record of `f_1` (`name` in `folder`, `content`'s size and SHA-256)
/// as a server at `base` gives it, its CDN URL under `/live/acc/f_1/`.
fn fake_record(base: &str, name: &str, folder: Option<&str>, content: &[u8]) -> serde_json::Value {
    serde_json::json!({
        "id": "f_1", "url": format!("{base}/live/acc/f_1/{name}"), "name": name,
        "folder": folder, "size": content.len(), "type": "application/octet-stream",
        "private": false, "expires_at": null, "created_at": "2025-01-01T00:00:00Z",
        "sha256": crate::common::sha256_hex(content),
    })
}

/// A server on an ephemeral port answering with the routes `app` makes for
/// its base URL.
async fn fake_server(
    app: impl FnOnce(&str) -> axum::Router,
) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = app(&base);
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, server)
}

/// A server with one file record (`f_1`, `data.bin`, `content`) whose CDN
/// route answers without `Range` with the first 50,000 bytes, then `first`;
/// and `bytes=N-` with 206 and the rest. Logs each CDN request's (Range,
/// If-Range).
async fn resumable_cdn(
    content: Vec<u8>,
    first: FirstAnswer,
) -> (String, RangeLog, tokio::task::JoinHandle<()>) {
    use axum::http::{header, HeaderMap, StatusCode};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let record = fake_record(&base, "data.bin", None, &content);
    let seen = RangeLog::default();
    let (body, log) = (content, seen.clone());
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
                None => {
                    use futures_util::StreamExt;
                    let head = futures_util::stream::iter([Ok::<_, std::io::Error>(
                        body[..50_000].to_vec(),
                    )]);
                    let rest = match first {
                        FirstAnswer::Cut => futures_util::stream::once(async {
                            tokio::time::sleep(Duration::from_millis(200)).await;
                            Err(std::io::Error::other("cut"))
                        })
                        .boxed(),
                        FirstAnswer::Stalls => futures_util::stream::pending().boxed(),
                    };
                    builder
                        .header(header::CONTENT_LENGTH, body.len())
                        .body(axum::body::Body::from_stream(head.chain(rest)))
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
    (base, seen, server)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupted_download_resumes_with_range() {
    let content = crate::cli_common::pattern(200_000, 5);
    let (base, seen, server) = resumable_cdn(content.clone(), FirstAnswer::Cut).await;
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

/// A server with one file record (`f_1`, `data.bin`) whose content URL
/// always answers `status`.
async fn failing_cdn(status: u16) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let record = serde_json::json!({
        "id": "f_1", "url": format!("{base}/live/acc/f_1/data.bin"), "name": "data.bin",
        "folder": null, "size": 1000, "type": "application/octet-stream", "private": false,
        "expires_at": null, "created_at": "2025-01-01T00:00:00Z",
        "sha256": crate::common::sha256_hex(&[0; 1000]),
    });
    let cdn = move || async move {
        axum::http::Response::builder()
            .status(status)
            .body(axum::body::Body::from("<html>upstream broke</html>"))
            .unwrap()
    };
    let app = axum::Router::new()
        .route(
            "/v1/files/f_1",
            axum::routing::get(move || async move { axum::Json(record) }),
        )
        .route("/live/acc/f_1/data.bin", axum::routing::get(cdn));
    let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, task)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_download_leaves_no_temporary_file() {
    let (base, server) = failing_cdn(500).await;
    let cli = Cli::new(&base, "sk_any");
    let r = cli.run(&["download", "f_1", "--retries", "0"]).await;
    r.expect_error(6, "http_500");
    assert_eq!(names_in(&cli.cwd()), Vec::<String>::new(), "{r:?}");

    let dir = cli.cwd().join("out");
    std::fs::create_dir_all(&dir).unwrap();
    let r = cli
        .run(&[
            "download",
            "f_1",
            "-o",
            dir.to_str().unwrap(),
            "--retries",
            "1",
        ])
        .await;
    r.expect_error(6, "http_500");
    assert_eq!(names_in(&dir), Vec::<String>::new(), "{r:?}");
    // Downloads retry like the API requests, and say so when they give up.
    assert!(r.stderr.contains("retry 1/1"), "{r:?}");
    assert!(r.stderr.contains("(after 1 retry)"), "{r:?}");
    server.abort();
}

/// Ctrl-C during a download: exit 130, and `.filestore-<id>.part` keeps the
/// bytes received; the same command then resumes from there with `Range`.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_keeps_a_partial_download_and_the_next_run_resumes_it() {
    let content = crate::cli_common::pattern(200_000, 7);
    let (base, seen, server) = resumable_cdn(content.clone(), FirstAnswer::Stalls).await;
    let cli = Cli::new(&base, "sk_any");
    let out_dir = cli.cwd().join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let part = out_dir.join(".filestore-f_1.part");
    let args = ["download", "f_1", "-o", out_dir.to_str().unwrap()];
    let mut cmd = cli.command(&args, true);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let waited = Instant::now();
    while std::fs::metadata(&part).map_or(0, |m| m.len()) < 50_000 {
        assert!(
            waited.elapsed() < Duration::from_mins(1),
            "the download never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "no exit after Ctrl-C");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("error: interrupted"), "{stderr}");
    assert_eq!(std::fs::read(&part).unwrap(), content[..50_000]);
    assert!(!out_dir.join("data.bin").exists());

    let r = cli.run(&args).await;
    r.expect(0);
    assert_eq!(std::fs::read(out_dir.join("data.bin")).unwrap(), content);
    assert!(!part.exists(), "the partial file became the download");
    let ranges: Vec<Option<String>> = seen.lock().unwrap().iter().map(|r| r.0.clone()).collect();
    assert_eq!(ranges, [None, Some("bytes=50000-".to_string())]);
    server.abort();
}

/// A server whose CDN sends more than the record's `size` (10 bytes, then
/// 4 MiB and more): the download stops at once, and nothing is left on disk.
#[tokio::test(flavor = "multi_thread")]
async fn a_body_past_the_records_size_stops_at_once_and_leaves_nothing() {
    use futures_util::StreamExt;
    let (base, server) = fake_server(|base| {
        let record = fake_record(base, "data.bin", None, b"0123456789");
        // Endless: 64 KiB chunks for as long as anyone reads.
        let cdn = || async {
            let chunks =
                futures_util::stream::repeat_with(|| Ok::<_, std::io::Error>(vec![7u8; 65_536]));
            axum::body::Body::from_stream(chunks.boxed())
        };
        axum::Router::new()
            .route(
                "/v1/files/f_1",
                axum::routing::get(move || async move { axum::Json(record) }),
            )
            .route("/live/acc/f_1/data.bin", axum::routing::get(cdn))
    })
    .await;
    let cli = Cli::new(&base, "sk_any");
    let dir = tempfile::tempdir().unwrap();
    let r = cli
        .run(&["download", "f_1", "-o", dir.path().to_str().unwrap()])
        .await;
    r.expect_error(6, "protocol");
    assert!(r.stderr.contains("more than the file's 10 bytes"), "{r:?}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing is left: {left:?}");
    server.abort();
}

/// A server whose listing gives the same cursor again: `list --all`,
/// `download --folder` and `sync` stop with a protocol error, not loop.
#[tokio::test(flavor = "multi_thread")]
async fn a_listing_going_round_in_circles_is_a_protocol_error() {
    let (base, server) = fake_server(|base| {
        let page = serde_json::json!({
            "files": [fake_record(base, "a.bin", Some("t"), b"a")],
            "has_more": true, "cursor": "c",
        });
        axum::Router::new().route(
            "/v1/files",
            axum::routing::get(move || async move { axum::Json(page) }),
        )
    })
    .await;
    let cli = Cli::new(&base, "sk_any");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    for args in [
        vec!["list", "--all"],
        vec!["download", "--folder", "t", "-o", out],
        vec!["sync", out, "--folder", "t", "--dry-run"],
    ] {
        let r = cli.run(&args).await;
        r.expect_error(6, "protocol");
        assert!(r.stderr.contains("twice"), "{args:?}: {r:?}");
    }
    server.abort();
}

/// A server whose names and error messages carry terminal escapes and a
/// bidi override: `get` and `list` show them written out (`\u{1b}`), and a
/// failed command's error line too; `--json` keeps the exact name.
#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_servers_names_cannot_drive_the_terminal() {
    const NAME: &str = "\u{1b}]0;owned\u{7}report\u{202e}fdp.exe";
    let (base, server) = fake_server(|base| {
        let record = fake_record(base, NAME, None, b"x");
        let page = serde_json::json!({ "files": [record.clone()], "has_more": false });
        let refusal = serde_json::json!({
            "error": { "code": "not_found", "message": "gone \u{1b}[2J\u{9b}31m" }
        });
        axum::Router::new()
            .route(
                "/v1/files",
                axum::routing::get(move || async move { axum::Json(page) }),
            )
            .route(
                "/v1/files/f_1",
                axum::routing::get(move || async move { axum::Json(record) }),
            )
            .route(
                "/v1/files/f_2",
                axum::routing::get(move || async move {
                    (axum::http::StatusCode::NOT_FOUND, axum::Json(refusal))
                }),
            )
    })
    .await;
    let cli = Cli::new(&base, "sk_any");
    let acting = |s: &str| s.contains(['\u{1b}', '\u{7}', '\u{202e}', '\u{9b}']);
    for args in [vec!["get", "f_1"], vec!["list"]] {
        let r = cli.run(&args).await;
        r.expect(0);
        assert!(!acting(&r.stdout), "{args:?}: {r:?}");
        assert!(
            r.stdout
                .contains("\\u{1b}]0;owned\\u{7}report\\u{202e}fdp.exe"),
            "{args:?}: {r:?}"
        );
    }
    let r = cli.run(&["get", "f_2"]).await;
    r.expect_error(4, "not_found");
    assert!(!acting(&r.stderr), "{r:?}");
    assert!(r.stderr.contains("gone \\u{1b}[2J\\u{9b}31m"), "{r:?}");
    let r = cli.run(&["--json", "get", "f_1"]).await;
    r.expect(0);
    let record: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(record["name"], NAME, "JSON keeps the name exactly");
    server.abort();
}
