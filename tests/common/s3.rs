//! Temporary: replaced by the SeaweedFS harness.
use filestore::config::StorageConfig;
pub fn s3_config(_test: &str) -> Option<StorageConfig> {
    eprintln!("skipping S3 tests: harness not installed yet");
    None
}
pub async fn object_count(_cfg: &StorageConfig) -> usize {
    0
}
