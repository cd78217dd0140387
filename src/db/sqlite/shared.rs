//! Upload-row effects that other aggregates run inside their own
//! transactions: the reservations incomplete uploads hold (the file commit,
//! the account's commitments, upload creation), the completion of an upload
//! by its file's commit, and the end of every lease at start. They live here,
//! below every aggregate file, so that no two aggregate files import each
//! other; this module imports none of them.

use super::{DbError, OptionalExtension};
use crate::db::model::{Commitments, KEEP_COMPLETED_MS};
use crate::domain::ids::upload_token_of;
use crate::domain::quota::Holdings;
use rusqlite::{named_params, params, Connection};

/// Everything a quota check of an account reads, in one statement (one
/// read of the pages, where three statements read them three times): its
/// stored bytes, its uploads in `period`, and the bytes and uploads its
/// incomplete, unexpired uploads hold at `now`, less `except` (the upload
/// being completed); an open S3 multipart upload counts as an incomplete
/// upload (its parts' bytes are in the stored bytes). None when the account
/// does not exist.
pub(super) fn commitments(
    conn: &Connection,
    account_id: &str,
    period: &str,
    now: i64,
    except: Option<&str>,
) -> Result<Option<Commitments>, DbError> {
    Ok(conn
        .prepare_cached(
            "SELECT a.storage_bytes,
                 COALESCE((SELECT upload_count FROM usage_periods
                           WHERE account_id = a.id AND period = :period), 0),
                 o.bytes, o.uploads + (SELECT COUNT(*) FROM s3_uploads
                           WHERE account_id = a.id AND completed_at IS NULL)
             FROM accounts a,
                 (SELECT COALESCE(SUM(length), 0) AS bytes, COUNT(*) AS uploads
                  FROM tus_uploads WHERE account_id = :account AND completed_at IS NULL
                  AND expires_at > :now AND id IS NOT :except) o
             WHERE a.id = :account",
        )?
        .query_row(
            named_params! {
                ":account": account_id, ":period": period, ":now": now, ":except": except
            },
            |r| {
                Ok(Commitments {
                    stored_bytes: Some(r.get::<_, u64>(0)?),
                    upload_count: r.get::<_, u64>(1)?,
                    reserved_bytes: r.get::<_, u64>(2)?,
                    pending_uploads: r.get::<_, u64>(3)?,
                })
            },
        )
        .optional()?)
}

/// Whether an upload's creator (`created_by`) is a stranger of the
/// account: an upload token (`ut_…`) or a public key. SQL over a row of
/// `tus_uploads` (as `u`).
pub(super) const BY_STRANGER: &str = "(u.created_by LIKE 'ut!_%' ESCAPE '!' OR u.created_by IN
     (SELECT id FROM api_keys WHERE account_id = u.account_id AND kind = 'public'))";

/// What the account's strangers (its public keys and upload tokens, all
/// together) hold, as the strangers' share reads it: their uploads in
/// `period`, and the bytes and uploads of their incomplete resumable
/// uploads unexpired at `now` (each counts as one upload too).
pub(super) fn strangers(
    conn: &Connection,
    account_id: &str,
    period: &str,
    now: i64,
) -> Result<Holdings, DbError> {
    let (made, reserved, open) = conn
        .prepare_cached(&format!(
            "SELECT COALESCE((SELECT stranger_uploads FROM usage_periods
                              WHERE account_id = :account AND period = :period), 0),
                 COALESCE(SUM(u.length), 0), COUNT(*)
             FROM tus_uploads u
             WHERE u.account_id = :account AND u.completed_at IS NULL
               AND u.expires_at > :now AND {BY_STRANGER}"
        ))?
        .query_row(
            named_params! { ":account": account_id, ":period": period, ":now": now },
            |r| {
                Ok((
                    r.get::<_, u64>(0)?,
                    r.get::<_, u64>(1)?,
                    r.get::<_, u64>(2)?,
                ))
            },
        )?;
    Ok(Holdings {
        used: reserved,
        uploads: made.saturating_add(open),
        open,
    })
}

/// Whether `key_id` (an upload's creator) is a stranger of its account: an
/// upload token, or a public key.
pub(super) fn is_stranger(conn: &Connection, key_id: &str) -> Result<bool, DbError> {
    if upload_token_of(Some(key_id)).is_some() {
        return Ok(true);
    }
    Ok(conn
        .prepare_cached("SELECT 1 FROM api_keys WHERE id = ?1 AND kind = 'public'")?
        .query_row([key_id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Counts one more upload of the account's strangers in `period` (with
/// the period's `upload_count`, which `accounts::add_upload` counts).
pub(super) fn add_stranger_upload(
    conn: &Connection,
    account_id: &str,
    period: &str,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE usage_periods SET stranger_uploads = stranger_uploads + 1
         WHERE account_id = ?1 AND period = ?2",
    )?
    .execute(params![account_id, period])?;
    Ok(())
}

/// Marks the upload complete (its file committed in the same transaction);
/// the row stays for a day so that `GET /v1/uploads/{id}` finds its file.
/// None when it is no longer open, else its creator (`created_by`, empty
/// when not recorded).
pub(super) fn mark_complete(
    conn: &Connection,
    id: &str,
    now: i64,
) -> Result<Option<String>, DbError> {
    let marked = conn
        .prepare_cached(
            "UPDATE tus_uploads SET completed_at = ?2, expires_at = ?3, tail = NULL
             WHERE id = ?1 AND completed_at IS NULL AND expires_at > ?2",
        )?
        .execute(params![id, now, now + KEEP_COMPLETED_MS])?;
    if marked != 1 {
        return Ok(None);
    }
    Ok(Some(
        conn.prepare_cached("SELECT created_by FROM tus_uploads WHERE id = ?1")?
            .query_row([id], |r| r.get::<_, Option<String>>(0))?
            .unwrap_or_default(),
    ))
}

/// Ends every upload's lease (at start: no request of this one node is in
/// flight, whatever a crash left).
pub(super) fn end_leases(conn: &Connection) -> Result<usize, DbError> {
    Ok(conn
        .prepare_cached(
            "UPDATE tus_uploads SET lease_token = NULL, lease_until = NULL
             WHERE lease_token IS NOT NULL",
        )?
        .execute([])?)
}

/// An upload policy's types as stored (a JSON list), on tokens and keys.
pub(super) fn types_json(types: &[String]) -> Result<String, DbError> {
    serde_json::to_string(types).map_err(|e| DbError::Invalid(e.to_string()))
}
