//! The upload pipeline, independent of the wire format: an [`Upload`] is
//! checked before any byte is read ([`Upload::start`]), fed the file as a
//! byte stream ([`Upload::receive`]: spooled, hashed and counted as it
//! arrives, refused the moment it passes the plan's size or the account's
//! storage room), then committed with its fields ([`Upload::finish`]: the
//! bytes fsynced, handed to the blob store, and only then the file row, in a
//! transaction that checks the storage quota and the monthly upload count
//! once more under the write lock). Any failure, or a dropped request,
//! leaves no blob and no row. A digest the sender gave (form field or
//! header, `domain::digest`) is compared with the received bytes before the
//! blob goes to the store: a mismatch stores nothing. The HTTP layer reads the multipart form into
//! these calls (`server::form`).

use super::caller::Caller;
use super::commit::{commit, commit_context, PendingBlob};
use super::inflight::{Held, Slots};
use super::refusals::{refused, size_limit, sniffed_type, storage_exceeded, SizeLimit};
use super::spool::{Body, Spool, Spooled};
use super::{checksum, App};
use crate::clock::period_of;
use crate::config::Plan;
use crate::db::{CommitContext, Commitments, FileRow};
use crate::domain::digest::Sha256Digest;
use crate::domain::files::StoredFile;
use crate::domain::ids::KeyKind;
use crate::domain::metadata::Metadata;
use crate::domain::policy::{Asked, Settled, UploadPolicy};
use crate::domain::quota::{Ask, Quota};
use crate::domain::sniff::{Head, SNIFF_LEN};
use crate::domain::{ids, validate, IDEMPOTENCY_WINDOW_MS};
use crate::service::error::ServiceError;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::sync::Arc;
use std::time::Duration;

/// Room for the multipart envelope and the small fields around the file part
/// when judging a request by its `Content-Length`.
pub(crate) const FORM_OVERHEAD: u64 = 64 * 1024;

/// Who uploads, and what the request's headers said.
#[derive(Debug, Clone)]
pub(crate) struct UploadRequest {
    /// Who sends it: the key or upload token (with what it allows,
    /// `domain::policy`) and its account.
    pub caller: Caller,
    pub content_length: Option<u64>,
    pub idempotency_key: Option<String>,
    /// The `sha-256` of the request's `Content-Digest` header.
    pub content_digest: Option<Sha256Digest>,
    /// The account's commitments, when they were read with the request's
    /// rate count (`RateRepo::count_upload`): the early checks use them.
    pub held: Option<Commitments>,
    /// MD5 while the bytes arrive, whatever their size, so that the stored
    /// file's `md5` is known at its commit (the S3 door: a PUT answers with
    /// its ETag). False (/v1): MD5 only of bytes kept in memory, the others'
    /// filled in after the fact (`service::md5_fill`; docs/decisions.md,
    /// "MD5 after the fact").
    pub md5_now: bool,
}

/// The upload's fields besides the file, already validated
/// (`domain::validate`).
#[derive(Debug, Default)]
pub(crate) struct UploadFields {
    pub folder: Option<String>,
    /// None when the request does not say.
    pub private: Option<bool>,
    pub expires: Option<Duration>,
    /// The `sha256` form field.
    pub sha256: Option<Sha256Digest>,
    /// The `metadata` form field (`domain::metadata`), empty when none.
    pub metadata: Metadata,
    /// The `replace` field (None when the request does not say).
    pub replace: Option<bool>,
    /// The `if_absent` field.
    pub if_absent: bool,
    /// What the S3 door keeps beside (`domain::object`); empty from /v1.
    pub attrs: crate::domain::object::ObjectAttrs,
}

/// The file, spooled, with the name and type its sender gave.
pub(crate) struct FilePart {
    name: String,
    part_type: Option<String>,
    /// The type its first bytes say (`domain::sniff`), when the policy
    /// checks types.
    sniffed: Option<String>,
    spooled: Spooled,
    /// Its bytes in the account's bytes in flight, until the commit.
    held: Held,
}

/// An upload whose request passed the checks that need no body (and took
/// one of the account's `concurrent_uploads` slots).
pub(crate) struct Upload {
    app: Arc<App>,
    req: UploadRequest,
    plan: Plan,
    /// The file an earlier request with the same `Idempotency-Key` stored.
    replay: Option<FileRow>,
    limits: SpoolLimits,
    /// Its place among the account's uploads arriving at once, until the
    /// body is in ([`Upload::finish`] gives it back before the store and
    /// the commit: a slow database does not count as a slow body).
    slot: Option<Slots>,
}

