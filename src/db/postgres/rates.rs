//! Rate windows on PostgreSQL ([`RateRepo`]): one row per API key, shared
//! by every node, so that a key gets its plan's budget once, not once per
//! node. A key's requests that arrive on a node while its count is in
//! flight are counted together by the next statement (`group::Groups`):
//! one upsert adds them all, and each gets its own place in the window.

use super::accounts::{commitments_at, commitments_sql};
use super::group::Groups;
use super::{execute, query_one, query_opt, unsigned, DbError, PgStore};
use crate::db::model::Commitments;
use crate::db::store::RateRepo;
use crate::domain::ratelimit::{self, Window};
use async_trait::async_trait;
use std::sync::{Arc, LazyLock};
use tokio_postgres::types::ToSql;

/// The most requests one statement counts.
const MOST: usize = 256;

/// A request to count: its window's length and its time (ms), and for an
/// upload the account and period whose commitments to read with the count.
pub(super) struct Ask {
    window_ms: i64,
    now: i64,
    upload: Option<(String, String)>,
}

/// What a count gives a request: its place in the window, and the
/// commitments when they were asked for.
type Outcome = Result<(Window, Option<Commitments>), DbError>;

/// The keys with a count in flight on this node, and the requests waiting
/// to be counted by the next statement.
pub(super) type RateGroups = Groups<String, Ask, Outcome>;

pub(super) fn rate_groups() -> Arc<RateGroups> {
    Arc::new(Groups::new(MOST))
}

/// Counts requests of a key: `$1` the key, `$2` the time, `$3` the end of
/// a window opened then, `$4` how many. It moves the window as
/// `Window::at` + `Window::count` do (the window goes on until it ends,
/// else a new one opens at `$2`).
const COUNT: &str = "INSERT INTO rate_windows AS w (key_id, window_start, window_end, used)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (key_id) DO UPDATE SET
         used = CASE WHEN $2 < w.window_end THEN w.used + $4 ELSE $4 END,
         window_start = CASE WHEN $2 < w.window_end THEN w.window_start ELSE $2 END,
         window_end = CASE WHEN $2 < w.window_end THEN w.window_end ELSE $3 END
     RETURNING window_start, window_end, used";

/// [`COUNT`], and in the same statement (one round trip) the commitments
/// of account `$5` in period `$6` at `$2` (`accounts::commitments_sql`).
static COUNT_AND_READ: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH w AS ({COUNT}), held AS ({})
         SELECT w.window_start, w.window_end, w.used, held.* FROM w, held",
        commitments_sql(5, 6, 2, 7)
    )
});

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
    /// upsert (`COUNT`); the row is locked for the statement, so requests
    /// on every node count one by one (`rate_windows` is unlogged: its
    /// writes wait for no WAL flush). Without, the window of `key_id` at
    /// `now`, counting nothing.
    async fn rate_window(
        &self,
        key_id: &str,
        window_ms: i64,
        now: i64,
        count: bool,
    ) -> Result<Window, DbError> {
        if count {
            let ask = Ask {
                window_ms,
                now,
                upload: None,
            };
            return self.count(key_id, ask).await.map(|(window, _)| window);
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

    /// The count and the commitments in one statement (`COUNT_AND_READ`).
    async fn count_upload(
        &self,
        key_id: &str,
        window_ms: i64,
        now: i64,
        account_id: &str,
        period: &str,
    ) -> Result<(Window, Option<Commitments>), DbError> {
        let ask = Ask {
            window_ms,
            now,
            upload: Some((account_id.to_string(), period.to_string())),
        };
        self.count(key_id, ask).await
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
    /// Counts a request in the next statement of its key on this node.
    async fn count(&self, key_id: &str, ask: Ask) -> Outcome {
        let store = self.clone();
        self.windows
            .submit(key_id.to_string(), ask, move |key_id, asks| {
                let store = store.clone();
                async move { store.count_requests(&key_id, &asks).await }
            })
            .await
            .unwrap_or_else(|| Err(DbError::Task("the count this request was in failed".into())))
    }

    /// Counts `asks` of `key_id` in one upsert at the latest of their times;
    /// when some are uploads, it also reads then the commitments of the
    /// last one's account and period, which the uploads of that period get
    /// (an upload of another, across a month's turn, reads its own later).
    /// The row is locked for the statement, so the nodes' counts go one
    /// after the other. The requests take the places the statement added,
    /// in order.
    async fn count_requests(&self, key_id: &str, asks: &[Ask]) -> Vec<Outcome> {
        let n = i64::try_from(asks.len()).unwrap_or(i64::MAX);
        let now = asks.iter().map(|a| a.now).max().unwrap_or_default();
        let window_ms = asks.first().map_or(0, |a| a.window_ms);
        let end = now.saturating_add(window_ms.max(ratelimit::MIN_WINDOW_MS));
        let of = asks.iter().rev().find_map(|a| a.upload.as_ref());
        // A key is one account's: with uploads among them, that account's
        // next commit waits for this (`flights`).
        let _aloft = of.map(|(account, _)| self.flights.take_off(account.clone()));
        let counted = async {
            on_conn!(self, |c| {
                let row = match of {
                    None => query_one(c, COUNT, &[&key_id, &now, &end, &n]).await?,
                    Some((account, period)) => {
                        let params: [&(dyn ToSql + Sync); 7] =
                            [&key_id, &now, &end, &n, account, period, &None::<&str>];
                        query_one(c, &COUNT_AND_READ, &params).await?
                    }
                };
                let held = of.map(|_| commitments_at(&row, 3));
                Ok::<_, DbError>((window_of(&row), held))
            })
        }
        .await;
        match counted {
            Ok((last, held)) => asks
                .iter()
                .enumerate()
                .map(|(i, ask)| {
                    let before = u64::try_from(asks.len() - 1 - i).unwrap_or(u64::MAX);
                    let window = Window {
                        used: last.used.saturating_sub(before),
                        ..last
                    };
                    let read = ask.upload.as_ref() == of;
                    Ok((window, held.filter(|_| read)))
                })
                .collect(),
            Err(e) => asks
                .iter()
                .map(|_| Err(e.shared("counting a rate window")))
                .collect(),
        }
    }
}
