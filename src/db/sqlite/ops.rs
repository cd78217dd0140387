//! Operations on SQLite: settings kept in `meta` (the signing secret), the
//! health ping and the read pool's numbers.

use super::{owned, write_tx, DbError, OptionalExtension, SqliteStore};
use crate::db::model::PoolStats;
use crate::db::store::OpsRepo;
use async_trait::async_trait;

#[async_trait]
impl OpsRepo for SqliteStore {
    /// Reads one value of `meta`, or stores `value` when absent (in one
    /// transaction).
    async fn meta_get_or_insert(&self, key: &str, value: String) -> Result<String, DbError> {
        let key = owned(key);
        self.db
            .write(move |c| {
                let tx = write_tx(c)?;
                let existing: Option<String> = tx
                    .query_row("SELECT value FROM meta WHERE key = ?1", [&key], |r| {
                        r.get(0)
                    })
                    .optional()?;
                let value = if let Some(v) = existing {
                    v
                } else {
                    tx.execute(
                        "INSERT INTO meta (key, value) VALUES (?1, ?2)",
                        [&key, &value],
                    )?;
                    value
                };
                tx.commit()?;
                Ok(value)
            })
            .await
    }

    async fn ping(&self) -> Result<(), DbError> {
        self.db.ping().await
    }

    fn pool_stats(&self) -> PoolStats {
        let s = self.db.pool_state();
        PoolStats {
            connections: s.connections,
            idle_connections: s.idle_connections,
        }
    }
}
