//! Rate windows on PostgreSQL ([`RateRepo`]): one row per API key, shared
//! by every node, so that a key gets its plan's budget once, not once per
//! node. A key's requests that arrive on a node while its count is in
//! flight are counted together by the next statement (`group::Groups`):
//! one upsert adds them all, and each gets its own place in the window.
//! The counts of several keys that become ready while the node's previous
//! count is in flight go together in one statement (the keys' rows locked
//! in key order, the order of every node's such statements), with the
//! early reads of their accounts; a key's count is one of them, so a busy
//! key cannot crowd the others out.

use super::accounts::{commitments_at, commitments_sql};
use super::group::{Gate, Groups};
use super::{execute, query, query_one, query_opt, unsigned, DbError, PgStore};
use crate::db::model::Commitments;
use crate::db::store::RateRepo;
use crate::domain::ratelimit::{self, Window};
use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use tokio_postgres::types::ToSql;

/// The most requests one statement counts for a key.
const MOST: usize = 256;

/// The most keys one statement counts.
const MOST_KEYS: usize = 64;

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

/// A key's count ready to go, on the node's count bus.
pub(super) struct Counting {
    key_id: String,
    asks: Vec<Ask>,
}

/// The node's count bus: the keys' counts that wait while one is in flight.
pub(super) struct CountBus {
    groups: Arc<Groups<(), Counting, Vec<Outcome>>>,
    /// Statements that counted several keys.
    shared: AtomicU64,
}

pub(super) fn rate_groups() -> (Arc<RateGroups>, CountBus) {
    // Before each statement that has room, the tasks a landing woke go
    // first: the keys' groups that statement answered hand the bus their
    // next counts (the requests that came meanwhile), which so go with the
    // counts that waited, not in a statement behind them (two keys took
    // turns, a statement each, on two nodes: 0.28 count statements per
    // upload against 0.17 for one key).
    let gate: Gate<()> = Box::new(|()| Some(Box::pin(std::future::ready(()))));
    let bus = CountBus {
        groups: Arc::new(Groups::gated(MOST_KEYS, gate)),
        shared: AtomicU64::new(0),
    };
    (Arc::new(Groups::new(MOST)), bus)
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
        commitments_sql("$5", "$6", "$2", "$7")
    )
});

/// Counts the requests of several keys in one statement, as [`COUNT`]
/// counts one key's: `$1` the keys (each once), `$2` their times, `$3`
/// the ends of windows opened then, `$4` how many each; for a key whose
/// count carries an early read, `$5` the account and `$6` the period whose
/// commitments to read (else NULL). The rows are upserted in key order.
static COUNT_KEYS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH a AS (
             SELECT * FROM unnest($1::TEXT[], $2::BIGINT[], $3::BIGINT[], $4::BIGINT[],
                                  $5::TEXT[], $6::TEXT[])
                 AS a(key_id, now, window_end, n, account, period)),
         w AS (
             INSERT INTO rate_windows AS w (key_id, window_start, window_end, used)
             SELECT key_id, now, window_end, n FROM a ORDER BY key_id COLLATE \"C\"
             ON CONFLICT (key_id) DO UPDATE SET
                 used = CASE WHEN EXCLUDED.window_start < w.window_end
                        THEN w.used + EXCLUDED.used ELSE EXCLUDED.used END,
                 window_start = CASE WHEN EXCLUDED.window_start < w.window_end
                        THEN w.window_start ELSE EXCLUDED.window_start END,
                 window_end = CASE WHEN EXCLUDED.window_start < w.window_end
                        THEN w.window_end ELSE EXCLUDED.window_end END
             RETURNING key_id, window_start, window_end, used)
         SELECT w.window_start, w.window_end, w.used, held.*, w.key_id
         FROM w JOIN a ON a.key_id = w.key_id
         LEFT JOIN LATERAL ({}) held ON a.account IS NOT NULL",
        commitments_sql("a.account", "a.period", "a.now", "NULL::TEXT")
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

    /// Forgets the windows that ended before `now` (but those a count holds).
    async fn prune_rate_windows(&self, now: i64) -> Result<usize, DbError> {
        on_conn!(self, |c| {
            // Rows a count holds are left for the next sweep: a count of
            // several keys holds each it has upserted while it waits for
            // the next, in key order, which a sweep in another order could
            // turn into a circle of waits.
            let n = execute(
                c,
                "DELETE FROM rate_windows WHERE key_id IN (
                     SELECT key_id FROM rate_windows WHERE window_end < $1
                     FOR UPDATE SKIP LOCKED)",
                &[&now],
            )
            .await?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
    }
}

impl PgStore {
    /// The statements this node made that counted several keys (for tests
    /// and tools).
    pub fn shared_counts(&self) -> u64 {
        self.counts.shared.load(Ordering::Relaxed)
    }

    /// Counts a request in the next statement of its key on this node.
    async fn count(&self, key_id: &str, ask: Ask) -> Outcome {
        let store = self.clone();
        self.windows
            .submit(key_id.to_string(), ask, move |key_id, asks| {
                let store = store.clone();
                async move { store.count_on_bus(key_id, asks).await }
            })
            .await
            .unwrap_or_else(|| Err(DbError::Task("the count this request was in failed".into())))
    }

