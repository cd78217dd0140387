//! Column lists and row readers of the PostgreSQL store.

use super::{unsigned, DbError};
use crate::db::model::{Account, FileRow, KeyRecord, TokenRow, UploadPolicy, UploadRow};
use crate::domain::ids::KeyKind;
use crate::domain::metadata;
use std::time::Duration;
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

pub(crate) const KEY: &str =
    "id, account_id, kind, name, origins, created_at, revoked_at, folder, max_size, types";

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
        policy: key_policy(r, 7),
    })
}

/// A public key's policy: its folder, max_size and types, from column `at`.
fn key_policy(r: &Row, at: usize) -> UploadPolicy {
    UploadPolicy {
        folder: r.get(at),
        max_size: r.get::<_, Option<i64>>(at + 1).map(unsigned),
        types: serde_json::from_str(r.get::<_, &str>(at + 2)).unwrap_or_default(),
        ..UploadPolicy::default()
    }
}

/// A key and its account, as `KEY` then `ACCOUNT` (prefixed `k.` and `a.`).
pub(crate) const KEY_AND_ACCOUNT: &str =
    "k.id, k.account_id, k.kind, k.name, k.origins, k.created_at, k.revoked_at, \
     k.folder, k.max_size, k.types, \
     a.id, a.name, a.plan, a.grace_period, a.storage_bytes, a.created_at";

pub(crate) fn key_and_account(r: &Row) -> Result<(KeyRecord, Account), DbError> {
    let key = key(r)?;
    Ok((key, account_at(r, 10)))
}

/// An account read from `ACCOUNT`'s columns starting at column `at`.
fn account_at(r: &Row, at: usize) -> Account {
    Account {
        id: r.get(at),
        name: r.get(at + 1),
        plan: r.get(at + 2),
        grace_period: r.get(at + 3),
        storage_bytes: unsigned(r.get(at + 4)),
        created_at: r.get(at + 5),
    }
}

pub(crate) const TOKEN: &str = "id, account_id, created_by, folder, max_size, types, max_uploads, \
     uploads_used, uploads_open, private, file_expires_ms, metadata, created_at, expires_at, \
     revoked_at, replace";

pub(crate) fn token(r: &Row) -> TokenRow {
    let count = |i: usize| u32::try_from(r.get::<_, i32>(i)).unwrap_or(0);
    TokenRow {
        id: r.get(0),
        account_id: r.get(1),
        created_by: r.get(2),
        policy: UploadPolicy {
            folder: r.get(3),
            max_size: r.get::<_, Option<i64>>(4).map(unsigned),
            types: serde_json::from_str(r.get::<_, &str>(5)).unwrap_or_default(),
            private: Some(r.get(9)),
            file_expires: r
                .get::<_, Option<i64>>(10)
                .map(|ms| Duration::from_millis(unsigned(ms))),
            metadata: metadata::from_stored(r.get::<_, &str>(11)),
            decides: true,
            at_once: None,
            replace: r.get(15),
        },
        max_uploads: count(6),
        uploads_used: count(7),
        uploads_open: count(8),
        created_at: r.get(12),
        expires_at: r.get(13),
        revoked_at: r.get(14),
    }
}

/// A token and its account, as `TOKEN` then `ACCOUNT` (prefixed `t.` and `a.`).
pub(crate) const TOKEN_AND_ACCOUNT: &str =
    "t.id, t.account_id, t.created_by, t.folder, t.max_size, t.types, t.max_uploads, \
     t.uploads_used, t.uploads_open, t.private, t.file_expires_ms, t.metadata, t.created_at, \
     t.expires_at, t.revoked_at, t.replace, \
     a.id, a.name, a.plan, a.grace_period, a.storage_bytes, a.created_at";

pub(crate) fn token_and_account(r: &Row) -> (TokenRow, Account) {
    (token(r), account_at(r, 16))
}

pub(crate) const FILE: &str = "id, account_id, name, folder, size, content_type, private, sha256, \
     blob_key, created_at, expires_at, inline, metadata, md5, attrs, damaged_at, crc32";

/// The place of a column selected after [`FILE`] (a file's inline bytes).
pub(crate) const FILE_DATA: usize = 17;

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
        md5: r.get(13),
        attrs: crate::domain::object::ObjectAttrs::from_stored(r.get(14)),
        damaged_at: r.get(15),
        crc32: r
            .get::<_, Option<i64>>(16)
            .and_then(|c| u32::try_from(c).ok()),
    }
}

pub(crate) const UPLOAD: &str = "id, account_id, file_id, blob_key, length, received, name, \
     content_type, folder, private, expires_ms, hash_state, store_state, created_at, expires_at, \
     completed_at, idempotency_key, created_by, idle_ms, metadata, md5_state, at_path";

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
        md5_state: r.get(20),
        at_path: crate::domain::filepath::AtPath::from_stored(r.get::<_, Option<&str>>(21)),
    }
}
