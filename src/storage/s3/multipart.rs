//! Multipart uploads: parts streamed from regions of the spool file as tasks;
//! on any failure or dropped future, the parts in flight are cancelled and
//! the upload aborted once they are gone (retried while the store is down,
//! repeated for parts a store finishes late; an upload whose creation was
//! still in flight is aborted once the store answers); and a sweep of
//! incomplete uploads that a crash or a long outage left behind.

use super::call::{backend, file_region, within, S3Store, REQUEST_TIMEOUT};
use crate::domain::backoff::Backoff;
use crate::storage::StorageError;
use aws_sdk_s3::operation::abort_multipart_upload::AbortMultipartUploadError;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use aws_sdk_s3::Client;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::task::{JoinHandle, JoinSet};

/// Smallest part of a multipart upload (S3's own minimum is 5 MiB).
pub(crate) const MIN_PART_SIZE: u64 = 8 * 1024 * 1024;
/// S3 allows at most this many parts per upload.
const MAX_PARTS: u64 = 10_000;
/// Parts in flight at once. Each streams from the spool file, so this bounds
/// sockets, not memory.
const PART_CONCURRENCY: usize = 4;
/// The abort comes after the parts in flight are cancelled; still, a store
/// may finish storing a part after its client went away and bring the upload
/// back (SeaweedFS can): abort again after each of these pauses.
const REABORT_PAUSES: [Duration; 3] = [
    Duration::from_secs(1),
    Duration::from_secs(4),
    Duration::from_secs(15),
];
/// Retries of an abort that failed (backoff 1 s doubling to 60 s: about 10 min).
const ABORT_RETRIES: u32 = 14;
/// One AbortMultipartUpload, retries included.
const ABORT_TIMEOUT: Duration = Duration::from_secs(30);

impl S3Store {
    pub(super) async fn put_multipart(
        &self,
        object: &str,
        path: &Path,
        size: u64,
    ) -> Result<(), StorageError> {
        let source = PartSource::File(path.to_path_buf());
        self.multipart(object, &source, size, part_size_for(size))
            .await
    }

    /// Copies `size` bytes of the object `source` (its `x-amz-copy-source`)
    /// to `object` in parts of `part_size` (UploadPartCopy, the store
    /// copying), as a multipart upload aborted on any failure.
    pub(super) async fn copy_multipart(
        &self,
        source: String,
        object: &str,
        size: u64,
        part_size: u64,
    ) -> Result<(), StorageError> {
        let part_size = part_size.max(part_size_for(size));
        self.multipart(object, &PartSource::Object(source), size, part_size)
            .await
    }

    async fn multipart(
        &self,
        object: &str,
        source: &PartSource,
        size: u64,
        part_size: u64,
    ) -> Result<(), StorageError> {
        let mut upload = Upload {
            client: self.client.clone(),
            bucket: self.bucket.clone(),
            key: object.to_string(),
            id: String::new(),
        };
        // The creation runs as a task of its own: if this future is dropped
        // while it is in flight, the store may still create the upload, and
        // the guard aborts it once the answer comes.
        let creating = tokio::spawn(upload.clone().create());
        // From here on, leaving this function any way but success (an error,
        // or this future being dropped) cancels the parts in flight and then
        // aborts the upload.
        let mut guard = AbortGuard {
            upload: Some(upload.clone()),
            creating: Some(creating),
            parts: JoinSet::new(),
        };
        let created = guard.creating.as_mut().expect("set above").await;
        guard.creating = None;
        upload.id = match created {
            Ok(Ok(id)) => id,
            // No upload was created: nothing to abort.
            Ok(Err(e)) => {
                guard.upload = None;
                return Err(e);
            }
            Err(e) => {
                guard.upload = None;
                return Err(StorageError::Backend(format!("create task: {e}")));
            }
        };
        guard.upload = Some(upload.clone());
        let result = upload_parts(&upload, source, size, part_size, &mut guard.parts).await;
        if result.is_ok() {
            guard.upload = None;
        }
        result
    }

    /// Aborts the incomplete multipart uploads under this store's prefix that
    /// began more than `older_than` ago: what a crash or a long outage left
    /// behind, but not those of the objects in `keep` (resumable uploads
    /// still open). Returns how many were aborted.
    pub(super) async fn sweep_incomplete_uploads(
        &self,
        older_than: Duration,
        keep: &std::collections::HashSet<String>,
    ) -> Result<usize, StorageError> {
        let cutoff = std::time::SystemTime::now()
            .checked_sub(older_than)
            .unwrap_or(std::time::UNIX_EPOCH);
        let mut aborted = 0;
        for upload in self.incomplete(&self.prefix).await? {
            if upload.started > cutoff || keep.contains(&upload.upload.key) {
                continue;
            }
            upload.upload.abort_once().await?;
            aborted += 1;
        }
        Ok(aborted)
    }