    /// Counts a key's `asks` in the node's next count statement.
    async fn count_on_bus(&self, key_id: String, asks: Vec<Ask>) -> Vec<Outcome> {
        let n = asks.len();
        // A key is one account's: with uploads among them, that account's
        // next commit waits for this count (`flights`), from now on.
        let of = tally(&asks).of.map(|(account, _)| account.clone());
        let _aloft = of.map(|account| self.flights.take_off(account));
        let store = self.clone();
        self.counts
            .groups
            .submit((), Counting { key_id, asks }, move |(), counting| {
                let store = store.clone();
                async move { store.count_keys(counting).await }
            })
            .await
            .unwrap_or_else(|| {
                (0..n)
                    .map(|_| Err(DbError::Task("the count this request was in failed".into())))
                    .collect()
            })
    }

    /// Counts the requests of several keys in one statement (`COUNT_KEYS`),
    /// each key's as [`Self::count_requests`] does; one key's alone. When
    /// the database refused that statement as a whole (an error of its
    /// own), each key's in a statement of its own.
    async fn count_keys(&self, counting: Vec<Counting>) -> Vec<Vec<Outcome>> {
        if let [one] = counting.as_slice() {
            return vec![self.count_requests(&one.key_id, &one.asks).await];
        }
        let tallies: Vec<Tally> = counting.iter().map(|c| tally(&c.asks)).collect();
        let keys: Vec<&str> = counting.iter().map(|c| c.key_id.as_str()).collect();
        let nows: Vec<i64> = tallies.iter().map(|t| t.now).collect();
        let ends: Vec<i64> = tallies.iter().map(|t| t.end).collect();
        let ns: Vec<i64> = tallies.iter().map(|t| t.n).collect();
        let accounts: Vec<Option<&str>> =
            tallies.iter().map(|t| t.of.map(|o| o.0.as_str())).collect();
        let periods: Vec<Option<&str>> =
            tallies.iter().map(|t| t.of.map(|o| o.1.as_str())).collect();
        let counted = async {
            on_conn!(self, |c| {
                let params: [&(dyn ToSql + Sync); 6] =
                    [&keys, &nows, &ends, &ns, &accounts, &periods];
                let rows = query(c, &COUNT_KEYS, &params).await?;
                let mut found: HashMap<String, (Window, Option<Commitments>)> = rows
                    .iter()
                    .map(|r| {
                        let held: Option<i64> = r.get(3);
                        let held = held.map(|_| commitments_at(r, 3));
                        (r.get::<_, String>(7), (window_of(r), held))
                    })
                    .collect();
                Ok::<_, DbError>(keys.iter().map(|k| found.remove(*k)).collect::<Vec<_>>())
            })
        }
        .await;
        match counted {
            Ok(found) => {
                self.counts.shared.fetch_add(1, Ordering::Relaxed);
                counting
                    .iter()
                    .zip(tallies.iter())
                    .zip(found)
                    .map(|((c, t), found)| {
                        let found = found.ok_or_else(|| {
                            DbError::Invalid(format!("the count of key {} gave no row", c.key_id))
                        });
                        places(
                            &c.asks,
                            t.of,
                            found.map(|(w, held)| (w, held.filter(|_| t.of.is_some()))),
                        )
                    })
                    .collect()
            }
            Err(e @ DbError::Pool(_)) => counting
                .iter()
                .map(|c| {
                    c.asks
                        .iter()
                        .map(|_| Err(e.shared("counting rate windows")))
                        .collect()
                })
                .collect(),
            Err(e) => {
                tracing::warn!(error = %e, keys = counting.len(),
                    "a count of several keys failed as a whole; counting each alone");
                let each = counting
                    .iter()
                    .map(|c| self.count_requests(&c.key_id, &c.asks));
                futures_util::future::join_all(each).await
            }
        }
    }

    /// Counts `asks` of `key_id` in one upsert at the latest of their times;
    /// when some are uploads, it also reads then the commitments of the
    /// last one's account and period, which the uploads of that period get
    /// (an upload of another, across a month's turn, reads its own later).
    /// The row is locked for the statement, so the nodes' counts go one
    /// after the other. The requests take the places the statement added,
    /// in order.
    async fn count_requests(&self, key_id: &str, asks: &[Ask]) -> Vec<Outcome> {
        let Tally { n, now, end, of } = tally(asks);
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
        places(asks, of, counted)
    }
}

/// What a key's count of `asks` adds: how many, at the latest of their
/// times, with the end of a window opened then; and, when some are
/// uploads, the account and period whose commitments to read with it (the
/// last one's).
struct Tally<'a> {
    n: i64,
    now: i64,
    end: i64,
    of: Option<&'a (String, String)>,
}

fn tally(asks: &[Ask]) -> Tally<'_> {
    let now = asks.iter().map(|a| a.now).max().unwrap_or_default();
    let window_ms = asks.first().map_or(0, |a| a.window_ms);
    Tally {
        n: i64::try_from(asks.len()).unwrap_or(i64::MAX),
        now,
        end: now.saturating_add(window_ms.max(ratelimit::MIN_WINDOW_MS)),
        of: asks.iter().rev().find_map(|a| a.upload.as_ref()),
    }
}

/// Each of `asks` its outcome from what their count came to (the window
/// after it, and the commitments of `of` when read): the places the count
/// added, in order, and the commitments to the uploads of `of`.
fn places(
    asks: &[Ask],
    of: Option<&(String, String)>,
    counted: Result<(Window, Option<Commitments>), DbError>,
) -> Vec<Outcome> {
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
