//! Resumable (tus) upload rows on PostgreSQL: creation with the plan's
//! checks (storage, monthly uploads, incomplete uploads at once) under the
//! account row's lock, progress recorded only if the offset is still the one
//! the PATCH started from, the list of incomplete uploads, leases, expiry
//! ([`UploadRepo`]); and the completion of an upload, which its commit
//! makes.

use super::account_lock::lock_account;
use super::accounts::commitments;
use super::blobs::{schedule, unqueue};
use super::strangers::{strangers, BY_STRANGER};
use super::tokens;
use super::{
    execute, has_nul, query, query_one, query_opt, rows, signed, DbError, PgStore, NODE_LOCK,
};
use crate::db::model::{CreateOutcome, Progress, UploadRow, DELETION_LEASE_MS, KEEP_COMPLETED_MS};
use crate::db::store::UploadRepo;
use crate::domain::ids::upload_token_of;
use crate::domain::metadata;
use crate::domain::quota::{Ask, Quota, Share};
use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Transaction};

async fn create(
    tx: &Transaction<'_>,
    u: &UploadRow,
    (limits, share): (Quota, Option<Share>),
    period: &str,
) -> Result<CreateOutcome, DbError> {
    let stored = lock_account(tx, &u.account_id).await?;
    if let Some(key) = &u.idempotency_key {
        if let Some(earlier) = replayed(tx, &u.account_id, key).await? {
            return Ok(CreateOutcome::Replayed(Box::new(earlier)));
        }
    }
    let held = commitments(tx, &u.account_id, period, u.created_at, None)
        .await?
        .holdings(stored);
    let ask = Ask::resumable(u.length);
    let admitted = match share {
        Some(share) => {
            let theirs = strangers(tx, &u.account_id, period, u.created_at).await?;
            limits.admit_stranger(share, held, theirs, ask)
        }
        None => limits.admit(held, ask),
    };
    if let Err(refusal) = admitted {
        return Ok(CreateOutcome::Refused(refusal));
    }
    // The token's use is the first write: `in_tx!` commits an Ok outcome's
    // writes, and a token with none left must leave nothing written.
    if let Some(token) = upload_token_of(u.created_by.as_deref()) {
        if !tokens::hold(tx, token, u.created_at).await? {
            return Ok(CreateOutcome::TokenSpent);
        }
    }
    let (length, received) = (signed(u.length)?, signed(u.received)?);
    execute(
        tx,
        &format!(
            "INSERT INTO tus_uploads ({}) VALUES
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
              $18, $19, $20, $21, $22)",
            rows::UPLOAD
        ),
        &[
            &u.id,
            &u.account_id,
            &u.file_id,
            &u.blob_key,
            &length,
            &received,
            &u.name,
            &u.content_type,
            &u.folder,
            &u.private,
            &u.expires_ms,
            &u.hash_state,
            &u.store_state,
            &u.created_at,
            &u.expires_at,
            &u.completed_at,
            &u.idempotency_key,
            &u.created_by,
            &u.idle_ms,
            &metadata::to_json(&u.metadata),
            &u.md5_state,
            &u.at_path.stored(),
        ],
    )
    .await?;
    unqueue(tx, &u.blob_key).await?;
    Ok(CreateOutcome::Created)
}

async fn replayed<C: GenericClient>(
    c: &C,
    account_id: &str,
    key: &str,
) -> Result<Option<UploadRow>, DbError> {
    let sql = format!(
        "SELECT {} FROM tus_uploads WHERE account_id = $1 AND idempotency_key = $2",
        rows::UPLOAD
    );
    Ok(query_opt(c, &sql, &[&account_id, &key])
        .await?
        .map(|r| rows::upload(&r)))
}

/// Marks an open upload complete (its commit, inside the commit's
/// transaction): None when it is no longer open, else its creator
/// (`created_by`, empty when not recorded).
pub(super) async fn mark_complete(
    tx: &Transaction<'_>,
    id: &str,
    now: i64,
) -> Result<Option<String>, DbError> {
    Ok(query_opt(
        tx,
        "UPDATE tus_uploads SET completed_at = $2, expires_at = $3, tail = NULL
         WHERE id = $1 AND completed_at IS NULL AND expires_at > $2 RETURNING created_by",
        &[&id, &now, &(now + KEEP_COMPLETED_MS)],
    )
    .await?
    .map(|r| r.get::<_, Option<String>>(0).unwrap_or_default()))
}

