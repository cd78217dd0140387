//! The `BlobStore` contract, run on both stores: every test body below runs
//! as `local::<name>` (a temp directory) and `s3::<name>` (a real S3 store:
//! see tests/common/s3.rs; skipped with a printed reason when there is none).
//! `s3_only::*` covers what only an object store has: multipart aborts and
//! key prefixes.

use crate::common::s3 as s3_harness;

use filestore::testing::storage::local::LocalStore;
use filestore::testing::storage::s3::S3Store;
use filestore::testing::storage::{BlobStore, BlobStream, DynBlobStore, StorageError};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

const MIB: u64 = 1024 * 1024;

/// A store under test, and a spool directory for its uploads.
struct Fixture {
    store: DynBlobStore,
    spool_dir: tempfile::TempDir,
    _root: Option<tempfile::TempDir>,
}

impl Fixture {
    fn local() -> Fixture {
        let root = tempfile::tempdir().expect("temp dir");
        let store = LocalStore::open(root.path().join("blobs")).expect("open local store");
        Fixture {
            store: Arc::new(store),
            // The server spools on the store's filesystem so the rename works.
            spool_dir: tempfile::tempdir_in(root.path()).expect("spool dir"),
            _root: Some(root),
        }
    }

    async fn s3(test: &str) -> Option<Fixture> {
        let cfg = s3_harness::s3_config(test)?;
        let store = S3Store::connect(&cfg).await.expect("connect to S3");
        Some(Fixture {
            store: Arc::new(store),
            spool_dir: tempfile::tempdir().expect("spool dir"),
            _root: None,
        })
    }

    /// A finished spool file holding `data`.
    fn spool(&self, data: &[u8]) -> (tempfile::TempPath, u64) {
        let mut f = tempfile::NamedTempFile::new_in(self.spool_dir.path()).expect("spool");
        f.write_all(data).expect("write spool");
        f.as_file().sync_all().expect("fsync spool");
        (f.into_temp_path(), data.len() as u64)
    }

    /// A spool file of `size` pseudo-random bytes, written 1 MiB at a time;
    /// returns its sha256 too.
    fn spool_random(&self, size: u64, seed: u64) -> (tempfile::TempPath, u64, Vec<u8>) {
        spool_random_in(self.spool_dir.path(), size, seed)
    }
}

fn spool_random_in(
    dir: &std::path::Path,
    size: u64,
    seed: u64,
) -> (tempfile::TempPath, u64, Vec<u8>) {
    let mut f = tempfile::NamedTempFile::new_in(dir).expect("spool");
    let mut hash = Sha256::new();
    let mut gen = Noise::new(seed);
    let mut left = size;
    while left > 0 {
        let n = left.min(MIB) as usize;
        let block = gen.take(n);
        hash.update(&block);
        f.write_all(&block).expect("write spool");
        left -= n as u64;
    }
    f.as_file().sync_all().expect("fsync spool");
    (f.into_temp_path(), size, hash.finalize().to_vec())
}

/// Deterministic pseudo-random bytes (xorshift64*).
struct Noise(u64);

