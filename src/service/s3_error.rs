//! The S3 door's own refusals (CONTRACT §18) beside the service's: the
//! buckets', the folder markers' and multipart uploads' (service::buckets,
//! service::multipart). The door maps each to its S3 code; a
//! [`S3Error::Service`] as it maps any `ServiceError`.

use super::ServiceError;

#[derive(Debug, thiserror::Error)]
pub enum S3Error {
    /// `NoSuchBucket` (404).
    #[error("the specified bucket does not exist")]
    NoSuchBucket,
    /// `BucketNotEmpty` (409): a live file or a folder marker is in it.
    #[error("the bucket you tried to delete is not empty")]
    BucketNotEmpty,
    /// `NoSuchUpload` (404): not the account's, aborted, reaped, or
    /// completed with another list of parts (or its file is gone).
    #[error("the specified multipart upload does not exist")]
    NoSuchUpload,
    /// `InvalidPart` (400): the part was not uploaded, or its ETag is not
    /// the one sent.
    #[error("part {0} was not uploaded, or its ETag does not match")]
    InvalidPart(u32),
    /// `InvalidPartOrder` (400): the list is empty or not strictly ascending.
    #[error("the list of parts is not in ascending order")]
    InvalidPartOrder,
    /// `EntityTooSmall` (400): a part but the last is under 5 MiB.
    #[error("part {0} is smaller than the minimum allowed size (5 MiB)")]
    EntityTooSmall(u32),
    /// Anything the service refuses as it does for /v1 (quota, plan's file
    /// size, grace period, bad input, unavailable store, …).
    #[error(transparent)]
    Service(#[from] ServiceError),
}

impl From<crate::db::DbError> for S3Error {
    fn from(e: crate::db::DbError) -> Self {
        S3Error::Service(e.into())
    }
}

impl From<crate::storage::StorageError> for S3Error {
    fn from(e: crate::storage::StorageError) -> Self {
        S3Error::Service(e.into())
    }
}