/// Removes an upload (one statement: nodes removing it at once remove it
/// once); an incomplete one's blob is queued for deletion.
async fn remove(tx: &Transaction<'_>, id: &str, now: i64) -> Result<Option<bool>, DbError> {
    let Some(row) = query_opt(
        tx,
        "DELETE FROM tus_uploads WHERE id = $1 RETURNING blob_key, completed_at, created_by",
        &[&id],
    )
    .await?
    else {
        return Ok(None);
    };
    let (blob_key, completed, created_by): (String, Option<i64>, Option<String>) =
        (row.get(0), row.get(1), row.get(2));
    if completed.is_none() {
        // Deleted at once by the termination: queued a lease ahead.
        schedule(tx, &blob_key, now + DELETION_LEASE_MS).await?;
        if let Some(token) = upload_token_of(created_by.as_deref()) {
            tokens::give_back(tx, vec![token.to_string()]).await?;
        }
    }
    Ok(Some(completed.is_none()))
}

/// A reaped upload: blob_key, store_state, completed_at, expires_at, created_by.
type Due = (String, String, Option<i64>, i64, Option<String>);

#[async_trait]
impl UploadRepo for PgStore {
    async fn replayed_upload(
        &self,
        account_id: &str,
        key: &str,
    ) -> Result<Option<UploadRow>, DbError> {
        if has_nul(&[account_id, key]) {
            return Ok(None);
        }
        on_conn!(self, |c| replayed(c, account_id, key).await)
    }

    async fn create_upload(
        &self,
        upload: UploadRow,
        limits: Quota,
        share: Option<Share>,
        period: &str,
    ) -> Result<CreateOutcome, DbError> {
        let deadline = tokio::time::Instant::now() + self.limit;
        let _turn = self
            .turns
            .take(&upload.account_id, deadline, self.limit)
            .await?;
        in_tx!(self, deadline, |tx| create(
            &tx,
            &upload,
            (limits, share),
            period
        )
        .await)
    }

