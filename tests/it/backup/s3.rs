//! A repository in an S3 bucket (`s3://BUCKET/PREFIX`, standard AWS
//! credentials, `--endpoint`): a backup goes there, a second copies nothing,
//! the repair side reads its blobs, and restore brings the files back.
//! Skips (printing why) without an S3 store outside CI.

use super::{bytes, contents, db_of, new_target};
use crate::common::process;
use crate::common::s3::{s3_config, ACCESS_KEY, SECRET_KEY};
use crate::common::{sha256_hex, TestOptions, TestServer};
use filestore::testing::backup::Source;
use filestore::testing::config::Secret;
use std::path::Path;

/// `filestore admin ARGS --data-dir DATA --json --endpoint E` with the
/// test store's keys as the standard AWS credentials.
fn admin_s3(data: &Path, db: Option<&str>, endpoint: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = process::filestore();
    cmd.arg("admin")
        .args(args)
        .args(["--json", "--endpoint", endpoint, "--data-dir"])
        .arg(data)
        .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY);
    if let Some(url) = db {
        cmd.env("FILESTORE_DATABASE_URL", url);
    }
    let out = cmd.output().expect("filestore admin runs");
    assert!(
        out.status.success(),
        "admin {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn record(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_to_s3_restores_from_s3() {
    let Some(cfg) = tokio::task::block_in_place(|| s3_config("backup_s3")) else {
        return;
    };
    let endpoint = cfg.endpoint.clone().unwrap();
    let bucket = cfg.bucket.clone().unwrap();
    let dest = format!("s3://{bucket}/{}/repo", cfg.prefix);
    let srv = TestServer::start().await;
    // One inline, one in the blob store.
    let (small, large) = (bytes(2_000, 1), bytes(140_000, 2));
    srv.upload_ok("small.txt", small.clone(), &[]).await;
    srv.upload_ok("large.bin", large.clone(), &[]).await;
    let db = db_of(&srv);
    let tmp_mode = || {
        std::fs::metadata(std::env::temp_dir())
            .unwrap()
            .permissions()
    };
    let mode_before = tmp_mode();
    let first = record(&admin_s3(
        &srv.data_dir,
        db.as_deref(),
        &endpoint,
        &["backup", &dest],
    ));
    assert_eq!(first["files"], 2, "{first}");
    assert_eq!(first["new_blobs"], 2, "{first}");
    assert_eq!(first["new_bytes"], 142_000, "{first}");
    let second = record(&admin_s3(
        &srv.data_dir,
        db.as_deref(),
        &endpoint,
        &["backup", &dest],
    ));
    assert_eq!(second["new_blobs"], 0, "{second}");
    // Its scratch went in the system's temporary directory, left as it was.
    assert_eq!(tmp_mode(), mode_before);

    // The repair side reads the bucket's blobs, checked.
    let keys = || (Secret::new(ACCESS_KEY), Secret::new(SECRET_KEY));
    let storage = &srv.app.config.storage;
    let source = Source::open_keyed(&dest, Some(&endpoint), storage, keys())
        .await
        .unwrap();
    let spool = tempfile::tempdir().unwrap();
    for data in [&small, &large] {
        let got = source
            .fetch(&sha256_hex(data), data.len() as u64, spool.path())
            .await
            .unwrap()
            .expect("the bucket has the blob");
        assert_eq!(std::fs::read(&got).unwrap(), *data);
    }
    assert!(source.blob(&sha256_hex(b"none")).await.unwrap().is_none());
    let empty = format!("s3://{bucket}/{}/nothing", cfg.prefix);
    let err = Source::open_keyed(&empty, Some(&endpoint), storage, keys())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("holds no complete backup"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let (target, target_db) = new_target(dir.path(), "restored").await;
    let mut args = vec!["restore", dest.as_str()];
    if let Some(url) = &target_db {
        args.extend(["--database", url]);
    }
    let restored = record(&admin_s3(&target, None, &endpoint, &args));
    assert_eq!(restored["files"], 2, "{restored}");
    let again = TestServer::start_with(TestOptions {
        data_dir: Some(target),
        ..Default::default()
    })
    .await;
    let (before, after) = (contents(&srv).await, contents(&again).await);
    assert_eq!(before.len(), 2);
    for (id, (_, data)) in &before {
        assert!(after[id].1 == *data, "{id}: bytes differ");
    }
}
