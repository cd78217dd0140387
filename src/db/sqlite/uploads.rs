//! Resumable (tus) uploads on SQLite: creation with the plan's checks
//! (storage, monthly uploads, incomplete uploads at once), progress recorded
//! only if the offset is still the one the PATCH started from, the list of
//! incomplete uploads, expiry, and the leases of the requests writing them.
//! (The reservations they hold and their completion, which other aggregates
//! need, are in `shared`.)

use super::{blobs, owned, shared, signed, tokens, write_tx};
use super::{DbError, OptionalExtension, SqliteStore};
use crate::db::model::{CreateOutcome, Progress, UploadRow, DELETION_LEASE_MS};
use crate::db::store::UploadRepo;
use crate::domain::filepath::AtPath;
use crate::domain::ids::upload_token_of;
use crate::domain::metadata;
use crate::domain::quota::{Ask, Quota, Share};
use async_trait::async_trait;
use rusqlite::{params, Connection, Row};

const COLUMNS: &str = "id, account_id, file_id, blob_key, length, received, name, content_type, \
     folder, private, expires_ms, hash_state, store_state, created_at, expires_at, completed_at, \
     idempotency_key, created_by, idle_ms, metadata, md5_state, at_path";

fn from_row(r: &Row<'_>) -> rusqlite::Result<UploadRow> {
    Ok(UploadRow {
        id: r.get(0)?,
        account_id: r.get(1)?,
        file_id: r.get(2)?,
        blob_key: r.get(3)?,
        length: r.get::<_, u64>(4)?,
        received: r.get::<_, u64>(5)?,
        name: r.get(6)?,
        content_type: r.get(7)?,
        folder: r.get(8)?,
        private: r.get(9)?,
        expires_ms: r.get(10)?,
        hash_state: r.get(11)?,
        store_state: r.get(12)?,
        created_at: r.get(13)?,
        expires_at: r.get(14)?,
        completed_at: r.get(15)?,
        idempotency_key: r.get(16)?,
        created_by: r.get(17)?,
        idle_ms: r.get(18)?,
        metadata: metadata::from_stored(&r.get::<_, String>(19)?),
        md5_state: r.get(20)?,
        at_path: AtPath::from_stored(r.get::<_, Option<String>>(21)?.as_deref()),
    })
}

/// Creates the upload if the account has room for its declared length, one
/// more upload this month (counting what other incomplete uploads hold) and
/// one more incomplete upload, under the write lock.
fn create(
    conn: &mut Connection,
    u: &UploadRow,
    (limits, share): (Quota, Option<Share>),
    period: &str,
) -> Result<CreateOutcome, DbError> {
    let tx = write_tx(conn)?;
    if let Some(key) = &u.idempotency_key {
        if let Some(earlier) = replayed(&tx, &u.account_id, key)? {
            return Ok(CreateOutcome::Replayed(Box::new(earlier)));
        }
    }
    let held = shared::commitments(&tx, &u.account_id, period, u.created_at, None)?
        .ok_or_else(|| DbError::Invalid(format!("account {} vanished", u.account_id)))?
        .holdings(0);
    let ask = Ask::resumable(u.length);
    let admitted = match share {
        Some(share) => {
            let theirs = shared::strangers(&tx, &u.account_id, period, u.created_at)?;
            limits.admit_stranger(share, held, theirs, ask)
        }
        None => limits.admit(held, ask),
    };
    if let Err(refusal) = admitted {
        return Ok(CreateOutcome::Refused(refusal));
    }
    // The token's use, after every refusal and before any write (see
    // `files::commit_upload`).
    if let Some(token) = upload_token_of(u.created_by.as_deref()) {
        if !tokens::hold(&tx, token, u.created_at)? {
            return Ok(CreateOutcome::TokenSpent);
        }
    }
    tx.prepare_cached(&format!(
        "INSERT INTO tus_uploads ({COLUMNS}) VALUES
         (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)"
    ))?
    .execute(params![
        u.id,
        u.account_id,
        u.file_id,
        u.blob_key,
        signed(u.length)?,
        signed(u.received)?,
        u.name,
        u.content_type,
        u.folder,
        u.private,
        u.expires_ms,
        u.hash_state,
        u.store_state,
        u.created_at,
        u.expires_at,
        u.completed_at,
        u.idempotency_key,
        u.created_by,
        u.idle_ms,
        metadata::to_json(&u.metadata),
        u.md5_state,
        u.at_path.stored(),
    ])?;
    tx.commit()?;
    Ok(CreateOutcome::Created)
}

/// The upload an earlier creation with this `Idempotency-Key` made (it
/// lives as long as the upload's row: 24 h after its last PATCH, or after
/// its completion).
fn replayed(conn: &Connection, account_id: &str, key: &str) -> Result<Option<UploadRow>, DbError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tus_uploads WHERE account_id = ?1 AND idempotency_key = ?2"
        ))?
        .query_row(params![account_id, key], from_row)
        .optional()?)
}