    async fn upload(&self, account_id: &str, id: &str) -> Result<Option<UploadRow>, DbError> {
        if has_nul(&[account_id, id]) {
            return Ok(None);
        }
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {} FROM tus_uploads WHERE id = $1 AND account_id = $2",
                rows::UPLOAD
            );
            Ok(query_opt(c, &sql, &[&id, &account_id])
                .await?
                .map(|r| rows::upload(&r)))
        })
    }

    /// The account's incomplete, unexpired uploads, newest first, at most `max`.
    async fn open_uploads(
        &self,
        account_id: &str,
        now: i64,
        max: u32,
    ) -> Result<Vec<UploadRow>, DbError> {
        if has_nul(&[account_id]) {
            return Ok(Vec::new());
        }
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {} FROM tus_uploads
                 WHERE account_id = $1 AND completed_at IS NULL AND expires_at > $2
                 ORDER BY created_at DESC, id DESC LIMIT $3",
                rows::UPLOAD
            );
            Ok(query(c, &sql, &[&account_id, &now, &i64::from(max)])
                .await?
                .iter()
                .map(rows::upload)
                .collect())
        })
    }

    async fn next_upload_expiry(
        &self,
        account_id: &str,
        now: i64,
        strangers: bool,
    ) -> Result<i64, DbError> {
        if has_nul(&[account_id]) {
            return Ok(now);
        }
        on_conn!(self, |c| {
            Ok(query_one(
                c,
                &format!(
                    "SELECT COALESCE(MIN(u.expires_at), $2) FROM tus_uploads u
                     WHERE u.account_id = $1 AND u.completed_at IS NULL AND u.expires_at > $2
                       AND (NOT $3 OR {BY_STRANGER})"
                ),
                &[&account_id, &now, &strangers],
            )
            .await?
            .get(0))
        })
    }

    async fn upload_tail(&self, id: &str) -> Result<Option<Vec<u8>>, DbError> {
        if has_nul(&[id]) {
            return Ok(None);
        }
        on_conn!(self, |c| {
            Ok(
                query_opt(c, "SELECT tail FROM tus_uploads WHERE id = $1", &[&id])
                    .await?
                    .and_then(|r| r.get::<_, Option<Vec<u8>>>(0)),
            )
        })
    }

    /// Records `p` in one conditional UPDATE: of two nodes moving the same
    /// upload from the same offset, one wins and the other changes nothing.
    async fn advance_upload(&self, id: &str, p: Progress) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
        }
        on_conn!(self, |c| {
            Ok(execute(
                c,
                "UPDATE tus_uploads SET received = $3, hash_state = $4, store_state = $5, tail = $6,
                     expires_at = $7, md5_state = $9
                 WHERE id = $1 AND received = $2 AND completed_at IS NULL AND expires_at > $8",
                &[
                    &id,
                    &signed(p.from)?,
                    &signed(p.received)?,
                    &p.hash_state,
                    &p.store_state,
                    &p.tail,
                    &p.expires_at,
                    &p.now,
                    &p.md5_state,
                ],
            )
            .await?
                == 1)
        })
    }

    async fn remove_upload(&self, id: &str, now: i64) -> Result<Option<bool>, DbError> {
        if has_nul(&[id]) {
            return Ok(None);
        }
        in_tx!(self, |tx| remove(&tx, id, now).await)
    }

    /// Removes up to `max` uploads whose time is up, skipping rows another node
    /// is removing; the blob keys and store states of the incomplete ones.
    async fn reap_expired_uploads(
        &self,
        now: i64,
        max: u32,
    ) -> Result<Vec<(String, String)>, DbError> {
        in_tx!(self, |tx| {
            let due = query(
                &tx,
                "DELETE FROM tus_uploads WHERE id IN (
                     SELECT id FROM tus_uploads
                     WHERE expires_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
                     ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
                 RETURNING blob_key, store_state, completed_at, expires_at, created_by",
                &[&now, &i64::from(max)],
            )
            .await?;
            let mut due: Vec<Due> = due
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
                .collect();
            due.sort_by_key(|d| d.3);
            let mut aborted = Vec::new();
            let mut given_back = Vec::new();
            for (blob_key, store_state, completed, _, created_by) in due {
                if completed.is_none() {
                    schedule(&tx, &blob_key, now).await?;
                    given_back.extend(upload_token_of(created_by.as_deref()).map(str::to_string));
                    aborted.push((blob_key, store_state));
                }
            }
            tokens::give_back(&tx, given_back).await?;
            Ok(aborted)
        })
    }

    async fn live_upload_keys(&self) -> Result<Vec<String>, DbError> {
        on_conn!(self, |c| {
            Ok(query(
                c,
                "SELECT blob_key FROM tus_uploads WHERE completed_at IS NULL",
                &[],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect())
        })
    }

    /// Gives the upload to `token` of this node until `until` if it is free
    /// or already `token`'s (a renewal, which also keeps an incomplete,
    /// unexpired upload alive for its `idle_ms` from `now`): one conditional
    /// UPDATE, so of two nodes asking at once one gets it; see
    /// `UploadRepo::lease_upload`. Free means no lease, one that lapsed, or
    /// one whose node holds no session advisory lock any more (the node died,
    /// or its session to the database is gone: a request it may still run
    /// there records nothing, since its conditional record finds the upload
    /// moved, and its renewal finds the lease taken). A lease recorded
    /// without its node only lapses.
    async fn lease_upload(
        &self,
        id: &str,
        token: &str,
        now: i64,
        until: i64,
    ) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
        }
        on_conn!(self, |c| {
            Ok(execute(
                c,
                "UPDATE tus_uploads SET lease_token = $2, lease_until = $4, lease_node = $5,
                     expires_at = CASE
                         WHEN lease_token = $2 AND completed_at IS NULL AND expires_at > $3
                         THEN GREATEST(expires_at, $3 + idle_ms) ELSE expires_at END
                 WHERE id = $1 AND (lease_until IS NULL OR lease_until <= $3 OR lease_token = $2
                     OR lease_node::BIGINT NOT IN (
                         SELECT objid::BIGINT FROM pg_locks
                         WHERE locktype = 'advisory' AND classid::BIGINT = $6 AND objsubid = 2
                           AND granted
                           AND database = (SELECT oid FROM pg_database
                                           WHERE datname = current_database())))",
                &[&id, &token, &now, &until, &self.node, &i64::from(NODE_LOCK)],
            )
            .await?
                == 1)
        })
    }

    /// Gives the upload to `token` of this node until `until`, whoever holds
    /// it; see `UploadRepo::seize_upload`.
    async fn seize_upload(&self, id: &str, token: &str, until: i64) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
        }
        on_conn!(self, |c| {
            Ok(execute(
                c,
                "UPDATE tus_uploads SET lease_token = $2, lease_until = $3, lease_node = $4
                 WHERE id = $1",
                &[&id, &token, &until, &self.node],
            )
            .await?
                == 1)
        })
    }

    /// Ends `token`'s lease of the upload.
    async fn release_upload(&self, id: &str, token: &str) -> Result<(), DbError> {
        if has_nul(&[id]) {
            return Ok(());
        }
        on_conn!(self, |c| {
            execute(
                c,
                "UPDATE tus_uploads SET lease_token = NULL, lease_until = NULL, lease_node = NULL
                 WHERE id = $1 AND lease_token = $2",
                &[&id, &token],
            )
            .await?;
            Ok(())
        })
    }
}
