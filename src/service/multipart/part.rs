//! UploadPart and UploadPartCopy: a part's bytes streamed into a spool
//! (SHA-256 and MD5 taken as they come, `spool::Spool::part`), held
//! against the plan's file size and the account's storage as they arrive
//! (`inflight`, as a /v1 upload's body), one of the account's
//! `concurrent_uploads` while they do; then the blob stored (registered
//! with the collector first, `commit::PendingBlob`) and the part recorded
//! under the account's lock, where its bytes join the account's storage
//! exactly (`db::s3::MultipartRepo::put_part`). A part sent again replaces the
//! earlier one, whose blob goes to the collector.

use super::{part_of, Part};
use crate::clock::period_of;
use crate::config::Plan;
use crate::db::{PartOutcome, PartRow};
use crate::domain::ids;
use crate::domain::multipart::{valid_part_number, MAX_PART_SIZE};
use crate::domain::quota::Ask;
use crate::service::caller::Caller;
use crate::service::commit::PendingBlob;
use crate::service::refusals::{refused, size_limit, storage_exceeded};
use crate::service::s3_error::S3Error;
use crate::service::spool::{Body, Spool, Spooled};
use crate::service::{App, ServiceError};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::sync::Arc;

/// Where a part's bytes come from in UploadPartCopy: a live file of the
/// account, and (first, last) bytes of it, inclusive (None: all of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopySource {
    pub file_id: String,
    pub range: Option<(u64, u64)>,
}

impl App {
    /// UploadPart: part `number` (1–10,000) of open upload `upload_id`,
    /// its body streamed; the part as recorded (its MD5 is its ETag).
    pub(crate) async fn upload_part<S>(
        self: &Arc<Self>,
        caller: &Caller,
        upload_id: &str,
        number: u32,
        content_length: Option<u64>,
        body: S,
    ) -> Result<Part, S3Error>
    where
        S: Stream<Item = Result<Bytes, ServiceError>> + Unpin + Send,
    {
        if !valid_part_number(number) {
            return Err(
                ServiceError::bad_request("a part number is an integer from 1 to 10000").into(),
            );
        }
        self.open_multipart(caller, upload_id).await?;
        let plan = self.plan_of(&caller.account).clone();
        let limit = part_limit(&plan, caller);
        if let Some(len) = content_length {
            check_size(len, limit, &plan, caller)?;
        }
        let now = self.clock.now().timestamp();
        let slots = self
            .in_flight
            .slots(
                &self.meta,
                &caller.account.id,
                (plan.concurrent_uploads, plan.public_share),
                (caller.key.kind, &caller.key.id, caller.key.policy.at_once),
                now,
            )
            .await?;
        // A part sent again replaces one whose bytes are counted already.
        let replaced = self
            .meta
            .s3_parts(upload_id, number - 1, 1)
            .await?
            .into_iter()
            .find(|p| p.number == number)
            .map_or(0, |p| p.size);
        let used = self
            .used_now(caller, &plan, content_length, replaced)
            .await?;
        self.disk.check_room(content_length.unwrap_or(0))?;
        let mut held = self.in_flight.hold(&caller.account.id);
        let mut spool = Spool::part(&self.spool_dir);
        let mut body = body;
        let quota = plan.quota();
        while let Some(chunk) = body.next().await.transpose()? {
            let size = spool.size() + chunk.len() as u64;
            if size > limit {
                check_size(size, limit, &plan, caller)?;
            }
            if held.grow(chunk.len() as u64, used, &quota).is_err() {
                return Err(storage_exceeded(used, quota.storage).into());
            }
            if size >> 23 != spool.size() >> 23 {
                self.disk.check_room(0)?;
            }
            spool.push(chunk).await.map_err(ServiceError::from_io)?;
        }
        if content_length.is_some_and(|n| n != spool.size()) {
            return Err(ServiceError::bad_request(
                "the body is not as long as its Content-Length says",
            )
            .into());
        }
        let spooled = spool.finish().await.map_err(ServiceError::from_io)?;
        // The body is in: no longer one of the uploads arriving.
        drop(slots);
        let part = self
            .store_part(caller, upload_id, number, spooled, &plan)
            .await;
        drop(held);
        part
    }

