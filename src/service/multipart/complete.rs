//! CompleteMultipartUpload: the chosen parts checked (`domain::multipart`),
//! streamed one after another from the blob store into the object's blob
//! (the store's partial-blob writes: memory stays flat, nothing touches
//! this server's disk) while SHA-256 and MD5 of the whole are taken, then
//! the file committed through the one commit path (`service::commit`) with
//! `AtPath::Replace`, the upload marked completed and its parts removed in
//! the same transaction. A Complete repeated with the same parts (its
//! answer lost, or two racing) gets the file the first one made.

use super::{ObjectTemplate, S3UploadRow};
use crate::db::{CommitContext, FileRow, PartRow, S3Completion};
use crate::domain::filepath::AtPath;
use crate::domain::files::StoredFile;
use crate::domain::multipart::{self as rules, ListRefusal, StoredPart, LAST_PART};
use crate::domain::{ids, validate};
use crate::service::caller::Caller;
use crate::service::commit::{commit, commit_context, PendingBlob};
use crate::service::refusals::size_limit;
use crate::service::s3_error::S3Error;
use crate::service::spool::Hashes;
use crate::service::{App, ServiceError};
use crate::storage::pipe::{Pipe, Sink};
use crate::storage::{BlobStream, ByteStream};
use bytes::Bytes;
use futures_util::StreamExt;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

impl App {
    /// CompleteMultipartUpload of open upload `upload_id` with `parts`
    /// (number, ETag as the client sends it, quoted or not): the file made,
    /// its `attrs.etag` `"<md5 of the parts' md5s>-N"` and `attrs.parts`
    /// the parts' sizes. [`S3Error::InvalidPartOrder`],
    /// [`S3Error::InvalidPart`], [`S3Error::EntityTooSmall`] as S3 checks
    /// them; [`S3Error::NoSuchUpload`] when it is not the caller's open
    /// upload (nor one it completed with these parts within the hour).
    pub(crate) async fn complete_multipart(
        self: &Arc<Self>,
        caller: &Caller,
        upload_id: &str,
        parts: Vec<(u32, String)>,
    ) -> Result<StoredFile, S3Error> {
        let account_id = &caller.account.id;
        let upload = self
            .meta
            .s3_upload(account_id, upload_id)
            .await?
            .ok_or(S3Error::NoSuchUpload)?;
        if upload.completed_at.is_some() {
            return self.completed(caller, &upload, &parts).await;
        }
        let stored = self.meta.s3_parts(upload_id, 0, LAST_PART + 1).await?;
        let kept: Vec<StoredPart> = stored
            .iter()
            .map(|p| StoredPart {
                number: p.number,
                size: p.size,
                md5: p.md5.clone(),
            })
            .collect();
        let chosen = rules::choose(&parts, &kept).map_err(|r| match r {
            ListRefusal::Order => S3Error::InvalidPartOrder,
            ListRefusal::Part(n) => S3Error::InvalidPart(n),
            ListRefusal::TooSmall(n) => S3Error::EntityTooSmall(n),
        })?;
        let record = rules::completion_record(chosen.iter().copied());
        let rows: Vec<&PartRow> = chosen
            .iter()
            .filter_map(|c| stored.iter().find(|p| p.number == c.number))
            .collect();
        let made = self.make(caller, &upload, &rows, record).await;
        match made {
            Ok(file) => Ok(file),
            // Another Complete of the same parts may have won: its answer.
            Err(e) => match self.meta.s3_upload(account_id, upload_id).await? {
                Some(u) if u.completed_at.is_some() => self.completed(caller, &u, &parts).await,
                Some(_) => Err(e),
                None => Err(S3Error::NoSuchUpload),
            },
        }
    }

    /// The answer to a Complete of an upload completed already: its file,
    /// when these are the parts it was completed with and the file lives.
    async fn completed(
        &self,
        caller: &Caller,
        upload: &S3UploadRow,
        parts: &[(u32, String)],
    ) -> Result<StoredFile, S3Error> {
        let same = upload
            .completion
            .as_deref()
            .is_some_and(|r| rules::same_completion(parts, r));
        let Some(file_id) = upload.file_id.as_deref().filter(|_| same) else {
            return Err(S3Error::NoSuchUpload);
        };
        let now = self.clock.now_ms();
        self.meta
            .file(&caller.account.id, file_id, now)
            .await?
            .ok_or(S3Error::NoSuchUpload)
    }

