//! Console sessions on SQLite ([`SessionRepo`]).

use super::{owned, DbError, OptionalExtension, SqliteStore};
use crate::db::sessions::{SessionRepo, SessionRow};
use async_trait::async_trait;
use rusqlite::params;

/// A session with its key's hash (NULL when the key row is gone).
const FIND: &str = "SELECT s.key_id, k.key_hash, s.created_at, s.last_seen_at
     FROM console_sessions s LEFT JOIN api_keys k ON k.id = s.key_id
     WHERE s.session_hash = ?1";

#[async_trait]
impl SessionRepo for SqliteStore {
    async fn create_session(
        &self,
        hash: [u8; 32],
        key_id: &str,
        now: i64,
        idle_before: i64,
    ) -> Result<(), DbError> {
        let key_id = owned(key_id);
        self.db
            .write_small(move |c| {
                c.prepare_cached("DELETE FROM console_sessions WHERE last_seen_at < ?1")?
                    .execute(params![idle_before])?;
                c.prepare_cached(
                    "INSERT INTO console_sessions (session_hash, key_id, created_at, last_seen_at)
                     VALUES (?1, ?2, ?3, ?3)",
                )?
                .execute(params![&hash[..], key_id, now])?;
                Ok(())
            })
            .await
    }

    async fn session(&self, hash: [u8; 32]) -> Result<Option<SessionRow>, DbError> {
        self.db
            .lookup(move |c| {
                Ok(c.prepare_cached(FIND)?
                    .query_row([&hash[..]], |r| {
                        let key_hash: Option<Vec<u8>> = r.get(1)?;
                        Ok(SessionRow {
                            key_id: r.get(0)?,
                            key_hash: key_hash.and_then(|h| h.try_into().ok()),
                            created_at: r.get(2)?,
                            last_seen_at: r.get(3)?,
                        })
                    })
                    .optional()?)
            })
            .await
    }

    async fn touch_session(&self, hash: [u8; 32], now: i64) -> Result<(), DbError> {
        self.db
            .write_small(move |c| {
                c.prepare_cached(
                    "UPDATE console_sessions SET last_seen_at = ?2
                     WHERE session_hash = ?1 AND last_seen_at < ?2",
                )?
                .execute(params![&hash[..], now])?;
                Ok(())
            })
            .await
    }

    async fn end_session(&self, hash: [u8; 32]) -> Result<bool, DbError> {
        self.db
            .write_small(move |c| {
                let n = c
                    .prepare_cached("DELETE FROM console_sessions WHERE session_hash = ?1")?
                    .execute([&hash[..]])?;
                Ok(n == 1)
            })
            .await
    }
}
