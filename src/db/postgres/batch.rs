//! An account's multipart uploads committed in batches on PostgreSQL: the
//! uploads (of one period) that arrive while one of the account's commits
//! is in flight on this node go together as its next commit ([`Groups`]):
//! one statement (`filestore_commit`, migration 0018), one
//! transaction and one WAL flush for all of them. The account row's lock,
//! held through the flush, then serves a batch instead of one upload. Each
//! upload keeps its own outcome: one refused (the quota, a spent token)
//! writes nothing, and the ones after it in the batch are judged with the
//! ones before, exactly as if they had come one by one. Each batch, before
//! it goes, waits (a round trip, 5 ms at most) for the early reads of the
//! account's batched uploads in flight on this node (`flights`), whose
//! uploads then join it. These batches are the way of an account off the
//! node's commit bus (`bus`, which carries every account's uploads at
//! once) for a while; the bus's statement is made here too
//! (`commit_statement`).

use super::bus::Bus;
use super::commit::{call, commit_alone, outcome_of, Columns, Committed, How, Pending};
use super::flights::Flights;
use super::group::{Gate, Groups};
use super::{DbError, PgStore};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The most uploads in one batch (a bound on one statement's work and
/// size: 64 inline files of the default `inline_max` are 8 MiB).
const MOST: usize = 64;

/// The accounts with a commit in flight on this node, and what their
/// commits came to.
pub(super) struct CommitGroups {
    groups: Arc<Groups<(String, String), Pending, Committed>>,
    /// The batches of several accounts in one statement (`bus`).
    pub(super) bus: Bus,
    /// Statements that committed more than one upload, and the uploads
    /// they committed together.
    batches: AtomicU64,
    batched: AtomicU64,
}

impl CommitGroups {
    /// An account's next batch waits for the early reads of its uploads
    /// aloft (`flights`), so that the uploads they carry go in it.
    pub(super) fn new(flights: Arc<Flights>) -> Self {
        let bus = Bus::new(Arc::clone(&flights));
        let gate: Gate<(String, String)> =
            Box::new(move |(account, _period)| flights.landing(account));
        CommitGroups {
            groups: Arc::new(Groups::gated(MOST, gate)),
            bus,
            batches: AtomicU64::new(0),
            batched: AtomicU64::new(0),
        }
    }
}

impl PgStore {
    /// The batches of more than one upload this node committed in one
    /// statement, and the uploads in them (for tests and tools).
    pub fn upload_batches(&self) -> (u64, u64) {
        (
            self.commits.batches.load(Ordering::Relaxed),
            self.commits.batched.load(Ordering::Relaxed),
        )
    }

    /// Commits `p` (no idempotency key, no resumable upload's) in the
    /// node's next statement (`bus`), or, while its account commits on its
    /// own, in its account's next batch. An upload handed back by a
    /// statement that gave up on another account's lock goes in the bus's
    /// next (once).
    pub(super) async fn commit_grouped(&self, mut p: Pending) -> Committed {
        for _ in 0..2 {
            if self.commits.bus.is_solo(&p.f.account_id) {
                break;
            }
            match self.commit_on_bus(p).await {
                Ok(committed) => return committed,
                Err(back) => p = back,
            }
        }
        self.commit_alone_grouped(p).await
    }

    /// Commits `p` in its account's next batch of its own.
    async fn commit_alone_grouped(&self, p: Pending) -> Committed {
        let store = self.clone();
        let key = (p.f.account_id.clone(), p.ctx.period.clone());
        self.commits
            .groups
            .submit(key, p, move |(account, period), batch| {
                let store = store.clone();
                async move { store.commit_batch(&account, &period, batch).await }
            })
            .await
            .unwrap_or_else(|| {
                Err(DbError::Invalid(
                    "the batch of uploads this one was in failed".to_string(),
                ))
            })
    }

    /// One outcome per upload of `batch`, in order: together in one
    /// statement; when the database refused that statement as a whole (an
    /// error of its own), one by one, so each gets an outcome of its own.
    /// When it could not be had or did not answer in time, that is every
    /// upload's outcome (503, worth a retry: the batch may have committed
    /// or not, as a single upload's commit may).
    pub(super) async fn commit_batch(
        &self,
        account: &str,
        period: &str,
        batch: Vec<Pending>,
    ) -> Vec<Committed> {
        if batch.len() > 1 {
            match self.commit_together(account, period, &batch).await {
                Ok(outcomes) => return outcomes,
                Err(e @ DbError::Pool(_)) => {
                    return batch
                        .iter()
                        .map(|_| Err(e.shared("committing a batch of uploads")))
                        .collect();
                }
                Err(e) => tracing::warn!(
                    error = %e,
                    uploads = batch.len(),
                    "a batch of uploads failed as a whole; committing them one by one"
                ),
            }
        }
        let mut outcomes = Vec::with_capacity(batch.len());
        for p in &batch {
            outcomes.push(commit_alone(self, &p.f, p.inline.as_deref(), p.limits, &p.ctx).await);
        }
        outcomes
    }

    /// The uploads of `batch` in one call of `filestore_commit`.
    async fn commit_together(
        &self,
        account: &str,
        period: &str,
        batch: &[Pending],
    ) -> Result<Vec<Committed>, DbError> {
        self.commit_statement(period, &[(account, batch)], false)
            .await
    }

    /// The uploads of `accounts` (each account's batch, in the order
    /// given) in one call of `filestore_commit`; outcomes in the same
    /// order, flattened. `bounded`: it waits for no lock past its
    /// `lock_timeout` (the accounts then in byte order, each once).
    pub(super) async fn commit_statement(
        &self,
        period: &str,
        accounts: &[(&str, &[Pending])],
        bounded: bool,
    ) -> Result<Vec<Committed>, DbError> {
        let mut outcomes: Vec<Option<Committed>> = Vec::new();
        let mut cols = Columns::default();
        for (account, batch) in accounts {
            for p in *batch {
                let token = p.ctx.token.as_deref();
                match cols.push(&p.f, p.inline.as_deref(), p.limits, token) {
                    Ok(()) => outcomes.push(None),
                    Err(e) => outcomes.push(Some(Err(e))),
                }
            }
            cols.end_account(account);
        }
        if cols.len() > 0 {
            let how = How {
                bounded,
                ..How::default()
            };
            let rows = on_conn!(self, |c| call(c, period, &cols, how).await)?;
            if rows.len() > 1 {
                self.commits.batches.fetch_add(1, Ordering::Relaxed);
                let n = u64::try_from(rows.len()).unwrap_or(u64::MAX);
                self.commits.batched.fetch_add(n, Ordering::Relaxed);
            }
            // Row `n` is the `n`th upload sent. The statement has
            // committed: an upload it gave no row for gets an error of its
            // own, never a second try.
            let mut sent: Vec<(&Pending, &mut Option<Committed>)> = accounts
                .iter()
                .flat_map(|(_, batch)| batch.iter())
                .zip(outcomes.iter_mut())
                .filter(|(_, o)| o.is_none())
                .collect();
            for row in rows {
                let n: i32 = row.get(0);
                let at = usize::try_from(n).ok().and_then(|n| n.checked_sub(1));
                match at.and_then(|i| sent.get_mut(i)) {
                    Some((p, slot)) if slot.is_none() => {
                        **slot = Some(outcome_of(&row, &p.f, p.limits));
                    }
                    _ => tracing::warn!(n, "a commit statement gave a row for no upload sent"),
                }
            }
        }
        outcomes
            .into_iter()
            .map(|o| {
                Ok(o.unwrap_or_else(|| {
                    Err(DbError::Invalid(
                        "a commit statement gave no outcome for this upload".into(),
                    ))
                }))
            })
            .collect()
    }
}
