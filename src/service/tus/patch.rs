//! A PATCH: its bytes streamed into the store's partial blob while hashed
//! and checked, then the new offset recorded (or the upload completed).

use super::complete::{complete, discard, over_the_plan, recover};
use super::feed::{fed, hasher, length_exceeded, Checker, Feed};
use super::lease::{self, Lease};
use super::read::{find, with_file};
use super::Caller;
use crate::db::{Progress, UploadRow};
use crate::domain::files::StoredFile;
use crate::domain::policy::UploadPolicy;
use crate::domain::quota::Share;
use crate::domain::resumable::ResumableHashes;
use crate::domain::sniff::{Head, SNIFF_LEN};
use crate::domain::tus::{self as rules, Algorithm};
use crate::service::error::ServiceError;
use crate::service::refusals::sniffed_type;
use crate::service::App;
use crate::storage::{Partial, StorageError};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::sync::{Arc, Mutex};

/// The space the server keeps free (`storage.min_free_space`) is checked
/// when the bytes go to its own disk: on the local store, not on S3 (whose
/// parts pass through memory, their remainder through the database).
pub(super) fn room_on_disk(app: &App, more: u64) -> Result<(), ServiceError> {
    match app.store.kind() {
        "local" => app.disk.check_room(more),
        _ => app.disk.check_room(0),
    }
}
/// What a PATCH's headers say.
#[derive(Debug, Clone)]
pub(crate) struct Patch {
    pub offset: u64,
    pub content_length: Option<u64>,
    pub checksum: Option<(Algorithm, Vec<u8>)>,
}

/// Where an upload stands after a PATCH.
#[derive(Debug)]
pub(crate) struct Patched {
    pub offset: u64,
    pub expires_at: Option<i64>,
    /// The file, when this PATCH completed the upload (or it was complete).
    pub file: Option<StoredFile>,
}

/// Appends a PATCH's body to the upload; see the module's doc. Runs as a
/// task of its own: when the client goes away mid-body, the request's future
/// is dropped, but what arrived is still recorded. The body is one of the
/// account's concurrent uploads (`concurrent_uploads`) until the task ends.
pub(crate) async fn patch<S>(
    app: &Arc<App>,
    who: &Caller,
    id: &str,
    p: Patch,
    body: S,
) -> Result<Patched, ServiceError>
where
    S: Stream<Item = Result<Bytes, ServiceError>> + Send + 'static,
{
    let (account_id, policy) = (who.account.id.as_str(), who.key.policy.clone());
    let (max, largest) = match app.meta.account(account_id).await? {
        Some(account) => {
            let plan = app.plan_of(&account);
            (
                (plan.concurrent_uploads, plan.public_share),
                plan.max_file_size,
            )
        }
        // Gone since its key was checked: the upload's lookup answers that.
        None => ((u64::MAX, Share::ALL), u64::MAX),
    };
    // An upload token's uses are held by its open uploads already: its
    // PATCHes take no slot of its own, only one of the strangers' share
    // (as a public key's do).
    let slots = app
        .in_flight
        .slots(
            &app.meta,
            account_id,
            max,
            (who.key.kind, &who.key.id, None),
            app.clock.now().timestamp(),
        )
        .await?;
    let (app, account_id, id) = (app.clone(), account_id.to_string(), id.to_string());
    tokio::spawn(async move {
        let _slots = slots;
        append(&app, &account_id, &id, &policy, p, body, largest).await
    })
    .await
    .map_err(|e| ServiceError::internal(format!("PATCH task: {e}")))?
}

