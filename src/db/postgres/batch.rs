//! An account's multipart uploads committed in batches on PostgreSQL: the
//! uploads (of one period) that arrive while one of the account's commits
//! is in flight on this node go together as its next commit ([`Groups`]):
//! one statement (`filestore_commit_uploads`, migration 0013), one
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
use super::files::{commit_alone, refusal_of};
use super::flights::Flights;
use super::group::{Gate, Groups};
use super::{signed, DbError, PgStore};
use crate::db::model::{event_data, CommitContext, CommitOutcome, FileRow};
use crate::domain::metadata;
use crate::domain::quota::Quota;
use bytes::Bytes;
use deadpool_postgres::GenericClient;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio_postgres::types::ToSql;

/// The most uploads in one batch (a bound on one statement's work and
/// size: 64 inline files of the default `inline_max` are 8 MiB).
const MOST: usize = 64;

/// An upload waiting for its commit.
pub(super) struct Pending {
    pub(super) f: FileRow,
    pub(super) inline: Option<Bytes>,
    pub(super) limits: Quota,
    pub(super) ctx: CommitContext,
}

/// A commit's outcome, and whether it queued webhook events.
pub(super) type Committed = Result<(CommitOutcome, bool), DbError>;

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

    /// The uploads of `batch` in one call of `filestore_commit_uploads`.
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
    /// given) in one statement; outcomes in the same order, flattened.
    /// `bounded`: in one call of `filestore_commit_accounts` (migration
    /// 0014), which waits for no lock past its `lock_timeout` (the accounts
    /// then in byte order, each once); else of `filestore_commit_uploads`
    /// (one account).
    pub(super) async fn commit_statement(
        &self,
        period: &str,
        accounts: &[(&str, &[Pending])],
        bounded: bool,
    ) -> Result<Vec<Committed>, DbError> {
        let mut outcomes: Vec<Option<Committed>> = Vec::new();
        let mut cols = Columns::default();
        let (mut names, mut ends) = (Vec::new(), Vec::new());
        for (account, batch) in accounts {
            for p in *batch {
                match cols.push(p) {
                    Ok(()) => outcomes.push(None),
                    Err(e) => outcomes.push(Some(Err(e))),
                }
            }
            // An account none of whose uploads could be sent is left out.
            let end = i32::try_from(cols.id.len()).unwrap_or(i32::MAX);
            if end > ends.last().copied().unwrap_or(0) {
                names.push(*account);
                ends.push(end);
            }
        }
        if !cols.id.is_empty() {
            let rows = on_conn!(self, |c| {
                let rows = if bounded {
                    let stmt = c
                        .prepare_cached(
                            "SELECT n, code, detail, message, queued FROM filestore_commit_accounts(
                                 $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
                                 $15, $16, $17, $18, $19, $20)",
                        )
                        .await?;
                    c.query(&stmt, &cols.params_of_accounts(&names, &ends, &period))
                        .await?
                } else {
                    let stmt = c
                        .prepare_cached(
                            "SELECT n, code, detail, message, queued FROM filestore_commit_uploads(
                                 $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                                 $16, $17, $18, $19)",
                        )
                        .await?;
                    let account = names.first().copied().unwrap_or_default();
                    c.query(&stmt, &cols.params(&account, &period)).await?
                };
                Ok::<_, DbError>(rows)
            })?;
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
                    Some((p, slot)) if slot.is_none() => **slot = Some(outcome_of(&row, p)),
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

/// What a row of the commit functions says of upload `p`.
fn outcome_of(row: &tokio_postgres::Row, p: &Pending) -> Committed {
    let code: Option<String> = row.get(1);
    let queued: i32 = row.get(4);
    match code {
        None => Ok((CommitOutcome::Committed(p.f.clone()), queued > 0)),
        Some(code) => {
            let detail: Option<String> = row.get(2);
            let message: Option<String> = row.get(3);
            let (detail, message) = (detail.unwrap_or_default(), message.unwrap_or_default());
            refusal_of(&code, &detail, &message, p.limits, p.f.size)
                .unwrap_or_else(|| Err(DbError::Invalid(format!("{code}: {message}"))))
                .map(|o| (o, false))
        }
    }
}