impl Upload {
    /// Refuses before reading the body what is certain to be refused: one
    /// upload more than the plan's `concurrent_uploads`, a bad
    /// `Idempotency-Key`, a `Content-Length` past the plan's file size, a
    /// full disk, a spent monthly count or storage quota.
    pub(crate) async fn start(
        app: &Arc<App>,
        mut req: UploadRequest,
    ) -> Result<Upload, ServiceError> {
        let plan = app.plan_of(&req.caller.account).clone();
        let now = app.clock.now().timestamp();
        let slots = app
            .in_flight
            .slots(
                &app.meta,
                &req.caller.account.id,
                (plan.concurrent_uploads, plan.public_share),
                (
                    req.caller.key.kind,
                    &req.caller.key.id,
                    req.caller.key.policy.at_once,
                ),
                now,
            )
            .await?;
        if let Some(key) = &req.idempotency_key {
            validate::idempotency_key(key).map_err(ServiceError::BadRequest)?;
            req.idempotency_key = Some(validate::idempotency_scope(&req.caller.key.id, key));
        }
        let size = size_limit(plan.max_file_size, &req.caller.key.policy);
        if let Some(len) = req.content_length {
            if len > size.max.saturating_add(FORM_OVERHEAD) {
                return Err(size.refusal());
            }
        }
        let replay = lookup_replay(app, &req).await?;
        if replay.is_none() {
            app.disk.check_room(req.content_length.unwrap_or(0))?;
        }
        // A replay is answered with the stored file: its bytes are counted
        // already, so the quota must not refuse it (the first reply may have
        // been lost).
        // What incomplete resumable uploads hold counts as used.
        let (quota, used) = match replay {
            Some(_) => (Quota::UNLIMITED, req.caller.account.storage_bytes),
            None => (plan.quota(), precheck_limits(app, &req, &plan).await?),
        };
        let limits = SpoolLimits {
            account: req.caller.account.id.clone(),
            size,
            used,
            quota,
        };
        Ok(Upload {
            app: app.clone(),
            req,
            plan,
            replay,
            limits,
            slot: Some(slots),
        })
    }

    /// Whether these fields are allowed to this caller (public keys cannot
    /// upload private files; a policy's folder, privacy and lifetime may be
    /// repeated, not changed) and agree with the headers (a `sha256` field
    /// and a `Content-Digest` must name the same digest). Called as soon as
    /// fields arrive, and again by [`Upload::finish`].
    pub(crate) fn check(&self, fields: &UploadFields) -> Result<(), ServiceError> {
        super::caller::may_ask(
            &self.req.caller.key,
            fields.private,
            fields.replace,
            fields.if_absent,
        )?;
        self.settled(fields)?;
        checksum::agree(fields.sha256, self.req.content_digest)
    }

    /// The fields as the policy settles them: folder, privacy, lifetime and
    /// metadata (the policy's keys win).
    fn settled(&self, fields: &UploadFields) -> Result<Settled, ServiceError> {
        let asked = Asked {
            folder: fields.folder.clone(),
            private: fields.private,
            expires: fields.expires,
            metadata: fields.metadata.clone(),
            replace: fields.replace,
            if_absent: fields.if_absent,
        };
        self.req
            .caller
            .key
            .policy
            .settle(asked)
            .map_err(ServiceError::BadRequest)
    }

    /// The digest the sender expects, if it gave one.
    fn expected(&self, fields: &UploadFields) -> Option<Sha256Digest> {
        fields.sha256.or(self.req.content_digest)
    }

