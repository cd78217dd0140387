//! Resumable (tus) upload rows: creation with the plan's checks (storage,
//! monthly uploads, incomplete uploads at once), progress recorded only if
//! the offset is still the one the PATCH started from, the reservations
//! incomplete uploads hold, the list of them, expiry.

use super::{accounts, blobs, usage, write_tx, DbError, OptionalExtension};
use crate::db::model::{CreateOutcome, Progress, UploadRow, DELETION_LEASE_MS, KEEP_COMPLETED_MS};
use crate::domain::quota::{Ask, Holdings, Quota};
use rusqlite::{params, Connection, Row};

const COLUMNS: &str = "id, account_id, file_id, blob_key, length, received, name, content_type, \
     folder, private, expires_ms, hash_state, store_state, created_at, expires_at, completed_at, \
     idempotency_key, created_by, idle_ms";

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
    })
}

/// What incomplete, unexpired uploads of an account hold: bytes of the
/// storage quota and uploads of the month. `except` leaves one out (the
/// upload being completed).
pub(crate) fn reserved(
    conn: &Connection,
    account_id: &str,
    now: i64,
    except: Option<&str>,
) -> Result<(u64, u64), DbError> {
    Ok(conn
        .prepare_cached(
            "SELECT COALESCE(SUM(length), 0), COUNT(*) FROM tus_uploads
             WHERE account_id = ?1 AND completed_at IS NULL AND expires_at > ?2
               AND id IS NOT ?3",
        )?
        .query_row(params![account_id, now, except], |r| {
            Ok((r.get::<_, u64>(0)?, r.get::<_, u64>(1)?))
        })?)
}

/// Creates the upload if the account has room for its declared length, one
/// more upload this month (counting what other incomplete uploads hold) and
/// one more incomplete upload, under the write lock.
pub(crate) fn create(
    conn: &mut Connection,
    u: &UploadRow,
    limits: Quota,
    period: &str,
) -> Result<CreateOutcome, DbError> {
    let tx = write_tx(conn)?;
    if let Some(key) = &u.idempotency_key {
        if let Some(earlier) = replayed(&tx, &u.account_id, key)? {
            return Ok(CreateOutcome::Replayed(Box::new(earlier)));
        }
    }
    let account = accounts::get(&tx, &u.account_id)?
        .ok_or_else(|| DbError::Invalid(format!("account {} vanished", u.account_id)))?;
    let (bytes, pending) = reserved(&tx, &u.account_id, u.created_at, None)?;
    let held = Holdings {
        used: account.storage_bytes.saturating_add(bytes),
        uploads: usage::upload_count(&tx, &u.account_id, period)?.saturating_add(pending),
        open: pending,
    };
    if let Err(refusal) = limits.admit(held, Ask::resumable(u.length)) {
        return Ok(CreateOutcome::Refused(refusal));
    }
    tx.prepare_cached(&format!(
        "INSERT INTO tus_uploads ({COLUMNS}) VALUES
         (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
    ))?
    .execute(params![
        u.id,
        u.account_id,
        u.file_id,
        u.blob_key,
        super::signed(u.length)?,
        super::signed(u.received)?,
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
    ])?;
    tx.commit()?;
    Ok(CreateOutcome::Created)
}

/// The account's incomplete, unexpired uploads, newest first, at most `max`.
pub(crate) fn open(
    conn: &Connection,
    account_id: &str,
    now: i64,
    max: u32,
) -> Result<Vec<UploadRow>, DbError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM tus_uploads
         WHERE account_id = ?1 AND completed_at IS NULL AND expires_at > ?2
         ORDER BY created_at DESC, id DESC LIMIT ?3"
    ))?;
    let rows = stmt
        .query_map(params![account_id, now, max], from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// The upload an earlier creation with this `Idempotency-Key` made (it
/// lives as long as the upload's row: 24 h after its last PATCH, or after
/// its completion).
pub(crate) fn replayed(
    conn: &Connection,
    account_id: &str,
    key: &str,
) -> Result<Option<UploadRow>, DbError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tus_uploads WHERE account_id = ?1 AND idempotency_key = ?2"
        ))?
        .query_row(params![account_id, key], from_row)
        .optional()?)
}

/// The upload `id` of `account_id` (expired or not; the caller decides).
pub(crate) fn get(
    conn: &Connection,
    account_id: &str,
    id: &str,
) -> Result<Option<UploadRow>, DbError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tus_uploads WHERE id = ?1 AND account_id = ?2"
        ))?
        .query_row(params![id, account_id], from_row)
        .optional()?)
}

/// The bytes not yet in the blob store (S3: less than a part).
pub(crate) fn tail(conn: &Connection, id: &str) -> Result<Option<Vec<u8>>, DbError> {
    Ok(conn
        .prepare_cached("SELECT tail FROM tus_uploads WHERE id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()?
        .flatten())
}

/// Records `p`; false when another request moved the upload first (or it
/// is gone).
pub(crate) fn advance(conn: &Connection, id: &str, p: &Progress) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached(
            "UPDATE tus_uploads SET received = ?3, hash_state = ?4, store_state = ?5, tail = ?6,
                 expires_at = ?7
             WHERE id = ?1 AND received = ?2 AND completed_at IS NULL AND expires_at > ?8",
        )?
        .execute(params![
            id,
            super::signed(p.from)?,
            super::signed(p.received)?,
            p.hash_state,
            p.store_state,
            p.tail,
            p.expires_at,
            p.now
        ])?
        == 1)
}

