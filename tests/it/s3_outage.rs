//! The S3 store going down and coming back: errors come in seconds (never a
//! hang), and the same `S3Store` works again once the store is back. Runs on
//! a SeaweedFS of its own (own directory and ports) that it kills and
//! restarts; skipped with a printed reason when there is no `weed`.

use crate::common::s3 as s3_harness;

use filestore::testing::storage::s3::S3Store;
use filestore::testing::storage::{BlobStore, StorageError};
use futures_util::StreamExt;
use s3_harness::Seaweed;
use std::future::Future;
use std::io::Write;
use std::time::{Duration, Instant};

/// An operation still pending after this while the store is down hangs.
/// (A bound on hanging, not a speed check: the times are printed, and
/// measured by hand, not asserted.)
const HANG: Duration = Duration::from_secs(30);

/// Runs `op`, failing the test if it hangs.
async fn bounded<T>(what: &str, op: impl Future<Output = T>) -> T {
    let t = Instant::now();
    let r = tokio::time::timeout(HANG, op)
        .await
        .unwrap_or_else(|_| panic!("{what} hangs while the store is down"));
    eprintln!("{what}: {:?}", t.elapsed());
    r
}

fn spool(data: &[u8]) -> (tempfile::TempPath, u64) {
    let mut f = tempfile::NamedTempFile::new().expect("spool");
    f.write_all(data).expect("write spool");
    (f.into_temp_path(), data.len() as u64)
}

async fn read_all(store: &S3Store, key: &str, len: u64) -> Result<Vec<u8>, StorageError> {
    let mut stream = store.get(key, 0, len).await?;
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        out.extend_from_slice(&chunk?);
    }
    Ok(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_gives_errors_fast_and_the_store_recovers() {
    // Seaweed's methods block (they wait for the bucket): keep them off the runtime.
    let Some(mut weed) = tokio::task::block_in_place(|| Seaweed::start("outage-test")) else {
        return;
    };
    let store = S3Store::connect(&weed.config("outage"))
        .await
        .expect("connect");
    store.check().await.expect("check while up");
    let (data, key) = (b"survives the outage".to_vec(), "acc_outage/f_before");
    let (path, len) = spool(&data);
    store.put_file(key, path, len).await.expect("put while up");

    tokio::task::block_in_place(|| weed.stop());
    let r = bounded("check", store.check()).await;
    assert!(r.is_err(), "check succeeded with the store down");
    let r = bounded("get", read_all(&store, key, len)).await;
    assert!(
        matches!(r, Err(StorageError::Backend(_))),
        "get while down: {r:?}"
    );
    let (path, n) = spool(b"during the outage");
    let r = bounded("put", store.put_file("acc_outage/f_during", path, n)).await;
    assert!(r.is_err(), "put succeeded with the store down");
    let r = bounded("delete", store.delete(key)).await;
    assert!(r.is_err(), "delete succeeded with the store down");

    // Returns once objects written before the outage are readable again.
    tokio::task::block_in_place(|| weed.restart());
    store
        .check()
        .await
        .expect("check after the store came back");
    let back = read_all(&store, key, len).await.expect("get after restart");
    assert_eq!(back, data);
    let (path, n) = spool(b"after the outage");
    store
        .put_file("acc_outage/f_after", path, n)
        .await
        .expect("put after restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hung_store_fails_the_check_in_seconds() {
    let Some(weed) = tokio::task::block_in_place(|| Seaweed::start("hung-test")) else {
        return;
    };
    let store = S3Store::connect(&weed.config("hung"))
        .await
        .expect("connect");
    store.check().await.expect("check while up");
    weed.pause();
    // A fresh client as well as the one whose connection was open: neither
    // may get an answer from a stopped store.
    let fresh = S3Store::connect(&weed.config("hung"))
        .await
        .expect("connect");
    let r = bounded("check of a hung store", store.check()).await;
    assert!(r.is_err(), "check succeeded with the store hung");
    let r = bounded("check of a hung store, new client", fresh.check()).await;
    weed.resume();
    assert!(r.is_err(), "check succeeded with the store hung");
    store.check().await.expect("check after the store resumed");
}
