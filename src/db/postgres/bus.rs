//! The commit bus: the batches of several accounts in one statement on
//! PostgreSQL. An account's uploads form its batches (`batch`: one in
//! flight per account on this node); the batches of every account that
//! become ready while the node's previous statement of them is in flight
//! go together as its next (`filestore_commit_accounts`, migration 0014):
//! one round trip, one transaction, one WAL flush for all. With a few
//! accounts sharing a node, each one's batch holds a few uploads, and a
//! statement for each cost the node a sleep and a wake, and PostgreSQL a
//! flush, per account; on the bus they cost one.
//!
//! Each account's batch is still judged alone, as if it came by itself
//! (the function runs `filestore_commit_uploads` for each, the accounts in
//! byte order, so that two nodes' statements lock their rows in one order).
//! A statement takes an account's batch once (one per account in flight),
//! so a busy account cannot crowd the others out of it. Before each, the
//! bus waits for the early reads in flight on the node, of any account
//! (`flights`; a round trip, 5 ms at most), so that the account batches
//! they let on go in it rather than in one of their own behind it.
//!
//! The bus never waits long for a lock: its statement gives up on a row
//! held past `lock_timeout` (100 ms; another node's commit of the same
//! account holds it for a flush), and then each account's batch commits in
//! a statement of its own, as they all did before the bus. Those accounts
//! then commit on their own for [`SOLO_FOR`], so one account whose rows are
//! held long (a delete of many files) costs the others on this node at
//! most one such wait in that time.

use super::batch::{Committed, Pending};
use super::flights::Flights;
use super::group::{Gate, Groups};
use super::{DbError, PgStore};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The most account batches in one statement.
const MOST: usize = 16;

/// The most uploads in one statement (a bound on its work and size: 256
/// inline files of the default `inline_max` are 32 MiB).
const MOST_UPLOADS: usize = 256;

/// How long accounts whose statement gave up on a lock commit on their own.
pub(super) const SOLO_FOR: Duration = Duration::from_secs(10);

/// An account's batch, ready to go.
pub(super) struct Ready {
    account: String,
    batch: Vec<Pending>,
}

/// What the bus did with an account's batch: its outcomes, or nothing (the
/// batch handed back, to commit on its own).
pub(super) enum Carried {
    Done(Vec<Committed>),
    Alone(Vec<Pending>),
}

/// The node's commit bus, per period.
pub(super) struct Bus {
    groups: Arc<Groups<String, Ready, Carried>>,
    /// The accounts committing on their own, until when.
    solo: Mutex<HashMap<String, Instant>>,
    /// Statements of more than one account, and the account batches in them.
    shared: AtomicU64,
    accounts: AtomicU64,
}

impl Bus {
    /// Each statement waits (a round trip, 5 ms at most) for the early
    /// reads in flight on this node (`flights`), of any account: the
    /// account batches they let on join it.
    pub(super) fn new(flights: Arc<Flights>) -> Self {
        let gate: Gate<String> = Box::new(move |_period| flights.landing_any());
        let groups = Groups::weighed(MOST, MOST_UPLOADS, |r: &Ready| r.batch.len());
        Bus {
            groups: Arc::new(groups.with_gate(gate)),
            solo: Mutex::default(),
            shared: AtomicU64::new(0),
            accounts: AtomicU64::new(0),
        }
    }