/// Marks the upload complete (its file committed in the same transaction);
/// the row stays for a day so that `GET /v1/uploads/{id}` finds its file.
pub(crate) fn mark_complete(conn: &Connection, id: &str, now: i64) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached(
            "UPDATE tus_uploads SET completed_at = ?2, expires_at = ?3, tail = NULL
             WHERE id = ?1 AND completed_at IS NULL AND expires_at > ?2",
        )?
        .execute(params![id, now, now + KEEP_COMPLETED_MS])?
        == 1)
}

/// Removes an upload: an incomplete one's bytes are queued for deletion (the
/// blob store's delete removes what it holds under the blob key). True when
/// the row was there.
pub(crate) fn remove(conn: &mut Connection, id: &str, now: i64) -> Result<Option<bool>, DbError> {
    let tx = write_tx(conn)?;
    let row = tx
        .prepare_cached("SELECT blob_key, completed_at FROM tus_uploads WHERE id = ?1")?
        .query_row([id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<i64>>(1)?))
        })
        .optional()?;
    let Some((blob_key, completed)) = row else {
        return Ok(None);
    };
    tx.prepare_cached("DELETE FROM tus_uploads WHERE id = ?1")?
        .execute([id])?;
    if completed.is_none() {
        // Deleted at once by the termination: queued a lease ahead.
        blobs::schedule(&tx, &blob_key, now + DELETION_LEASE_MS)?;
    }
    tx.commit()?;
    Ok(Some(completed.is_none()))
}

/// Removes up to `max` uploads whose time is up (incomplete ones once they
/// went without a byte for their `idle_ms`, never while a request holds
/// their lease; complete ones a day after completion); returns their
/// ids and store states (of the incomplete ones, for an early abort).
pub(crate) fn reap_expired(
    conn: &mut Connection,
    now: i64,
    max: u32,
) -> Result<Vec<(String, String)>, DbError> {
    let tx = write_tx(conn)?;
    let due: Vec<(String, Option<i64>, String, String)> = {
        let mut stmt = tx.prepare_cached(
            "SELECT id, completed_at, blob_key, store_state FROM tus_uploads
             WHERE expires_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1)
             ORDER BY expires_at LIMIT ?2",
        )?;
        let rows = stmt
            .query_map(params![now, max], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        rows
    };
    let mut aborted = Vec::new();
    for (id, completed, blob_key, store_state) in due {
        tx.prepare_cached("DELETE FROM tus_uploads WHERE id = ?1")?
            .execute([&id])?;
        if completed.is_none() {
            blobs::schedule(&tx, &blob_key, now)?;
            aborted.push((blob_key, store_state));
        }
    }
    tx.commit()?;
    Ok(aborted)
}

/// Blob keys of the incomplete uploads (whose writes inside the blob store
/// must not be swept, however old).
pub(crate) fn live_keys(conn: &Connection) -> Result<Vec<String>, DbError> {
    let mut stmt =
        conn.prepare_cached("SELECT blob_key FROM tus_uploads WHERE completed_at IS NULL")?;
    let keys = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(keys)
}

/// Gives the upload to `token` until `until` if it is free (or already
/// `token`'s: a renewal, which also keeps an incomplete, unexpired upload
/// alive for its `idle_ms` from `now`); see `MetaStore::lease_upload`.
pub(crate) fn lease(
    conn: &Connection,
    id: &str,
    token: &str,
    now: i64,
    until: i64,
) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached(
            "UPDATE tus_uploads SET lease_token = ?2, lease_until = ?4,
                 expires_at = CASE
                     WHEN lease_token = ?2 AND completed_at IS NULL AND expires_at > ?3
                     THEN MAX(expires_at, ?3 + idle_ms) ELSE expires_at END
             WHERE id = ?1 AND (lease_until IS NULL OR lease_until <= ?3 OR lease_token = ?2)",
        )?
        .execute(params![id, token, now, until])?
        == 1)
}

/// Gives the upload to `token` until `until` whoever holds it; see
/// `MetaStore::seize_upload`.
pub(crate) fn seize(conn: &Connection, id: &str, token: &str, until: i64) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached("UPDATE tus_uploads SET lease_token = ?2, lease_until = ?3 WHERE id = ?1")?
        .execute(params![id, token, until])?
        == 1)
}

/// Ends `token`'s lease of the upload.
pub(crate) fn release(conn: &Connection, id: &str, token: &str) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE tus_uploads SET lease_token = NULL, lease_until = NULL
         WHERE id = ?1 AND lease_token = ?2",
    )?
    .execute(params![id, token])?;
    Ok(())
}

/// Ends every upload's lease (at start: no request of this one node is in
/// flight, whatever a crash left).
pub(crate) fn end_leases(conn: &Connection) -> Result<usize, DbError> {
    Ok(conn
        .prepare_cached(
            "UPDATE tus_uploads SET lease_token = NULL, lease_until = NULL
             WHERE lease_token IS NOT NULL",
        )?
        .execute([])?)
}
