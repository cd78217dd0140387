//! Where backups are kept: a directory, or a bucket and prefix of an
//! S3-compatible store (`s3://BUCKET/PREFIX`, standard AWS credentials, the
//! store's client as the blob store builds it). Every file goes in whole:
//! written to a temporary file, fsynced and renamed (a directory), or one
//! PutObject (a bucket).

use super::scratch::Scratch;
use super::BackupError;
use crate::config::{BackendKind, StorageConfig};
use crate::domain::secret::Secret;
use crate::storage::s3::S3Store;
use crate::storage::BlobStream;
use aws_sdk_s3::primitives::ByteStream;
use futures_util::StreamExt;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The directories of a directory repository whose new entries are not
/// fsynced yet ([`Repo::put_deferred`]): synced at once, before the
/// manifest, by [`Repo::sync_deferred`].
#[derive(Debug, Default)]
pub(crate) struct Unsynced(Mutex<HashSet<PathBuf>>);

/// A backup repository (a DEST or SRC).
#[derive(Debug, Clone)]
pub(crate) enum Repo {
    Dir(PathBuf),
    S3 {
        client: aws_sdk_s3::Client,
        bucket: String,
        /// Empty, or ends with `/`.
        prefix: String,
    },
}

/// The path of a blob in a repository: `blobs/ab/<sha256>`.
pub(crate) fn blob_path(sha256: &str) -> String {
    format!("blobs/{}/{sha256}", &sha256[..2])
}