    /// Streams the file's bytes into a [`Spool`], enforcing the limits as
    /// they arrive. `name` and `part_type` are what the sender said.
    pub(crate) async fn receive<S>(
        &self,
        name: &str,
        part_type: Option<&str>,
        mut bytes: S,
    ) -> Result<FilePart, ServiceError>
    where
        S: Stream<Item = Result<Bytes, ServiceError>> + Unpin,
    {
        let (app, limits) = (&self.app, &self.limits);
        let mut held = app.in_flight.hold(&limits.account);
        let (dir, inline_max) = (&app.spool_dir, app.config.inline_max);
        let mut spool = if self.req.md5_now {
            Spool::with_md5(dir, inline_max)
        } else {
            Spool::new(dir, inline_max)
        };
        let mut sniffer = Sniffer::new(&self.req.caller.key.policy, part_type);
        while let Some(chunk) = bytes.next().await.transpose()? {
            let size = spool.size() + chunk.len() as u64;
            if size > limits.size.max {
                return Err(limits.size.refusal());
            }
            sniffer.feed(&chunk, &self.req.caller.key.policy)?;
            // Refused in the words of the precheck: what the account had
            // stored when the upload began (this body's bytes are not used yet).
            if held
                .grow(chunk.len() as u64, limits.used, &limits.quota)
                .is_err()
            {
                return Err(storage_exceeded(limits.used, limits.quota.storage));
            }
            // Every 8 MiB, the space the server keeps free is checked again
            // (other uploads share the volume).
            if size >> 23 != spool.size() >> 23 {
                app.disk.check_room(0)?;
            }
            spool.push(chunk).await.map_err(ServiceError::from_io)?;
        }
        Ok(FilePart {
            name: name.to_string(),
            part_type: part_type.map(str::to_string),
            sniffed: sniffer.finish(&self.req.caller.key.policy)?,
            spooled: spool.finish().await.map_err(ServiceError::from_io)?,
            held,
        })
    }

    /// Commits the received file with its fields; a replayed request gets
    /// the file stored the first time.
    pub(crate) async fn finish(
        mut self,
        file: FilePart,
        fields: UploadFields,
    ) -> Result<StoredFile, ServiceError> {
        // The body has all arrived: no longer an upload receiving bytes.
        self.slot.take();
        self.check(&fields)?;
        let settled = self.settled(&fields)?;
        let app = &self.app;
        let expected = self.expected(&fields);
        if let Some(existing) = &self.replay {
            // The file stored the first time must be the one meant now.
            checksum::verify(expected, &existing.sha256, checksum::REPLAYED)?;
            return Ok(existing.clone());
        }
        // Before the blob goes to the store: a mismatch leaves nothing (the
        // spool is dropped, and removed, with `file`).
        checksum::verify(expected, &file.spooled.sha256, checksum::RECEIVED)?;
        let name = validate::file_name(&file.name).map_err(ServiceError::BadRequest)?;
        let now = app.clock.now_ms();
        let file_id = ids::file_id();
        let FilePart {
            part_type,
            sniffed,
            spooled,
            held,
            ..
        } = file;
        let row = FileRow {
            blob_key: format!("{}/{}", self.req.caller.account.id, file_id),
            id: file_id,
            account_id: self.req.caller.account.id.clone(),
            content_type: sniffed
                .unwrap_or_else(|| validate::content_type(part_type.as_deref(), &name)),
            name,
            folder: settled.folder,
            size: spooled.size,
            private: settled.private,
            sha256: spooled.sha256,
            md5: spooled.md5,
            created_at: now,
            expires_at: settled
                .expires
                .map(|d| now.saturating_add(crate::clock::millis(d))),
            inline: matches!(spooled.body, Body::Inline(_)),
            metadata: settled.metadata,
            attrs: fields.attrs,
            damaged_at: None,
            crc32: None,
        };
        let ctx = CommitContext {
            idempotency_key: self.req.idempotency_key,
            token: (self.req.caller.key.kind == KeyKind::Token)
                .then(|| self.req.caller.key.id.clone()),
            share: self
                .req
                .caller
                .key
                .kind
                .is_stranger()
                .then_some(self.plan.public_share),
            at_path: settled.at_path,
            ..commit_context(app, None)
        };
        let stored = store_and_commit(app, row, spooled.body, &self.plan, ctx, held).await;
        // A request with the same key that committed first is answered
        // with its file, which must match too.
        let record = stored?;
        checksum::verify(expected, &record.sha256, checksum::REPLAYED)?;
        Ok(record)
    }
}

