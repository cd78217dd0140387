//! Exit codes and error lines of docs/decisions.md, "Command line", from the real binary: 401/403
//! → 3, 404 → 4, 413/429 → 5, network → 6, bad request → 1, usage → 2.

use crate::cli_common::{write_file, Cli};
use crate::common::{TestOptions, TestServer};
use std::time::Instant;

const SMALL: &str = r#"
[plans.free]
max_file_size = 1000
storage = 100000
uploads = 1000
rate_limit = 1000
rate_window = "1m"

[plans.strict]
max_file_size = 100000
storage = 1000000
uploads = 1000
rate_limit = 2
rate_window = "1h"
"#;

async fn small() -> TestServer {
    TestServer::start_with(TestOptions {
        plans_toml: Some(SMALL.into()),
        ..Default::default()
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn auth_errors_exit_3() {
    let srv = small().await;
    let bad = Cli::new(&srv.base_url, "sk_not_a_real_key");
    bad.run(&["list"]).await.expect_error(3, "unauthorized");
    bad.run(&["usage", "--json"])
        .await
        .expect_error(3, "unauthorized");

    let public = srv.new_key("public", &["https://app.example.com"]).await;
    let pk = Cli::new(&srv.base_url, &public);
    pk.run(&["list"]).await.expect_error(3, "forbidden");
    pk.run(&["sign", "f_x"]).await.expect_error(3, "forbidden");

    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let file = write_file(&cli.cwd(), "a.txt", b"hello");
    srv.set_account(&srv.account_id, None, Some(true)).await;
    cli.run(&["upload", file.to_str().unwrap()])
        .await
        .expect_error(3, "grace_period");
}

#[tokio::test(flavor = "multi_thread")]
async fn not_found_exits_4() {
    let srv = small().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    for cmd in ["get", "download", "sign", "delete"] {
        cli.run(&[cmd, "f_doesnotexist"])
            .await
            .expect_error(4, "not_found");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn too_large_exits_5_and_the_others_still_upload() {
    let srv = small().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let dir = cli.cwd().join("in");
    write_file(&dir, "a.txt", &[1; 10]);
    write_file(&dir, "big.bin", &[2; 5000]);
    write_file(&dir, "huge.bin", &vec![3; 300_000]);
    write_file(&dir, "z.txt", &[4; 20]);
    let r = cli
        .run(&["upload", "-r", dir.to_str().unwrap(), "-j", "1"])
        .await;
    r.expect_error(5, "file_too_large");
    assert_eq!(r.stdout.lines().count(), 2, "{r:?}");
    assert_eq!(
        r.stderr.matches("error: file_too_large").count(),
        2,
        "{r:?}"
    );
    assert!(r.stderr.contains("big.bin") && r.stderr.contains("huge.bin"));

    // --fail-fast: nothing new starts after the first failure.
    let r = cli
        .run(&[
            "upload",
            "-r",
            dir.to_str().unwrap(),
            "-j",
            "1",
            "--fail-fast",
        ])
        .await;
    r.expect_error(5, "file_too_large");
    assert_eq!(
        r.stdout.lines().count(),
        1,
        "only a.txt before big.bin: {r:?}"
    );
    assert!(r.stderr.contains("not started"), "{r:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limit_exits_5_without_waiting_an_hour() {
    let srv = small().await;
    let (_, key) = srv.new_account("limited", "strict").await;
    let cli = Cli::new(&srv.base_url, &key);
    cli.run(&["usage"]).await.expect(0);
    cli.run(&["usage"]).await.expect(0);
    let started = Instant::now();
    let r = cli.run(&["usage"]).await;
    r.expect_error(5, "rate_limit_exceeded");
    assert!(
        started.elapsed().as_secs() < 10,
        "a one-hour Retry-After is not waited for"
    );
    cli.run(&["usage", "--retries", "0"])
        .await
        .expect_error(5, "rate_limit_exceeded");
}

#[tokio::test(flavor = "multi_thread")]
async fn network_errors_exit_6() {
    // A port held bound but not listening: connections are refused, and no
    // other test can take it meanwhile.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = socket.local_addr().unwrap().port();
    let cli = Cli::new(&format!("http://127.0.0.1:{port}"), "sk_x");
    let r = cli.run(&["list", "--retries", "0"]).await;
    r.expect_error(6, "network");
    let r = cli.run(&["get", "f_1", "--retries", "1"]).await;
    r.expect_error(6, "network");
    assert!(r.stderr.contains("after 1 retry"), "{r:?}");
    cli.run(&["health"]).await.expect_error(6, "network");
    drop(socket);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_health_answer_that_is_not_the_api_exits_6() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/v1/health",
        axum::routing::get(|| async { "<html>Welcome to nginx!</html>" }),
    );
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let r = Cli::new(&base, "").run(&["health"]).await;
    r.expect_error(6, "protocol");
    server.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_health_timeout_is_a_usage_error() {
    let cli = Cli::new("http://127.0.0.1:1", "");
    for huge in ["18446744073709551615", "9999999999999s", "500000y", "366d"] {
        let r = cli.run(&["health", "--wait", "--timeout", huge]).await;
        r.expect_error(2, "usage");
        assert!(
            r.stderr.contains("at most 365 days") || r.stderr.contains("invalid duration"),
            "{huge}: {r:?}"
        );
        assert!(!r.stderr.contains("panicked"), "{r:?}");
    }
}

/// Ctrl-C while `upload -` waits on a standard input that never ends (a
/// terminal): the command stops at once, exit 1, instead of hanging while
/// the runtime waits for the blocked read.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_during_a_stdin_upload_exits() {
    use std::process::Stdio;
    use std::time::Duration;
    let mut cli = Cli::new("http://127.0.0.1:1", "sk_x");
    // The spool file of standard input shows the upload has started reading.
    let tmp = cli.home.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    cli.envs
        .push(("TMPDIR".into(), tmp.to_string_lossy().into_owned()));
    let mut cmd = cli.command(&["upload", "-"], true);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    // Kept open (and silent) for the whole test.
    let _stdin = child.stdin.take().unwrap();
    let waited = Instant::now();
    while std::fs::read_dir(&tmp).unwrap().next().is_none() {
        assert!(
            waited.elapsed() < Duration::from_mins(1),
            "the upload never started reading stdin"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The Ctrl-C handler is installed in the same poll that created the
    // spool file; leave it ample time.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pid = child.id().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("filestore did not exit after Ctrl-C");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("error: interrupted: stopped by Ctrl-C"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "spool removed");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_exit_1_and_usage_errors_exit_2() {
    let srv = small().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let file = write_file(&cli.cwd(), "a.txt", b"x");
    let f = file.to_str().unwrap();
    cli.run(&["upload", f, "--folder", "a/../b"])
        .await
        .expect_error(1, "bad_request");
    for bad in [
        vec!["upload", f, "--expires", "1y"],
        vec!["upload", f, "--expires", "400d"],
        vec!["upload", f, "--content-type", "not a type"],
        vec!["upload", f, f, "--name", "x"],
        vec!["upload"],
        vec!["list", "--limit", "nope"],
        vec!["sign", "f_1", "--expires", "2w"],
        vec!["frobnicate"],
    ] {
        let r = cli.run(&bad).await;
        r.expect_error(2, "usage");
        assert_eq!(
            r.stderr.lines().count(),
            1,
            "one error line for {bad:?}: {r:?}"
        );
    }
    let missing = cli.run(&["upload", "no-such-file.txt"]).await;
    missing.expect_error(1, "io");

    let nothing = Cli::new("", "");
    let r = nothing.run_bare(&["list"], None).await;
    r.expect_error(2, "usage");
    assert!(r.stderr.contains("filestore login"), "{r:?}");
    let r = nothing
        .run_bare(&["list", "--server", &srv.base_url], None)
        .await;
    r.expect_error(2, "usage");
    assert!(r.stderr.contains("API key"), "{r:?}");
    nothing
        .run_bare(&["list", "--server", "not a url", "--api-key", "k"], None)
        .await
        .expect_error(2, "usage");
}

#[tokio::test(flavor = "multi_thread")]
async fn quiet_runs_print_nothing_on_stderr() {
    let srv = small().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let file = write_file(&cli.cwd(), "a.txt", b"x");
    let r = cli.run(&["upload", "-q", file.to_str().unwrap()]).await;
    r.expect(0);
    assert!(r.stderr.is_empty(), "{r:?}");
    assert_eq!(r.stdout.lines().count(), 1);
    // CI=true off a terminal: plain lines, never bar drawing.
    let mut ci = Cli::new(&srv.base_url, &srv.secret_key);
    ci.envs.push(("CI".into(), "true".into()));
    let r = ci.run(&["upload", file.to_str().unwrap()]).await;
    r.expect(0);
    // One line a file, the result's on stdout.
    assert!(r.stdout.starts_with("uploaded "), "{r:?}");
    assert!(r.stderr.is_empty(), "{r:?}");
    assert!(!r.stderr.contains('\r') && !r.stderr.contains('\x1b'));
}
