//! `admin backup` and `admin restore` (CONTRACT §20), and the read side of
//! a backup for `admin verify --repair-from` ([`Source`]).
//!
//! A repository (a directory, or `s3://BUCKET/PREFIX`) holds many backups
//! and the blobs they share:
//!
//! - `blobs/ab/<sha256>`: every file's bytes, inline ones included, named
//!   by their SHA-256: a blob already there is not copied again, and no
//!   file is ever written in place (a temporary file, fsynced, renamed; or
//!   one PutObject).
//! - `backups/<id>/dump.jsonl`: the metadata, a logical dump of every
//!   filestore table in one consistent snapshot (`db::dump`): for each
//!   table a line `{"table", "columns", "types"}` (types `int`, `bool`,
//!   `text`, `bytes`), then one JSON array a row (bytes in base64). The
//!   same whichever database it came from, it loads into either.
//! - `backups/<id>/manifest.jsonl`, written last: a line
//!   `{"format": "filestore-backup", "version": 1, "id", "created_at",
//!   "database", "files", "bytes", "parts", "signing_secret",
//!   "dump_sha256", "dump_bytes"}`, then one line for every blob of the
//!   snapshot: `{"file": id | "part": "upload/number", "sha256", "size",
//!   "key", "inline"}`. A backup is complete when its manifest is there;
//!   restore takes the newest such (ids sort by time).
//! - `tmp/<id>/` and `tmp/<id>.lock` while the run `id` lives: its files
//!   in the making (`filestore-backup-<id>/` in the system's temporary
//!   directory for an `s3://` repository).
//!
//! A backup cut short (kill -9) leaves the blobs it copied (the next run
//! does not copy them again), its `tmp/<id>/`, which the next run removes
//! once its lock is free and a minute old, and no `backups/<id>/` unless it
//! was killed between its dump and its manifest (then one without a
//! manifest, which restore never takes). The newest complete backup stays
//! the one restore takes.
//!
//! While a backup runs, no node deletes a blob: it holds deletions with a
//! row of `meta` (`blob_hold:<id>`, its end time) that it renews, taken
//! before its snapshot begins; a file deleted after the snapshot began
//! keeps its blob until the backup has copied it (`service::blobs::held`).
//! A backup killed leaves its hold to expire ([`HOLD`]).

mod repo;
mod restore;
mod scratch;
mod take;

pub(crate) use repo::Repo;
pub(crate) use restore::restore;
pub(crate) use take::backup;

use crate::config::{BackendKind, Config};
use crate::db::DbError;
use crate::storage::local::LocalStore;
use crate::storage::s3::S3Store;
use crate::storage::{BlobStream, DynBlobStore, StorageError};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The folder of the backups in a repository.
pub(crate) const BACKUPS: &str = "backups";
/// A backup's manifest, the last file written.
pub(crate) const MANIFEST: &str = "manifest.jsonl";
/// A backup's metadata.
pub(crate) const DUMP: &str = "dump.jsonl";
/// The format's name and version in every manifest.
pub(crate) const FORMAT: &str = "filestore-backup";
pub(crate) const VERSION: u32 = 1;
/// How long a backup's hold on blob deletions lasts unless renewed (it is
/// renewed every quarter of it): how long one killed delays deletions.
pub(crate) const HOLD: Duration = Duration::from_mins(10);

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{0}")]
    Invalid(String),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("backup repository: {0}")]
    Repo(String),
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Files whose bytes are missing or do not match their SHA-256.
    #[error("{0}")]
    Damaged(String),
    /// A restore's target that is not empty.
    #[error("{0} is not empty: restore needs an empty data dir or database")]
    NotEmpty(String),
}

impl BackupError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> BackupError {
        BackupError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A manifest's first line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Header {
    pub format: String,
    pub version: u32,
    pub id: String,
    pub created_at: i64,
    /// "sqlite" or "postgres": where the dump came from.
    pub database: String,
    pub files: u64,
    pub bytes: u64,
    pub parts: u64,
    /// The signing secret the server generated (also in the dump's `meta`).
    pub signing_secret: Option<String>,
    pub dump_sha256: String,
    pub dump_bytes: u64,
}

/// A manifest's line for every blob of the snapshot: a file's or a part's
/// of an S3 multipart upload in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Entry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    pub sha256: String,
    pub size: u64,
    /// The blob key in the blob store (or of `inline_blobs`).
    pub key: String,
    #[serde(default)]
    pub inline: bool,
}

impl Entry {
    /// The file's id, or the part's upload and number.
    pub(crate) fn name(&self) -> &str {
        self.file.as_deref().or(self.part.as_deref()).unwrap_or("?")
    }
}

/// The blob store the config names, as `serve` uses it.
pub(crate) async fn blob_store(config: &Config) -> Result<DynBlobStore, BackupError> {
    Ok(match config.storage.backend {
        BackendKind::S3 => Arc::new(S3Store::connect(&config.storage).await?),
        BackendKind::Local => {
            let root = config.data_dir.join("blobs");
            Arc::new(LocalStore::open(&root).map_err(|e| BackupError::io(&root, e))?)
        }
    })
}

/// What [`spool`] found.
pub(crate) enum Spooled {
    /// The bytes, fsynced in a file of `dir`, match.
    Ok(tempfile::TempPath),
    /// They do not (or are not `size` long).
    Mismatch,
}

