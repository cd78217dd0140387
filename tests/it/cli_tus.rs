//! docs/api.md, "Resumable uploads" on the command line: files at or above `--chunk-size` go
//! through tus; a PATCH that fails is resumed from the server's offset in the
//! same run, an interrupted run is resumed by the next one, and the stored
//! file's sha256 is checked (bytes damaged on the way: exit 6, nothing kept).

use crate::cli_common::{pattern, write_file, Action, Cli, Proxy};
use crate::common::{sha256_hex, Backend, TestOptions, TestServer};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

async fn roomy() -> TestServer {
    TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nmax_file_size = \"100MB\"\n".into()),
        backend: Some(Backend::LocalBlobs),
        ..Default::default()
    })
    .await
}

fn is_patch(method: &str, path: &str) -> bool {
    method == "PATCH" && path.starts_with("/v1/uploads/")
}

/// The resumable uploads the server has seen.
fn upload_rows(srv: &TestServer) -> i64 {
    srv.count("SELECT COUNT(*) FROM tus_uploads")
}

#[tokio::test(flavor = "multi_thread")]
async fn large_files_go_through_tus_small_ones_in_one_request() {
    let srv = roomy().await;
    let proxy = Proxy::start(&srv.base_url, Arc::new(|_, _, _| Action::Forward)).await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    let big = pattern(5 * 1024 * 1024 + 7, 3);
    let path = write_file(&cli.cwd(), "big.bin", &big);
    let r = cli
        .run(&[
            "upload",
            path.to_str().unwrap(),
            "--chunk-size",
            "1MiB",
            "--json",
        ])
        .await;
    let rec = r.expect(0).json();
    assert_eq!(rec["sha256"], sha256_hex(&big).as_str());
    assert_eq!(rec["size"], big.len());
    assert_eq!(proxy.hits_for("/v1/uploads").len(), 1, "one creation");
    assert_eq!(upload_rows(&srv), 1);
    // Below the chunk size, or with 0: the plain multipart upload.
    let small = write_file(&cli.cwd(), "small.bin", &pattern(1000, 4));
    cli.run(&["upload", small.to_str().unwrap(), "--chunk-size", "1MiB"])
        .await
        .expect(0);
    cli.run(&["upload", path.to_str().unwrap(), "--chunk-size", "0"])
        .await
        .expect(0);
    assert_eq!(proxy.hits_for("/v1/upload").len(), 2);
    assert_eq!(upload_rows(&srv), 1);
    let r = cli
        .run(&["upload", small.to_str().unwrap(), "--chunk-size", "lots"])
        .await;
    r.expect(2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_patch_is_resumed_from_the_servers_offset() {
    let srv = roomy().await;
    // The third PATCH is lost on its way back (the bytes were stored).
    let proxy = Proxy::start(
        &srv.base_url,
        Arc::new(|method, path, n| {
            if is_patch(method, path) && n == 2 {
                Action::ForwardThenFail(503)
            } else {
                Action::Forward
            }
        }),
    )
    .await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    let content = pattern(4 * 1024 * 1024 + 5, 5);
    let path = write_file(&cli.cwd(), "a.bin", &content);
    let r = cli
        .run(&[
            "upload",
            path.to_str().unwrap(),
            "--chunk-size",
            "1MiB",
            "--json",
        ])
        .await;
    assert_eq!(r.expect(0).json()["sha256"], sha256_hex(&content).as_str());
    assert!(r.stderr.contains("retry"), "{}", r.stderr);
    // 5 PATCHes for 5 pieces, a HEAD after the lost answer, the final GET:
    // the piece whose answer was lost was not sent again.
    let on_upload = proxy
        .hits
        .lock()
        .unwrap()
        .iter()
        .filter(|h| h.path.starts_with("/v1/uploads/"))
        .count();
    assert_eq!(on_upload, 5 + 1 + 1);
    assert_eq!(proxy.hits_for("/v1/uploads").len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupted_run_is_resumed_by_the_next() {
    let srv = roomy().await;
    // The third PATCH fails for good in the first run (no retries).
    let failed = Arc::new(AtomicBool::new(false));
    let proxy = Proxy::start(
        &srv.base_url,
        Arc::new(move |method, path, n| {
            if is_patch(method, path) && n == 2 && !failed.swap(true, Ordering::SeqCst) {
                Action::Fail(400, vec![])
            } else {
                Action::Forward
            }
        }),
    )
    .await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    let content = pattern(6 * 1024 * 1024, 6);
    let path = write_file(&cli.cwd(), "a.bin", &content);
    let args = [
        "upload",
        path.to_str().unwrap(),
        "--chunk-size",
        "1MiB",
        "--json",
    ];
    let first = cli.run(&[&args[..], &["--retries", "0"]].concat()).await;
    assert_ne!(first.status, 0, "{first:?}");
    let received: i64 = srv.count("SELECT received FROM tus_uploads");
    assert_eq!(
        received,
        2 * 1024 * 1024,
        "two pieces stored before the failure"
    );
    let second = cli.run(&args).await;
    assert_eq!(
        second.expect(0).json()["sha256"],
        sha256_hex(&content).as_str()
    );
    assert_eq!(
        proxy.hits_for("/v1/uploads").len(),
        1,
        "the same upload, resumed"
    );
    assert_eq!(upload_rows(&srv), 1);
    // A changed file (another modification time) is a new upload.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let path = write_file(&cli.cwd(), "a.bin", &content);
    cli.run(&["upload", path.to_str().unwrap(), "--chunk-size", "1MiB"])
        .await
        .expect(0);
    assert_eq!(proxy.hits_for("/v1/uploads").len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn bytes_damaged_on_the_way_fail_with_exit_6_and_nothing_is_kept() {
    let srv = roomy().await;
    let proxy = Proxy::start(
        &srv.base_url,
        Arc::new(|method, path, _| {
            if is_patch(method, path) {
                Action::ForwardReplacing(b"DAMAGE-ME", b"damage-me")
            } else {
                Action::Forward
            }
        }),
    )
    .await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    let mut content = pattern(2 * 1024 * 1024, 7);
    content.extend_from_slice(b"DAMAGE-ME");
    let path = write_file(&cli.cwd(), "a.bin", &content);
    let r = cli
        .run(&["upload", path.to_str().unwrap(), "--chunk-size", "1MiB"])
        .await;
    r.expect_error(6, "checksum_mismatch");
    let (_, list) = srv.get_json(&srv.secret_key, "/v1/files").await;
    assert_eq!(list["files"].as_array().unwrap().len(), 0);
    assert_eq!(srv.usage().await["storage_bytes"], 0);
}