async fn append<S>(
    app: &Arc<App>,
    account_id: &str,
    id: &str,
    policy: &UploadPolicy,
    p: Patch,
    body: S,
    largest: u64,
) -> Result<Patched, ServiceError>
where
    S: Stream<Item = Result<Bytes, ServiceError>> + Send + 'static,
{
    // One PATCH of an upload at a time on this node: a second one is told
    // to come back rather than queued (holding one of the account's
    // concurrent uploads) behind a body that may trickle for hours.
    let Some(_turn) = app.tus_locks.try_lock(id) else {
        return Err(lease::busy());
    };
    let row = find(app, account_id, id).await?;
    let lease = Lease::take(app, id).await?;
    if row.completed_at.is_none() && row.length > largest {
        let ended = over_the_plan(app, &row, largest).await;
        lease.end().await;
        return Err(ended);
    }
    let body = lease.guard(body);
    let appended = append_leased(app, account_id, id, policy, p, body, &lease).await;
    lease.end().await;
    appended
}

/// `append` with the upload's turn and lease held.
async fn append_leased<S>(
    app: &Arc<App>,
    account_id: &str,
    id: &str,
    policy: &UploadPolicy,
    p: Patch,
    body: S,
    lease: &Lease,
) -> Result<Patched, ServiceError>
where
    S: Stream<Item = Result<Bytes, ServiceError>> + Send + 'static,
{
    let row = find(app, account_id, id).await?;
    let at = match row.completed_at {
        Some(_) => row.length,
        None => row.received,
    };
    if p.offset != at {
        return Err(ServiceError::OffsetMismatch(format!(
            "Upload-Offset is {}, the upload is at {at}",
            p.offset
        )));
    }
    let room = row.length - p.offset;
    if p.content_length.is_some_and(|n| n > room) {
        return Err(length_exceeded(room));
    }
    if row.completed_at.is_some() {
        // Nothing is left to send: a retried last PATCH gets the file.
        let (_, file) = with_file(app, row.clone()).await?;
        return Ok(Patched {
            offset: row.length,
            expires_at: None,
            file,
        });
    }
    room_on_disk(app, p.content_length.unwrap_or(0))?;
    write(app, &row, policy, p, room, body, lease).await
}

/// Streams a PATCH's body into the store, then records, completes or
/// refuses it (nothing is recorded once another request took the upload's
/// `lease`).
async fn write<S>(
    app: &Arc<App>,
    row: &UploadRow,
    policy: &UploadPolicy,
    p: Patch,
    room: u64,
    body: S,
    lease: &Lease,
) -> Result<Patched, ServiceError>
where
    S: Stream<Item = Result<Bytes, ServiceError>> + Send + 'static,
{
    let id = row.id.as_str();
    let hash = ResumableHashes::restore(&row.hash_state, row.md5_state.as_deref())
        .ok_or_else(|| ServiceError::internal(format!("upload {id}: bad hash state")))?;
    let feed = Arc::new(Mutex::new(Feed { room, error: None }));
    let check = p.checksum.as_ref().map(|(a, _)| Checker::new(*a));
    let (to_hasher, hasher) = hasher(hash, check);
    let tail = app.meta.upload_tail(id).await?;
    let before = Partial {
        offset: row.received,
        state: row.store_state.clone(),
        tail: tail.map(Bytes::from),
    };
    let body = sniff_first_bytes(body, policy, row, sniffed_so_far(app, row, &before).await);
    let appended = app
        .store
        .append_partial(&row.blob_key, before, fed(body, feed.clone(), to_hasher))
        .await;
    let after = match appended {
        Ok(after) => after,
        Err(StorageError::NotFound(_)) => {
            let file = recover(app, policy, row).await?;
            return Ok(Patched {
                offset: row.length,
                expires_at: None,
                file: Some(file),
            });
        }
        Err(e) => return Err(e.into()),
    };
    if lease.is_lost() {
        return Err(lease::taken());
    }
    let (hash, check) = hasher
        .await
        .map_err(|e| ServiceError::internal(format!("hasher: {e}")))?;
    let error = feed.lock().expect("feed lock").error.take();
    if let Some(e) = error {
        // A chunk that broke its limit, one with a checksum that cannot be
        // checked, or one whose lease another request took, is dropped; one
        // cut short is kept as far as it came.
        if matches!(e, ServiceError::UnsupportedMediaType(_)) {
            // Its policy refuses what the file is: the upload ends.
            discard(app, row).await?;
            return Err(e);
        }
        let dropped = matches!(
            e,
            ServiceError::LengthExceeded(_) | ServiceError::Locked { .. }
        );
        if p.checksum.is_some() || dropped {
            return Err(e);
        }
        // Every byte came before the break: the upload is complete (a
        // client that finds the offset at the length takes it as done).
        if after.offset == row.length {
            complete(app, policy, row, after, &hash).await?;
        } else {
            record(app, row, &after, &hash).await?;
        }
        return Err(e);
    }
    if let (Some((_, expected)), Some(check)) = (&p.checksum, check) {
        if &check.finish() != expected {
            return Err(ServiceError::ChunkChecksumMismatch(
                "Upload-Checksum does not match the PATCH's body; it was discarded".into(),
            ));
        }
    }
    if after.offset == row.length {
        let file = complete(app, policy, row, after, &hash).await?;
        return Ok(Patched {
            offset: row.length,
            expires_at: None,
            file: Some(file),
        });
    }
    let expires_at = record(app, row, &after, &hash).await?;
    Ok(Patched {
        offset: after.offset,
        expires_at: Some(expires_at),
        file: None,
    })
}

