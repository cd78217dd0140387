//! The commit bus: the uploads of several accounts in one statement on
//! PostgreSQL. The multipart uploads (without an idempotency key) that
//! become ready on a node while its previous commit statement is in flight
//! go together as its next, whatever their accounts
//! (`filestore_commit`, migration 0018): one round trip, one
//! transaction, one WAL flush for all. Per-account batches left a node
//! serving a few accounts with a few uploads in each batch, and a
//! statement for each cost the node a sleep and a wake, and PostgreSQL a
//! flush, per account; on the bus they cost one.
//!
//! Each account's uploads are still judged as if they came alone, in the
//! order they came, as an account's batch is judged; the function
//! does each step once for all the accounts (their rows
//! locked in byte order, so that two nodes' statements lock them in one
//! order; their counts read, their rows written, each in one statement).
//! A statement takes the uploads in the order they became
//! ready, at most [`MOST`]; an account has at most its plan's
//! `concurrent_uploads` in flight, so a busy one delays the others by a
//! statement at most. Before each statement the bus waits for the early
//! reads in flight on the node, of any account (`flights`; a round trip,
//! 5 ms at most), so that the uploads they carry go in it rather than in
//! one of their own behind it.
//!
//! The bus never waits long for a lock: its statement gives up on a row
//! held past `lock_timeout` (100 ms; another node's commit of the same
//! account holds it for a flush), and names the account whose row, or
//! upload token or guard, it was. That account then commits in its batches of its own
//! (`batch`), as before the bus, for [`SOLO_FOR`]; the statement's other
//! uploads go in the bus's next. So one account whose rows are held long
//! (a delete of many files) costs the others on this node at most one such
//! wait in that time. A statement that fails as a whole for another reason
//! has every account in it commit on its own for that time.

use super::commit::{Committed, Pending};
use super::flights::Flights;
use super::group::{Gate, Groups};
use super::{DbError, PgStore};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The most uploads in one statement (a bound on its work and size: 128
/// inline files of the default `inline_max` are 16 MiB).
const MOST: usize = 128;

/// How long an account whose lock a statement gave up on (or every account
/// of a statement that failed for another reason) commits on its own.
pub(super) const SOLO_FOR: Duration = Duration::from_secs(10);

/// What the bus did with an upload: its outcome, or nothing (the upload
/// handed back, to commit in its account's batch of its own).
pub(super) enum Carried {
    Done(Committed),
    Alone(Pending),
}

/// The node's commit bus, per period.
pub(super) struct Bus {
    groups: Arc<Groups<String, Pending, Carried>>,
    /// The accounts committing on their own, until when.
    solo: Mutex<HashMap<String, Instant>>,
    /// Statements of more than one account, and the accounts in them.
    shared: AtomicU64,
    accounts: AtomicU64,
    /// Statements that gave up on a lock, and the accounts in them.
    gave_up: AtomicU64,
    gave_up_accounts: AtomicU64,
}

impl Bus {
    /// Each statement waits (a round trip, 5 ms at most) for the early
    /// reads in flight on this node (`flights`), of any account.
    pub(super) fn new(flights: Arc<Flights>) -> Self {
        let gate: Gate<String> = Box::new(move |_period| flights.landing_any());
        Bus {
            groups: Arc::new(Groups::gated(MOST, gate)),
            solo: Mutex::default(),
            shared: AtomicU64::new(0),
            accounts: AtomicU64::new(0),
            gave_up: AtomicU64::new(0),
            gave_up_accounts: AtomicU64::new(0),
        }
    }

    /// Whether `account` commits on its own for now.
    pub(super) fn is_solo(&self, account: &str) -> bool {
        let solo = self.solo.lock().unwrap_or_else(PoisonError::into_inner);
        solo.get(account)
            .is_some_and(|until| *until > Instant::now())
    }

    /// Has `accounts` commit on their own for [`SOLO_FOR`].
    fn set_solo<'a>(&self, accounts: impl Iterator<Item = &'a str>) {
        let mut solo = self.solo.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        solo.retain(|_, until| *until > now);
        for account in accounts {
            solo.insert(account.to_string(), now + SOLO_FOR);
        }
    }
}

impl PgStore {
    /// The statements this node made of several accounts' uploads, and the
    /// accounts in them (for tests and tools).
    pub fn shared_commits(&self) -> (u64, u64) {
        let bus = &self.commits.bus;
        (
            bus.shared.load(Ordering::Relaxed),
            bus.accounts.load(Ordering::Relaxed),
        )
    }

    /// The statements of this node's bus that gave up on a lock, and the
    /// accounts in them (for tests and tools).
    pub fn bus_lock_give_ups(&self) -> (u64, u64) {
        let bus = &self.commits.bus;
        (
            bus.gave_up.load(Ordering::Relaxed),
            bus.gave_up_accounts.load(Ordering::Relaxed),
        )
    }

    /// The accounts committing on their own for now, sorted (for tests and
    /// tools).
    pub fn solo_accounts(&self) -> Vec<String> {
        let solo = self
            .commits
            .bus
            .solo
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let mut accounts: Vec<String> = solo
            .iter()
            .filter(|(_, until)| **until > now)
            .map(|(account, _)| account.clone())
            .collect();
        accounts.sort();
        accounts
    }