impl Noise {
    fn new(seed: u64) -> Self {
        Noise(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn take(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            out.extend_from_slice(&self.0.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
        }
        out.truncate(n);
        out
    }
}

/// A blob key as the service makes them, unique per call.
fn key(tag: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "acc_{tag}/f_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

async fn read_all(stream: BlobStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut stream = stream;
    while let Some(chunk) = stream.next().await {
        out.extend_from_slice(&chunk.expect("read chunk"));
    }
    out
}

/// Streams a blob through sha256 (never holding it whole); returns (len, digest).
async fn hash_stream(mut stream: BlobStream) -> (u64, Vec<u8>) {
    let (mut len, mut hash) = (0u64, Sha256::new());
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.expect("read chunk");
        len += chunk.len() as u64;
        hash.update(&chunk);
    }
    (len, hash.finalize().to_vec())
}

// ---- the contract, one body per test ----

async fn put_get_round_trip(f: Fixture) {
    let data = Noise::new(1).take(100_000);
    let k = key("rt");
    let (spool, size) = f.spool(&data);
    f.store.put_file(&k, spool, size).await.expect("put");
    assert_eq!(
        read_all(f.store.get(&k, 0, size).await.expect("get")).await,
        data
    );
}

async fn ranged_gets(f: Fixture) {
    let data = Noise::new(2).take(1_000_000);
    let k = key("range");
    let (spool, size) = f.spool(&data);
    f.store.put_file(&k, spool, size).await.expect("put");
    for (offset, len) in [
        (0u64, 1u64),
        (0, 1000),
        (123_456, 77_777),
        (999_000, 1000),
        (999_999, 1),
    ] {
        let got = read_all(f.store.get(&k, offset, len).await.expect("get range")).await;
        let want = &data[offset as usize..(offset + len) as usize];
        assert!(
            got == want,
            "range {offset}+{len}: {} bytes back",
            got.len()
        );
    }
    assert!(read_all(f.store.get(&k, 10, 0).await.expect("empty range"))
        .await
        .is_empty());
}

async fn empty_blob(f: Fixture) {
    let k = key("empty");
    let (spool, size) = f.spool(b"");
    f.store.put_file(&k, spool, size).await.expect("put empty");
    assert!(read_all(f.store.get(&k, 0, 0).await.expect("get"))
        .await
        .is_empty());
    f.store.delete(&k).await.expect("delete empty");
}

async fn missing_key_is_not_found(f: Fixture) {
    let r = f.store.get(&key("missing"), 0, 10).await;
    assert!(matches!(r, Err(StorageError::NotFound(_))), "{:?}", r.err());
}

async fn delete_then_get_is_not_found(f: Fixture) {
    let k = key("del");
    let (spool, size) = f.spool(b"to be deleted");
    f.store.put_file(&k, spool, size).await.expect("put");
    f.store.delete(&k).await.expect("delete");
    let r = f.store.get(&k, 0, size).await;
    assert!(matches!(r, Err(StorageError::NotFound(_))), "{:?}", r.err());
}

async fn delete_of_missing_key_is_ok(f: Fixture) {
    f.store
        .delete(&key("never"))
        .await
        .expect("delete of a missing blob");
}

async fn check_is_ok(f: Fixture) {
    f.store.check().await.expect("check");
}

async fn invalid_keys_are_refused(f: Fixture) {
    for bad in ["../x", "a/b/c", "/abs", "acc_1/"] {
        let (spool, size) = f.spool(b"x");
        assert!(
            f.store.put_file(bad, spool, size).await.is_err(),
            "put {bad}"
        );
        assert!(f.store.get(bad, 0, 1).await.is_err(), "get {bad}");
    }
}

async fn spool_is_removed_after_put(f: Fixture) {
    let (spool, size) = f.spool(b"spooled");
    let path = spool.to_path_buf();
    f.store
        .put_file(&key("spool"), spool, size)
        .await
        .expect("put");
    assert!(!path.exists(), "spool file {} still exists", path.display());
    let (spool, size) = f.spool(b"refused");
    let path = spool.to_path_buf();
    assert!(f.store.put_file("bad key", spool, size).await.is_err());
    assert!(!path.exists(), "spool of a failed put still exists");
}

/// 20 MiB + a bit: the multipart path on S3 (3 parts, the last one short).
async fn large_blob_round_trip(f: Fixture) {
    let k = key("large");
    let (spool, size, digest) = f.spool_random(20 * MIB + 12_345, 3);
    f.store.put_file(&k, spool, size).await.expect("put large");
    let (len, got) = hash_stream(f.store.get(&k, 0, size).await.expect("get")).await;
    assert_eq!(len, size);
    assert_eq!(got, digest, "sha256 differs");
    // A range across the first part boundary.
    let (off, len) = (8 * MIB - 100, 200);
    let got = read_all(f.store.get(&k, off, len).await.expect("range")).await;
    let mut gen = Noise::new(3);
    let first = gen.take(MIB as usize * 8 + 100);
    assert_eq!(got, &first[off as usize..]);
    f.store.delete(&k).await.expect("delete");
}

/// A copy holds the same bytes under its own key; deleting either leaves
/// the other whole; a missing source is `NotFound` and leaves nothing.
async fn copy_is_independent_of_its_source(f: Fixture) {
    let data = Noise::new(7).take(300_000);
    let (from, to) = (key("copy"), key("copy"));
    let (spool, size) = f.spool(&data);
    f.store.put_file(&from, spool, size).await.expect("put");
    f.store.copy(&from, &to, size).await.expect("copy");
    assert_eq!(
        read_all(f.store.get(&to, 0, size).await.unwrap()).await,
        data
    );
    f.store.delete(&from).await.expect("delete the source");
    assert_eq!(
        read_all(f.store.get(&to, 0, size).await.unwrap()).await,
        data
    );
    let again = key("copy");
    f.store
        .copy(&to, &again, size)
        .await
        .expect("copy of a copy");
    f.store.delete(&to).await.expect("delete the copy");
    assert_eq!(
        read_all(f.store.get(&again, 0, size).await.unwrap()).await,
        data
    );
    let (gone, nothing) = (key("copy"), key("copy"));
    let r = f.store.copy(&gone, &nothing, 10).await;
    assert!(matches!(r, Err(StorageError::NotFound(_))), "{r:?}");
    assert_eq!(f.store.size(&nothing).await.unwrap(), None);
    assert!(f.store.copy("../x", &nothing, 1).await.is_err());
    f.store.delete(&again).await.expect("delete");
}

macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {
        mod local {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(super::Fixture::local()).await;
                }
            )*
        }
        mod s3 {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if let Some(f) = super::Fixture::s3(stringify!($name)).await {
                        super::$name(f).await;
                    }
                }
            )*
        }
    };
}

