//! [`MetaStore`] on PostgreSQL: each method one transaction (or one
//! statement, which is its own), on a pooled connection.

use super::{
    events, execute, files, has_nul, query, query_opt, queue, rates, rows, unsigned, uploads,
    DbError,
};
use crate::config::DEFAULT_STATEMENT_TIMEOUT;
use crate::db::model::*;
use crate::db::store::*;
use crate::domain::ratelimit::Window;
use async_trait::async_trait;
use bytes::Bytes;
use deadpool_postgres::Pool;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a node's database session must have been gone before other
/// nodes take it for dead and collect its uploads' blobs: a live node whose
/// connection dropped (a database restart, a network blip) takes its lock
/// again within seconds, and its uploads in flight go on.
const DEAD_NODE_GRACE: Duration = Duration::from_secs(30);

/// The PostgreSQL metadata store.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool,
    /// The deadline of every call (`database.statement_timeout`).
    limit: Duration,
    /// This node's number (its upload guards' `owner`, its leases' `lease_node`).
    node: i32,
    /// The session holding the node's advisory lock.
    _node_session: Arc<super::NodeSession>,
    /// The nodes owning upload guards seen without a session, and since when.
    gone: Arc<Mutex<HashMap<i32, Instant>>>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PgStore")
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://…`, without TLS) and migrates, with
    /// the default deadline on every call.
    pub async fn connect(url: &str) -> Result<PgStore, DbError> {
        PgStore::connect_with(url, DEFAULT_STATEMENT_TIMEOUT).await
    }

    /// Connects to `url` and migrates; every call gives up after `limit`.
    pub async fn connect_with(url: &str, limit: Duration) -> Result<PgStore, DbError> {
        let pool = super::connect(url, limit).await?;
        let (node, session) = super::hold_node_lock(super::settings(url, limit)?, limit).await?;
        Ok(PgStore {
            pool,
            limit,
            node,
            _node_session: Arc::new(session),
            gone: Arc::default(),
        })
    }

    /// The pool underneath (for tests and tools that read the database).
    pub fn pool(&self) -> &Pool {
        &self.pool
    }
}

/// Runs `$body` with `$c` a pooled connection, within the call's deadline
/// (checkout included); past it, the connection is dropped, not pooled.
macro_rules! on_conn {
    ($self:ident, |$c:ident| $body:expr) => {{
        let deadline = tokio::time::Instant::now() + $self.limit;
        let client = super::checkout(&$self.pool, deadline, $self.limit).await?;
        let outcome = tokio::time::timeout_at(deadline, async {
            let $c = &client;
            $body
        })
        .await;
        super::settle(client, outcome, $self.limit)
    }};
}

/// Runs `$body` with `$tx` a transaction of a pooled connection, as
/// [`on_conn`] does; commits when it returns Ok, rolls back otherwise (the
/// transaction dropped).
macro_rules! in_tx {
    ($self:ident, |$tx:ident| $body:expr) => {{
        let deadline = tokio::time::Instant::now() + $self.limit;
        let mut client = super::checkout(&$self.pool, deadline, $self.limit).await?;
        let outcome = tokio::time::timeout_at(deadline, async {
            let $tx = client.transaction().await?;
            let out = $body;
            if out.is_ok() {
                $tx.commit().await?;
            }
            out
        })
        .await;
        super::settle(client, outcome, $self.limit)
    }};
}

#[async_trait]
impl FileRepo for PgStore {
    async fn commit_upload(
        &self,
        f: FileRow,
        inline: Option<Bytes>,
        limits: Quota,
        ctx: CommitContext,
    ) -> Result<CommitOutcome, DbError> {
        in_tx!(self, |tx| files::commit_upload(
            &tx,
            &f,
            inline.as_deref(),
            limits,
            &ctx
        )
        .await)
    }

    async fn file(&self, account_id: &str, id: &str, now: i64) -> Result<Option<FileRow>, DbError> {
        if has_nul(&[account_id, id]) {
            return Ok(None);
        }
        on_conn!(self, |c| files::get_live(c, account_id, id, now).await)
    }

