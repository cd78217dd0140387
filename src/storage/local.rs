//! Blobs as files under one directory: `<root>/<account_id>/<file_id>`.
//! A blob arrives as a spool file on the same filesystem (the server spools
//! under `DATA_DIR/tmp`), is fsynced by the caller, renamed into place, and the
//! directory is fsynced so the rename survives a crash.

use super::{valid_key, BlobStore, BlobStream, StorageError};
use async_trait::async_trait;
use futures_util::StreamExt;
use std::io::SeekFrom;
use std::path::{Path, PathBuf};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio_util::io::ReaderStream;

#[derive(Debug, Clone)]
pub struct LocalStore {
    root: PathBuf,
}

impl LocalStore {
    pub fn open(root: impl Into<PathBuf>) -> std::io::Result<Self> {
        let root = root.into();
        std::fs::create_dir_all(&root)?;
        Ok(Self { root })
    }

    fn path_of(&self, key: &str) -> Result<PathBuf, StorageError> {
        if !valid_key(key) {
            return Err(StorageError::Backend(format!("invalid blob key {key:?}")));
        }
        Ok(self.root.join(key))
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[async_trait]
impl BlobStore for LocalStore {
    fn kind(&self) -> &'static str {
        "local"
    }

    async fn put_file(
        &self,
        key: &str,
        spool: tempfile::TempPath,
        _size: u64,
    ) -> Result<(), StorageError> {
        let dest = self.path_of(key)?;
        tokio::task::spawn_blocking(move || -> Result<(), StorageError> {
            let dir = dest
                .parent()
                .expect("key has a directory part")
                .to_path_buf();
            std::fs::create_dir_all(&dir)?;
            spool
                .persist(&dest)
                .map_err(|e| StorageError::Io(e.error))?;
            sync_dir(&dir)?;
            Ok(())
        })
        .await
        .map_err(|e| StorageError::Backend(e.to_string()))?
    }

    async fn get(&self, key: &str, offset: u64, len: u64) -> Result<BlobStream, StorageError> {
        let path = self.path_of(key)?;
        let mut file = match tokio::fs::File::open(&path).await {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StorageError::NotFound(key.to_string()))
            }
            Err(e) => return Err(e.into()),
        };
        if offset > 0 {
            file.seek(SeekFrom::Start(offset)).await?;
        }
        Ok(ReaderStream::with_capacity(file.take(len), 64 * 1024).boxed())
    }

    async fn delete(&self, key: &str) -> Result<(), StorageError> {
        let path = self.path_of(key)?;
        match tokio::fs::remove_file(&path).await {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        // The account's directory stays, even when empty: removing it here
        // could race an upload renaming a new blob into it.
        Ok(())
    }

    async fn check(&self) -> Result<(), StorageError> {
        let root = self.root.clone();
        tokio::task::spawn_blocking(move || -> Result<(), StorageError> {
            // A real write, read back and removal in the store's own directory.
            let mut probe = tempfile::Builder::new()
                .prefix(".health-")
                .tempfile_in(&root)?;
            std::io::Write::write_all(&mut probe, b"ok")?;
            let back = std::fs::read(probe.path())?;
            if back != b"ok" {
                return Err(StorageError::Backend(
                    "health probe read back wrong bytes".into(),
                ));
            }
            Ok(())
        })
        .await
        .map_err(|e| StorageError::Backend(e.to_string()))?
    }
}
