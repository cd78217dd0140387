//! Column lists and row readers of the PostgreSQL store.

use super::{unsigned, DbError};
use crate::db::model::{Account, FileRow, KeyRecord, UploadRow};
use crate::domain::ids::KeyKind;
use crate::domain::metadata;
use tokio_postgres::Row;

pub(crate) const ACCOUNT: &str = "id, name, plan, grace_period, storage_bytes, created_at";

pub(crate) fn account(r: &Row) -> Account {
    Account {
        id: r.get(0),
        name: r.get(1),
        plan: r.get(2),
        grace_period: r.get(3),
        storage_bytes: unsigned(r.get(4)),
        created_at: r.get(5),
    }
}

pub(crate) const KEY: &str = "id, account_id, kind, name, origins, created_at, revoked_at";

pub(crate) fn key(r: &Row) -> Result<KeyRecord, DbError> {
    let kind: String = r.get(2);
    let origins: String = r.get(4);
    Ok(KeyRecord {
        id: r.get(0),
        account_id: r.get(1),
        kind: KeyKind::parse(&kind)
            .ok_or_else(|| DbError::Invalid(format!("key kind {kind:?}")))?,
        name: r.get(3),
        origins: serde_json::from_str(&origins).unwrap_or_default(),
        created_at: r.get(5),
        revoked_at: r.get(6),
    })
}

/// A key and its account, as `KEY` then `ACCOUNT` (prefixed `k.` and `a.`).
pub(crate) const KEY_AND_ACCOUNT: &str =
    "k.id, k.account_id, k.kind, k.name, k.origins, k.created_at, k.revoked_at, \
     a.id, a.name, a.plan, a.grace_period, a.storage_bytes, a.created_at";

pub(crate) fn key_and_account(r: &Row) -> Result<(KeyRecord, Account), DbError> {
    let key = key(r)?;
    Ok((
        key,
        Account {
            id: r.get(7),
            name: r.get(8),
            plan: r.get(9),
            grace_period: r.get(10),
            storage_bytes: unsigned(r.get(11)),
            created_at: r.get(12),
        },
    ))
}

pub(crate) const FILE: &str = "id, account_id, name, folder, size, content_type, private, sha256, \
     blob_key, created_at, expires_at, inline, metadata";

pub(crate) fn file(r: &Row) -> FileRow {
    FileRow {
        id: r.get(0),
        account_id: r.get(1),
        name: r.get(2),
        folder: r.get(3),
        size: unsigned(r.get(4)),
        content_type: r.get(5),
        private: r.get(6),
        sha256: r.get(7),
        blob_key: r.get(8),
        created_at: r.get(9),
        expires_at: r.get(10),
        inline: r.get(11),
        metadata: metadata::from_stored(r.get::<_, &str>(12)),
    }
}

pub(crate) const UPLOAD: &str = "id, account_id, file_id, blob_key, length, received, name, \
     content_type, folder, private, expires_ms, hash_state, store_state, created_at, expires_at, \
     completed_at, idempotency_key, created_by, idle_ms, metadata";

pub(crate) fn upload(r: &Row) -> UploadRow {
    UploadRow {
        id: r.get(0),
        account_id: r.get(1),
        file_id: r.get(2),
        blob_key: r.get(3),
        length: unsigned(r.get(4)),
        received: unsigned(r.get(5)),
        name: r.get(6),
        content_type: r.get(7),
        folder: r.get(8),
        private: r.get(9),
        expires_ms: r.get(10),
        hash_state: r.get(11),
        store_state: r.get(12),
        created_at: r.get(13),
        expires_at: r.get(14),
        completed_at: r.get(15),
        idempotency_key: r.get(16),
        created_by: r.get(17),
        idle_ms: r.get(18),
        metadata: metadata::from_stored(r.get::<_, &str>(19)),
    }
}
