//! Monthly counters per account: uploads and bandwidth of a billing period.

use super::DbError;
use rusqlite::{params, Connection, OptionalExtension};

pub(crate) fn upload_count(
    conn: &Connection,
    account_id: &str,
    period: &str,
) -> Result<u64, DbError> {
    Ok(conn
        .prepare_cached(
            "SELECT upload_count FROM usage_periods WHERE account_id = ?1 AND period = ?2",
        )?
        .query_row(params![account_id, period], |r| r.get::<_, u64>(0))
        .optional()?
        .unwrap_or(0))
}

pub(crate) fn add_upload(conn: &Connection, account_id: &str, period: &str) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO usage_periods (account_id, period, upload_count) VALUES (?1, ?2, 1)
         ON CONFLICT (account_id, period) DO UPDATE SET upload_count = upload_count + 1",
    )?
    .execute(params![account_id, period])?;
    Ok(())
}

pub(crate) fn add_bandwidth(
    conn: &Connection,
    account_id: &str,
    period: &str,
    bytes: u64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO usage_periods (account_id, period, bandwidth_bytes) VALUES (?1, ?2, ?3)
         ON CONFLICT (account_id, period) DO UPDATE SET bandwidth_bytes = bandwidth_bytes + ?3",
    )?
    .execute(params![account_id, period, bytes])?;
    Ok(())
}

/// (upload_count, bandwidth_bytes) of the period; zeros when nothing happened yet.
pub(crate) fn of_period(
    conn: &Connection,
    account_id: &str,
    period: &str,
) -> Result<(u64, u64), DbError> {
    Ok(conn
        .prepare_cached("SELECT upload_count, bandwidth_bytes FROM usage_periods WHERE account_id = ?1 AND period = ?2")?
        .query_row(params![account_id, period],
            |r| Ok((r.get::<_, u64>(0)?, r.get::<_, u64>(1)?)),
        )
        .optional()?
        .unwrap_or((0, 0)))
}
