//! Blobs as objects in an S3-compatible bucket (AWS S3, SeaweedFS, MinIO, R2,
//! Garage), under `<prefix>/<account_id>/<file_id>`.
//!
//! Memory stays bounded both ways: uploads stream from the finished spool file
//! (one PutObject up to [`SINGLE_PUT_MAX`], else a multipart upload whose parts
//! are read from file regions), downloads stream the GetObject body chunk by
//! chunk. A multipart upload that fails or whose future is dropped is aborted,
//! so no parts are left behind; one whose process died is aborted when the
//! collector deletes its blob.

pub(crate) mod call;
mod list;
mod multipart;
mod partial;

pub use call::S3Store;
use call::{backend, content_length, file_region, within, REQUEST_TIMEOUT};

use super::{valid_key, BlobStore, BlobStream, Partial, StorageError};
use crate::config::StorageConfig;
use async_trait::async_trait;
use aws_config::meta::region::RegionProviderChain;
use aws_config::BehaviorVersion;
use aws_sdk_s3::config::retry::RetryConfig;
use aws_sdk_s3::config::timeout::TimeoutConfig;
use aws_sdk_s3::config::{
    Credentials, Region, RequestChecksumCalculation, ResponseChecksumValidation,
};
use aws_sdk_s3::operation::head_object::HeadObjectError;
use aws_sdk_s3::Client;
use futures_util::StreamExt;
use std::path::Path;
use std::time::Duration;

/// Blobs up to this size go up in one PutObject; larger ones as a multipart upload.
pub(crate) const SINGLE_PUT_MAX: u64 = 8 * 1024 * 1024;
/// Blobs up to this size are copied in one CopyObject (S3 takes up to
/// 5 GiB, but the store copies it within one request's deadline);
/// larger ones in UploadPartCopy parts of at least [`COPY_PART_MIN`].
const COPY_SINGLE_MAX: u64 = 512 * 1024 * 1024;
const COPY_PART_MIN: u64 = 256 * 1024 * 1024;
/// A store that does not accept a connection in this time is down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// No response headers this long after a request (body included) was sent: give up.
const READ_TIMEOUT: Duration = Duration::from_mins(1);
/// Bound on one attempt of any operation (an 8 MiB part at ~70 KB/s).
const ATTEMPT_TIMEOUT: Duration = Duration::from_mins(2);
/// The whole health probe, retries included.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);
impl S3Store {
    /// Builds a client from `[storage]`: `endpoint` (else AWS), `region`
    /// (else `AWS_REGION` / the AWS profile, else `us-east-1`),
    /// `force_path_style`, `prefix`, and `access_key_id` + `secret_access_key`
    /// when both are set (else the standard AWS credential chain). Makes no request.
    pub async fn connect(cfg: &StorageConfig) -> Result<S3Store, StorageError> {
        let bucket = cfg
            .bucket
            .clone()
            .filter(|b| !b.is_empty())
            .ok_or_else(|| StorageError::Backend("storage.bucket is not set".into()))?;
        let region = RegionProviderChain::first_try(cfg.region.clone().map(Region::new))
            .or_else(aws_config::environment::region::EnvironmentVariableRegionProvider::new())
            .or_else(aws_config::profile::ProfileFileRegionProvider::new())
            .or_else(Region::from_static("us-east-1"));
        let timeouts = TimeoutConfig::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .operation_attempt_timeout(ATTEMPT_TIMEOUT)
            .build();
        let mut loader = aws_config::defaults(BehaviorVersion::latest())
            .region(region)
            .timeout_config(timeouts)
            .retry_config(RetryConfig::standard().with_max_attempts(3));
        match (&cfg.access_key_id, &cfg.secret_access_key) {
            (Some(id), Some(secret)) => {
                let creds =
                    Credentials::new(id.expose(), secret.expose(), None, None, "filestore-config");
                loader = loader.credentials_provider(creds);
            }
            (None, None) => {}
            _ => {
                return Err(StorageError::Backend(
                    "set both storage.access_key_id and storage.secret_access_key, or neither"
                        .into(),
                ))
            }
        }
        let shared = loader.load().await;
        let mut builder = aws_sdk_s3::config::Builder::from(&shared)
            .force_path_style(cfg.force_path_style)
            // By default the SDK adds CRC checksums to every upload, sent as
            // aws-chunked trailers on streamed bodies, and validates response
            // checksums. Several S3-compatible stores (Garage, older MinIO and
            // SeaweedFS, some proxies) reject or mangle those requests; only
            // compute/validate checksums where an operation requires them.
            .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
            .response_checksum_validation(ResponseChecksumValidation::WhenRequired);
        if let Some(endpoint) = cfg.endpoint.as_deref().filter(|e| !e.is_empty()) {
            builder = builder.endpoint_url(endpoint);
        }
        let prefix = cfg.prefix.trim_matches('/');
        Ok(S3Store {
            client: Client::from_conf(builder.build()),
            bucket,
            prefix: if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}/")
            },
            copy_parts: (COPY_SINGLE_MAX, COPY_PART_MIN),
        })
    }

    /// The same store copying blobs larger than `single_max` in parts of
    /// at least `part_min` (S3's least part is 5 MiB): lets tests reach the
    /// multipart copy without blobs of gigabytes.
    #[must_use]
    pub fn with_copy_parts(mut self, single_max: u64, part_min: u64) -> S3Store {
        self.copy_parts = (single_max, part_min);
        self
    }

    /// The SDK client this store talks through, set up from the config
    /// exactly as the store's own (tests use it for what the `BlobStore`
    /// trait does not offer).
    pub fn sdk_client(&self) -> &Client {
        &self.client
    }

    /// The object key of a blob key: `<prefix>/<key>`, or `<key>` without a prefix.
    pub fn object_key(&self, key: &str) -> Result<String, StorageError> {
        if !valid_key(key) {
            return Err(StorageError::Backend(format!("invalid blob key {key:?}")));
        }
        Ok(format!("{}{key}", self.prefix))
    }

    async fn put_single(&self, object: &str, path: &Path, size: u64) -> Result<(), StorageError> {
        let body = file_region(path, 0, size).await?;
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(object)
            .content_length(content_length(size)?)
            .body(body)
            .send()
            .await
            .map_err(backend)?;
        Ok(())
    }
}

