//! The readiness probe: HeadBucket through `S3Store`, then a sentinel
//! object written at first start and read back after a restart.

use filestore::testing::config::StorageConfig;
use filestore::testing::storage::s3::S3Store;
use filestore::testing::storage::BlobStore;
use futures_util::StreamExt;
use std::io::Write;
use std::path::Path;

/// The object the readiness probe writes at first start and reads back
/// after a restart: SeaweedFS answers HeadBucket before its volume server
/// has re-registered, and for a few seconds reads of older objects fail
/// with 500. It lives under the prefix `harness/`.
pub(super) const SENTINEL_PREFIX: &str = "harness";
const SENTINEL_KEY: &str = "acc_harness/f_sentinel";

/// What the readiness probe does after HeadBucket succeeds.
#[derive(Debug, Clone, Copy)]
pub(super) enum Sentinel {
    Write,
    Read,
}

/// One readiness probe through `S3Store` (HeadBucket, then the sentinel),
/// on a thread of its own so that it works from sync code and from inside
/// a tokio test alike.
pub(super) fn probe(
    cfg: &StorageConfig,
    spool_dir: &Path,
    sentinel: Sentinel,
) -> Result<(), String> {
    type Error = Box<dyn std::error::Error + Send + Sync>;
    let attempt = async {
        let store = S3Store::connect(cfg).await?;
        store.check().await?;
        match sentinel {
            Sentinel::Write => {
                let mut spool = tempfile::NamedTempFile::new_in(spool_dir)?;
                spool.write_all(b"ready")?;
                store
                    .put_file(SENTINEL_KEY, spool.into_temp_path(), 5)
                    .await?;
            }
            Sentinel::Read => {
                let mut body = store.get(SENTINEL_KEY, 0, 5).await?;
                while let Some(chunk) = body.next().await {
                    chunk?;
                }
            }
        }
        Ok::<(), Error>(())
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?
                .block_on(attempt)
                .map_err(|e| e.to_string())
        })
        .join()
        .unwrap_or_else(|_| Err("probe thread panicked".into()))
    })
}
