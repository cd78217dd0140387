//! The S3 door's rows (CONTRACT §18) and their aggregates of the metadata
//! store: buckets made by CreateBucket, folder markers, and
//! multipart uploads with their parts ([`BucketRepo`], [`MultipartRepo`]).
//! A multipart upload's completion is a
//! file commit (`FileRepo::commit_upload` with `CommitContext::s3_upload`),
//! so the one commit path inserts its file.

use super::error::DbError;
use super::model::FileRow;
use crate::domain::keylist::{self, KeyPage, KeyQuery, KeyRow};
use crate::domain::metadata::Metadata;
use crate::domain::object::ObjectAttrs;
use crate::domain::quota::{Quota, Refusal};
use async_trait::async_trait;

/// A multipart upload: where its file goes and what it gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3UploadRow {
    /// `mpu_…`.
    pub id: String,
    pub account_id: String,
    /// The object's key: `folder/name`.
    pub path: String,
    pub folder: String,
    pub name: String,
    pub content_type: Option<String>,
    pub metadata: Metadata,
    pub attrs: ObjectAttrs,
    pub private: bool,
    pub created_by: Option<String>,
    pub created_at: i64,
    pub last_part_at: i64,
    pub completed_at: Option<i64>,
    /// Once completed: the file it made, and the parts chosen
    /// (`domain::multipart::completion_record`).
    pub file_id: Option<String>,
    pub completion: Option<String>,
}

/// A multipart upload completing with a file's commit
/// (`CommitContext::s3_upload`): the upload, and the parts its Complete
/// chose (`domain::multipart::completion_record`). The commit marks it
/// completed and removes its parts in the file's transaction; the file
/// was admitted by the upload's creation and its parts' records (whose
/// bytes it takes over), so no quota refuses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Completion {
    pub upload_id: String,
    pub record: String,
}

/// A part received (its blob in the store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartRow {
    pub upload_id: String,
    pub number: u32,
    pub size: u64,
    /// Hex MD5 (its ETag) and SHA-256.
    pub md5: String,
    pub sha256: String,
    pub blob_key: String,
    pub created_at: i64,
}

/// What a part's record did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartOutcome {
    /// Recorded; the part it replaced (same number), whose blob is queued
    /// for deletion (due now).
    Stored { replaced: Option<PartRow> },
    /// The storage quota would be passed: nothing recorded (the blob's
    /// guard stays, for the caller to discard).
    Refused(Refusal),
    /// No such open upload (aborted, completed or reaped meanwhile).
    NoUpload,
}

/// What the removal of a bucket did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketRemoved {
    /// Whether CreateBucket's row was there.
    pub existed: bool,
    /// Its incomplete multipart uploads aborted with it.
    pub aborted: u64,
}

/// The S3 door's buckets and folder markers.
#[async_trait]
pub trait BucketRepo: std::fmt::Debug + Send + Sync {
    /// Records bucket `name` of the account; false when it was recorded already.
    async fn create_bucket(&self, account_id: &str, name: &str, now: i64) -> Result<bool, DbError>;

    /// The account's recorded buckets (name, created_at), by name.
    async fn created_buckets(&self, account_id: &str) -> Result<Vec<(String, i64)>, DbError>;

    /// The recorded bucket `name`'s creation time, if recorded.
    async fn created_bucket(&self, account_id: &str, name: &str) -> Result<Option<i64>, DbError>;

    /// The buckets (first segments) holding a folder marker, with the
    /// earliest marker's time, by name.
    async fn marker_buckets(&self, account_id: &str) -> Result<Vec<(String, i64)>, DbError>;

    /// Removes bucket `name`'s row and aborts its incomplete multipart
    /// uploads (their parts' blobs queued for deletion, due at `now`, their
    /// bytes out of storage_bytes), in one transaction. The caller has
    /// found it empty.
    async fn delete_bucket(
        &self,
        account_id: &str,
        name: &str,
        now: i64,
    ) -> Result<BucketRemoved, DbError>;

    /// Records folder marker `path` (with its trailing '/'); its creation
    /// time (the first one's, when it was there).
    async fn put_marker(&self, account_id: &str, path: &str, now: i64) -> Result<i64, DbError>;