#[async_trait]
impl BlobStore for S3Store {
    fn kind(&self) -> &'static str {
        "s3"
    }

    async fn put_file(
        &self,
        key: &str,
        spool: tempfile::TempPath,
        size: u64,
    ) -> Result<(), StorageError> {
        let object = self.object_key(key)?;
        let actual = tokio::fs::metadata(&spool).await?.len();
        if actual != size {
            return Err(StorageError::Backend(format!(
                "spool file holds {actual} bytes, expected {size}"
            )));
        }
        let result = if size <= SINGLE_PUT_MAX {
            self.put_single(&object, &spool, size).await
        } else {
            self.put_multipart(&object, &spool, size).await
        };
        // Uploaded or not, the spool is done with: dropping it removes the file.
        drop(spool);
        result
    }

    /// CopyObject, or UploadPartCopy in parts for a blob over
    /// `copy_parts.0` (CopyObject takes at most 5 GiB): the bytes never
    /// leave the store.
    async fn copy(&self, from: &str, to: &str, size: u64) -> Result<(), StorageError> {
        let (source, object) = (self.object_key(from)?, self.object_key(to)?);
        let source = call::copy_source(&self.bucket, &source);
        let (single_max, part_min) = self.copy_parts;
        if size > single_max {
            return self.copy_multipart(source, &object, size, part_min).await;
        }
        self.client
            .copy_object()
            .bucket(&self.bucket)
            .key(&object)
            .copy_source(source)
            .send()
            .await
            .map_err(|e| call::not_found_or_backend(e, from))?;
        Ok(())
    }

    /// `len == 0` gives an empty stream without asking the store (an empty
    /// range cannot be expressed in a `Range` header).
    async fn get(&self, key: &str, offset: u64, len: u64) -> Result<BlobStream, StorageError> {
        let object = self.object_key(key)?;
        if len == 0 {
            return Ok(futures_util::stream::empty().boxed());
        }
        let last = offset
            .checked_add(len - 1)
            .ok_or_else(|| StorageError::Backend("range overflows".into()))?;
        let request = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(&object)
            .range(format!("bytes={offset}-{last}"))
            .send();
        let out =
            within(REQUEST_TIMEOUT, request)
                .await?
                .map_err(|e| match e.as_service_error() {
                    Some(se) if se.is_no_such_key() => StorageError::NotFound(key.to_string()),
                    _ if e.raw_response().is_some_and(|r| r.status().as_u16() == 404) => {
                        StorageError::NotFound(key.to_string())
                    }
                    _ => backend(e),
                })?;
        if out
            .content_length()
            .is_some_and(|n| u64::try_from(n).map_or(true, |n| n > len))
        {
            return Err(StorageError::Backend(format!(
                "store ignored the Range header: {} bytes for {len}",
                out.content_length().unwrap_or_default()
            )));
        }
        let body = out.body;
        Ok(futures_util::stream::unfold(body, |mut body| async move {
            body.next()
                .await
                .map(|chunk| (chunk.map_err(std::io::Error::other), body))
        })
        .boxed())
    }

    /// Also aborts the object's incomplete multipart uploads: a deleted blob
    /// may be the write of a request whose node died mid-upload, or a
    /// resumable upload's whose abort failed. That part is best effort: a
    /// store (or an IAM policy) without ListMultipartUploads must not stop
    /// deletions; the daily sweep and the bucket's lifecycle rules remain.
    async fn delete(&self, key: &str) -> Result<(), StorageError> {
        let object = self.object_key(key)?;
        if let Err(e) = self.abort_uploads_of(&object).await {
            tracing::warn!(key, error = %e, "could not abort the blob's incomplete multipart uploads");
        }
        // DeleteObject succeeds (204) for a missing key.
        let request = self
            .client
            .delete_object()
            .bucket(&self.bucket)
            .key(&object)
            .send();
        match within(REQUEST_TIMEOUT, request).await? {
            Ok(_) => Ok(()),
            Err(e) if e.raw_response().is_some_and(|r| r.status().as_u16() == 404) => Ok(()),
            Err(e) => Err(backend(e)),
        }
    }

    async fn sweep_incomplete(
        &self,
        older_than: Duration,
        keep: &std::collections::HashSet<String>,
    ) -> Result<usize, StorageError> {
        let keep = keep
            .iter()
            .map(|k| self.object_key(k))
            .collect::<Result<_, _>>()?;
        self.sweep_incomplete_uploads(older_than, &keep).await
    }

    /// 10,000 parts (S3's limit) of `partial::PART_SIZE`.
    fn max_partial(&self) -> u64 {
        10_000 * partial::PART_SIZE as u64
    }

    async fn begin_partial(&self, key: &str) -> Result<Partial, StorageError> {
        self.begin(key).await
    }

    async fn append_partial(
        &self,
        key: &str,
        p: Partial,
        chunks: super::ByteStream,
    ) -> Result<Partial, StorageError> {
        self.append(key, p, chunks).await
    }

    async fn partial_head(
        &self,
        key: &str,
        p: &Partial,
        len: u64,
    ) -> Result<bytes::Bytes, StorageError> {
        // Before its first part is uploaded, every byte is in the tail.
        match &p.tail {
            Some(tail) if tail.len() as u64 == p.offset && len <= p.offset => {
                Ok(tail.slice(..usize::try_from(len).unwrap_or(tail.len())))
            }
            _ => Err(StorageError::NotFound(format!(
                "{key}: the partial blob's first bytes are in uploaded parts"
            ))),
        }
    }

    async fn complete_partial(&self, key: &str, p: Partial) -> Result<(), StorageError> {
        self.complete(key, p).await
    }

    async fn abort_partial(&self, key: &str, state: &str) -> Result<(), StorageError> {
        self.abort(key, state).await
    }

    async fn keys(&self) -> Result<Vec<String>, StorageError> {
        S3Store::keys(self).await
    }

    async fn size(&self, key: &str) -> Result<Option<u64>, StorageError> {
        let object = self.object_key(key)?;
        let request = self
            .client
            .head_object()
            .bucket(&self.bucket)
            .key(&object)
            .send();
        match within(REQUEST_TIMEOUT, request).await? {
            Ok(out) => Ok(Some(
                out.content_length()
                    .and_then(|n| u64::try_from(n).ok())
                    .unwrap_or(0),
            )),
            Err(e)
                if e.as_service_error()
                    .is_some_and(HeadObjectError::is_not_found) =>
            {
                Ok(None)
            }
            Err(e) if e.raw_response().is_some_and(|r| r.status().as_u16() == 404) => Ok(None),
            Err(e) => Err(backend(e)),
        }
    }

    async fn check(&self) -> Result<(), StorageError> {
        let probe = self.client.head_bucket().bucket(&self.bucket).send();
        within(CHECK_TIMEOUT, probe).await?.map_err(backend)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn prefix_and_debug() {
        let cfg = StorageConfig {
            backend: crate::config::BackendKind::S3,
            bucket: Some("b".into()),
            endpoint: Some("http://127.0.0.1:1".into()),
            prefix: "/tenant/a/".into(),
            access_key_id: Some(crate::config::Secret::new("AKIDEXAMPLE")),
            secret_access_key: Some(crate::config::Secret::new("hunter2")),
            ..Default::default()
        };
        let store = S3Store::connect(&cfg).await.unwrap();
        assert_eq!(store.object_key("acc_1/f_2").unwrap(), "tenant/a/acc_1/f_2");
        assert!(store.object_key("../x").is_err());
        let shown = format!("{store:?}");
        assert!(
            !shown.contains("hunter2") && !shown.contains("AKIDEXAMPLE"),
            "{shown}"
        );
    }

    #[test]
    fn copy_sources_are_percent_encoded_but_for_slashes() {
        assert_eq!(
            call::copy_source("bkt", "a b/ü+x/acc_1/f_2-3.~"),
            "bkt/a%20b/%C3%BC%2Bx/acc_1/f_2-3.~"
        );
    }

    #[tokio::test]
    async fn half_credentials_are_refused() {
        let cfg = StorageConfig {
            bucket: Some("b".into()),
            access_key_id: Some(crate::config::Secret::new("AKIDEXAMPLE")),
            ..Default::default()
        };
        assert!(S3Store::connect(&cfg).await.is_err());
    }
}