/// Writes `stream` to a new file in `dir`, checking its bytes against
/// `sha256` and `size` as they pass.
pub(crate) async fn spool(
    mut stream: BlobStream,
    dir: &Path,
    sha256: &str,
    size: u64,
) -> Result<Spooled, BackupError> {
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| BackupError::io(dir, e))?;
    let (file, path) = tmp.into_parts();
    let mut out = tokio::fs::File::from_std(file);
    let mut hash = sha2::Sha256::new();
    let mut n = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| BackupError::Repo(format!("reading a blob: {e}")))?;
        hash.update(&chunk);
        n += chunk.len() as u64;
        tokio::io::AsyncWriteExt::write_all(&mut out, &chunk)
            .await
            .map_err(|e| BackupError::io(&path, e))?;
    }
    if n != size || hex::encode(hash.finalize()) != sha256 {
        return Ok(Spooled::Mismatch);
    }
    out.sync_all()
        .await
        .map_err(|e| BackupError::io(&path, e))?;
    Ok(Spooled::Ok(path))
}

/// `data` (small) in a new fsynced file of `dir`.
pub(crate) fn spool_bytes(data: &[u8], dir: &Path) -> Result<tempfile::TempPath, BackupError> {
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| BackupError::io(dir, e))?;
    tmp.write_all(data)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| BackupError::io(tmp.path(), e))?;
    Ok(tmp.into_temp_path())
}

/// The SHA-256 of `data`, in hex.
pub(crate) fn sha256_hex(data: &[u8]) -> String {
    hex::encode(sha2::Sha256::digest(data))
}

/// A backup repository read for its blobs: what `admin verify
/// --repair-from SRC` puts back from.
///
/// The crate's reading API of a backup: [`Source::open`] a repository (as
/// `admin backup` wrote it, a directory or `s3://BUCKET/PREFIX`), then ask
/// it for blobs by SHA-256, raw ([`Source::blob`]) or checked into a local
/// file ready for `BlobStore::put_file` ([`Source::fetch`]). Blobs are
/// shared by every backup of the repository, so a blob is found whichever
/// backup copied it, even one cut short. Cheap to clone; safe to use from
/// many tasks at once.
#[derive(Debug, Clone)]
pub struct Source {
    repo: Repo,
}

impl Source {
    /// The repository at `src`: `s3://BUCKET[/PREFIX]` (standard AWS
    /// credentials from the environment; through `endpoint` when given, else
    /// AWS), else a directory. `storage` is the config's `[storage]` (its
    /// timeouts; not its bucket or credentials). Fails when `src` holds no
    /// complete backup (a typo'd SRC is named, not read as "no blob").
    pub async fn open(
        src: &str,
        endpoint: Option<&str>,
        storage: &crate::config::StorageConfig,
    ) -> Result<Source, BackupError> {
        Source::of(Repo::open(src, endpoint, storage).await?).await
    }

    /// [`Source::open`] with an `s3://` repository's access key and secret
    /// given rather than taken from the environment (see `Repo::open_keyed`).
    pub async fn open_keyed(
        src: &str,
        endpoint: Option<&str>,
        storage: &crate::config::StorageConfig,
        keys: (crate::domain::secret::Secret, crate::domain::secret::Secret),
    ) -> Result<Source, BackupError> {
        Source::of(Repo::open_keyed(src, endpoint, storage, Some(keys)).await?).await
    }

    /// A source over `repo`, which must hold a complete backup.
    async fn of(repo: Repo) -> Result<Source, BackupError> {
        if repo.backups().await?.is_empty() {
            return Err(BackupError::Invalid(format!(
                "{} holds no complete backup",
                repo.describe()
            )));
        }
        Ok(Source { repo })
    }

    /// Where the repository is, as the operator named it (for messages).
    pub fn describe(&self) -> String {
        self.repo.describe()
    }

    /// The bytes of the blob whose SHA-256 is `sha256` (64 lowercase hex
    /// digits), as the backup holds them (unchecked: a caller hashes them,
    /// or uses [`Source::fetch`]), or None when it has none (or `sha256` is
    /// not a SHA-256). An error is a repository that cannot be read.
    pub async fn blob(&self, sha256: &str) -> Result<Option<BlobStream>, BackupError> {
        if !repo::is_sha256(sha256) {
            return Ok(None);
        }
        self.repo.get(&repo::blob_path(sha256)).await
    }

    /// The blob `sha256` of `size` bytes, checked, in a new fsynced file of
    /// `dir` (ready for `BlobStore::put_file`, which consumes it; removed
    /// when dropped otherwise); None when the backup has no such blob or its
    /// bytes there do not match (not `size` long, or another SHA-256). `dir`
    /// should be on the blob store's filesystem so that the put is a rename.
    pub async fn fetch(
        &self,
        sha256: &str,
        size: u64,
        dir: &Path,
    ) -> Result<Option<tempfile::TempPath>, BackupError> {
        let Some(stream) = self.blob(sha256).await? else {
            return Ok(None);
        };
        match spool(stream, dir, sha256, size).await? {
            Spooled::Ok(path) => Ok(Some(path)),
            Spooled::Mismatch => Ok(None),
        }
    }
}
