//! What every S3 request of the store shares: the store's client, the
//! deadlines and buffers, request bodies read from file regions, and the one
//! way an SDK error becomes a storage error.

use crate::storage::StorageError;
use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::{ByteStream, Length};
use aws_sdk_s3::Client;
use std::future::Future;
use std::path::Path;
use std::time::Duration;

/// Read buffer when streaming a file region into a request body.
const READ_BUFFER: usize = 256 * 1024;
/// A GetObject (until the body starts) or a DeleteObject, retries included.
/// The body then streams under the SDK's stalled-stream protection.
pub(super) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// An S3-compatible bucket as a [`BlobStore`](crate::storage::BlobStore).
#[derive(Clone)]
pub struct S3Store {
    pub(super) client: Client,
    pub(super) bucket: String,
    /// Empty, or ends with `/`.
    pub(super) prefix: String,
    /// The largest blob copied in one CopyObject, and the least part of a
    /// larger one's UploadPartCopy parts.
    pub(super) copy_parts: (u64, u64),
}

impl std::fmt::Debug for S3Store {
    // The client holds credentials: only the bucket and prefix are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Store")
            .field("bucket", &self.bucket)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// A retryable body streaming `len` bytes of the file at `path` from `offset`.
pub(super) async fn file_region(
    path: &Path,
    offset: u64,
    len: u64,
) -> Result<ByteStream, StorageError> {
    ByteStream::read_from()
        .path(path)
        .offset(offset)
        .length(Length::Exact(len))
        .buffer_size(READ_BUFFER)
        .build()
        .await
        .map_err(|e| StorageError::Backend(format!("spool file: {e}")))
}

/// Runs `request`, or gives up with an error after `limit`.
pub(super) async fn within<T>(
    limit: Duration,
    request: impl Future<Output = T>,
) -> Result<T, StorageError> {
    tokio::time::timeout(limit, request)
        .await
        .map_err(|_| StorageError::Backend(format!("s3: no answer within {limit:?}")))
}

/// A byte count as S3's signed `Content-Length`.
pub(super) fn content_length(n: u64) -> Result<i64, StorageError> {
    i64::try_from(n).map_err(|_| StorageError::Backend(format!("{n} bytes is too large for S3")))
}

/// An SDK error as a one-line storage error: the store's error code,
/// message and HTTP status, or the cause chain of a transport failure.
// An error constructor: takes the error as `map_err` hands it over.
#[allow(clippy::needless_pass_by_value)]
pub(super) fn backend<E>(e: SdkError<E, HttpResponse>) -> StorageError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let detail = match &e {
        SdkError::ServiceError(se) => format!(
            "{} {}: {}",
            se.raw().status().as_u16(),
            se.err().code().unwrap_or("error"),
            se.err().message().unwrap_or("(no message)")
        ),
        other => {
            let mut chain = other.to_string();
            let mut cause = std::error::Error::source(other);
            while let Some(c) = cause {
                chain.push_str(": ");
                chain.push_str(&c.to_string());
                cause = c.source();
            }
            chain
        }
    };
    StorageError::Backend(format!("s3: {detail}"))
}

/// [`backend`], but a 404 is [`StorageError::NotFound`] of `key` (a copy
/// whose source is gone).
pub(super) fn not_found_or_backend<E>(e: SdkError<E, HttpResponse>, key: &str) -> StorageError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    if e.raw_response().is_some_and(|r| r.status().as_u16() == 404) {
        StorageError::NotFound(key.to_string())
    } else {
        backend(e)
    }
}

/// The `x-amz-copy-source` of `object` in `bucket`: `bucket/key`,
/// percent-encoded but for its slashes.
pub(super) fn copy_source(bucket: &str, object: &str) -> String {
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'/')
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(&format!("{bucket}/{object}"), KEEP).to_string()
}