    /// Aborts the incomplete multipart uploads of `object` (a write whose
    /// request died with its node); returns how many.
    pub(super) async fn abort_uploads_of(&self, object: &str) -> Result<usize, StorageError> {
        let mut aborted = 0;
        for upload in self.incomplete(object).await? {
            // The listing is by prefix: `a/f_1` also finds `a/f_10`.
            if upload.upload.key == object {
                upload.upload.abort_once().await?;
                aborted += 1;
            }
        }
        Ok(aborted)
    }

    /// The incomplete multipart uploads of the objects whose keys start
    /// with `prefix`, every page of the listing.
    async fn incomplete(&self, prefix: &str) -> Result<Vec<Incomplete>, StorageError> {
        let mut found = Vec::new();
        let (mut key_marker, mut id_marker) = (None::<String>, None::<String>);
        loop {
            let request = self
                .client
                .list_multipart_uploads()
                .bucket(&self.bucket)
                .prefix(prefix)
                .set_key_marker(key_marker.clone())
                .set_upload_id_marker(id_marker.clone())
                .send();
            let page = within(REQUEST_TIMEOUT, request).await?.map_err(backend)?;
            for u in page.uploads() {
                if let (Some(key), Some(id)) = (u.key(), u.upload_id()) {
                    found.push(Incomplete {
                        upload: Upload {
                            client: self.client.clone(),
                            bucket: self.bucket.clone(),
                            key: key.to_string(),
                            id: id.to_string(),
                        },
                        started: u
                            .initiated()
                            .and_then(|t| std::time::SystemTime::try_from(*t).ok())
                            .unwrap_or(std::time::UNIX_EPOCH),
                    });
                }
            }
            if !page.is_truncated().unwrap_or(false) {
                return Ok(found);
            }
            key_marker = page.next_key_marker().map(str::to_string);
            id_marker = page.next_upload_id_marker().map(str::to_string);
            if key_marker.is_none() && id_marker.is_none() {
                return Ok(found);
            }
        }
    }
}

/// An incomplete multipart upload the store listed.
struct Incomplete {
    upload: Upload,
    started: std::time::SystemTime,
}

/// The part uploads of one multipart upload in flight.
type Parts = JoinSet<Result<CompletedPart, StorageError>>;

/// Where the parts' bytes come from.
#[derive(Debug, Clone)]
pub(super) enum PartSource {
    /// Regions of a spool file, sent.
    File(PathBuf),
    /// Ranges of an object of the bucket (its `x-amz-copy-source`), which
    /// the store copies itself.
    Object(String),
}

/// Uploads the parts, [`PART_CONCURRENCY`] at a time, each as a task of
/// `in_flight` (so that an abort can cancel the ones running), then
/// completes the upload.
async fn upload_parts(
    upload: &Upload,
    source: &PartSource,
    size: u64,
    part_size: u64,
    in_flight: &mut Parts,
) -> Result<(), StorageError> {
    let count = size.div_ceil(part_size);
    let mut parts: Vec<CompletedPart> = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    let mut next = 0u64;
    loop {
        while next < count && in_flight.len() < PART_CONCURRENCY {
            let offset = next * part_size;
            let len = part_size.min(size - offset);
            let part = upload
                .clone()
                .put_part(source.clone(), part_number(next), offset, len);
            in_flight.spawn(part);
            next += 1;
        }
        match in_flight.join_next().await {
            None => break,
            Some(joined) => parts.push(
                joined.map_err(|e| StorageError::Backend(format!("part upload task: {e}")))??,
            ),
        }
    }
    parts.sort_by_key(CompletedPart::part_number);
    upload
        .client
        .complete_multipart_upload()
        .bucket(&upload.bucket)
        .key(&upload.key)
        .upload_id(&upload.id)
        .multipart_upload(
            CompletedMultipartUpload::builder()
                .set_parts(Some(parts))
                .build(),
        )
        .send()
        .await
        .map_err(backend)?;
    Ok(())
}

/// S3's 1-based part number of the part at `index` (at most [`MAX_PARTS`]).
fn part_number(index: u64) -> i32 {
    i32::try_from(index + 1).expect("at most 10,000 parts")
}

/// Part size for a multipart upload of `size` bytes: at least
/// [`MIN_PART_SIZE`], in whole MiB, and large enough for at most 10,000 parts.
pub(crate) fn part_size_for(size: u64) -> u64 {
    const MIB: u64 = 1024 * 1024;
    let needed = size.div_ceil(MAX_PARTS).div_ceil(MIB) * MIB;
    needed.max(MIN_PART_SIZE)
}

/// A multipart upload in progress.
#[derive(Clone)]
pub(super) struct Upload {
    pub(super) client: Client,
    pub(super) bucket: String,
    pub(super) key: String,
    pub(super) id: String,
}

impl Upload {
    /// CreateMultipartUpload; returns the new upload's id.
    async fn create(self) -> Result<String, StorageError> {
        let created = self
            .client
            .create_multipart_upload()
            .bucket(&self.bucket)
            .key(&self.key)
            .send()
            .await
            .map_err(backend)?;
        created.upload_id().map(str::to_string).ok_or_else(|| {
            StorageError::Backend("CreateMultipartUpload returned no upload id".into())
        })
    }