/// Removes an upload: an incomplete one's bytes are queued for deletion (the
/// blob store's delete removes what it holds under the blob key). True when
/// the row was there.
fn remove(conn: &mut Connection, id: &str, now: i64) -> Result<Option<bool>, DbError> {
    let tx = write_tx(conn)?;
    let row = tx
        .prepare_cached("SELECT blob_key, completed_at, created_by FROM tus_uploads WHERE id = ?1")?
        .query_row([id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<i64>>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })
        .optional()?;
    let Some((blob_key, completed, created_by)) = row else {
        return Ok(None);
    };
    tx.prepare_cached("DELETE FROM tus_uploads WHERE id = ?1")?
        .execute([id])?;
    if completed.is_none() {
        // Deleted at once by the termination: queued a lease ahead.
        blobs::schedule(&tx, &blob_key, now + DELETION_LEASE_MS)?;
        if let Some(token) = upload_token_of(created_by.as_deref()) {
            tokens::give_back(&tx, token)?;
        }
    }
    tx.commit()?;
    Ok(Some(completed.is_none()))
}

/// A due upload: id, completed_at, blob_key, store_state, created_by.
type Due = (String, Option<i64>, String, String, Option<String>);

/// Removes up to `max` uploads whose time is up (incomplete ones once they
/// went without a byte for their `idle_ms`, never while a request holds
/// their lease; complete ones a day after completion); returns their
/// ids and store states (of the incomplete ones, for an early abort).
fn reap_expired(
    conn: &mut Connection,
    now: i64,
    max: u32,
) -> Result<Vec<(String, String)>, DbError> {
    let tx = write_tx(conn)?;
    let due: Vec<Due> = {
        let mut stmt = tx.prepare_cached(
            "SELECT id, completed_at, blob_key, store_state, created_by FROM tus_uploads
             WHERE expires_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1)
             ORDER BY expires_at LIMIT ?2",
        )?;
        let rows = stmt
            .query_map(params![now, max], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        rows
    };
    let mut aborted = Vec::new();
    for (id, completed, blob_key, store_state, created_by) in due {
        tx.prepare_cached("DELETE FROM tus_uploads WHERE id = ?1")?
            .execute([&id])?;
        if completed.is_none() {
            blobs::schedule(&tx, &blob_key, now)?;
            if let Some(token) = upload_token_of(created_by.as_deref()) {
                tokens::give_back(&tx, token)?;
            }
            aborted.push((blob_key, store_state));
        }
    }
    tx.commit()?;
    Ok(aborted)
}

#[async_trait]
impl UploadRepo for SqliteStore {
    async fn replayed_upload(
        &self,
        account_id: &str,
        key: &str,
    ) -> Result<Option<UploadRow>, DbError> {
        let (acc, key) = (owned(account_id), owned(key));
        self.db.lookup(move |c| replayed(c, &acc, &key)).await
    }

    /// Creates the upload (see `create`); its blob's upload guard goes, as
    /// the upload's row guards it from now on.
    async fn create_upload(
        &self,
        upload: UploadRow,
        limits: Quota,
        share: Option<Share>,
        period: &str,
    ) -> Result<CreateOutcome, DbError> {
        let period = owned(period);
        self.db
            .write(move |c| {
                let outcome = create(c, &upload, (limits, share), &period)?;
                if outcome == CreateOutcome::Created {
                    blobs::done(c, &upload.blob_key)?;
                }
                Ok(outcome)
            })
            .await
    }

