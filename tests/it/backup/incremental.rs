//! Backups share their blobs by SHA-256: a second copies only what is new;
//! restore takes the newest complete backup; the repair side reads blobs.

use super::{backup, bytes, contents, db_of, restored_server};
use crate::common::{sha256_hex, Backend, TestServer};
use filestore::testing::backup::Source;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_backup_copies_only_new_blobs() {
    let srv = TestServer::on(Backend::Local).await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("dest");
    let (small, large) = (bytes(3_000, 1), bytes(200_000, 2));
    srv.upload_ok("small.txt", small.clone(), &[]).await;
    srv.upload_ok("large.bin", large.clone(), &[]).await;
    // The same bytes again: one blob in the backup.
    srv.upload_ok("again.bin", large.clone(), &[]).await;
    let db = db_of(&srv);
    let first = backup(&srv.data_dir, db.as_deref(), &dest);
    assert_eq!(first["files"], 3, "{first}");
    assert_eq!(first["bytes"], 3_000 + 2 * 200_000, "{first}");
    assert_eq!(first["new_blobs"], 2, "{first}");
    assert_eq!(first["new_bytes"], 203_000, "{first}");
    for data in [&small, &large] {
        let sha = sha256_hex(data);
        let path = dest.join("blobs").join(&sha[..2]).join(&sha);
        assert_eq!(std::fs::read(path).unwrap(), *data);
    }
    let second = backup(&srv.data_dir, db.as_deref(), &dest);
    assert_eq!(second["files"], 3, "{second}");
    assert_eq!(second["new_blobs"], 0, "{second}");
    assert_eq!(second["new_bytes"], 0, "{second}");
    let newer = bytes(5_000, 3);
    srv.upload_ok("newer.txt", newer.clone(), &[]).await;
    let third = backup(&srv.data_dir, db.as_deref(), &dest);
    assert_eq!(third["files"], 4, "{third}");
    assert_eq!(third["new_blobs"], 1, "{third}");
    assert_eq!(third["new_bytes"], 5_000, "{third}");

    // The repair side: a blob by its SHA-256, checked.
    let source = Source::open(dest.to_str().unwrap(), None, &srv.app.config.storage)
        .await
        .unwrap();
    let spool = tempfile::tempdir().unwrap();
    let got = source
        .fetch(&sha256_hex(&newer), 5_000, spool.path())
        .await
        .unwrap()
        .expect("the backup has the blob");
    assert_eq!(std::fs::read(&got).unwrap(), newer);
    assert!(source
        .blob(&sha256_hex(b"nowhere"))
        .await
        .unwrap()
        .is_none());
    assert!(source
        .fetch(&sha256_hex(&newer), 4_999, spool.path())
        .await
        .unwrap()
        .is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_takes_the_newest_complete_backup_not_one_cut_short() {
    let srv = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("dest");
    let data = bytes(1_000, 7);
    let f = srv.upload_ok("kept.txt", data.clone(), &[]).await;
    let db = db_of(&srv);
    backup(&srv.data_dir, db.as_deref(), &dest);
    // What a backup killed before its manifest leaves: a later id, a dump,
    // no manifest.
    let cut = dest.join("backups").join("99991231T235959.999Z-00000000");
    std::fs::create_dir_all(&cut).unwrap();
    std::fs::write(cut.join("dump.jsonl"), b"{\"table\":\"acc").unwrap();
    let restored = restored_server(dir.path(), "restored", &dest).await;
    let got = contents(&restored).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[f["id"].as_str().unwrap()].1, data);
}
