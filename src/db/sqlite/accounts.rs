//! Accounts on SQLite: who owns files and keys, on which plan, in grace
//! period or not; their API keys (only the SHA-256 of a key's secret is
//! stored, lookup is by hash); and their monthly counters (uploads and
//! bandwidth of a billing period). `get`, `add_storage`, `upload_count` and
//! `add_upload` also run inside the transactions of files and uploads.

use super::{owned, shared, signed, DbError, OptionalExtension, SqliteStore};
use crate::db::model::{
    Account, BandwidthCount, Commitments, KeyRecord, UploadPolicy, UsageCounters,
};
use crate::db::store::AccountRepo;
use crate::domain::ids::KeyKind;
use crate::domain::quota::Holdings;
use async_trait::async_trait;
use rusqlite::{params, Connection, Row};

const COLUMNS: &str = "id, name, plan, grace_period, storage_bytes, created_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Account> {
    Ok(Account {
        id: r.get(0)?,
        name: r.get(1)?,
        plan: r.get(2)?,
        grace_period: r.get(3)?,
        storage_bytes: r.get::<_, u64>(4)?,
        created_at: r.get(5)?,
    })
}

const KEY_COLUMNS: &str =
    "id, account_id, kind, name, origins, created_at, revoked_at, folder, max_size, types";

fn key_from_row(r: &Row<'_>) -> rusqlite::Result<KeyRecord> {
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
        policy: UploadPolicy {
            folder: r.get(7)?,
            max_size: r.get::<_, Option<u64>>(8)?,
            types: serde_json::from_str(&r.get::<_, String>(9)?).unwrap_or_default(),
            ..UploadPolicy::default()
        },
    })
}

fn insert(conn: &Connection, a: &Account) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO accounts (id, name, plan, grace_period, storage_bytes, created_at)
         VALUES (?1, ?2, ?3, ?4, 0, ?5)",
    )?
    .execute(params![a.id, a.name, a.plan, a.grace_period, a.created_at])
    .map_err(|e| match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            DbError::Invalid(format!("an account named {:?} already exists", a.name))
        }
        other => other.into(),
    })?;
    Ok(())
}

pub(super) fn get(conn: &Connection, id: &str) -> Result<Option<Account>, DbError> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM accounts WHERE id = ?1"))?
        .query_row([id], from_row)
        .optional()?)
}

/// Finds an account by its id or its (unique) name.
fn find(conn: &Connection, id_or_name: &str) -> Result<Option<Account>, DbError> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM accounts WHERE id = ?1 OR name = ?1 ORDER BY id = ?1 DESC LIMIT 1"))?
        .query_row([id_or_name], from_row)
        .optional()?)
}

/// Adds `delta` (may be negative) to the account's stored bytes.
pub(super) fn add_storage(conn: &Connection, id: &str, delta: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE accounts SET storage_bytes = MAX(0, storage_bytes + ?2) WHERE id = ?1",
    )?
    .execute(params![id, delta])?;
    Ok(())
}

/// Counts one more upload of the account in the period.
pub(super) fn add_upload(conn: &Connection, account_id: &str, period: &str) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO usage_periods (account_id, period, upload_count) VALUES (?1, ?2, 1)
         ON CONFLICT (account_id, period) DO UPDATE SET upload_count = upload_count + 1",
    )?
    .execute(params![account_id, period])?;
    Ok(())
}

#[async_trait]
impl AccountRepo for SqliteStore {
    async fn commitments(
        &self,
        account_id: &str,
        period: &str,
        now: i64,
    ) -> Result<Commitments, DbError> {
        let (acc, period) = (owned(account_id), owned(period));
        self.db
            .lookup(move |c| {
                // The stored bytes are read here, not taken from the account
                // the key came with (which may be a second old: `db::keys`).
                Ok(shared::commitments(c, &acc, &period, now, None)?.unwrap_or_default())
            })
            .await
    }

    async fn strangers(
        &self,
        account_id: &str,
        period: &str,
        now: i64,
    ) -> Result<Holdings, DbError> {
        let (acc, period) = (owned(account_id), owned(period));
        self.db
            .lookup(move |c| shared::strangers(c, &acc, &period, now))
            .await
    }

