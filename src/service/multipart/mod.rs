//! S3 multipart uploads (CONTRACT §18, "Multipart"), independent of the
//! wire: created against the plan's `open_uploads` and monthly uploads as
//! a resumable upload is (`db::s3::MultipartRepo::create_s3_upload`); each part
//! streamed into a blob of its own (`part`), its bytes in the account's
//! storage as they arrive and exactly once recorded; completed by
//! assembling the chosen parts into one blob and committing the file
//! through the one commit path (`complete`). Every state is in the
//! database and the blob store, so parts may go to any node.

mod complete;
mod part;

pub use part::CopySource;

use super::caller::Caller;
use super::refusals::refused;
use super::s3_error::S3Error;
use super::{App, ServiceError};
use crate::clock::period_of;
use crate::db::{PartRow, S3UploadRow};
use crate::domain::ids;
use crate::domain::metadata::Metadata;
use crate::domain::multipart::{COMPLETED_KEPT_MS, IDLE_MS, LAST_PART};
use crate::domain::object::ObjectAttrs;

/// What CompleteMultipartUpload gives the file, fixed at creation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectTemplate {
    /// None: the type its name says (`validate::content_type`).
    pub content_type: Option<String>,
    pub metadata: Metadata,
    /// Content headers and checksum algorithm; the ETag and part sizes
    /// are set by the completion.
    pub attrs: ObjectAttrs,
    pub private: bool,
}

/// An open multipart upload, as ListMultipartUploads shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultipartUpload {
    pub id: String,
    /// The object's key (`folder/name`, its bucket first).
    pub path: String,
    pub created_at: i64,
    pub template: ObjectTemplate,
}

/// A part received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub number: u32,
    pub size: u64,
    /// Hex MD5 (unquoted): its ETag.
    pub md5: String,
    pub created_at: i64,
}

/// A page of something, and whether more follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed<T> {
    pub items: Vec<T>,
    pub truncated: bool,
}

fn upload_of(row: S3UploadRow) -> MultipartUpload {
    MultipartUpload {
        id: row.id,
        path: row.path,
        created_at: row.created_at,
        template: ObjectTemplate {
            content_type: row.content_type,
            metadata: row.metadata,
            attrs: row.attrs,
            private: row.private,
        },
    }
}

fn part_of(row: PartRow) -> Part {
    Part {
        number: row.number,
        size: row.size,
        md5: row.md5,
        created_at: row.created_at,
    }
}

/// The most items a listing gives (S3's 1,000).
const MAX_LIST: u32 = 1000;

impl App {
    /// CreateMultipartUpload of the object `folder/name` (the folder starts
    /// with its bucket, which must exist): refused in the grace period and
    /// past the plan's `open_uploads` or monthly uploads (an open upload
    /// counts as one of each, as a resumable upload does). Its id (`mpu_…`).
    pub(crate) async fn create_multipart(
        &self,
        caller: &Caller,
        folder: &str,
        name: &str,
        template: ObjectTemplate,
    ) -> Result<String, S3Error> {
        let account = &caller.account;
        if account.grace_period {
            return Err(ServiceError::GracePeriod(
                "the account is in its grace period: uploads are paused".into(),
            )
            .into());
        }
        let bucket = folder.split('/').next().unwrap_or(folder);
        if !self.bucket_exists(caller, bucket).await? {
            return Err(S3Error::NoSuchBucket);
        }
        let plan = self.plan_of(account).clone();
        let now = self.clock.now_ms();
        let row = S3UploadRow {
            id: ids::multipart_upload_id(),
            account_id: account.id.clone(),
            path: format!("{folder}/{name}"),
            folder: folder.to_string(),
            name: name.to_string(),
            content_type: template.content_type,
            metadata: template.metadata,
            attrs: template.attrs,
            private: template.private,
            created_by: Some(caller.key.id.clone()),
            created_at: now,
            last_part_at: now,
            completed_at: None,
            file_id: None,
            completion: None,
        };
        let period = period_of(self.clock.now()).key;
        let id = row.id.clone();
        match self
            .meta
            .create_s3_upload(row, plan.quota(), &period)
            .await?
        {
            None => Ok(id),
            Some(refusal) => Err(refused(self, refusal, &plan, &account.id).await.into()),
        }
    }