    /// UploadPartCopy: part `number` of open upload `upload_id` made of the
    /// bytes of a live file of the account (all, or the inclusive range),
    /// read from the store without the client sending them.
    pub(crate) async fn upload_part_copy(
        self: &Arc<Self>,
        caller: &Caller,
        upload_id: &str,
        number: u32,
        source: CopySource,
    ) -> Result<Part, S3Error> {
        let now = self.clock.now_ms();
        let (file, data) = self
            .meta
            .file_with_data(&caller.account.id, &source.file_id, now)
            .await?
            .ok_or_else(ServiceError::not_found)?;
        let (first, len) = match source.range {
            None => (0, file.size),
            Some((first, last)) if first <= last && last < file.size => (first, last - first + 1),
            Some(_) => {
                return Err(ServiceError::RangeNotSatisfiable(
                    "the range is not within the source object".into(),
                    file.size,
                )
                .into())
            }
        };
        let body: futures_util::stream::BoxStream<'static, Result<Bytes, ServiceError>> = match data
        {
            Some(bytes) => {
                let at = usize::try_from(first).unwrap_or(usize::MAX);
                let end = usize::try_from(first + len).unwrap_or(usize::MAX);
                let slice = Bytes::from(bytes).slice(at.min(end)..end);
                futures_util::stream::iter([Ok(slice)]).boxed()
            }
            None if len == 0 => futures_util::stream::empty().boxed(),
            None => self
                .store
                .get(&file.blob_key, first, len)
                .await?
                .map(|c| c.map_err(ServiceError::from_io))
                .boxed(),
        };
        self.upload_part(caller, upload_id, number, Some(len), body)
            .await
    }

    /// The bytes the account uses now (stored, parts included, and held by
    /// resumable uploads; less `replaced`, the part this one replaces),
    /// having refused a part whose declared length cannot fit.
    async fn used_now(
        &self,
        caller: &Caller,
        plan: &Plan,
        content_length: Option<u64>,
        replaced: u64,
    ) -> Result<u64, ServiceError> {
        let account = &caller.account;
        let period = period_of(self.clock.now()).key;
        let mut held = self
            .meta
            .commitments(&account.id, &period, self.clock.now_ms())
            .await?
            .holdings(account.storage_bytes);
        held.used = held.used.saturating_sub(replaced);
        let ask = Ask::bytes(content_length.unwrap_or(0));
        match plan.quota().admit(held, ask) {
            Ok(()) => Ok(held.used),
            Err(refusal) => Err(refused(self, refusal, plan, &account.id).await),
        }
    }

    /// Stores a received part's blob and records it; a refusal or a
    /// failure leaves no blob behind (it goes to the collector).
    async fn store_part(
        self: &Arc<Self>,
        caller: &Caller,
        upload_id: &str,
        number: u32,
        spooled: Spooled,
        plan: &Plan,
    ) -> Result<Part, S3Error> {
        let account_id = &caller.account.id;
        let md5 = spooled
            .md5
            .clone()
            .ok_or_else(|| ServiceError::internal("a part's spool kept no MD5"))?;
        let path = match spooled.body {
            Body::File(path) => path,
            // An empty part: an empty file to store.
            Body::Inline(bytes) => {
                let mut f = tempfile::Builder::new()
                    .prefix("part-")
                    .tempfile_in(&self.spool_dir)
                    .map_err(ServiceError::from_io)?;
                std::io::Write::write_all(&mut f, &bytes).map_err(ServiceError::from_io)?;
                f.into_temp_path()
            }
        };
        let now = self.clock.now_ms();
        let row = PartRow {
            upload_id: upload_id.to_string(),
            number,
            size: spooled.size,
            md5,
            sha256: spooled.sha256,
            blob_key: format!("{account_id}/{}", ids::part_blob_id()),
            created_at: now,
        };
        let mut pending = PendingBlob::new(self, &row.blob_key);
        pending.guard(now).await?;
        if let Err(e) = self.store.put_file(&row.blob_key, path, row.size).await {
            pending.discard().await;
            return Err(e.into());
        }
        let period = period_of(self.clock.now()).key;
        let recorded = self
            .meta
            .put_part(account_id, row.clone(), plan.quota(), &period)
            .await;
        match recorded {
            Ok(PartOutcome::Stored { .. }) => {
                pending.keep();
                Ok(part_of(row))
            }
            Ok(PartOutcome::Refused(refusal)) => {
                pending.discard().await;
                Err(refused(self, refusal, plan, account_id).await.into())
            }
            Ok(PartOutcome::NoUpload) => {
                pending.discard().await;
                Err(S3Error::NoSuchUpload)
            }
            Err(e) => {
                pending.defer().await;
                Err(e.into())
            }
        }
    }
}

/// The largest part this caller may send: the plan's file size (an
/// object is never larger), and S3's 5 GiB.
fn part_limit(plan: &Plan, caller: &Caller) -> u64 {
    size_limit(plan.max_file_size, &caller.key.policy)
        .max
        .min(MAX_PART_SIZE)
}

/// Refuses a part of `size` past `limit`: in the plan's words when the
/// plan binds, else S3's 5 GiB.
fn check_size(size: u64, limit: u64, plan: &Plan, caller: &Caller) -> Result<(), ServiceError> {
    if size <= limit {
        return Ok(());
    }
    let by_plan = size_limit(plan.max_file_size, &caller.key.policy);
    if size > by_plan.max {
        return Err(by_plan.refusal());
    }
    Err(ServiceError::FileTooLarge(
        "a part is at most 5 GiB".to_string(),
    ))
}
