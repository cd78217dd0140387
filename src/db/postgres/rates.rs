//! Rate windows on PostgreSQL ([`RateRepo`]): one row per API key, shared
//! by every node, so that a key gets its plan's budget once, not once per
//! node. A key's requests that arrive on a node while its count is in
//! flight are counted together by the next statement (`group::Groups`):
//! one upsert adds them all, and each gets its own place in the window.

use super::group::Groups;
use super::{execute, query_one, query_opt, unsigned, DbError, PgStore};
use crate::db::store::RateRepo;
use crate::domain::ratelimit::{self, Window};
use async_trait::async_trait;
use std::sync::Arc;

/// The most requests one statement counts.
const MOST: usize = 256;

/// The keys with a count in flight on this node; a request is its
/// window's length and its time (ms).
pub(super) type RateGroups = Groups<String, (i64, i64), Result<Window, DbError>>;

pub(super) fn rate_groups() -> Arc<RateGroups> {
    Arc::new(Groups::new(MOST))
}

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
        if count {
            let (store, key) = (self.clone(), key_id.to_string());
            return self
                .windows
                .submit(key, (window_ms, now), move |key, asks| {
                    let store = store.clone();
                    async move { store.count_requests(&key, &asks).await }
                })
                .await
                .unwrap_or_else(|| {
                    Err(DbError::Task("the count this request was in failed".into()))
                });
        }
        on_conn!(self, |c| {
            let last = query_opt(
                c,
                "SELECT window_start, window_end, used FROM rate_windows WHERE key_id = $1",
                &[&key_id],
            )
            .await?
            .map(|r| window_of(&r));
            Ok(Window::at(last, window_ms, now))
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

impl PgStore {
    /// Counts `asks` (each a window's length and a time) of `key_id` in one
    /// upsert that moves the window as `Window::at` + `Window::count` do at
    /// the latest of their times (the window goes on until it ends, else a
    /// new one opens then); the row is locked for the statement, so the
    /// nodes' counts go one after the other. The requests take the places
    /// the statement added, in order.
    async fn count_requests(
        &self,
        key_id: &str,
        asks: &[(i64, i64)],
    ) -> Vec<Result<Window, DbError>> {
        let n = i64::try_from(asks.len()).unwrap_or(i64::MAX);
        let now = asks.iter().map(|a| a.1).max().unwrap_or_default();
        let window_ms = asks.first().map_or(0, |a| a.0);
        let end = now.saturating_add(window_ms.max(ratelimit::MIN_WINDOW_MS));
        let counted = async {
            on_conn!(self, |c| {
                let row = query_one(
                    c,
                    "INSERT INTO rate_windows AS w (key_id, window_start, window_end, used)
                 VALUES ($1, $2, $3, $4)
                 ON CONFLICT (key_id) DO UPDATE SET
                     used = CASE WHEN $2 < w.window_end THEN w.used + $4 ELSE $4 END,
                     window_start = CASE WHEN $2 < w.window_end THEN w.window_start ELSE $2 END,
                     window_end = CASE WHEN $2 < w.window_end THEN w.window_end ELSE $3 END
                 RETURNING window_start, window_end, used",
                    &[&key_id, &now, &end, &n],
                )
                .await?;
                Ok::<_, DbError>(window_of(&row))
            })
        }
        .await;
        match counted {
            Ok(last) => (0..asks.len())
                .map(|i| {
                    let before = u64::try_from(asks.len() - 1 - i).unwrap_or(u64::MAX);
                    Ok(Window {
                        used: last.used.saturating_sub(before),
                        ..last
                    })
                })
                .collect(),
            Err(e) => asks
                .iter()
                .map(|_| Err(e.shared("counting a rate window")))
                .collect(),
        }
    }
}