    /// Commits `p` in the bus's next statement; `p` back when it is to
    /// commit in its account's batch of its own instead.
    pub(super) async fn commit_on_bus(&self, p: Pending) -> Result<Committed, Pending> {
        let store = self.clone();
        let carried = self
            .commits
            .bus
            .groups
            .submit(p.ctx.period.clone(), p, move |period, batch| {
                let store = store.clone();
                async move { store.commit_ready(&period, batch).await }
            })
            .await;
        match carried {
            Some(Carried::Done(committed)) => Ok(committed),
            Some(Carried::Alone(p)) => Err(p),
            None => Ok(Err(DbError::Invalid(
                "the statement this upload was in failed".into(),
            ))),
        }
    }

    /// The outcomes of `batch`, in order: the uploads of accounts solo by
    /// now (set apart while these waited) handed back at once; the others
    /// in one statement (`filestore_commit`, each account's
    /// uploads in the order they came). When the database refused it as a
    /// whole, none: each upload is handed back; the account whose lock it
    /// gave up on is solo, or, for another error, every account in it.
    /// When the database could not be had or did not answer in time, that
    /// is every upload's outcome (503).
    async fn commit_ready(&self, period: &str, batch: Vec<Pending>) -> Vec<Carried> {
        let bus = &self.commits.bus;
        let mut out: Vec<Option<Carried>> = Vec::with_capacity(batch.len());
        let (mut places, mut going) = (Vec::new(), Vec::new());
        for (i, p) in batch.into_iter().enumerate() {
            if bus.is_solo(&p.f.account_id) {
                out.push(Some(Carried::Alone(p)));
            } else {
                out.push(None);
                places.push(i);
                going.push(p);
            }
        }
        for (i, c) in places
            .into_iter()
            .zip(self.commit_statement_of(period, going).await)
        {
            out[i] = Some(c);
        }
        out.into_iter().flatten().collect()
    }

    /// [`Self::commit_ready`] for uploads of accounts on the bus.
    async fn commit_statement_of(&self, period: &str, batch: Vec<Pending>) -> Vec<Carried> {
        if batch.is_empty() {
            return Vec::new();
        }
        // By account (stable: each one's in the order they came).
        let mut order: Vec<usize> = (0..batch.len()).collect();
        order.sort_by(|&a, &b| batch[a].f.account_id.cmp(&batch[b].f.account_id));
        let mut slots: Vec<Option<Pending>> = batch.into_iter().map(Some).collect();
        let sorted: Vec<Pending> = order.iter().filter_map(|&i| slots[i].take()).collect();
        let runs: Vec<(&str, &[Pending])> = sorted
            .chunk_by(|a, b| a.f.account_id == b.f.account_id)
            .map(|run| (run[0].f.account_id.as_str(), run))
            .collect();
        let outcome = self.commit_statement(period, &runs, true).await;
        let accounts = runs.len();
        let carried: Vec<Carried> = match outcome {
            Ok(flat) => {
                if accounts > 1 {
                    let bus = &self.commits.bus;
                    bus.shared.fetch_add(1, Ordering::Relaxed);
                    let n = u64::try_from(accounts).unwrap_or(u64::MAX);
                    bus.accounts.fetch_add(n, Ordering::Relaxed);
                }
                flat.into_iter().map(Carried::Done).collect()
            }
            Err(e @ DbError::Pool(_)) => sorted
                .iter()
                .map(|_| Carried::Done(Err(e.shared("committing a batch of uploads"))))
                .collect(),
            Err(e) => {
                let bus = &self.commits.bus;
                match held_account(&e) {
                    Some(held) if runs.iter().any(|(account, _)| *account == held) => {
                        tracing::debug!(error = %e, "a commit of several accounts gave up on a lock");
                        bus.gave_up.fetch_add(1, Ordering::Relaxed);
                        let n = u64::try_from(accounts).unwrap_or(u64::MAX);
                        bus.gave_up_accounts.fetch_add(n, Ordering::Relaxed);
                        bus.set_solo(std::iter::once(held));
                    }
                    _ => {
                        tracing::warn!(
                            error = %e,
                            accounts,
                            "a commit of several accounts failed as a whole; committing each alone"
                        );
                        bus.set_solo(runs.iter().map(|(account, _)| *account));
                    }
                }
                drop(runs);
                sorted.into_iter().map(Carried::Alone).collect()
            }
        };
        // Back in the order they came.
        let mut back: Vec<Option<Carried>> = (0..carried.len()).map(|_| None).collect();
        for (&i, c) in order.iter().zip(carried) {
            back[i] = Some(c);
        }
        back.into_iter().flatten().collect()
    }
}

/// The account whose lock PostgreSQL gave up on (`lock_timeout`, 55P03),
/// when `e` is that: `filestore_commit` names it in the error's DETAIL
/// (migration 0018).
fn held_account(e: &DbError) -> Option<&str> {
    let DbError::Backend(inner) = e else {
        return None;
    };
    let db = inner
        .downcast_ref::<tokio_postgres::Error>()?
        .as_db_error()?;
    if db.code() != &tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE {
        return None;
    }
    db.detail()
}