    /// Uploads part `number`: `len` bytes of the source from `offset`.
    async fn put_part(
        self,
        source: PartSource,
        number: i32,
        offset: u64,
        len: u64,
    ) -> Result<CompletedPart, StorageError> {
        let path = match source {
            PartSource::File(path) => path,
            PartSource::Object(from) => return self.copy_part(from, number, offset, len).await,
        };
        let body = file_region(&path, offset, len).await?;
        let out = self
            .client
            .upload_part()
            .bucket(&self.bucket)
            .key(&self.key)
            .upload_id(&self.id)
            .part_number(number)
            .content_length(super::call::content_length(len)?)
            .body(body)
            .send()
            .await
            .map_err(backend)?;
        Ok(CompletedPart::builder()
            .part_number(number)
            .set_e_tag(out.e_tag().map(str::to_string))
            .build())
    }

    /// Copies part `number`: `len` bytes of the object `from` from `offset`.
    async fn copy_part(
        self,
        from: String,
        number: i32,
        offset: u64,
        len: u64,
    ) -> Result<CompletedPart, StorageError> {
        let last = offset + len - 1;
        let out = self
            .client
            .upload_part_copy()
            .bucket(&self.bucket)
            .key(&self.key)
            .upload_id(&self.id)
            .part_number(number)
            .copy_source(&from)
            .copy_source_range(format!("bytes={offset}-{last}"))
            .send()
            .await
            .map_err(|e| super::call::not_found_or_backend(e, &from))?;
        let e_tag = out.copy_part_result().and_then(|r| r.e_tag());
        Ok(CompletedPart::builder()
            .part_number(number)
            .set_e_tag(e_tag.map(str::to_string))
            .build())
    }

    /// Cancels the parts in flight and waits until they are gone (their
    /// requests dropped, so none is still sending when the abort lands), then
    /// aborts.
    async fn abort_after(self, mut parts: Parts) {
        parts.abort_all();
        while parts.join_next().await.is_some() {}
        self.abort().await;
    }

    /// Waits for a creation still in flight; aborts the upload if the store
    /// created one.
    async fn abort_once_created(mut self, creating: JoinHandle<Result<String, StorageError>>) {
        if let Ok(Ok(id)) = creating.await {
            self.id = id;
            self.abort().await;
        }
    }

    /// One AbortMultipartUpload; an upload that no longer exists is aborted.
    pub(super) async fn abort_once(&self) -> Result<(), StorageError> {
        let request = self
            .client
            .abort_multipart_upload()
            .bucket(&self.bucket)
            .key(&self.key)
            .upload_id(&self.id)
            .send();
        match within(ABORT_TIMEOUT, request).await? {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(AbortMultipartUploadError::is_no_such_upload) =>
            {
                Ok(())
            }
            Err(e) => Err(backend(e)),
        }
    }

    /// Aborts, retrying with backoff while the store fails (for about ten
    /// minutes; after that the sweep of incomplete uploads is left to remove
    /// it), then aborts again after each of [`REABORT_PAUSES`].
    async fn abort(self) {
        let backoff = Backoff::new(Duration::from_secs(1), Duration::from_mins(1));
        let mut failures = 0;
        while let Err(e) = self.abort_once().await {
            if failures >= ABORT_RETRIES {
                tracing::warn!(bucket = %self.bucket, key = %self.key, error = %e,
                    "multipart upload abort failed; the sweep of incomplete uploads will remove it");
                return;
            }
            tokio::time::sleep(backoff.step(failures)).await;
            failures += 1;
        }
        for pause in REABORT_PAUSES {
            tokio::time::sleep(pause).await;
            let _ = self.abort_once().await;
        }
    }
}

/// Aborts its upload when dropped armed (the put failed, or its future was
/// dropped): in the background, after cancelling the parts in flight, or
/// once the store answers a creation still in flight.
struct AbortGuard {
    upload: Option<Upload>,
    creating: Option<JoinHandle<Result<String, StorageError>>>,
    parts: Parts,
}

impl Drop for AbortGuard {
    fn drop(&mut self) {
        let parts = std::mem::take(&mut self.parts);
        let Some(upload) = self.upload.take() else {
            return;
        };
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            match self.creating.take() {
                Some(creating) => {
                    rt.spawn(upload.abort_once_created(creating));
                }
                None => {
                    rt.spawn(upload.abort_after(parts));
                }
            }
        } else {
            tracing::warn!(bucket = %upload.bucket, key = %upload.key,
                "multipart upload dropped outside a runtime; the sweep will remove it");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_sizes_stay_within_limits() {
        assert_eq!(part_size_for(9 * 1024 * 1024), MIN_PART_SIZE);
        assert_eq!(part_size_for(500_000_000), MIN_PART_SIZE);
        let huge = 200 * 1024 * 1024 * 1024u64; // 200 GiB
        let p = part_size_for(huge);
        assert!(huge.div_ceil(p) <= MAX_PARTS);
        assert_eq!(p % (1024 * 1024), 0);
    }
}
