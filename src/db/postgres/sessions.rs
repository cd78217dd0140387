//! Console sessions on PostgreSQL ([`SessionRepo`]): in the shared
//! database, so a session made on one node works on every node.

use super::{execute, has_nul, query_opt, DbError, PgStore};
use crate::db::sessions::{SessionRepo, SessionRow};
use async_trait::async_trait;

#[async_trait]
impl SessionRepo for PgStore {
    async fn create_session(
        &self,
        hash: [u8; 32],
        key_id: &str,
        now: i64,
        idle_before: i64,
    ) -> Result<(), DbError> {
        if has_nul(&[key_id]) {
            return Err(DbError::Invalid("a key id holds a NUL".into()));
        }
        let hash = &hash[..];
        on_conn!(self, |c| {
            execute(
                c,
                "DELETE FROM console_sessions WHERE last_seen_at < $1",
                &[&idle_before],
            )
            .await?;
            execute(
                c,
                "INSERT INTO console_sessions (session_hash, key_id, created_at, last_seen_at)
                 VALUES ($1, $2, $3, $3)",
                &[&hash, &key_id, &now],
            )
            .await?;
            Ok(())
        })
    }

    async fn session(&self, hash: [u8; 32]) -> Result<Option<SessionRow>, DbError> {
        let hash = &hash[..];
        on_conn!(self, |c| {
            let row = query_opt(
                c,
                "SELECT s.key_id, k.key_hash, s.created_at, s.last_seen_at
                 FROM console_sessions s LEFT JOIN api_keys k ON k.id = s.key_id
                 WHERE s.session_hash = $1",
                &[&hash],
            )
            .await?;
            Ok(row.map(|r| {
                let key_hash: Option<Vec<u8>> = r.get(1);
                SessionRow {
                    key_id: r.get(0),
                    key_hash: key_hash.and_then(|h| h.try_into().ok()),
                    created_at: r.get(2),
                    last_seen_at: r.get(3),
                }
            }))
        })
    }

    async fn touch_session(&self, hash: [u8; 32], now: i64) -> Result<(), DbError> {
        let hash = &hash[..];
        on_conn!(self, |c| {
            execute(
                c,
                "UPDATE console_sessions SET last_seen_at = $2
                 WHERE session_hash = $1 AND last_seen_at < $2",
                &[&hash, &now],
            )
            .await?;
            Ok(())
        })
    }

    async fn end_session(&self, hash: [u8; 32]) -> Result<bool, DbError> {
        let hash = &hash[..];
        on_conn!(self, |c| {
            let n = execute(
                c,
                "DELETE FROM console_sessions WHERE session_hash = $1",
                &[&hash],
            )
            .await?;
            Ok(n == 1)
        })
    }
}
