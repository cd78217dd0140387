//! Rate windows on SQLite: kept in memory
//! ([`RateLimiter`](crate::domain::ratelimit::RateLimiter)), as SQLite
//! serves one node; and so are the strangers' upload bodies arriving at
//! once (`service::inflight`: [`SlotRepo`]'s defaults).

use super::{DbError, SqliteStore};
use crate::db::store::{RateRepo, SlotRepo};
use crate::domain::ratelimit::Window;
use async_trait::async_trait;

#[async_trait]
impl RateRepo for SqliteStore {
    async fn rate_window(
        &self,
        key_id: &str,
        window_ms: i64,
        now: i64,
        count: bool,
    ) -> Result<Window, DbError> {
        Ok(self.limiter.window(key_id, window_ms, now, count))
    }

    async fn prune_rate_windows(&self, now: i64) -> Result<usize, DbError> {
        Ok(self.limiter.prune(now))
    }
}

impl SlotRepo for SqliteStore {}