/// Stores the bytes (a blob in the store, or inline with the row) and commits
/// the row. A blob is registered for collection before it is written, and the
/// commit releases it: a crash in between leaves nothing the collector misses.
/// The bytes stop counting as in flight (`held`) just before the commit:
/// once it has committed they are in `storage_bytes`, which later requests
/// start from, and counting them twice would refuse uploads that fit (the
/// commit's own quota check is exact either way).
async fn store_and_commit(
    app: &Arc<App>,
    row: FileRow,
    body: Body,
    plan: &Plan,
    ctx: CommitContext,
    held: Held,
) -> Result<StoredFile, ServiceError> {
    let mut pending = PendingBlob::new(app, &row.blob_key);
    let inline = match body {
        Body::Inline(bytes) => Some(bytes),
        Body::File(spool) => {
            pending.guard(row.created_at).await?;
            if let Err(e) = app.store.put_file(&row.blob_key, spool, row.size).await {
                pending.discard().await;
                return Err(e.into());
            }
            None
        }
    };
    drop(held);
    commit(app, row, inline, plan, ctx, pending).await
}

async fn lookup_replay(app: &App, req: &UploadRequest) -> Result<Option<FileRow>, ServiceError> {
    let Some(key) = req.idempotency_key.clone() else {
        return Ok(None);
    };
    let now = app.clock.now_ms();
    Ok(app
        .meta
        .replayed_file(
            &req.caller.account.id,
            &key,
            now - IDEMPOTENCY_WINDOW_MS,
            now,
        )
        .await?)
}

/// Refuses before reading the body what is certain to be refused (counting
/// what incomplete resumable uploads hold); gives the bytes the account
/// uses (stored, and held by those).
async fn precheck_limits(app: &App, req: &UploadRequest, plan: &Plan) -> Result<u64, ServiceError> {
    let held = if let Some(held) = req.held {
        held
    } else {
        let key = period_of(app.clock.now()).key;
        let now = app.clock.now_ms();
        if req.idempotency_key.is_none() {
            // It commits in its account's next batch.
            app.meta
                .upload_commitments(&req.caller.account.id, &key, now)
                .await?
        } else {
            app.meta
                .commitments(&req.caller.account.id, &key, now)
                .await?
        }
    };
    let least = req
        .content_length
        .map_or(0, |l| l.saturating_sub(FORM_OVERHEAD));
    let holdings = held.holdings(req.caller.account.storage_bytes);
    let ask = Ask::file(least);
    let admitted = if req.caller.key.kind.is_stranger() {
        let (period, now) = (period_of(app.clock.now()).key, app.clock.now_ms());
        let theirs = app
            .meta
            .strangers(&req.caller.account.id, &period, now)
            .await?;
        plan.quota()
            .admit_stranger(plan.public_share, holdings, theirs, ask)
    } else {
        plan.quota().admit(holdings, ask)
    };
    match admitted {
        Ok(()) => Ok(holdings.used),
        Err(refusal) => Err(refused(app, refusal, plan, &req.caller.account.id).await),
    }
}

/// What a file part may not pass while it streams in.
struct SpoolLimits {
    account: String,
    /// The largest file, and the 413 of a larger one.
    size: SizeLimit,
    /// The account's stored bytes when the upload began, and its quota.
    used: u64,
    quota: Quota,
}

/// Keeps a file's first bytes while they stream in, when its policy checks
/// types, and refuses it as soon as they tell a type the policy does not
/// allow (before the rest is read).
struct Sniffer {
    /// None when the policy allows any type.
    head: Option<Head>,
    declared: Option<String>,
    sniffed: Option<String>,
}

impl Sniffer {
    fn new(policy: &UploadPolicy, declared: Option<&str>) -> Sniffer {
        Sniffer {
            head: policy.checks_types().then(|| Head::new(SNIFF_LEN, &[])),
            declared: declared.map(str::to_string),
            sniffed: None,
        }
    }

    fn feed(&mut self, chunk: &[u8], policy: &UploadPolicy) -> Result<(), ServiceError> {
        let head = self.head.as_mut().and_then(|h| h.push(chunk));
        Self::decide(head, self.declared.as_deref(), policy, &mut self.sniffed)
    }

    /// The file has all arrived: its type, if the policy checks types.
    fn finish(mut self, policy: &UploadPolicy) -> Result<Option<String>, ServiceError> {
        let head = self.head.as_mut().and_then(Head::end);
        Self::decide(head, self.declared.as_deref(), policy, &mut self.sniffed)?;
        Ok(self.sniffed)
    }

    fn decide(
        head: Option<&[u8]>,
        declared: Option<&str>,
        policy: &UploadPolicy,
        sniffed: &mut Option<String>,
    ) -> Result<(), ServiceError> {
        if let Some(head) = head {
            *sniffed = sniffed_type(policy, head, declared)?;
        }
        Ok(())
    }
}
