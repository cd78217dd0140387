//! What restore refuses: a target that is not empty, and a backup whose
//! bytes do not match their SHA-256 (exit 1, naming what).

use super::{backup, bytes, db_of, new_target, restore};
use crate::common::{sha256_hex, Backend, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_refuses_a_target_that_is_not_empty() {
    let srv = TestServer::start().await;
    srv.upload_ok("a.txt", bytes(100, 1), &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("dest");
    let db = db_of(&srv);
    backup(&srv.data_dir, db.as_deref(), &dest);
    // The server's own data dir (and, on PostgreSQL, its database).
    let out = restore(&srv.data_dir, db.as_deref(), &dest);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    match &db {
        // The database is checked once the data dir's blob store is.
        Some(_) => assert!(err.contains("is not empty"), "{err}"),
        None => assert!(
            err.contains(&format!("data dir {} is not empty", srv.data_dir.display())),
            "{err}"
        ),
    }
    if let Some(url) = &db {
        // An empty data dir, the server's database: the table with rows named.
        let out = restore(&dir.path().join("fresh"), Some(url), &dest);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("database (table "), "{err}");
        assert!(err.contains("is not empty"), "{err}");
    }
    // A directory with anything in it.
    let busy = dir.path().join("busy");
    std::fs::create_dir_all(&busy).unwrap();
    std::fs::write(busy.join("note"), b"x").unwrap();
    if db.is_none() {
        let out = restore(&busy, None, &dest);
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("busy is not empty"));
    }
    // Nothing to restore from.
    let out = restore(&dir.path().join("t2"), None, &dir.path().join("nothing"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds no complete backup"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_or_missing_blob_in_the_backup_fails_the_restore_naming_the_file() {
    let srv = TestServer::on(Backend::Local).await;
    let (inline, stored, fine) = (bytes(1_000, 1), bytes(150_000, 2), bytes(150_000, 3));
    let a = srv.upload_ok("inline.txt", inline.clone(), &[]).await;
    let b = srv.upload_ok("stored.bin", stored.clone(), &[]).await;
    let c = srv.upload_ok("fine.bin", fine, &[]).await;
    let flipped_inline = bytes(1_000, 4);
    let d = srv
        .upload_ok("flipped.txt", flipped_inline.clone(), &[])
        .await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("dest");
    backup(&srv.data_dir, db_of(&srv).as_deref(), &dest);
    let blob = |data: &[u8]| {
        let sha = sha256_hex(data);
        dest.join("blobs").join(&sha[..2]).join(&sha)
    };
    // One byte flipped in one, the other gone.
    let mut flipped = std::fs::read(blob(&stored)).unwrap();
    flipped[75_000] ^= 0x01;
    std::fs::write(blob(&stored), flipped).unwrap();
    std::fs::remove_file(blob(&inline)).unwrap();
    let mut small = std::fs::read(blob(&flipped_inline)).unwrap();
    small[10] ^= 0x01;
    std::fs::write(blob(&flipped_inline), small).unwrap();
    let (target, db) = new_target(dir.path(), "target").await;
    let out = restore(&target, db.as_deref(), &dest);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    for f in [&a, &b, &d] {
        assert!(err.contains(f["id"].as_str().unwrap()), "{err}");
    }
    assert!(!err.contains(c["id"].as_str().unwrap()), "{err}");
    assert!(err.contains("do not match their sha256"), "{err}");
}