    async fn usage(&self, account_id: &str, period: &str) -> Result<UsageCounters, DbError> {
        let (acc, period) = (owned(account_id), owned(period));
        self.db
            .run(move |c| {
                let storage_bytes = get(c, &acc)?.map_or(0, |a| a.storage_bytes);
                // (upload_count, bandwidth_bytes) of the period; zeros when
                // nothing happened yet.
                let (upload_count, bandwidth_bytes) = c
                    .prepare_cached(
                        "SELECT upload_count, bandwidth_bytes FROM usage_periods
                         WHERE account_id = ?1 AND period = ?2",
                    )?
                    .query_row(params![acc, period], |r| {
                        Ok((r.get::<_, u64>(0)?, r.get::<_, u64>(1)?))
                    })
                    .optional()?
                    .unwrap_or((0, 0));
                Ok(UsageCounters {
                    storage_bytes,
                    upload_count,
                    bandwidth_bytes,
                })
            })
            .await
    }

    async fn add_bandwidth(&self, counts: Vec<BandwidthCount>) -> Result<(), DbError> {
        self.db
            .write(move |c| {
                let mut stmt = c.prepare_cached(
                    "INSERT INTO usage_periods (account_id, period, bandwidth_bytes)
                     VALUES (?1, ?2, ?3)
                     ON CONFLICT (account_id, period)
                     DO UPDATE SET bandwidth_bytes = bandwidth_bytes + ?3",
                )?;
                for b in &counts {
                    stmt.execute(params![b.account_id, b.period, b.bytes])?;
                }
                Ok(())
            })
            .await
    }

    /// The live (not revoked) key whose secret hashes to `hash`, with its
    /// account, as read in the last second (`db::keys`) unless the keys'
    /// stamp changed since.
    async fn key_by_hash(&self, hash: [u8; 32]) -> Result<Option<(KeyRecord, Account)>, DbError> {
        self.stamp.forget_if_changed(&self.keys);
        self.keys
            .get_or_read(hash, || {
                self.db.lookup(move |c| {
                    let key = c
                        .prepare_cached(&format!(
                            "SELECT {KEY_COLUMNS} FROM api_keys WHERE key_hash = ?1 AND revoked_at IS NULL"
                        ))?
                        .query_row([&hash[..]], key_from_row)
                        .optional()?;
                    let Some(key) = key else {
                        return Ok(None);
                    };
                    Ok(get(c, &key.account_id)?.map(|account| (key, account)))
                })
            })
            .await
    }

    /// Origins of every live public key, for CORS preflights (which carry no key).
    async fn public_origins(&self) -> Result<Vec<String>, DbError> {
        self.db
            .run(|c| {
                let mut stmt = c.prepare(
                    "SELECT origins FROM api_keys WHERE kind = 'public' AND revoked_at IS NULL",
                )?;
                let mut all = Vec::new();
                for json in stmt.query_map([], |r| r.get::<_, String>(0))? {
                    let list: Vec<String> = serde_json::from_str(&json?).unwrap_or_default();
                    all.extend(list);
                }
                Ok(all)
            })
            .await
    }

    async fn account(&self, id: &str) -> Result<Option<Account>, DbError> {
        let id = owned(id);
        self.db.lookup(move |c| get(c, &id)).await
    }

    async fn find_account(&self, id_or_name: &str) -> Result<Option<Account>, DbError> {
        let id = owned(id_or_name);
        self.db.run(move |c| find(c, &id)).await
    }

    async fn count_accounts(&self) -> Result<u64, DbError> {
        self.db
            .run(|c| {
                Ok(c.prepare_cached("SELECT COUNT(*) FROM accounts")?
                    .query_row([], |r| r.get::<_, u64>(0))?)
            })
            .await
    }

    async fn list_accounts(&self) -> Result<Vec<Account>, DbError> {
        self.db
            .run(|c| {
                let mut stmt = c.prepare(&format!(
                    "SELECT {COLUMNS} FROM accounts ORDER BY created_at, id"
                ))?;
                let rows = stmt
                    .query_map([], from_row)?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            })
            .await
    }