    async fn file_with_data(
        &self,
        account_id: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<RowWithData>, DbError> {
        if has_nul(&[account_id, id]) {
            return Ok(None);
        }
        on_conn!(self, |c| files::get_live_with_data(c, account_id, id, now)
            .await)
    }

    async fn replayed_file(
        &self,
        account_id: &str,
        key: &str,
        since: i64,
        now: i64,
    ) -> Result<Option<FileRow>, DbError> {
        if has_nul(&[account_id, key]) {
            return Ok(None);
        }
        on_conn!(self, |c| files::replayed(c, account_id, key, since, now)
            .await)
    }

    async fn page(
        &self,
        account_id: &str,
        folder: FolderFilter,
        after: Option<PageAfter>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        on_conn!(self, |c| files::page(
            c,
            account_id,
            &folder,
            after.as_ref(),
            limit,
            now
        )
        .await)
    }

    async fn delete_file(
        &self,
        account_id: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<FileRow>, DbError> {
        if has_nul(&[account_id, id]) {
            return Ok(None);
        }
        in_tx!(self, |tx| files::delete_live(
            &tx, account_id, id, now, self.node
        )
        .await)
    }

    async fn reap_expired_files(&self, now: i64, max: u32) -> Result<Vec<FileRow>, DbError> {
        in_tx!(self, |tx| files::reap_expired(&tx, now, max).await)
    }

    async fn prune_idempotency(&self, before: i64) -> Result<usize, DbError> {
        on_conn!(self, |c| queue::prune_idempotency(c, before).await)
    }
}

#[async_trait]
impl BlobRepo for PgStore {
    async fn guard_upload(&self, blob_key: &str, now: i64) -> Result<(), DbError> {
        on_conn!(self, |c| queue::guard_upload(c, blob_key, now, self.node)
            .await)
    }

    async fn schedule_blob_deletion(&self, blob_key: &str, due: i64) -> Result<(), DbError> {
        on_conn!(self, |c| files::schedule(c, blob_key, due).await)
    }

    async fn due_blobs(&self, now: i64, max: u32) -> Result<Vec<(String, u32)>, DbError> {
        in_tx!(self, |tx| queue::claim_due(&tx, now, max).await)
    }

    async fn blob_deleted(&self, blob_key: &str) -> Result<bool, DbError> {
        on_conn!(self, |c| files::unqueue(c, blob_key).await)
    }

    async fn blob_deletion_failed(
        &self,
        blob_key: &str,
        retry_at: i64,
        error: &str,
    ) -> Result<(), DbError> {
        on_conn!(self, |c| queue::failed(c, blob_key, retry_at, error).await)
    }

    /// Makes due the guards of nodes that are no longer running (their
    /// session advisory lock is gone): a crashed process's, this node's
    /// previous run's; never those of uploads in flight on live nodes.
    async fn expire_upload_guards(&self, now: i64) -> Result<usize, DbError> {
        on_conn!(self, |c| {
            events::release_dead_claims(c, now).await?;
            queue::expire_dead_guards(c, now).await
        })
    }

    async fn expire_dead_node_guards(&self, now: i64) -> Result<usize, DbError> {
        let gone = on_conn!(self, |c| queue::guard_owners_gone(c).await)?;
        let dead: Vec<i32> = {
            let mut seen = self.gone.lock().unwrap_or_else(PoisonError::into_inner);
            seen.retain(|node, _| gone.contains(node));
            let at = Instant::now();
            gone.iter()
                .filter(|node| seen.entry(**node).or_insert(at).elapsed() >= DEAD_NODE_GRACE)
                .copied()
                .collect()
        };
        if dead.is_empty() {
            return Ok(0);
        }
        on_conn!(self, |c| queue::expire_guards_of(c, &dead, now).await)
    }
}

#[async_trait]
impl AccountRepo for PgStore {
    async fn commitments(
        &self,
        account_id: &str,
        period: &str,
        now: i64,
    ) -> Result<Commitments, DbError> {
        on_conn!(self, |c| {
            let upload_count = files::upload_count(c, account_id, period).await?;
            let (reserved_bytes, pending_uploads) =
                files::reserved(c, account_id, now, None).await?;
            Ok(Commitments {
                upload_count,
                reserved_bytes,
                pending_uploads,
            })
        })
    }

    async fn usage(&self, account_id: &str, period: &str) -> Result<UsageCounters, DbError> {
        on_conn!(self, |c| queue::usage(c, account_id, period).await)
    }

    async fn add_bandwidth(&self, counts: Vec<BandwidthCount>) -> Result<(), DbError> {
        in_tx!(self, |tx| queue::add_bandwidth(&tx, counts).await)
    }

    async fn key_by_hash(&self, hash: [u8; 32]) -> Result<Option<(KeyRecord, Account)>, DbError> {
        on_conn!(self, |c| super::admin::key_by_hash(c, &hash).await)
    }

    async fn public_origins(&self) -> Result<Vec<String>, DbError> {
        on_conn!(self, |c| super::admin::public_origins(c).await)
    }

    async fn account(&self, id: &str) -> Result<Option<Account>, DbError> {
        if has_nul(&[id]) {
            return Ok(None);
        }
        on_conn!(self, |c| {
            let sql = format!("SELECT {} FROM accounts WHERE id = $1", rows::ACCOUNT);
            Ok(query_opt(c, &sql, &[&id]).await?.map(|r| rows::account(&r)))
        })
    }

    async fn find_account(&self, id_or_name: &str) -> Result<Option<Account>, DbError> {
        if has_nul(&[id_or_name]) {
            return Ok(None);
        }
        on_conn!(self, |c| super::admin::find_account(c, id_or_name).await)
    }

    async fn count_accounts(&self) -> Result<u64, DbError> {
        on_conn!(self, |c| {
            let row = super::query_one(c, "SELECT COUNT(*) FROM accounts", &[]).await?;
            Ok(unsigned(row.get(0)))
        })
    }

    async fn list_accounts(&self) -> Result<Vec<Account>, DbError> {
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {} FROM accounts ORDER BY created_at, id",
                rows::ACCOUNT
            );
            Ok(query(c, &sql, &[])
                .await?
                .iter()
                .map(rows::account)
                .collect())
        })
    }

    async fn create_account(&self, account: Account) -> Result<bool, DbError> {
        in_tx!(self, |tx| super::admin::create_account(&tx, &account).await)
    }

    async fn set_account(
        &self,
        id: &str,
        plan: Option<String>,
        grace_period: Option<bool>,
    ) -> Result<Option<Account>, DbError> {
        on_conn!(self, |c| super::admin::set_account(
            c,
            id,
            plan,
            grace_period
        )
        .await)
    }

    async fn create_key(&self, key: KeyRecord, hash: [u8; 32]) -> Result<(), DbError> {
        on_conn!(self, |c| super::admin::create_key(c, &key, &hash).await)
    }

    async fn key(&self, id: &str) -> Result<Option<KeyRecord>, DbError> {
        if has_nul(&[id]) {
            return Ok(None);
        }
        on_conn!(self, |c| {
            let sql = format!("SELECT {} FROM api_keys WHERE id = $1", rows::KEY);
            query_opt(c, &sql, &[&id])
                .await?
                .map(|r| rows::key(&r))
                .transpose()
        })
    }

    async fn list_keys(&self, account_id: Option<&str>) -> Result<Vec<KeyRecord>, DbError> {
        on_conn!(self, |c| super::admin::list_keys(c, account_id).await)
    }

    async fn revoke_key(&self, id: &str, now: i64) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
        }
        on_conn!(self, |c| {
            Ok(execute(
                c,
                "UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
                &[&id, &now],
            )
            .await?
                == 1)
        })
    }
}

