//! API keys. Only the SHA-256 of a key's secret is stored; lookup is by hash.

use super::{DbError, OptionalExtension};
use crate::db::model::KeyRecord;
use crate::domain::ids::KeyKind;
use rusqlite::{params, Connection, Row};

const COLUMNS: &str = "id, account_id, kind, name, origins, created_at, revoked_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<KeyRecord> {
    let origins: String = r.get(4)?;
    Ok(KeyRecord {
        id: r.get(0)?,
        account_id: r.get(1)?,
        kind: {
            let kind: String = r.get(2)?;
            KeyKind::parse(&kind).ok_or_else(|| {
                rusqlite::Error::FromSqlConversionFailure(
                    2,
                    rusqlite::types::Type::Text,
                    format!("key kind {kind:?}").into(),
                )
            })?
        },
        name: r.get(3)?,
        origins: serde_json::from_str(&origins).unwrap_or_default(),
        created_at: r.get(5)?,
        revoked_at: r.get(6)?,
    })
}

pub(crate) fn insert(conn: &Connection, k: &KeyRecord, hash: &[u8; 32]) -> Result<(), DbError> {
    let origins = serde_json::to_string(&k.origins).map_err(|e| DbError::Invalid(e.to_string()))?;
    conn.prepare_cached(
        "INSERT INTO api_keys (id, account_id, kind, name, key_hash, origins, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        k.id,
        k.account_id,
        k.kind.as_str(),
        k.name,
        &hash[..],
        origins,
        k.created_at
    ])?;
    Ok(())
}

/// The live (not revoked) key whose secret hashes to `hash`.
pub(crate) fn find_active_by_hash(
    conn: &Connection,
    hash: &[u8; 32],
) -> Result<Option<KeyRecord>, DbError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM api_keys WHERE key_hash = ?1 AND revoked_at IS NULL"
        ))?
        .query_row([&hash[..]], from_row)
        .optional()?)
}

pub(crate) fn get(conn: &Connection, id: &str) -> Result<Option<KeyRecord>, DbError> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM api_keys WHERE id = ?1"))?
        .query_row([id], from_row)
        .optional()?)
}

pub(crate) fn list(conn: &Connection, account_id: Option<&str>) -> Result<Vec<KeyRecord>, DbError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM api_keys WHERE ?1 IS NULL OR account_id = ?1 ORDER BY created_at, id"
    ))?;
    let rows = stmt
        .query_map([account_id], from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Origins of every live public key, for CORS preflights (which carry no key).
pub(crate) fn active_public_origins(conn: &Connection) -> Result<Vec<String>, DbError> {
    let mut stmt =
        conn.prepare("SELECT origins FROM api_keys WHERE kind = 'public' AND revoked_at IS NULL")?;
    let mut all = Vec::new();
    for json in stmt.query_map([], |r| r.get::<_, String>(0))? {
        let list: Vec<String> = serde_json::from_str(&json?).unwrap_or_default();
        all.extend(list);
    }
    Ok(all)
}

/// Revokes a key; true when it was live.
pub(crate) fn revoke(conn: &Connection, id: &str, now: i64) -> Result<bool, DbError> {
    let n = conn
        .prepare_cached("UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL")?
        .execute(params![id, now])?;
    Ok(n == 1)
}