    /// Whether `account` commits on its own for now.
    fn is_solo(&self, account: &str) -> bool {
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
    /// The statements this node made of several accounts' batches, and the
    /// account batches in them (for tests and tools).
    pub fn shared_commits(&self) -> (u64, u64) {
        let bus = &self.commits.bus;
        (
            bus.shared.load(Ordering::Relaxed),
            bus.accounts.load(Ordering::Relaxed),
        )
    }

    /// One outcome per upload of `batch` (of `account`, in `period`): in the
    /// bus's next statement, or on its own while the account is solo.
    pub(super) async fn commit_account(
        &self,
        account: String,
        period: String,
        batch: Vec<Pending>,
    ) -> Vec<Committed> {
        let bus = &self.commits.bus;
        if bus.is_solo(&account) {
            return self.commit_batch(&account, &period, batch).await;
        }
        let n = batch.len();
        let store = self.clone();
        let ready = Ready {
            account: account.clone(),
            batch,
        };
        let carried = bus
            .groups
            .submit(period.clone(), ready, move |period, ready| {
                let store = store.clone();
                async move { store.commit_ready(&period, ready).await }
            })
            .await;
        match carried {
            Some(Carried::Done(outcomes)) => outcomes,
            // Off the bus, which goes on meanwhile.
            Some(Carried::Alone(batch)) => self.commit_batch(&account, &period, batch).await,
            None => (0..n)
                .map(|_| {
                    Err(DbError::Invalid(
                        "the statement this batch of uploads was in failed".into(),
                    ))
                })
                .collect(),
        }
    }

    /// The outcomes of the account batches of `ready`, in order: in one
    /// statement (`filestore_commit_accounts`); when the database refused
    /// it as a whole (a lock held past its timeout, or an error of its
    /// own), none: each batch is handed back to commit in a statement of
    /// its own, and its account is solo. When the database could not be
    /// had or did not answer in time, that is every upload's outcome (503).
    async fn commit_ready(&self, period: &str, ready: Vec<Ready>) -> Vec<Carried> {
        let mut order: Vec<usize> = (0..ready.len()).collect();
        order.sort_by(|&a, &b| ready[a].account.cmp(&ready[b].account));
        let accounts: Vec<(&str, &[Pending])> = order
            .iter()
            .map(|&i| (ready[i].account.as_str(), ready[i].batch.as_slice()))
            .collect();
        match self.commit_statement(period, &accounts, true).await {
            Ok(flat) => {
                if accounts.len() > 1 {
                    let bus = &self.commits.bus;
                    bus.shared.fetch_add(1, Ordering::Relaxed);
                    let n = u64::try_from(accounts.len()).unwrap_or(u64::MAX);
                    bus.accounts.fetch_add(n, Ordering::Relaxed);
                }
                let mut flat = flat.into_iter();
                let mut sorted: Vec<(usize, Vec<Committed>)> = order
                    .iter()
                    .map(|&i| (i, flat.by_ref().take(ready[i].batch.len()).collect()))
                    .collect();
                sorted.sort_by_key(|(i, _)| *i);
                sorted
                    .into_iter()
                    .map(|(_, outcomes)| Carried::Done(outcomes))
                    .collect()
            }
            Err(e @ DbError::Pool(_)) => ready
                .iter()
                .map(|r| {
                    let failed = r.batch.iter();
                    Carried::Done(
                        failed
                            .map(|_| Err(e.shared("committing a batch of uploads")))
                            .collect(),
                    )
                })
                .collect(),
            Err(e) => {
                if lock_timed_out(&e) {
                    tracing::debug!(error = %e, "a commit of several accounts gave up on a lock");
                } else {
                    tracing::warn!(
                        error = %e,
                        accounts = ready.len(),
                        "a commit of several accounts failed as a whole; committing each alone"
                    );
                }
                drop(accounts);
                let bus = &self.commits.bus;
                bus.set_solo(ready.iter().map(|r| r.account.as_str()));
                ready.into_iter().map(|r| Carried::Alone(r.batch)).collect()
            }
        }
    }
}

/// Whether `e` is PostgreSQL giving up on a lock (`lock_timeout`, 55P03).
fn lock_timed_out(e: &DbError) -> bool {
    let DbError::Backend(inner) = e else {
        return false;
    };
    inner
        .downcast_ref::<tokio_postgres::Error>()
        .and_then(tokio_postgres::Error::code)
        == Some(&tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE)
}