#[async_trait]
impl UploadRepo for PgStore {
    async fn replayed_upload(
        &self,
        account_id: &str,
        key: &str,
    ) -> Result<Option<UploadRow>, DbError> {
        if has_nul(&[account_id, key]) {
            return Ok(None);
        }
        on_conn!(self, |c| uploads::replayed(c, account_id, key).await)
    }

    async fn create_upload(
        &self,
        upload: UploadRow,
        limits: Quota,
        period: &str,
    ) -> Result<CreateOutcome, DbError> {
        in_tx!(self, |tx| uploads::create(&tx, &upload, limits, period)
            .await)
    }

    async fn upload(&self, account_id: &str, id: &str) -> Result<Option<UploadRow>, DbError> {
        if has_nul(&[account_id, id]) {
            return Ok(None);
        }
        on_conn!(self, |c| uploads::get(c, account_id, id).await)
    }

    async fn open_uploads(
        &self,
        account_id: &str,
        now: i64,
        max: u32,
    ) -> Result<Vec<UploadRow>, DbError> {
        if has_nul(&[account_id]) {
            return Ok(Vec::new());
        }
        on_conn!(self, |c| uploads::open(c, account_id, now, max).await)
    }

    async fn upload_tail(&self, id: &str) -> Result<Option<Vec<u8>>, DbError> {
        if has_nul(&[id]) {
            return Ok(None);
        }
        on_conn!(self, |c| uploads::tail(c, id).await)
    }