    /// The caller's open upload `id`, or [`S3Error::NoSuchUpload`].
    pub(crate) async fn open_multipart(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<MultipartUpload, S3Error> {
        match self.meta.s3_upload(&caller.account.id, id).await? {
            Some(row) if row.completed_at.is_none() => Ok(upload_of(row)),
            _ => Err(S3Error::NoSuchUpload),
        }
    }

    /// Whether the caller's upload `id` (open or completed) is the one of
    /// the object `folder/name`: S3 names an upload by its key and its id,
    /// so the id under another key is [`S3Error::NoSuchUpload`] (else a
    /// Complete sent to one key would store the object at another).
    pub(crate) async fn multipart_named(
        &self,
        caller: &Caller,
        id: &str,
        folder: &str,
        name: &str,
    ) -> Result<(), S3Error> {
        match self.meta.s3_upload(&caller.account.id, id).await? {
            Some(row) if row.folder == folder && row.name == name => Ok(()),
            _ => Err(S3Error::NoSuchUpload),
        }
    }

    /// AbortMultipartUpload: its parts' blobs go to the collector, their
    /// bytes leave the account's storage at once.
    /// [`S3Error::NoSuchUpload`] when it is not open.
    pub(crate) async fn abort_multipart(&self, caller: &Caller, id: &str) -> Result<(), S3Error> {
        let now = self.clock.now_ms();
        if self
            .meta
            .abort_s3_upload(&caller.account.id, id, now)
            .await?
        {
            Ok(())
        } else {
            Err(S3Error::NoSuchUpload)
        }
    }

    /// ListParts: up to `max` (at most 1,000) parts of open upload `id`
    /// numbered above `after` (`part-number-marker`, 0 for none), by number.
    pub(crate) async fn list_parts(
        &self,
        caller: &Caller,
        id: &str,
        after: u32,
        max: u32,
    ) -> Result<(MultipartUpload, Listed<Part>), S3Error> {
        let upload = self.open_multipart(caller, id).await?;
        let max = max.min(MAX_LIST);
        let mut rows = self
            .meta
            .s3_parts(id, after.min(LAST_PART), max + 1)
            .await?;
        let truncated = rows.len() > max as usize;
        rows.truncate(max as usize);
        let items = rows.into_iter().map(part_of).collect();
        Ok((upload, Listed { items, truncated }))
    }

    /// ListMultipartUploads: up to `max` (at most 1,000) open uploads whose
    /// key starts with `prefix` (the bucket's `B/` and the request's
    /// prefix), after `key_marker` (and, with it, `upload_id_marker`), in
    /// (key, id) byte order.
    pub(crate) async fn list_multipart_uploads(
        &self,
        caller: &Caller,
        prefix: &str,
        key_marker: Option<&str>,
        upload_id_marker: Option<&str>,
        max: u32,
    ) -> Result<Listed<MultipartUpload>, S3Error> {
        let max = max.min(MAX_LIST);
        let mut rows = self
            .meta
            .s3_uploads(
                &caller.account.id,
                prefix,
                key_marker,
                upload_id_marker,
                max + 1,
            )
            .await?;
        let truncated = rows.len() > max as usize;
        rows.truncate(max as usize);
        let items = rows.into_iter().map(upload_of).collect();
        Ok(Listed { items, truncated })
    }
}

/// The collector's pass: aborts the uploads with no new part for
/// `IDLE_MS`, forgets those completed `COMPLETED_KEPT_MS` ago. Returns how
/// many were aborted.
pub(crate) async fn reap(app: &App) -> usize {
    let now = app.clock.now_ms();
    let mut aborted = 0;
    loop {
        match app
            .meta
            .reap_s3_uploads(now - IDLE_MS, now - COMPLETED_KEPT_MS, now, 100)
            .await
        {
            Ok(n) => {
                aborted += n;
                if n < 100 {
                    return aborted;
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "expiry of S3 multipart uploads failed");
                return aborted;
            }
        }
    }
}
