//! While a backup runs it holds blob deletions on every node: a file
//! deleted after its snapshot began keeps its blob until the hold ends.

use crate::common::{Backend, TestServer};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_keeps_a_deleted_files_blob_until_it_ends() {
    let srv = TestServer::on(Backend::LocalBlobs).await;
    let f = srv.upload_ok("held.bin", vec![7u8; 10_000], &[]).await;
    let id = f["id"].as_str().unwrap();
    assert_eq!(srv.blob_count().await, 1);
    let now = srv.clock.now_ms();
    srv.app.meta.hold_blobs("test", now + 60_000).await.unwrap();
    assert_eq!(srv.delete_as(&srv.secret_key, id).await.status(), 200);
    // Several collector passes (every 100 ms): the blob stays, queued.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(srv.blob_count().await, 1, "a held blob was deleted");
    assert_eq!(srv.count("SELECT COUNT(*) FROM blob_deletions"), 1);
    srv.app.meta.release_blobs("test", now).await.unwrap();
    srv.eventually(10, "the blob deleted once the hold ends", || async {
        srv.blob_count().await == 0
    })
    .await;
    // An expired hold holds nothing.
    srv.app.meta.hold_blobs("old", now - 1).await.unwrap();
    let g = srv.upload_ok("free.bin", vec![8u8; 10_000], &[]).await;
    assert_eq!(
        srv.delete_as(&srv.secret_key, g["id"].as_str().unwrap())
            .await
            .status(),
        200
    );
    srv.eventually(10, "an expired hold holds nothing", || async {
        srv.blob_count().await == 0
    })
    .await;
    // Ending any hold removes the rows of those that ended (a killed
    // backup's), not the others'.
    srv.app.meta.hold_blobs("live", now + 60_000).await.unwrap();
    srv.app.meta.release_blobs("none", now).await.unwrap();
    let left = "SELECT COUNT(*) FROM meta WHERE key LIKE 'blob_hold:%'";
    assert_eq!(srv.count(left), 1);
}