    async fn advance_upload(&self, id: &str, progress: Progress) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
        }
        on_conn!(self, |c| uploads::advance(c, id, &progress).await)
    }

    async fn remove_upload(&self, id: &str, now: i64) -> Result<Option<bool>, DbError> {
        if has_nul(&[id]) {
            return Ok(None);
        }
        in_tx!(self, |tx| uploads::remove(&tx, id, now).await)
    }

    async fn reap_expired_uploads(
        &self,
        now: i64,
        max: u32,
    ) -> Result<Vec<(String, String)>, DbError> {
        in_tx!(self, |tx| uploads::reap_expired(&tx, now, max).await)
    }

    async fn live_upload_keys(&self) -> Result<Vec<String>, DbError> {
        on_conn!(self, |c| uploads::live_keys(c).await)
    }

    async fn lease_upload(
        &self,
        id: &str,
        token: &str,
        now: i64,
        until: i64,
    ) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
        }
        on_conn!(self, |c| uploads::lease(
            c, id, token, now, until, self.node
        )
        .await)
    }

    async fn seize_upload(&self, id: &str, token: &str, until: i64) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
        }
        on_conn!(self, |c| uploads::seize(c, id, token, until, self.node)
            .await)
    }

    async fn release_upload(&self, id: &str, token: &str) -> Result<(), DbError> {
        if has_nul(&[id]) {
            return Ok(());
        }
        on_conn!(self, |c| uploads::release(c, id, token).await)
    }
}

#[async_trait]
impl OutboxRepo for PgStore {
    async fn create_webhook(&self, webhook: WebhookRow) -> Result<(), DbError> {
        on_conn!(self, |c| events::create(c, &webhook).await)
    }

    async fn list_webhooks(&self, account_id: Option<&str>) -> Result<Vec<WebhookRow>, DbError> {
        if account_id.is_some_and(|a| has_nul(&[a])) {
            return Ok(Vec::new());
        }
        on_conn!(self, |c| events::list(c, account_id).await)
    }

    async fn delete_webhook(&self, id: &str) -> Result<Option<WebhookRow>, DbError> {
        if has_nul(&[id]) {
            return Ok(None);
        }
        on_conn!(self, |c| events::delete(c, id).await)
    }

    async fn claim_events(
        &self,
        now: i64,
        lease_until: i64,
        budget: &crate::domain::webhooks::Budget,
    ) -> Result<Vec<OutboxEvent>, DbError> {
        in_tx!(self, |tx| events::claim(
            &tx,
            now,
            lease_until,
            budget,
            self.node
        )
        .await)
    }

    async fn event_done(&self, seq: i64) -> Result<(), DbError> {
        on_conn!(self, |c| events::done(c, seq).await)
    }

    async fn event_failed(&self, seq: i64, retry_at: i64, error: &str) -> Result<(), DbError> {
        on_conn!(self, |c| events::failed(c, seq, retry_at, error).await)
    }

    async fn any_due_events(
        &self,
        now: i64,
        budget: &crate::domain::webhooks::Budget,
    ) -> Result<bool, DbError> {
        on_conn!(self, |c| events::any_due(c, now, budget).await)
    }

    async fn pending_events(&self) -> Result<u64, DbError> {
        on_conn!(self, |c| events::pending(c).await)
    }
}

#[async_trait]
impl RateRepo for PgStore {
    async fn rate_window(
        &self,
        key_id: &str,
        window_ms: i64,
        now: i64,
        count: bool,
    ) -> Result<Window, DbError> {
        on_conn!(self, |c| {
            if count {
                rates::count_rate(c, key_id, window_ms, now).await
            } else {
                rates::peek_rate(c, key_id, window_ms, now).await
            }
        })
    }

    async fn prune_rate_windows(&self, now: i64) -> Result<usize, DbError> {
        on_conn!(self, |c| rates::prune(c, now).await)
    }
}

#[async_trait]
impl OpsRepo for PgStore {
    async fn meta_get_or_insert(&self, key: &str, value: String) -> Result<String, DbError> {
        in_tx!(self, |tx| super::admin::meta_get_or_insert(
            &tx, key, &value
        )
        .await)
    }

    async fn ping(&self) -> Result<(), DbError> {
        on_conn!(self, |c| query(c, "SELECT 1", &[]).await.map(|_| ()))
    }

    fn pool_stats(&self) -> PoolStats {
        let s = self.pool.status();
        PoolStats {
            connections: u32::try_from(s.size).unwrap_or(u32::MAX),
            idle_connections: u32::try_from(s.available).unwrap_or(0),
        }
    }
}
