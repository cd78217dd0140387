//! The server's own needs on PostgreSQL ([`OpsRepo`]): its settings
//! (`meta`), a liveness ping and the pool's state.

use super::{execute, query, query_one, DbError, PgStore};
use crate::db::model::PoolStats;
use crate::db::store::OpsRepo;
use async_trait::async_trait;

#[async_trait]
impl OpsRepo for PgStore {
    /// The value of `key`, or `value` stored now. The insert waits for a
    /// concurrent one of the same key, then the read sees the winner's value.
    async fn meta_get_or_insert(&self, key: &str, value: String) -> Result<String, DbError> {
        in_tx!(self, |tx| {
            execute(
                &tx,
                "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                &[&key, &value],
            )
            .await?;
            let row = query_one(&tx, "SELECT value FROM meta WHERE key = $1", &[&key]).await?;
            Ok(row.get(0))
        })
    }

    async fn ping(&self) -> Result<(), DbError> {
        on_conn!(self, |c| query(c, "SELECT 1", &[]).await.map(|_| ()))
    }

    fn pool_stats(&self) -> PoolStats {
        let s = self.pool.status();
        PoolStats {
            connections: u32::try_from(s.size).unwrap_or(u32::MAX),
            idle_connections: u32::try_from(s.available).unwrap_or(0),
        }
    }
}
