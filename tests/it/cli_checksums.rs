//! docs/decisions.md, "Checksums" on the command line: uploads send the file's SHA-256 (bytes
//! damaged on the way are refused), records show it, and downloads check
//! it, resumed ones included: a mismatch is exit 6 and leaves no file.

use crate::cli_common::{names_in, pattern, write_file, Action, Cli, Proxy};
use crate::common::{sha256_hex, Backend, TestServer};
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread")]
async fn uploads_send_the_digest_and_records_show_it() {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let content = pattern(300_000, 1);
    let path = write_file(&cli.cwd(), "a.bin", &content);
    let r = cli.run(&["upload", path.to_str().unwrap(), "--json"]).await;
    r.expect(0);
    let rec = r.json();
    let want = sha256_hex(&content);
    assert_eq!(rec["sha256"], want.as_str());
    let id = rec["id"].as_str().unwrap();
    let got = cli.run(&["get", id, "--json"]).await;
    assert_eq!(got.expect(0).json()["sha256"], want.as_str());
    let human = cli.run(&["get", id]).await;
    assert!(
        human.expect(0).stdout.contains(&format!("sha256   {want}")),
        "{human:?}"
    );
    // Standard input too (spooled, then sent like a file).
    let piped = b"from stdin".to_vec();
    let r = cli
        .run_stdin(&["upload", "-", "--json"], piped.clone())
        .await;
    assert_eq!(r.expect(0).json()["sha256"], sha256_hex(&piped).as_str());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upload_damaged_on_the_way_is_refused_and_not_stored() {
    let srv = TestServer::start().await;
    let proxy = Proxy::start(
        &srv.base_url,
        Arc::new(|_, path, _| match path {
            "/v1/upload" => Action::ForwardReplacing(b"DAMAGE-ME", b"damage-me"),
            _ => Action::Forward,
        }),
    )
    .await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    let mut content = pattern(100_000, 2);
    content.extend_from_slice(b"DAMAGE-ME");
    let path = write_file(&cli.cwd(), "a.bin", &content);
    let r = cli.run(&["upload", path.to_str().unwrap()]).await;
    r.expect_error(6, "checksum_mismatch");
    assert_eq!(proxy.keys_for("/v1/upload").len(), 1, "not retried");
    let (_, list) = srv.get_json(&srv.secret_key, "/v1/files").await;
    assert_eq!(list["files"].as_array().unwrap().len(), 0);
    let usage = srv.usage().await;
    assert_eq!(
        (
            usage["upload_count"].as_u64(),
            usage["storage_bytes"].as_u64()
        ),
        (Some(0), Some(0))
    );
    assert_eq!(srv.blob_count().await, 0);
}

/// A blob on disk overwritten with other bytes of the same length: the CDN
/// never sends them whole (CONTRACT §20: the body is cut before its last
/// byte, then the file is a 500 `damaged`), and the client keeps nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_tampered_blob_fails_the_download_and_leaves_no_file() {
    let srv = TestServer::on(Backend::LocalBlobs).await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let content = pattern(200_000, 3);
    let f = srv.upload_ok("t.bin", content.clone(), &[]).await;
    let id = f["id"].as_str().unwrap();
    let blob = srv.data_dir.join("blobs").join(&srv.account_id).join(id);
    let tampered = pattern(200_000, 4);
    std::fs::write(&blob, &tampered).unwrap();

    let out = cli.cwd().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let target = out.join("t.bin");
    let r = cli
        .run(&["download", id, "-o", target.to_str().unwrap()])
        .await;
    assert_eq!(r.status, 6, "{}", r.stderr);
    assert!(!target.exists());
    // Found damaged, the file is marked: a 500 `damaged` from then on.
    srv.eventually(10, "the file is marked damaged", || async {
        srv.count("SELECT COUNT(*) FROM files WHERE damaged_at IS NOT NULL") == 1
    })
    .await;
    let r = cli
        .run(&["download", id, "-o", out.to_str().unwrap()])
        .await;
    r.expect_error(6, "damaged");
    assert!(!target.exists());
    let r = cli.run(&["download", id, "-o", "-"]).await;
    r.expect_error(6, "damaged");
    assert!(r.bytes.is_empty());

    // Put right, and the mark cleared (as `admin verify --repair-from`
    // does; the CDN keeps a row a second). The cut download's partial file
    // holds the bytes sent before the cut, all but the last chunk: resumed,
    // the client's own check refuses them and drops it; then the same
    // command succeeds.
    std::fs::write(&blob, &content).unwrap();
    srv.exec("UPDATE files SET damaged_at = NULL");
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let r = cli
        .run(&["download", id, "-o", target.to_str().unwrap()])
        .await;
    r.expect_error(6, "checksum_mismatch");
    assert!(names_in(&out).is_empty(), "{:?}", names_in(&out));
    cli.run(&["download", id, "-o", target.to_str().unwrap()])
        .await
        .expect(0);
    assert!(std::fs::read(&target).unwrap() == content);
}

/// A resumed download hashes what the partial file holds first: wrong
/// bytes there fail the whole download (and the partial file goes).
#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_download_checks_the_bytes_it_already_had() {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let content = pattern(150_000, 5);
    let f = srv.upload_ok("r.bin", content.clone(), &[]).await;
    let id = f["id"].as_str().unwrap();
    let dir = cli.cwd().join("resume");
    std::fs::create_dir_all(&dir).unwrap();
    let part = dir.join(format!(".filestore-{id}.part"));
    let mut wrong = content.clone();
    wrong[10] ^= 0xff;
    let bandwidth = || async { srv.usage().await["bandwidth_bytes"].as_u64().unwrap() };

    // A wrong prefix: the rest is fetched, then the whole refused.
    std::fs::write(&part, &wrong[..60_000]).unwrap();
    let before = bandwidth().await;
    let r = cli
        .run(&["download", id, "-o", dir.to_str().unwrap()])
        .await;
    r.expect_error(6, "checksum_mismatch");
    assert!(names_in(&dir).is_empty(), "{:?}", names_in(&dir));
    srv.eventually(5, "the rest counted as sent, and only the rest", || async {
        bandwidth().await - before == 90_000
    })
    .await;

    // Everything there but wrong: refused without a request.
    std::fs::write(&part, &wrong).unwrap();
    let r = cli
        .run(&["download", id, "-o", dir.to_str().unwrap()])
        .await;
    r.expect_error(6, "checksum_mismatch");
    assert!(names_in(&dir).is_empty(), "{:?}", names_in(&dir));

    // A right prefix: resumed and accepted.
    std::fs::write(&part, &content[..60_000]).unwrap();
    cli.run(&["download", id, "-o", dir.to_str().unwrap()])
        .await
        .expect(0);
    assert_eq!(names_in(&dir), ["r.bin"]);
    assert!(std::fs::read(dir.join("r.bin")).unwrap() == content);
}
