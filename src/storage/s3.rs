//! Placeholder until the S3 store lands (being written in a worktree).
use super::StorageError;

#[derive(Debug)]
pub struct S3Store;

impl S3Store {
    pub async fn connect(_cfg: &crate::config::StorageConfig) -> Result<S3Store, StorageError> {
        Err(StorageError::Backend("s3 not built yet".into()))
    }
}

#[async_trait::async_trait]
impl super::BlobStore for S3Store {
    fn kind(&self) -> &'static str {
        "s3"
    }
    async fn put_file(&self, _: &str, _: tempfile::TempPath, _: u64) -> Result<(), StorageError> {
        Err(StorageError::Backend("s3 not built yet".into()))
    }
    async fn get(&self, _: &str, _: u64, _: u64) -> Result<super::BlobStream, StorageError> {
        Err(StorageError::Backend("s3 not built yet".into()))
    }
    async fn delete(&self, _: &str) -> Result<(), StorageError> {
        Err(StorageError::Backend("s3 not built yet".into()))
    }
    async fn check(&self) -> Result<(), StorageError> {
        Err(StorageError::Backend("s3 not built yet".into()))
    }
}