    /// Removes folder marker `path`; false when it was not there.
    async fn delete_marker(&self, account_id: &str, path: &str) -> Result<bool, DbError>;

    /// Up to `limit` folder markers (path, created_at) starting with
    /// `prefix`, strictly after `start_after`, in byte order.
    async fn markers(
        &self,
        account_id: &str,
        prefix: Option<&str>,
        start_after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<(String, i64)>, DbError>;

    /// A page of the live files and folder markers under `q.prefix`,
    /// rolled up by its delimiter (`domain::keylist`). SQLite answers every
    /// probe of the page in one read transaction, in process; PostgreSQL
    /// with a statement each.
    async fn list_object_keys(
        &self,
        account_id: &str,
        q: KeyQuery,
        now: i64,
    ) -> Result<KeyPage<KeyRow>, DbError>;
}

/// One probe of a key listing answered from its two sources (rows of the
/// files, markers), each read up to `want` in path order.
pub(crate) fn key_rows(
    files: Vec<FileRow>,
    markers: Vec<(String, i64)>,
    want: u32,
) -> Vec<(String, KeyRow)> {
    let files = files
        .into_iter()
        .map(|f| {
            let path = crate::domain::filepath::join(f.folder.as_deref(), &f.name);
            (path, KeyRow::File(Box::new(f)))
        })
        .collect();
    let markers = markers
        .into_iter()
        .map(|(p, at)| (p, KeyRow::Marker(at)))
        .collect();
    keylist::merge(files, markers, want)
}

/// The S3 door's multipart uploads and their parts.
#[async_trait]
pub trait MultipartRepo: std::fmt::Debug + Send + Sync {
    /// Creates the upload if the account may open one more (the plan's
    /// `open_uploads` and monthly uploads, counting incomplete resumable
    /// and multipart uploads: `Quota::admit` of `Ask::resumable(0)`), under
    /// the account's lock, in one transaction.
    async fn create_s3_upload(
        &self,
        row: S3UploadRow,
        limits: Quota,
        period: &str,
    ) -> Result<Option<Refusal>, DbError>;

    /// The account's upload `id` (open or completed).
    async fn s3_upload(&self, account_id: &str, id: &str) -> Result<Option<S3UploadRow>, DbError>;

    /// Records a part (of an upload of `account_id`) whose blob `guard_upload` registered, in one
    /// transaction under the account's lock: only while its upload is
    /// open, and only if the account's storage quota takes its bytes (less
    /// those of the part it replaces). Then its blob's guard is released,
    /// its bytes join storage_bytes, the part it replaces leaves (its blob
    /// queued for deletion, due `now`) and the upload's `last_part_at` is `now`.
    async fn put_part(
        &self,
        account_id: &str,
        part: PartRow,
        limits: Quota,
        period: &str,
    ) -> Result<PartOutcome, DbError>;

    /// Up to `limit` parts of upload `upload_id` numbered above `after`, by number.
    async fn s3_parts(
        &self,
        upload_id: &str,
        after: u32,
        limit: u32,
    ) -> Result<Vec<PartRow>, DbError>;

    /// Up to `limit` open uploads of the account whose path starts with
    /// `prefix`, after (`key_marker`, `id_marker`) in (path, id) byte order:
    /// with an `id_marker`, the uploads of path `key_marker` with a greater
    /// id and those of later paths; without, those of later paths.
    async fn s3_uploads(
        &self,
        account_id: &str,
        prefix: &str,
        key_marker: Option<&str>,
        id_marker: Option<&str>,
        limit: u32,
    ) -> Result<Vec<S3UploadRow>, DbError>;

    /// Aborts the account's open upload `id`: its parts' blobs queued for
    /// deletion (due `now`), their bytes out of storage_bytes, its rows
    /// gone. False when it was not open.
    async fn abort_s3_upload(&self, account_id: &str, id: &str, now: i64) -> Result<bool, DbError>;

    /// Aborts up to `max` open uploads with no part since `idle_before`,
    /// as [`MultipartRepo::abort_s3_upload`] does, and forgets the completed ones
    /// completed before `done_before`; returns how many were aborted.
    async fn reap_s3_uploads(
        &self,
        idle_before: i64,
        done_before: i64,
        now: i64,
        max: u32,
    ) -> Result<usize, DbError>;
}