/// Records a PATCH's progress; returns the upload's new expiry.
async fn record(
    app: &App,
    row: &UploadRow,
    after: &Partial,
    hash: &ResumableHashes,
) -> Result<i64, ServiceError> {
    let now = app.clock.now_ms();
    let brought = after.offset.saturating_sub(row.received);
    let expires_at = rules::expiry_after_patch(now, row.expires_at, row.idle_ms, brought);
    let (hash_state, md5_state) = hash.save();
    let progress = Progress {
        now,
        from: row.received,
        received: after.offset,
        hash_state,
        md5_state,
        store_state: after.state.clone(),
        tail: after.tail.as_ref().map(|t| t.to_vec()),
        expires_at,
    };
    if !app.meta.advance_upload(&row.id, progress).await? {
        return Err(ServiceError::OffsetMismatch(
            "another request moved the upload first".into(),
        ));
    }
    Ok(expires_at)
}

/// The body of a PATCH that brings some of the upload's first bytes (8
/// KiB, or the whole file), when the policy checks types: `so_far` (what
/// earlier PATCHes brought of them) and this body's, once they are all in,
/// tell the type, and one the policy does not allow ends the body with a
/// 415 before the rest is stored. (`complete` checks again from the
/// store, for the case where `so_far` could not be read.)
fn sniff_first_bytes<S>(
    body: S,
    policy: &UploadPolicy,
    row: &UploadRow,
    so_far: Option<Bytes>,
) -> futures_util::stream::BoxStream<'static, Result<Bytes, ServiceError>>
where
    S: Stream<Item = Result<Bytes, ServiceError>> + Send + 'static,
{
    let (Some(so_far), true) = (so_far, policy.checks_types()) else {
        return body.boxed();
    };
    let want = usize::try_from(row.length).unwrap_or(usize::MAX);
    let (policy, declared) = (policy.clone(), row.content_type.clone());
    let mut head = Head::new(want, &so_far);
    body.map(move |chunk| {
        let chunk = chunk?;
        if let Some(h) = head.push(&chunk) {
            sniffed_type(&policy, h, declared.as_deref())?;
        }
        Ok(chunk)
    })
    .boxed()
}

/// The upload's first bytes that earlier PATCHes brought, when this PATCH
/// brings the rest of the first 8 KiB (None when it brings none of them,
/// or they cannot be read back: the completion judges then).
async fn sniffed_so_far(app: &App, row: &UploadRow, before: &Partial) -> Option<Bytes> {
    if row.received >= SNIFF_LEN as u64 || row.received >= row.length {
        return None;
    }
    if row.received == 0 {
        return Some(Bytes::new());
    }
    match app
        .store
        .partial_head(&row.blob_key, before, row.received)
        .await
    {
        Ok(head) => Some(head),
        Err(e) => {
            tracing::warn!(upload = %row.id, error = %e, "first bytes not read back; typed at completion");
            None
        }
    }
}
