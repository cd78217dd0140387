//! Buckets and folder markers for the S3 door (CONTRACT §18, "Buckets are
//! top-level folders", "Keys"). Bucket `B` is the account's top-level
//! folder `B`: it exists when CreateBucket made it, when a live file is
//! under `B/`, or when a folder marker is. A folder marker is a key ending
//! in `/` with no bytes, kept in a table of its own and never a file. The
//! door passes validated names; here are the rules of existence and removal.

use super::caller::Caller;
use super::s3_error::S3Error;
use super::App;
use crate::domain::keylist::{KeyPage, KeyQuery, KeyRow};

/// A bucket as ListBuckets shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    pub name: String,
    /// Unix ms: CreateBucket's time; else its earliest folder marker's;
    /// else (a folder made by uploads alone) the account's creation.
    pub created_at: i64,
}

/// A folder marker: its whole key (with the trailing `/`) and its creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub path: String,
    pub created_at: i64,
}

/// Folders read per page when listing the top-level ones.
const FOLDERS_PAGE: u32 = 1000;

impl App {
    /// Records bucket `name` (CreateBucket): true when newly made, false
    /// when the account had it already (S3 answers 200 either way for
    /// the owner).
    pub(crate) async fn create_bucket(&self, caller: &Caller, name: &str) -> Result<bool, S3Error> {
        let now = self.clock.now_ms();
        Ok(self
            .meta
            .create_bucket(&caller.account.id, name, now)
            .await?)
    }

    /// The account's buckets, by name (byte order): those CreateBucket
    /// made, the top-level folders holding a live file, and those holding
    /// a folder marker.
    pub(crate) async fn buckets(&self, caller: &Caller) -> Result<Vec<Bucket>, S3Error> {
        let account = &caller.account;
        let mut all: std::collections::BTreeMap<String, i64> = std::collections::BTreeMap::new();
        for (name, at) in self.meta.created_buckets(&account.id).await? {
            all.insert(name, at);
        }
        for (name, at) in self.meta.marker_buckets(&account.id).await? {
            let e = all.entry(name).or_insert(at);
            *e = (*e).min(at);
        }
        let mut after = None;
        loop {
            let now = self.clock.now_ms();
            let mut names = self
                .meta
                .subfolders(&account.id, None, after, FOLDERS_PAGE, now)
                .await?;
            let more = names.len() > FOLDERS_PAGE as usize;
            names.truncate(FOLDERS_PAGE as usize);
            after = names.last().cloned();
            for name in names {
                all.entry(name).or_insert(account.created_at);
            }
            if !more {
                break;
            }
        }
        Ok(all
            .into_iter()
            .map(|(name, created_at)| Bucket { name, created_at })
            .collect())
    }

    /// Whether bucket `name` exists (HeadBucket; what the other calls of
    /// a bucket check first).
    pub(crate) async fn bucket_exists(&self, caller: &Caller, name: &str) -> Result<bool, S3Error> {
        let account_id = &caller.account.id;
        if self.meta.created_bucket(account_id, name).await?.is_some() {
            return Ok(true);
        }
        self.holds_anything(caller, name).await
    }

    /// Whether a live file or a folder marker is under `name/`.
    async fn holds_anything(&self, caller: &Caller, name: &str) -> Result<bool, S3Error> {
        let (account_id, prefix) = (&caller.account.id, format!("{name}/"));
        let now = self.clock.now_ms();
        let files = self
            .meta
            .list_paths(account_id, Some(&prefix), None, 1, now)
            .await?;
        if !files.is_empty() {
            return Ok(true);
        }
        let markers = self
            .meta
            .markers(account_id, Some(&prefix), None, 1)
            .await?;
        Ok(!markers.is_empty())
    }

    /// Removes bucket `name` (DeleteBucket): [`S3Error::BucketNotEmpty`]
    /// while a live file or a folder marker is under it,
    /// [`S3Error::NoSuchBucket`] when it does not exist; else its row goes
    /// and its incomplete multipart uploads are aborted with it (their
    /// parts' blobs to the collector).
    pub(crate) async fn delete_bucket(&self, caller: &Caller, name: &str) -> Result<(), S3Error> {
        if self.holds_anything(caller, name).await? {
            return Err(S3Error::BucketNotEmpty);
        }
        let now = self.clock.now_ms();
        let removed = self
            .meta
            .delete_bucket(&caller.account.id, name, now)
            .await?;
        if !removed.existed {
            return Err(S3Error::NoSuchBucket);
        }
        Ok(())
    }

    /// Records folder marker `path` (a key ending in `/`, e.g. `B/dir/`);
    /// putting it again keeps the first one's time.
    pub(crate) async fn put_marker(&self, caller: &Caller, path: &str) -> Result<Marker, S3Error> {
        let now = self.clock.now_ms();
        let created_at = self.meta.put_marker(&caller.account.id, path, now).await?;
        Ok(Marker {
            path: path.to_string(),
            created_at,
        })
    }

    /// Removes folder marker `path`: true when it was there (idempotent).
    pub(crate) async fn delete_marker(&self, caller: &Caller, path: &str) -> Result<bool, S3Error> {
        Ok(self.meta.delete_marker(&caller.account.id, path).await?)
    }

    /// Up to `limit` folder markers starting with `prefix`, strictly after
    /// `start_after`, in UTF-8 byte order (the order of `list_paths`, so
    /// the door merges the two into one listing).
    pub(crate) async fn markers(
        &self,
        caller: &Caller,
        prefix: Option<&str>,
        start_after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<Marker>, S3Error> {
        Ok(self
            .meta
            .markers(&caller.account.id, prefix, start_after, limit)
            .await?
            .into_iter()
            .map(|(path, created_at)| Marker { path, created_at })
            .collect())
    }

    /// A page of the caller's keys (files and markers) under `q.prefix`,
    /// rolled up by its delimiter (`domain::keylist`).
    pub(crate) async fn list_object_keys(
        &self,
        caller: &Caller,
        q: KeyQuery,
    ) -> Result<KeyPage<KeyRow>, S3Error> {
        let now = self.clock.now_ms();
        Ok(self
            .meta
            .list_object_keys(&caller.account.id, q, now)
            .await?)
    }
}
