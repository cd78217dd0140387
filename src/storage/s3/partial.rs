//! Blobs written across requests (resumable uploads) on S3, the way tusd's
//! S3 store does it: one multipart upload per blob, fed a part each time
//! [`PART_SIZE`] bytes have gathered; the bytes short of a part stay with
//! the upload's row in the metadata store (the `tail`) until the next
//! append, so no node keeps anything on its own disk and the next request
//! may land on any node. The last part, whatever its size, goes at completion.

use super::call::{backend, within, S3Store, REQUEST_TIMEOUT};
use crate::storage::{ByteStream, Partial, StorageError};
use aws_sdk_s3::primitives::ByteStream as Body;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Size of every part but the last (S3's minimum is 5 MiB).
pub(super) const PART_SIZE: usize = 8 * 1024 * 1024;
/// A part's upload may take this long (8 MiB at 70 KB/s).
const PART_TIMEOUT: Duration = Duration::from_mins(2);

/// What the metadata store keeps for the store: the multipart upload and
/// the parts it holds.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    upload_id: String,
    /// ETags of parts 1, 2, … in order.
    parts: Vec<String>,
}

impl State {
    fn parse(raw: &str) -> Result<State, StorageError> {
        serde_json::from_str(raw)
            .map_err(|e| StorageError::Backend(format!("bad partial blob state: {e}")))
    }

    fn text(&self) -> String {
        serde_json::to_string(self).expect("a state serializes")
    }
}

/// The store's error, as [`StorageError::NotFound`] when the multipart
/// upload no longer exists (completed, or aborted).
fn upload_gone<E>(
    e: aws_sdk_s3::error::SdkError<E, aws_sdk_s3::config::http::HttpResponse>,
    object: &str,
) -> StorageError
where
    E: aws_sdk_s3::error::ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let gone = e
        .as_service_error()
        .and_then(|se| se.code())
        .is_some_and(|c| c == "NoSuchUpload");
    if gone {
        StorageError::NotFound(object.to_string())
    } else {
        backend(e)
    }
}

impl S3Store {
    pub(super) async fn begin(&self, key: &str) -> Result<Partial, StorageError> {
        let object = self.object_key(key)?;
        let request = self
            .client
            .create_multipart_upload()
            .bucket(&self.bucket)
            .key(&object)
            .send();
        let created = within(REQUEST_TIMEOUT, request).await?.map_err(backend)?;
        let upload_id = created
            .upload_id()
            .ok_or_else(|| StorageError::Backend("CreateMultipartUpload gave no id".into()))?
            .to_string();
        Ok(Partial {
            offset: 0,
            state: State {
                upload_id,
                parts: Vec::new(),
            }
            .text(),
            tail: None,
        })
    }

    pub(super) async fn append(
        &self,
        key: &str,
        p: Partial,
        mut chunks: ByteStream,
    ) -> Result<Partial, StorageError> {
        let object = self.object_key(key)?;
        let mut state = State::parse(&p.state)?;
        let mut offset = p.offset;
        let mut buf = BytesMut::with_capacity(PART_SIZE);
        if let Some(tail) = &p.tail {
            buf.extend_from_slice(tail);
        }
        while let Some(mut chunk) = chunks.next().await {
            offset += chunk.len() as u64;
            while !chunk.is_empty() {
                let take = (PART_SIZE - buf.len()).min(chunk.len());
                buf.extend_from_slice(&chunk.split_to(take));
                if buf.len() == PART_SIZE {
                    let part = std::mem::replace(&mut buf, BytesMut::with_capacity(PART_SIZE));
                    let etag = self.put_part(&object, &state, part.freeze()).await?;
                    state.parts.push(etag);
                }
            }
        }
        Ok(Partial {
            offset,
            state: state.text(),
            tail: (!buf.is_empty()).then(|| buf.freeze()),
        })
    }

    /// Uploads `data` as the next part of the upload.
    async fn put_part(
        &self,
        object: &str,
        state: &State,
        data: Bytes,
    ) -> Result<String, StorageError> {
        let number = i32::try_from(state.parts.len() + 1)
            .ok()
            .filter(|n| *n <= 10_000)
            .ok_or_else(|| StorageError::Backend("more than 10,000 parts".into()))?;
        let request = self
            .client
            .upload_part()
            .bucket(&self.bucket)
            .key(object)
            .upload_id(&state.upload_id)
            .part_number(number)
            .content_length(super::call::content_length(data.len() as u64)?)
            .body(Body::from(data))
            .send();
        let out = within(PART_TIMEOUT, request)
            .await?
            .map_err(|e| upload_gone(e, object))?;
        Ok(out.e_tag().unwrap_or_default().to_string())
    }

    pub(super) async fn complete(&self, key: &str, p: Partial) -> Result<(), StorageError> {
        let object = self.object_key(key)?;
        let mut state = State::parse(&p.state)?;
        let tail = p.tail.unwrap_or_default();
        // S3 wants at least one part: an empty blob is one empty part.
        if !tail.is_empty() || state.parts.is_empty() {
            let etag = self.put_part(&object, &state, tail).await?;
            state.parts.push(etag);
        }
        let parts: Vec<CompletedPart> = state
            .parts
            .iter()
            .zip(1..)
            .map(|(etag, n)| CompletedPart::builder().part_number(n).e_tag(etag).build())
            .collect();
        let request = self
            .client
            .complete_multipart_upload()
            .bucket(&self.bucket)
            .key(&object)
            .upload_id(&state.upload_id)
            .multipart_upload(
                CompletedMultipartUpload::builder()
                    .set_parts(Some(parts))
                    .build(),
            )
            .send();
        within(PART_TIMEOUT, request)
            .await?
            .map_err(|e| upload_gone(e, &object))?;
        Ok(())
    }

    pub(super) async fn abort(&self, key: &str, state: &str) -> Result<(), StorageError> {
        // One AbortMultipartUpload, as for an interrupted put: an upload
        // that no longer exists is aborted.
        super::multipart::Upload {
            client: self.client.clone(),
            bucket: self.bucket.clone(),
            key: self.object_key(key)?,
            id: State::parse(state)?.upload_id,
        }
        .abort_once()
        .await
    }
}
