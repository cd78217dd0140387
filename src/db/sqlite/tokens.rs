//! Upload tokens on SQLite ([`TokenRepo`]): made, read by id or by the hash
//! of their secret, revoked and pruned; and the guarded UPDATEs that count
//! their uses, which the transactions of files and uploads run (`take`,
//! `hold`, `convert`, `give_back`). The single writer makes each exact.

use super::{accounts, owned, shared, signed, DbError, OptionalExtension, SqliteStore};
use crate::db::model::{Account, TokenRow, UploadPolicy};
use crate::db::store::TokenRepo;
use crate::domain::metadata;
use async_trait::async_trait;
use rusqlite::{params, Connection, Row};
use std::time::Duration;

const COLUMNS: &str = "id, account_id, created_by, folder, max_size, types, max_uploads, \
     uploads_used, uploads_open, private, file_expires_ms, metadata, created_at, expires_at, \
     revoked_at, replace";

fn from_row(r: &Row<'_>) -> rusqlite::Result<TokenRow> {
    Ok(TokenRow {
        id: r.get(0)?,
        account_id: r.get(1)?,
        created_by: r.get(2)?,
        policy: UploadPolicy {
            folder: r.get(3)?,
            max_size: r.get::<_, Option<u64>>(4)?,
            types: serde_json::from_str(&r.get::<_, String>(5)?).unwrap_or_default(),
            private: Some(r.get(9)?),
            file_expires: r
                .get::<_, Option<i64>>(10)?
                .map(|ms| Duration::from_millis(u64::try_from(ms).unwrap_or(0))),
            metadata: metadata::from_stored(&r.get::<_, String>(11)?),
            decides: true,
            at_once: None,
            replace: r.get(15)?,
        },
        max_uploads: r.get(6)?,
        uploads_used: r.get(7)?,
        uploads_open: r.get(8)?,
        created_at: r.get(12)?,
        expires_at: r.get(13)?,
        revoked_at: r.get(14)?,
    })
}

fn insert(conn: &Connection, t: &TokenRow, hash: &[u8; 32]) -> Result<(), DbError> {
    let p = &t.policy;
    let max_size = p.max_size.map(signed).transpose()?;
    let file_expires_ms = p
        .file_expires
        .map(|d| signed(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)))
        .transpose()?;
    conn.prepare_cached(&format!(
        "INSERT INTO upload_tokens ({COLUMNS}, token_hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
    ))?
    .execute(params![
        t.id,
        t.account_id,
        t.created_by,
        p.folder,
        max_size,
        shared::types_json(&p.types)?,
        t.max_uploads,
        t.uploads_used,
        t.uploads_open,
        p.private.unwrap_or(false),
        file_expires_ms,
        metadata::to_json(&p.metadata),
        t.created_at,
        t.expires_at,
        t.revoked_at,
        p.replace,
        &hash[..],
    ])?;
    Ok(())
}

/// Counts a file's upload with token `id` (a multipart upload): only while
/// it is unrevoked and has a use left. False: nothing changed, and the
/// commit must write nothing either.
pub(super) fn take(conn: &Connection, id: &str) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached(
            "UPDATE upload_tokens SET uploads_used = uploads_used + 1
             WHERE id = ?1 AND revoked_at IS NULL AND uploads_used + uploads_open < max_uploads",
        )?
        .execute([id])?
        == 1)
}

/// Holds one use of token `id` for a resumable upload created at `now`:
/// only while it is unrevoked, unexpired and has a use left.
pub(super) fn hold(conn: &Connection, id: &str, now: i64) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached(
            "UPDATE upload_tokens SET uploads_open = uploads_open + 1
             WHERE id = ?1 AND revoked_at IS NULL AND expires_at > ?2
               AND uploads_used + uploads_open < max_uploads",
        )?
        .execute(params![id, now])?
        == 1)
}

/// A resumable upload of token `id` completes: the use it held since its
/// creation becomes a file's, revoked or expired since or not (the upload
/// was admitted then). False only if the token lost track of it.
pub(super) fn convert(conn: &Connection, id: &str) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached(
            "UPDATE upload_tokens SET uploads_open = uploads_open - 1, uploads_used = uploads_used + 1
             WHERE id = ?1 AND uploads_open > 0",
        )?
        .execute([id])?
        == 1)
}

/// An incomplete resumable upload of token `id` ended: its use comes back.
pub(super) fn give_back(conn: &Connection, id: &str) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE upload_tokens SET uploads_open = uploads_open - 1
         WHERE id = ?1 AND uploads_open > 0",
    )?
    .execute([id])?;
    Ok(())
}

