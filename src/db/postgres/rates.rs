//! Rate windows on PostgreSQL ([`RateRepo`]): one row per API key, shared
//! by every node, so that a key gets its plan's budget once, not once per
//! node.

use super::{execute, query_one, query_opt, unsigned, DbError, PgStore};
use crate::db::store::RateRepo;
use crate::domain::ratelimit::{self, Window};
use async_trait::async_trait;

fn window_of(r: &tokio_postgres::Row) -> Window {
    Window {
        start: r.get(0),
        end: r.get(1),
        used: unsigned(r.get(2)),
    }
}

#[async_trait]
impl RateRepo for PgStore {
    /// With `count`, counts a request of `key_id` in its rate window, in one
    /// upsert that moves the window as `Window::at` + `Window::count` do (the
    /// window goes on until it ends, else a new one opens at `now`); the row
    /// is locked for the statement, so requests on every node count one by
    /// one (`rate_windows` is unlogged: its writes wait for no WAL flush).
    /// Without, the window of `key_id` at `now`, counting nothing.
    async fn rate_window(
        &self,
        key_id: &str,
        window_ms: i64,
        now: i64,
        count: bool,
    ) -> Result<Window, DbError> {
        on_conn!(self, |c| {
            if count {
                let end = now.saturating_add(window_ms.max(ratelimit::MIN_WINDOW_MS));
                let row = query_one(
                    c,
                    "INSERT INTO rate_windows AS w (key_id, window_start, window_end, used)
                     VALUES ($1, $2, $3, 1)
                     ON CONFLICT (key_id) DO UPDATE SET
                         used = CASE WHEN $2 < w.window_end THEN w.used + 1 ELSE 1 END,
                         window_start = CASE WHEN $2 < w.window_end THEN w.window_start ELSE $2 END,
                         window_end = CASE WHEN $2 < w.window_end THEN w.window_end ELSE $3 END
                     RETURNING window_start, window_end, used",
                    &[&key_id, &now, &end],
                )
                .await?;
                Ok(window_of(&row))
            } else {
                let last = query_opt(
                    c,
                    "SELECT window_start, window_end, used FROM rate_windows WHERE key_id = $1",
                    &[&key_id],
                )
                .await?
                .map(|r| window_of(&r));
                Ok(Window::at(last, window_ms, now))
            }
        })
    }

    /// Forgets the windows that ended before `now`.
    async fn prune_rate_windows(&self, now: i64) -> Result<usize, DbError> {
        on_conn!(self, |c| {
            let n = execute(c, "DELETE FROM rate_windows WHERE window_end < $1", &[&now]).await?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
    }
}