    /// The upload `id` of `account_id` (expired or not; the caller decides).
    async fn upload(&self, account_id: &str, id: &str) -> Result<Option<UploadRow>, DbError> {
        let (acc, id) = (owned(account_id), owned(id));
        self.db
            .lookup(move |c| {
                Ok(c.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM tus_uploads WHERE id = ?1 AND account_id = ?2"
                ))?
                .query_row(params![id, acc], from_row)
                .optional()?)
            })
            .await
    }

    /// The account's incomplete, unexpired uploads, newest first, at most `max`.
    async fn open_uploads(
        &self,
        account_id: &str,
        now: i64,
        max: u32,
    ) -> Result<Vec<UploadRow>, DbError> {
        let acc = owned(account_id);
        self.db
            .lookup(move |c| {
                let mut stmt = c.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM tus_uploads
                     WHERE account_id = ?1 AND completed_at IS NULL AND expires_at > ?2
                     ORDER BY created_at DESC, id DESC LIMIT ?3"
                ))?;
                let rows = stmt
                    .query_map(params![acc, now, max], from_row)?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            })
            .await
    }

    async fn next_upload_expiry(
        &self,
        account_id: &str,
        now: i64,
        strangers: bool,
    ) -> Result<i64, DbError> {
        let acc = owned(account_id);
        self.db
            .lookup(move |c| {
                Ok(c.prepare_cached(&format!(
                    "SELECT COALESCE(MIN(u.expires_at), ?2) FROM tus_uploads u
                     WHERE u.account_id = ?1 AND u.completed_at IS NULL AND u.expires_at > ?2
                       AND (NOT ?3 OR {})",
                    shared::BY_STRANGER
                ))?
                .query_row(params![acc, now, strangers], |r| r.get(0))?)
            })
            .await
    }

    /// The bytes not yet in the blob store (S3: less than a part).
    async fn upload_tail(&self, id: &str) -> Result<Option<Vec<u8>>, DbError> {
        let id = owned(id);
        self.db
            .lookup(move |c| {
                Ok(
                    c.prepare_cached("SELECT tail FROM tus_uploads WHERE id = ?1")?
                        .query_row([&id], |r| r.get(0))
                        .optional()?
                        .flatten(),
                )
            })
            .await
    }

    /// Records `progress`; false when another request moved the upload
    /// first (or it is gone).
    async fn advance_upload(&self, id: &str, progress: Progress) -> Result<bool, DbError> {
        let (id, p) = (owned(id), progress);
        self.db
            .write(move |c| {
                Ok(c.prepare_cached(
                    "UPDATE tus_uploads SET received = ?3, hash_state = ?4, store_state = ?5,
                         tail = ?6, expires_at = ?7, md5_state = ?9
                     WHERE id = ?1 AND received = ?2 AND completed_at IS NULL AND expires_at > ?8",
                )?
                .execute(params![
                    id,
                    signed(p.from)?,
                    signed(p.received)?,
                    p.hash_state,
                    p.store_state,
                    p.tail,
                    p.expires_at,
                    p.now,
                    p.md5_state
                ])? == 1)
            })
            .await
    }

    async fn remove_upload(&self, id: &str, now: i64) -> Result<Option<bool>, DbError> {
        let id = owned(id);
        self.db.write(move |c| remove(c, &id, now)).await
    }

    async fn reap_expired_uploads(
        &self,
        now: i64,
        max: u32,
    ) -> Result<Vec<(String, String)>, DbError> {
        self.db.write(move |c| reap_expired(c, now, max)).await
    }

    /// Blob keys of the incomplete uploads (whose writes inside the blob store
    /// must not be swept, however old).
    async fn live_upload_keys(&self) -> Result<Vec<String>, DbError> {
        self.db
            .run(|c| {
                let mut stmt = c.prepare_cached(
                    "SELECT blob_key FROM tus_uploads WHERE completed_at IS NULL",
                )?;
                let keys = stmt
                    .query_map([], |r| r.get(0))?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(keys)
            })
            .await
    }

    /// Gives the upload to `token` until `until` if it is free (or already
    /// `token`'s: a renewal, which also keeps an incomplete, unexpired upload
    /// alive for its `idle_ms` from `now`).
    async fn lease_upload(
        &self,
        id: &str,
        token: &str,
        now: i64,
        until: i64,
    ) -> Result<bool, DbError> {
        let (id, token) = (owned(id), owned(token));
        self.db
            .write(move |c| {
                Ok(c.prepare_cached(
                    "UPDATE tus_uploads SET lease_token = ?2, lease_until = ?4,
                         expires_at = CASE
                             WHEN lease_token = ?2 AND completed_at IS NULL AND expires_at > ?3
                             THEN MAX(expires_at, ?3 + idle_ms) ELSE expires_at END
                     WHERE id = ?1
                       AND (lease_until IS NULL OR lease_until <= ?3 OR lease_token = ?2)",
                )?
                .execute(params![id, token, now, until])?
                    == 1)
            })
            .await
    }

    /// Gives the upload to `token` until `until` whoever holds it.
    async fn seize_upload(&self, id: &str, token: &str, until: i64) -> Result<bool, DbError> {
        let (id, token) = (owned(id), owned(token));
        self.db
            .write(move |c| {
                Ok(c.prepare_cached(
                    "UPDATE tus_uploads SET lease_token = ?2, lease_until = ?3 WHERE id = ?1",
                )?
                .execute(params![id, token, until])?
                    == 1)
            })
            .await
    }

    /// Ends `token`'s lease of the upload.
    async fn release_upload(&self, id: &str, token: &str) -> Result<(), DbError> {
        let (id, token) = (owned(id), owned(token));
        self.db
            .write(move |c| {
                c.prepare_cached(
                    "UPDATE tus_uploads SET lease_token = NULL, lease_until = NULL
                     WHERE id = ?1 AND lease_token = ?2",
                )?
                .execute(params![id, token])?;
                Ok(())
            })
            .await
    }
}