on_both_stores!(
    put_get_round_trip,
    ranged_gets,
    empty_blob,
    missing_key_is_not_found,
    delete_then_get_is_not_found,
    delete_of_missing_key_is_ok,
    check_is_ok,
    invalid_keys_are_refused,
    spool_is_removed_after_put,
    large_blob_round_trip,
    copy_is_independent_of_its_source,
);

mod s3_only {
    use super::*;
    use s3_harness::{key_prefix, object_keys, pending_uploads, s3_config};

    /// Polls until no upload is pending, for at most `limit`; returns what is left.
    async fn uploads_drain(
        cfg: &filestore::testing::config::StorageConfig,
        limit: Duration,
    ) -> Vec<String> {
        let deadline = Instant::now() + limit;
        loop {
            let left = pending_uploads(cfg).await;
            if left.is_empty() || Instant::now() > deadline {
                return left;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The multipart upload of an abandoned put is aborted and stays so, and
    /// no object is left. On a loaded machine the abort can take a while; a
    /// cancelled part the store finishes late may bring the upload back for
    /// a moment, and the repeated aborts remove it again.
    async fn aborted_for_good(cfg: &filestore::testing::config::StorageConfig) {
        let left = uploads_drain(cfg, Duration::from_secs(30)).await;
        assert!(left.is_empty(), "upload not aborted: {left:?}");
        tokio::time::sleep(Duration::from_secs(6)).await;
        let left = uploads_drain(cfg, Duration::from_secs(30)).await;
        assert!(left.is_empty(), "parts left behind: {left:?}");
        assert!(
            object_keys(cfg).await.is_empty(),
            "an object was left behind"
        );
    }

    /// Runs `put` until a multipart upload for it shows up in the bucket,
    /// then hands the still-running put future back.
    async fn until_upload_started<
        F: std::future::Future<Output = Result<(), StorageError>> + Unpin,
    >(
        cfg: &filestore::testing::config::StorageConfig,
        put: &mut F,
    ) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            tokio::select! {
                r = &mut *put => panic!("put finished ({r:?}) before it could be interrupted"),
                left = pending_uploads(cfg) => if !left.is_empty() { return },
            }
            assert!(
                Instant::now() < deadline,
                "no multipart upload ever appeared"
            );
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropped_multipart_put_leaves_nothing() {
        let Some(cfg) = s3_config("dropped_put") else {
            return;
        };
        let store = S3Store::connect(&cfg).await.expect("connect");
        let dir = tempfile::tempdir().expect("dir");
        let (spool, size, _) = spool_random_in(dir.path(), 96 * MIB, 4);
        let spool_path = spool.to_path_buf();
        let k = key("drop");
        let mut put = Box::pin(store.put_file(&k, spool, size));
        until_upload_started(&cfg, &mut put).await;
        drop(put);
        assert!(!spool_path.exists(), "spool of a dropped put still exists");
        aborted_for_good(&cfg).await;
        assert!(matches!(
            store.get(&k, 0, 1).await,
            Err(StorageError::NotFound(_))
        ));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sweep_removes_old_incomplete_uploads_under_the_prefix_only() {
        let Some(cfg) = s3_config("sweep") else {
            return;
        };
        let store = S3Store::connect(&cfg).await.expect("connect");
        let bucket = cfg.bucket.clone().unwrap();
        let client = s3_harness::raw_client(&cfg).await;
        let blob = key("sweep");
        let object = format!("{}{}", key_prefix(&cfg), blob);
        client
            .create_multipart_upload()
            .bucket(&bucket)
            .key(&object)
            .send()
            .await
            .expect("create upload");
        assert_eq!(pending_uploads(&cfg).await.len(), 1);
        // Younger than the age given: kept (it may be an upload in flight).
        let none = std::collections::HashSet::new();
        let swept = store
            .sweep_incomplete(Duration::from_hours(1), &none)
            .await
            .expect("sweep");
        assert_eq!(swept, 0);
        assert_eq!(pending_uploads(&cfg).await.len(), 1);
        // Old enough, but a resumable upload still open: kept.
        let open = std::collections::HashSet::from([blob]);
        let swept = store
            .sweep_incomplete(Duration::ZERO, &open)
            .await
            .expect("sweep");
        assert_eq!(swept, 0);
        // Old enough: aborted.
        let swept = store
            .sweep_incomplete(Duration::ZERO, &none)
            .await
            .expect("sweep");
        assert_eq!(swept, 1);
        assert!(uploads_drain(&cfg, Duration::from_secs(10))
            .await
            .is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn failed_multipart_put_is_aborted() {
        let Some(cfg) = s3_config("failed_put") else {
            return;
        };
        let store = S3Store::connect(&cfg).await.expect("connect");
        let dir = tempfile::tempdir().expect("dir");
        let (spool, size, _) = spool_random_in(dir.path(), 96 * MIB, 5);
        let spool_path = spool.to_path_buf();
        let k = key("fail");
        let mut put = Box::pin(store.put_file(&k, spool, size));
        until_upload_started(&cfg, &mut put).await;
        // Parts still to be read now find the spool file too short.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&spool_path)
            .and_then(|f| f.set_len(0))
            .expect("truncate spool");
        let r = tokio::time::timeout(Duration::from_secs(30), put)
            .await
            .expect("put hangs");
        assert!(r.is_err(), "put of a truncated spool succeeded");
        assert!(!spool_path.exists(), "spool of a failed put still exists");
        aborted_for_good(&cfg).await;
    }

    /// Over the store's single-copy size the copy goes in UploadPartCopy
    /// parts (here 5 MiB, S3's least: 3 parts, the last one short); a
    /// missing source aborts the multipart upload and leaves nothing.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn large_copies_go_in_parts() {
        let Some(cfg) = s3_config("large_copies_go_in_parts") else {
            return;
        };
        let store = S3Store::connect(&cfg)
            .await
            .unwrap()
            .with_copy_parts(5 * MIB, 5 * MIB);
        let spool_dir = tempfile::tempdir().unwrap();
        let (spool, size, digest) = spool_random_in(spool_dir.path(), 12 * MIB + 4321, 11);
        let (from, to) = (key("pcopy"), key("pcopy"));
        store.put_file(&from, spool, size).await.expect("put");
        store.copy(&from, &to, size).await.expect("copy in parts");
        let (len, got) = hash_stream(store.get(&to, 0, size).await.unwrap()).await;
        assert_eq!((len, got), (size, digest));
        store.delete(&from).await.unwrap();
        store.delete(&to).await.unwrap();
        let r = store.copy(&key("pcopy"), &key("pcopy"), size).await;
        assert!(matches!(r, Err(StorageError::NotFound(_))), "{r:?}");
        aborted_for_good(&cfg).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn prefixes_isolate_stores() {
        let (Some(a), Some(b)) = (s3_config("prefix_a"), s3_config("prefix_b")) else {
            return;
        };
        let (sa, sb) = (
            S3Store::connect(&a).await.unwrap(),
            S3Store::connect(&b).await.unwrap(),
        );
        let k = key("iso");
        let dir = tempfile::tempdir().expect("dir");
        let (spool, size, _) = spool_random_in(dir.path(), 1000, 6);
        sa.put_file(&k, spool, size).await.expect("put in a");
        assert!(matches!(
            sb.get(&k, 0, size).await,
            Err(StorageError::NotFound(_))
        ));
        sb.delete(&k).await.expect("delete in b");
        assert_eq!(
            object_keys(&a).await,
            vec![format!("{}{k}", key_prefix(&a))]
        );
        assert!(object_keys(&b).await.is_empty());
        assert_eq!(
            read_all(sa.get(&k, 0, size).await.unwrap()).await.len() as u64,
            size
        );
    }

    /// Figures for the report: `cargo test --test blob_store -- --ignored --nocapture measure`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "measurement, run by hand"]
    async fn measure_100_mib_put_get() {
        let Some(cfg) = s3_config("measure") else {
            return;
        };
        let store = S3Store::connect(&cfg).await.expect("connect");
        let dir = tempfile::tempdir().expect("dir");
        let (spool, size, digest) = spool_random_in(dir.path(), 100 * MIB, 7);
        let before = vm_hwm_kib();
        let t = Instant::now();
        let k = key("measure");
        store.put_file(&k, spool, size).await.expect("put");
        let put = t.elapsed();
        let t = Instant::now();
        let (len, got) = hash_stream(store.get(&k, 0, size).await.expect("get")).await;
        let get = t.elapsed();
        assert_eq!((len, got), (size, digest));
        eprintln!(
            "100 MiB via S3: put {put:?}, get+sha256 {get:?}; VmHWM before {} KiB, after {} KiB",
            before,
            vm_hwm_kib()
        );
    }

    fn vm_hwm_kib() -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}