#[async_trait]
impl TokenRepo for SqliteStore {
    async fn create_token(&self, token: TokenRow, hash: [u8; 32]) -> Result<(), DbError> {
        self.db.write(move |c| insert(c, &token, &hash)).await
    }

    async fn token(&self, account_id: &str, id: &str) -> Result<Option<TokenRow>, DbError> {
        let (acc, id) = (owned(account_id), owned(id));
        self.db
            .lookup(move |c| {
                Ok(c.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM upload_tokens WHERE id = ?1 AND account_id = ?2"
                ))?
                .query_row(params![id, acc], from_row)
                .optional()?)
            })
            .await
    }

    async fn active_tokens(
        &self,
        account_id: &str,
        now: i64,
        limit: u32,
    ) -> Result<Vec<TokenRow>, DbError> {
        let acc = owned(account_id);
        self.db
            .lookup(move |c| {
                let mut stmt = c.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM upload_tokens
                     WHERE account_id = ?1 AND revoked_at IS NULL AND expires_at > ?2
                     ORDER BY created_at DESC, id DESC LIMIT ?3"
                ))?;
                let rows = stmt.query_map(params![acc, now, limit], from_row)?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await
    }

    async fn token_by_hash(&self, hash: [u8; 32]) -> Result<Option<(TokenRow, Account)>, DbError> {
        self.db
            .lookup(move |c| {
                let token = c
                    .prepare_cached(&format!(
                        "SELECT {COLUMNS} FROM upload_tokens WHERE token_hash = ?1"
                    ))?
                    .query_row([&hash[..]], from_row)
                    .optional()?;
                let Some(token) = token else {
                    return Ok(None);
                };
                Ok(accounts::get(c, &token.account_id)?.map(|account| (token, account)))
            })
            .await
    }

    async fn revoke_token(&self, account_id: &str, id: &str, now: i64) -> Result<bool, DbError> {
        let (acc, id) = (owned(account_id), owned(id));
        self.db
            .write(move |c| {
                Ok(c.prepare_cached(
                    "UPDATE upload_tokens SET revoked_at = COALESCE(revoked_at, ?3)
                     WHERE id = ?1 AND account_id = ?2",
                )?
                .execute(params![id, acc, now])?
                    == 1)
            })
            .await
    }

    async fn prune_tokens(&self, before: i64) -> Result<usize, DbError> {
        self.db
            .write(move |c| {
                Ok(c.prepare_cached(
                    "DELETE FROM upload_tokens WHERE expires_at < ?1 AND uploads_open = 0",
                )?
                .execute([before])?)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guarded UPDATEs keep the count; the CHECK refuses any write that
    /// would pass `max_uploads` anyway.
    #[test]
    fn the_count_never_passes_max_uploads() {
        let (_d, db) = crate::db::sqlite::test_db();
        let c = db.conn().unwrap();
        c.execute(
            "INSERT INTO accounts (id, name, plan, grace_period, storage_bytes, created_at)
             VALUES ('acc_1', 'a', 'free', 0, 0, 1)",
            [],
        )
        .unwrap();
        let t = TokenRow {
            id: "ut_1".into(),
            account_id: "acc_1".into(),
            created_by: "key_1".into(),
            policy: UploadPolicy::default(),
            max_uploads: 2,
            uploads_used: 0,
            uploads_open: 0,
            created_at: 1,
            expires_at: 100,
            revoked_at: None,
        };
        insert(&c, &t, &[0; 32]).unwrap();
        assert!(hold(&c, "ut_1", 50).unwrap());
        assert!(
            !hold(&c, "ut_1", 100).unwrap(),
            "expired at the upload's creation"
        );
        assert!(take(&c, "ut_1").unwrap());
        assert!(!take(&c, "ut_1").unwrap());
        assert!(!hold(&c, "ut_1", 50).unwrap());
        assert!(convert(&c, "ut_1").unwrap());
        assert!(!convert(&c, "ut_1").unwrap(), "no use held any more");
        give_back(&c, "ut_1").unwrap();
        let counts = |c: &Connection| -> (u32, u32) {
            c.query_row(
                "SELECT uploads_used, uploads_open FROM upload_tokens WHERE id = 'ut_1'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
        };
        assert_eq!(counts(&c), (2, 0));
        let past = c.execute(
            "UPDATE upload_tokens SET uploads_open = 1 WHERE id = 'ut_1'",
            [],
        );
        assert!(past.is_err(), "the CHECK holds");
        assert_eq!(counts(&c), (2, 0));
    }
}