/// Whether `s` is a SHA-256 as the files record it (64 lowercase hex digits).
pub(crate) fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl Repo {
    /// The repository at `location`: `s3://BUCKET[/PREFIX]` (through
    /// `endpoint` when given, else AWS), else a directory. `storage` is the
    /// config's blob store settings (its timeouts; not its credentials).
    pub(crate) async fn open(
        location: &str,
        endpoint: Option<&str>,
        storage: &StorageConfig,
    ) -> Result<Repo, BackupError> {
        Repo::open_keyed(location, endpoint, storage, None).await
    }

    /// [`Repo::open`] with the access key and secret of an `s3://`
    /// repository given (None: the standard AWS credentials): for programs
    /// that drive the crate in one process (the tests), where the
    /// environment is not theirs to set.
    pub(crate) async fn open_keyed(
        location: &str,
        endpoint: Option<&str>,
        storage: &StorageConfig,
        keys: Option<(Secret, Secret)>,
    ) -> Result<Repo, BackupError> {
        let Some(rest) = location.strip_prefix("s3://") else {
            return Ok(Repo::Dir(PathBuf::from(location)));
        };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(BackupError::Invalid(format!(
                "{location}: no bucket (s3://BUCKET/PREFIX)"
            )));
        }
        let prefix = prefix.trim_matches('/');
        let cfg = StorageConfig {
            backend: BackendKind::S3,
            bucket: Some(bucket.to_string()),
            endpoint: endpoint.map(str::to_string),
            region: None,
            prefix: String::new(),
            force_path_style: endpoint.is_some(),
            access_key_id: keys.as_ref().map(|k| k.0.clone()),
            secret_access_key: keys.map(|k| k.1),
            secret_access_key_file: None,
            ..storage.clone()
        };
        let store = S3Store::connect(&cfg).await?;
        Ok(Repo::S3 {
            client: store.sdk_client().clone(),
            bucket: bucket.to_string(),
            prefix: if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}/")
            },
        })
    }

    /// Where the run `id` makes its files before they go in: inside the
    /// directory, `tmp/<id>/` (so that they are renamed into place), else
    /// the system's temporary directory, `filestore-backup-<id>/`.
    pub(crate) fn scratch(&self, id: &str) -> Result<Scratch, BackupError> {
        match self {
            Repo::Dir(root) => {
                let tmp = root.join("tmp");
                crate::private_dir::create(&tmp).map_err(|e| BackupError::io(&tmp, e))?;
                Scratch::create(&tmp, "", id)
            }
            Repo::S3 { .. } => Scratch::create(&std::env::temp_dir(), "filestore-backup-", id),
        }
    }

    /// The size of the file at `rel`, or None when there is none.
    pub(crate) async fn size(&self, rel: &str) -> Result<Option<u64>, BackupError> {
        match self {
            Repo::Dir(root) => match tokio::fs::metadata(root.join(rel)).await {
                Ok(m) => Ok(Some(m.len())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(BackupError::io(&root.join(rel), e)),
            },
            Repo::S3 {
                client,
                bucket,
                prefix,
            } => {
                let r = client
                    .head_object()
                    .bucket(bucket)
                    .key(format!("{prefix}{rel}"))
                    .send()
                    .await;
                match r {
                    Ok(h) => Ok(Some(
                        h.content_length()
                            .and_then(|n| u64::try_from(n).ok())
                            .unwrap_or(0),
                    )),
                    Err(e) if e.raw_response().is_some_and(|r| r.status().as_u16() == 404) => {
                        Ok(None)
                    }
                    Err(e) => Err(BackupError::Repo(format!("s3: {rel}: {}", s3_error(&e)))),
                }
            }
        }
    }

    /// Puts the finished (fsynced) file at `local` under `rel`; the local
    /// file is consumed.
    pub(crate) async fn put(
        &self,
        rel: &str,
        local: tempfile::TempPath,
    ) -> Result<(), BackupError> {
        match self {
            Repo::Dir(root) => {
                let dest = root.join(rel);
                let dir = dest
                    .parent()
                    .expect("a path inside the repository")
                    .to_path_buf();
                crate::private_dir::create(&dir).map_err(|e| BackupError::io(&dir, e))?;
                local
                    .persist(&dest)
                    .map_err(|e| BackupError::io(&dest, e.error))?;
                sync_dir(&dir)
            }
            Repo::S3 {
                client,
                bucket,
                prefix,
            } => {
                let body = ByteStream::from_path(&local)
                    .await
                    .map_err(|e| BackupError::Repo(format!("{rel}: {e}")))?;
                client
                    .put_object()
                    .bucket(bucket)
                    .key(format!("{prefix}{rel}"))
                    .body(body)
                    .send()
                    .await
                    .map_err(|e| BackupError::Repo(format!("s3: {rel}: {}", s3_error(&e))))?;
                Ok(())
            }
        }
    }

    /// [`Repo::put`] of a blob, its directory's fsync left to
    /// [`Repo::sync_deferred`]: the file's bytes are fsynced before it takes
    /// its name, so a crash may lose the name (the next backup copies the
    /// blob again), never leave other bytes under it.
    pub(crate) async fn put_deferred(
        &self,
        rel: &str,
        local: tempfile::TempPath,
        unsynced: &Unsynced,
    ) -> Result<(), BackupError> {
        let Repo::Dir(root) = self else {
            return self.put(rel, local).await;
        };
        let dest = root.join(rel);
        let dir = dest
            .parent()
            .expect("a path inside the repository")
            .to_path_buf();
        if !unsynced.0.lock().expect("not poisoned").contains(&dir) {
            crate::private_dir::create(&dir).map_err(|e| BackupError::io(&dir, e))?;
        }
        local
            .persist(&dest)
            .map_err(|e| BackupError::io(&dest, e.error))?;
        unsynced.0.lock().expect("not poisoned").insert(dir);
        Ok(())
    }

    /// Fsyncs the directories [`Repo::put_deferred`] put blobs in (and
    /// their parents, which it may have made).
    pub(crate) async fn sync_deferred(&self, unsynced: &Unsynced) -> Result<(), BackupError> {
        let Repo::Dir(root) = self else {
            return Ok(());
        };
        let mut dirs: Vec<PathBuf> = std::mem::take(&mut *unsynced.0.lock().expect("not poisoned"))
            .into_iter()
            .collect();
        let parents: HashSet<PathBuf> = dirs
            .iter()
            .flat_map(|d| d.ancestors().skip(1).take_while(|a| a.starts_with(root)))
            .map(Path::to_path_buf)
            .collect();
        dirs.extend(parents);
        tokio::task::spawn_blocking(move || dirs.iter().try_for_each(|d| sync_dir(d)))
            .await
            .map_err(|e| BackupError::Invalid(format!("syncing directories: {e}")))?
    }

    /// The bytes of the file at `rel`, or None when there is none.
    pub(crate) async fn get(&self, rel: &str) -> Result<Option<BlobStream>, BackupError> {
        match self {
            Repo::Dir(root) => {
                let path = root.join(rel);
                match tokio::fs::File::open(&path).await {
                    Ok(f) => Ok(Some(
                        tokio_util::io::ReaderStream::with_capacity(f, 256 * 1024).boxed(),
                    )),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(BackupError::io(&path, e)),
                }
            }
            Repo::S3 {
                client,
                bucket,
                prefix,
            } => {
                let r = client
                    .get_object()
                    .bucket(bucket)
                    .key(format!("{prefix}{rel}"))
                    .send()
                    .await;
                match r {
                    Ok(o) => Ok(Some(
                        futures_util::stream::unfold(o.body, |mut body| async move {
                            body.next()
                                .await
                                .map(|chunk| (chunk.map_err(std::io::Error::other), body))
                        })
                        .boxed(),
                    )),
                    Err(e) if e.raw_response().is_some_and(|r| r.status().as_u16() == 404) => {
                        Ok(None)
                    }
                    Err(e) => Err(BackupError::Repo(format!("s3: {rel}: {}", s3_error(&e)))),
                }
            }
        }
    }

    /// The backups whose manifest is in place, oldest first (their ids
    /// sort by time).
    pub(crate) async fn backups(&self) -> Result<Vec<String>, BackupError> {
        let mut ids = Vec::new();
        match self {
            Repo::Dir(root) => {
                let dir = root.join(super::BACKUPS);
                let entries = match std::fs::read_dir(&dir) {
                    Ok(e) => e,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ids),
                    Err(e) => return Err(BackupError::io(&dir, e)),
                };
                for e in entries {
                    let e = e.map_err(|e| BackupError::io(&dir, e))?;
                    let id = e.file_name().to_string_lossy().into_owned();
                    if e.path().join(super::MANIFEST).is_file() {
                        ids.push(id);
                    }
                }
            }
            Repo::S3 {
                client,
                bucket,
                prefix,
            } => {
                let head = format!("{prefix}{}/", super::BACKUPS);
                let mut pages = client
                    .list_objects_v2()
                    .bucket(bucket)
                    .prefix(&head)
                    .into_paginator()
                    .send();
                while let Some(page) = pages.next().await {
                    let page =
                        page.map_err(|e| BackupError::Repo(format!("s3: list: {}", s3_error(&e))))?;
                    for o in page.contents() {
                        let rest = o
                            .key()
                            .unwrap_or_default()
                            .strip_prefix(&head)
                            .unwrap_or_default();
                        if let Some((id, file)) = rest.split_once('/') {
                            if file == super::MANIFEST {
                                ids.push(id.to_string());
                            }
                        }
                    }
                }
            }
        }
        ids.sort();
        Ok(ids)
    }

    /// Where this repository is, as the operator named it.
    pub(crate) fn describe(&self) -> String {
        match self {
            Repo::Dir(root) => root.display().to_string(),
            Repo::S3 { bucket, prefix, .. } => format!("s3://{bucket}/{prefix}"),
        }
    }
}

fn s3_error<E: std::error::Error + 'static>(e: &E) -> String {
    let mut chain = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        chain.push_str(": ");
        chain.push_str(&c.to_string());
        cause = c.source();
    }
    chain
}

fn sync_dir(dir: &Path) -> Result<(), BackupError> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| BackupError::io(dir, e))
}