    async fn create_account(&self, account: Account) -> Result<bool, DbError> {
        self.db
            .write(move |c| {
                if find(c, &account.name)?.is_some() {
                    return Ok(false);
                }
                insert(c, &account)?;
                Ok(true)
            })
            .await
    }

    async fn set_account(
        &self,
        id: &str,
        plan: Option<String>,
        grace_period: Option<bool>,
    ) -> Result<Option<Account>, DbError> {
        let id = owned(id);
        let changed = self
            .db
            .write(move |c| {
                if let Some(plan) = &plan {
                    c.prepare_cached("UPDATE accounts SET plan = ?2 WHERE id = ?1")?
                        .execute(params![id, plan])?;
                }
                if let Some(on) = grace_period {
                    c.prepare_cached("UPDATE accounts SET grace_period = ?2 WHERE id = ?1")?
                        .execute(params![id, on])?;
                }
                get(c, &id)
            })
            .await;
        // Whatever the answer: a write that failed may still have committed.
        self.keys_changed();
        changed
    }

    async fn create_key(&self, key: KeyRecord, hash: [u8; 32]) -> Result<(), DbError> {
        self.db
            .write(move |c| {
                let origins = serde_json::to_string(&key.origins)
                    .map_err(|e| DbError::Invalid(e.to_string()))?;
                // A public key's policy keeps folder, max_size and types only.
                let p = &key.policy;
                c.prepare_cached(
                    "INSERT INTO api_keys (id, account_id, kind, name, key_hash, origins, created_at,
                         folder, max_size, types)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )?
                .execute(params![
                    key.id,
                    key.account_id,
                    key.kind.as_str(),
                    key.name,
                    &hash[..],
                    origins,
                    key.created_at,
                    p.folder,
                    p.max_size.map(signed).transpose()?,
                    shared::types_json(&p.types)?,
                ])?;
                Ok(())
            })
            .await
    }

    async fn key(&self, id: &str) -> Result<Option<KeyRecord>, DbError> {
        let id = owned(id);
        self.db
            .run(move |c| {
                Ok(
                    c.prepare_cached(&format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1"))?
                        .query_row([&id], key_from_row)
                        .optional()?,
                )
            })
            .await
    }

    async fn list_keys(&self, account_id: Option<&str>) -> Result<Vec<KeyRecord>, DbError> {
        let acc = account_id.map(owned);
        self.db
            .run(move |c| {
                let mut stmt = c.prepare(&format!(
                    "SELECT {KEY_COLUMNS} FROM api_keys WHERE ?1 IS NULL OR account_id = ?1
                     ORDER BY created_at, id"
                ))?;
                let rows = stmt
                    .query_map([acc], key_from_row)?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            })
            .await
    }

    /// Revokes a key; true when it was live.
    async fn revoke_key(&self, id: &str, now: i64) -> Result<bool, DbError> {
        let id = owned(id);
        let changed = self
            .db
            .write(move |c| {
                let n = c
                    .prepare_cached(
                        "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
                    )?
                    .execute(params![id, now])?;
                Ok(n == 1)
            })
            .await;
        // Whatever the answer: a write that failed may still have committed.
        self.keys_changed();
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_by_id_or_name_and_unique_names() {
        let (_d, db) = crate::db::sqlite::test_db();
        let c = db.conn().unwrap();
        let a = Account {
            id: "acc_1".into(),
            name: "default".into(),
            plan: "free".into(),
            grace_period: false,
            storage_bytes: 0,
            created_at: 1,
        };
        insert(&c, &a).unwrap();
        assert_eq!(find(&c, "default").unwrap().unwrap().id, "acc_1");
        assert_eq!(find(&c, "acc_1").unwrap().unwrap().name, "default");
        assert!(find(&c, "nobody").unwrap().is_none());
        let dup = Account {
            id: "acc_2".into(),
            ..a
        };
        assert!(matches!(insert(&c, &dup), Err(DbError::Invalid(_))));
        add_storage(&c, "acc_1", 10).unwrap();
        add_storage(&c, "acc_1", -3).unwrap();
        assert_eq!(get(&c, "acc_1").unwrap().unwrap().storage_bytes, 7);
    }
}