/// The batch's uploads as one array per parameter of
/// `filestore_commit_uploads` (the account and period are one for all).
#[derive(Default)]
struct Columns<'a> {
    id: Vec<&'a str>,
    name: Vec<&'a str>,
    folder: Vec<Option<&'a str>>,
    size: Vec<i64>,
    content_type: Vec<&'a str>,
    private: Vec<bool>,
    sha256: Vec<&'a str>,
    blob_key: Vec<&'a str>,
    created_at: Vec<i64>,
    expires_at: Vec<Option<i64>>,
    inline: Vec<bool>,
    metadata: Vec<String>,
    data: Vec<Option<&'a [u8]>>,
    event: Vec<String>,
    token: Vec<Option<&'a str>>,
    max_storage: Vec<i64>,
    max_uploads: Vec<i64>,
}

impl<'a> Columns<'a> {
    /// Adds `p`, or says why it cannot be committed (nothing added then).
    fn push(&mut self, p: &'a Pending) -> Result<(), DbError> {
        let f = &p.f;
        if f.inline != p.inline.is_some() {
            return Err(DbError::Invalid(format!(
                "file {} is inline only if its bytes come with it",
                f.id
            )));
        }
        let size = signed(f.size)?;
        let event = event_data(f)?;
        let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.id.push(&f.id);
        self.name.push(&f.name);
        self.folder.push(f.folder.as_deref());
        self.size.push(size);
        self.content_type.push(&f.content_type);
        self.private.push(f.private);
        self.sha256.push(&f.sha256);
        self.blob_key.push(&f.blob_key);
        self.created_at.push(f.created_at);
        self.expires_at.push(f.expires_at);
        self.inline.push(f.inline);
        self.metadata.push(metadata::to_json(&f.metadata));
        self.data.push(p.inline.as_deref());
        self.event.push(event);
        self.token.push(p.ctx.token.as_deref());
        self.max_storage.push(clamp(p.limits.storage));
        self.max_uploads.push(clamp(p.limits.uploads_per_period));
        Ok(())
    }

    /// The parameters of `filestore_commit_accounts`, in its order: the
    /// accounts and where each one's uploads end (`ends`, from 1).
    fn params_of_accounts<'b>(
        &'b self,
        accounts: &'b (dyn ToSql + Sync),
        ends: &'b (dyn ToSql + Sync),
        period: &'b &'b str,
    ) -> Vec<&'b (dyn ToSql + Sync)> {
        let head: [&'b (dyn ToSql + Sync); 3] = [accounts, ends, &self.id];
        head.into_iter().chain(self.after_account(period)).collect()
    }

    /// The parameters of `filestore_commit_uploads`, in its order.
    fn params<'b>(
        &'b self,
        account: &'b &'b str,
        period: &'b &'b str,
    ) -> Vec<&'b (dyn ToSql + Sync)> {
        let head: [&'b (dyn ToSql + Sync); 2] = [&self.id, account];
        head.into_iter().chain(self.after_account(period)).collect()
    }

    /// The parameters both functions take after the account's, in order.
    fn after_account<'b>(&'b self, period: &'b &'b str) -> [&'b (dyn ToSql + Sync); 17] {
        [
            &self.name,
            &self.folder,
            &self.size,
            &self.content_type,
            &self.private,
            &self.sha256,
            &self.blob_key,
            &self.created_at,
            &self.expires_at,
            &self.inline,
            &self.metadata,
            &self.data,
            &self.event,
            period,
            &self.token,
            &self.max_storage,
            &self.max_uploads,
        ]
    }
}