    /// Assembles the chosen parts into the object's blob and commits it.
    async fn make(
        self: &Arc<Self>,
        caller: &Caller,
        upload: &S3UploadRow,
        parts: &[&PartRow],
        record: String,
    ) -> Result<StoredFile, S3Error> {
        let total: u64 = parts.iter().map(|p| p.size).sum();
        let plan = self.plan_of(&caller.account).clone();
        let limit = size_limit(plan.max_file_size, &caller.key.policy);
        if total > limit.max {
            return Err(limit.refusal().into());
        }
        if total > self.store.max_partial() {
            return Err(ServiceError::FileTooLarge(format!(
                "the blob store takes objects of at most {}",
                crate::domain::units::human_bytes(self.store.max_partial())
            ))
            .into());
        }
        let file_id = ids::file_id();
        let blob_key = format!("{}/{file_id}", caller.account.id);
        let mut pending = PendingBlob::new(self, &blob_key);
        pending.guard(self.clock.now_ms()).await?;
        let (sha256, md5) = match self.assemble(&blob_key, parts, total).await {
            Ok(hashes) => hashes,
            Err(e) => {
                pending.discard().await;
                return Err(e.into());
            }
        };
        let template = ObjectTemplate {
            content_type: upload.content_type.clone(),
            metadata: upload.metadata.clone(),
            attrs: upload.attrs.clone(),
            private: upload.private,
        };
        let mut attrs = template.attrs;
        attrs.etag = Some(rules::object_etag(parts.iter().map(|p| p.md5.as_str())));
        attrs.parts = parts.iter().map(|p| p.size).collect();
        let now = self.clock.now_ms();
        let row = FileRow {
            id: file_id,
            account_id: caller.account.id.clone(),
            content_type: template
                .content_type
                .unwrap_or_else(|| validate::content_type(None, &upload.name)),
            name: upload.name.clone(),
            folder: Some(upload.folder.clone()),
            size: total,
            private: template.private,
            sha256,
            md5: Some(md5),
            blob_key,
            created_at: now,
            expires_at: None,
            inline: false,
            metadata: template.metadata,
            attrs,
            damaged_at: None,
            crc32: None,
        };
        let ctx = CommitContext {
            at_path: AtPath::Replace,
            s3_upload: Some(S3Completion {
                upload_id: upload.id.clone(),
                record,
            }),
            ..commit_context(self, None)
        };
        Ok(commit(self, row, None, &plan, ctx, pending).await?)
    }

    /// Streams `parts` from the store into the partial blob `key`, then
    /// makes it whole; the hex SHA-256 and MD5 of the `total` bytes.
    async fn assemble(
        &self,
        key: &str,
        parts: &[&PartRow],
        total: u64,
    ) -> Result<(String, String), ServiceError> {
        let begun = self.store.begin_partial(key).await?;
        let state = begun.state.clone();
        let failed = Arc::new(Mutex::new(None));
        let (hashed, hashes) = oneshot::channel();
        let feed = Feed {
            app_store: Arc::clone(&self.store),
            parts: parts.iter().map(|p| (p.blob_key.clone(), p.size)).collect(),
            current: None,
            pipe: Some(Pipe::new(HashSink(Hashes::new()))),
            hashed: Some(hashed),
            failed: Arc::clone(&failed),
        };
        let appended = self
            .store
            .append_partial(key, begun, concatenated(feed))
            .await;
        let after = match appended {
            Ok(after) => after,
            Err(e) => {
                let _ = self.store.abort_partial(key, &state).await;
                return Err(e.into());
            }
        };
        let failure = failed.lock().expect("assembly lock").take();
        let hashes = hashes.await.ok().and_then(Result::ok);
        let (Some(hashes), None, true) = (hashes, failure.as_ref(), after.offset == total) else {
            let _ = self.store.abort_partial(key, &after.state).await;
            return Err(failure.unwrap_or_else(|| {
                ServiceError::internal(format!(
                    "assembled {} of {total} bytes of {key}",
                    after.offset
                ))
            }));
        };
        self.store.complete_partial(key, after).await?;
        let (sha256, md5) = hashes.finish();
        let md5 = md5.ok_or_else(|| ServiceError::internal("the assembly kept no MD5"))?;
        Ok((sha256, md5))
    }
}

/// The hashes of an assembled object, taken on the blocking pool.
struct HashSink(Hashes);

impl Sink for HashSink {
    fn take(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        self.0.update(chunk);
        Ok(())
    }
}

/// The parts still to read, the one being read, and the hashes.
struct Feed {
    app_store: crate::storage::DynBlobStore,
    parts: VecDeque<(String, u64)>,
    current: Option<BlobStream>,
    pipe: Option<Pipe<HashSink>>,
    hashed: Option<oneshot::Sender<std::io::Result<Hashes>>>,
    failed: Arc<Mutex<Option<ServiceError>>>,
}

impl Feed {
    /// The stream ends: the hashes of everything passed go out, and the
    /// failure, if any, is kept for the caller.
    async fn end(&mut self, failure: Option<ServiceError>) {
        if let Some(e) = failure {
            *self.failed.lock().expect("assembly lock") = Some(e);
        }
        if let (Some(pipe), Some(hashed)) = (self.pipe.take(), self.hashed.take()) {
            let _ = hashed.send(pipe.finish(|s| Ok(s.0)).await);
        }
    }

    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(current) = self.current.as_mut() {
                match current.next().await {
                    Some(Ok(chunk)) if chunk.is_empty() => {}
                    Some(Ok(chunk)) => {
                        let pushed = match self.pipe.as_mut() {
                            Some(pipe) => pipe.push(chunk.clone()).await,
                            None => Err(std::io::Error::other("the hasher has ended")),
                        };
                        if let Err(e) = pushed {
                            self.end(Some(ServiceError::from_io(e))).await;
                            return None;
                        }
                        return Some(chunk);
                    }
                    Some(Err(e)) => {
                        self.end(Some(ServiceError::from_io(e))).await;
                        return None;
                    }
                    None => self.current = None,
                }
                continue;
            }
            let Some((key, size)) = self.parts.pop_front() else {
                self.end(None).await;
                return None;
            };
            if size == 0 {
                continue;
            }
            match self.app_store.get(&key, 0, size).await {
                Ok(stream) => self.current = Some(stream),
                Err(e) => {
                    self.end(Some(e.into())).await;
                    return None;
                }
            }
        }
    }
}

/// The parts' bytes one after another, as the store's append takes them.
fn concatenated(feed: Feed) -> ByteStream {
    futures_util::stream::unfold(feed, |mut feed| async move {
        let chunk = feed.next().await?;
        Some((chunk, feed))
    })
    .boxed()
}
