//! `admin backup` killed (kill -9) midway: the backup before it is still
//! the newest complete one, and the next copies only what is missing and
//! removes what the killed run left. The run is held midway by a blob that
//! is a named pipe: reading it blocks until the pipe has a writer.

use super::{backup, bytes, contents, db_of, restored_server};
use crate::common::{process, sha256_hex, TestServer};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The file under `dir` holding exactly `data`.
fn file_holding(dir: &Path, data: &[u8]) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(p) = file_holding(&path, data) {
                return Some(p);
            }
        } else if std::fs::read(&path).is_ok_and(|b| b == data) {
            return Some(path);
        }
    }
    None
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_killed_midway_leaves_the_last_complete_one_and_the_next_copies_what_is_missing() {
    let srv = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("dest");
    let db = db_of(&srv);
    let first = bytes(2_000, 1);
    let a = srv.upload_ok("first.txt", first.clone(), &[]).await;
    backup(&srv.data_dir, db.as_deref(), &dest);
    // Then one inline file and three in the blob store, one of whose blobs
    // the next run blocks on.
    let (stuck, inline) = (bytes(140_000, 2), bytes(2_000, 3));
    let copied = [bytes(140_000, 4), bytes(140_000, 5), inline.clone()];
    for (i, data) in copied.iter().chain([&stuck]).enumerate() {
        srv.upload_ok(&format!("later-{i}.bin"), data.clone(), &[])
            .await;
    }
    // The server's own MD5 pass (service::md5_fill) reads new blobs in the
    // background: it must be done before one becomes a pipe, or its open
    // would wait on the pipe for ever.
    let began = Instant::now();
    while srv.count("SELECT COUNT(*) FROM files WHERE md5 IS NULL") > 0 {
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "the MD5 pass never ran"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let blob = file_holding(&srv.data_dir.join("blobs"), &stuck).expect("the blob");
    let saved = blob.with_extension("saved");
    std::fs::rename(&blob, &saved).unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(&blob)
        .status()
        .unwrap()
        .success());

    let mut cmd = process::filestore();
    cmd.args(["admin", "backup"])
        .arg(&dest)
        .arg("--data-dir")
        .arg(&srv.data_dir)
        .stdout(std::process::Stdio::null());
    if let Some(url) = &db {
        cmd.env("FILESTORE_DATABASE_URL", url);
    }
    let mut run = cmd.spawn().unwrap();
    let in_dest = |data: &[u8]| {
        let sha = sha256_hex(data);
        dest.join("blobs").join(&sha[..2]).join(sha)
    };
    let began = Instant::now();
    while !copied.iter().all(|d| in_dest(d).exists()) {
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "the run copies nothing"
        );
        assert!(run.try_wait().unwrap().is_none(), "the run ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    run.kill().unwrap();
    run.wait().unwrap();

    // What it left: blobs it copied, its scratch, its hold; no backup.
    assert_eq!(entries(&dest.join("backups")).len(), 1);
    let scratch = entries(&dest.join("tmp"));
    assert_eq!(scratch.len(), 2, "{scratch:?}");
    assert!(
        Path::new(&scratch[1])
            .extension()
            .is_some_and(|e| e == "lock"),
        "{scratch:?}"
    );
    let holds = "SELECT COUNT(*) FROM meta WHERE key LIKE 'blob_hold:%'";
    assert_eq!(srv.count(holds), 1);
    // The newest complete backup is still the first.
    let restored = restored_server(dir.path(), "restored", &dest).await;
    let got = contents(&restored).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[a["id"].as_str().unwrap()].1, first);

    // The next run copies only the blob the killed one had not, and
    // removes its scratch once its lock is old enough to be a dead run's.
    std::fs::remove_file(&blob).unwrap();
    std::fs::rename(&saved, &blob).unwrap();
    for name in &scratch {
        assert!(std::process::Command::new("touch")
            .args(["-h", "-d", "2 minutes ago"])
            .arg(dest.join("tmp").join(name))
            .status()
            .unwrap()
            .success());
    }
    let next = backup(&srv.data_dir, db.as_deref(), &dest);
    assert_eq!(next["files"], 5, "{next}");
    assert_eq!(next["new_blobs"], 1, "{next}");
    assert_eq!(next["new_bytes"], 140_000, "{next}");
    assert!(entries(&dest.join("tmp")).is_empty());
    let restored = restored_server(dir.path(), "again", &dest).await;
    let bytes_of = |c: std::collections::BTreeMap<String, (serde_json::Value, Vec<u8>)>| {
        c.into_iter()
            .map(|(id, (_, b))| (id, b))
            .collect::<Vec<_>>()
    };
    let (got, want) = (contents(&restored).await, contents(&srv).await);
    assert_eq!(want.len(), 5);
    assert!(bytes_of(got) == bytes_of(want), "the restored files differ");
}
