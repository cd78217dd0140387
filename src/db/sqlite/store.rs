//! [`MetaStore`] on SQLite: each operation is one of the query modules'
//! functions, run where it belongs. Writes go through the single writer
//! thread ([`Db::write`]: group commit, one fsync for every write waiting);
//! point lookups run on the calling thread when a pooled connection is idle
//! ([`Db::lookup`]: the hot paths of auth, the CDN and file reads); scans run
//! on the blocking pool ([`Db::run`]).

use super::{accounts, blobs, events, files, keys, meta_get_or_insert, uploads, usage, Db};
use crate::db::model::*;
use crate::db::store::*;
use crate::db::DbError;
use crate::domain::ratelimit::{RateLimiter, Window};
use async_trait::async_trait;
use bytes::Bytes;

/// The SQLite metadata store.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    db: Db,
    /// The rate windows: in memory, as SQLite serves one node.
    limiter: std::sync::Arc<RateLimiter>,
}

impl SqliteStore {
    pub fn new(db: Db) -> SqliteStore {
        SqliteStore {
            db,
            limiter: Default::default(),
        }
    }

    /// The database underneath (for tests and tools that read the file).
    pub fn db(&self) -> &Db {
        &self.db
    }
}

fn owned(s: &str) -> String {
    s.to_string()
}

#[async_trait]
impl FileRepo for SqliteStore {
    async fn commit_upload(
        &self,
        f: FileRow,
        inline: Option<Bytes>,
        limits: Quota,
        ctx: CommitContext,
    ) -> Result<CommitOutcome, DbError> {
        self.db
            .write(move |c| files::commit_upload(c, &f, inline.as_deref(), limits, &ctx))
            .await
    }

    async fn file(&self, account_id: &str, id: &str, now: i64) -> Result<Option<FileRow>, DbError> {
        let (acc, id) = (owned(account_id), owned(id));
        self.db
            .lookup(move |c| files::get_live(c, &acc, &id, now))
            .await
    }

    async fn file_with_data(
        &self,
        account_id: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<RowWithData>, DbError> {
        let (acc, id) = (owned(account_id), owned(id));
        self.db
            .lookup(move |c| files::get_live_with_data(c, &acc, &id, now))
            .await
    }

    async fn replayed_file(
        &self,
        account_id: &str,
        key: &str,
        since: i64,
        now: i64,
    ) -> Result<Option<FileRow>, DbError> {
        let (acc, key) = (owned(account_id), owned(key));
        self.db
            .lookup(move |c| files::replayed(c, &acc, &key, since, now))
            .await
    }

    async fn page(
        &self,
        account_id: &str,
        folder: FolderFilter,
        after: Option<PageAfter>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        let acc = owned(account_id);
        self.db
            .run(move |c| files::page(c, &acc, &folder, after.as_ref(), limit, now))
            .await
    }

    async fn delete_file(
        &self,
        account_id: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<FileRow>, DbError> {
        let (acc, id) = (owned(account_id), owned(id));
        self.db
            .write(move |c| files::delete_live(c, &acc, &id, now))
            .await
    }

    async fn reap_expired_files(&self, now: i64, max: u32) -> Result<Vec<FileRow>, DbError> {
        self.db
            .write(move |c| files::reap_expired(c, now, max))
            .await
    }

    async fn prune_idempotency(&self, before: i64) -> Result<usize, DbError> {
        self.db
            .write(move |c| files::prune_idempotency(c, before))
            .await
    }
}

#[async_trait]
impl BlobRepo for SqliteStore {
    async fn guard_upload(&self, blob_key: &str, now: i64) -> Result<(), DbError> {
        let key = owned(blob_key);
        self.db
            .write(move |c| blobs::guard_upload(c, &key, now))
            .await
    }

    async fn schedule_blob_deletion(&self, blob_key: &str, due: i64) -> Result<(), DbError> {
        let key = owned(blob_key);
        self.db.write(move |c| blobs::schedule(c, &key, due)).await
    }

    async fn due_blobs(&self, now: i64, max: u32) -> Result<Vec<(String, u32)>, DbError> {
        self.db.write(move |c| blobs::due(c, now, max)).await
    }

    async fn blob_deleted(&self, blob_key: &str) -> Result<bool, DbError> {
        let key = owned(blob_key);
        self.db.write(move |c| blobs::done(c, &key)).await
    }

    async fn blob_deletion_failed(
        &self,
        blob_key: &str,
        retry_at: i64,
        error: &str,
    ) -> Result<(), DbError> {
        let (key, msg) = (owned(blob_key), owned(error));
        self.db
            .write(move |c| blobs::failed(c, &key, retry_at, &msg))
            .await
    }

    async fn expire_upload_guards(&self, now: i64) -> Result<usize, DbError> {
        self.db
            .write(move |c| {
                let expired = blobs::expire_upload_guards(c, now)?;
                uploads::end_leases(c)?;
                events::release_claims(c, now)?;
                Ok(expired)
            })
            .await
    }
}

#[async_trait]
impl AccountRepo for SqliteStore {
    async fn commitments(
        &self,
        account_id: &str,
        period: &str,
        now: i64,
    ) -> Result<Commitments, DbError> {
        let (acc, period) = (owned(account_id), owned(period));
        self.db
            .lookup(move |c| {
                let upload_count = usage::upload_count(c, &acc, &period)?;
                let (reserved_bytes, pending_uploads) = uploads::reserved(c, &acc, now, None)?;
                Ok(Commitments {
                    upload_count,
                    reserved_bytes,
                    pending_uploads,
                })
            })
            .await
    }

    async fn usage(&self, account_id: &str, period: &str) -> Result<UsageCounters, DbError> {
        let (acc, period) = (owned(account_id), owned(period));
        self.db
            .run(move |c| {
                let storage_bytes = accounts::get(c, &acc)?
                    .map(|a| a.storage_bytes)
                    .unwrap_or(0);
                let (upload_count, bandwidth_bytes) = usage::of_period(c, &acc, &period)?;
                Ok(UsageCounters {
                    storage_bytes,
                    upload_count,
                    bandwidth_bytes,
                })
            })
            .await
    }

    async fn add_bandwidth(&self, counts: Vec<BandwidthCount>) -> Result<(), DbError> {
        self.db
            .write(move |c| {
                for b in &counts {
                    usage::add_bandwidth(c, &b.account_id, &b.period, b.bytes)?;
                }
                Ok(())
            })
            .await
    }

    async fn key_by_hash(&self, hash: [u8; 32]) -> Result<Option<(KeyRecord, Account)>, DbError> {
        self.db
            .lookup(move |c| {
                let Some(key) = keys::find_active_by_hash(c, &hash)? else {
                    return Ok(None);
                };
                Ok(accounts::get(c, &key.account_id)?.map(|account| (key, account)))
            })
            .await
    }

    async fn public_origins(&self) -> Result<Vec<String>, DbError> {
        self.db.run(|c| keys::active_public_origins(c)).await
    }

    async fn account(&self, id: &str) -> Result<Option<Account>, DbError> {
        let id = owned(id);
        self.db.lookup(move |c| accounts::get(c, &id)).await
    }

    async fn find_account(&self, id_or_name: &str) -> Result<Option<Account>, DbError> {
        let id = owned(id_or_name);
        self.db.run(move |c| accounts::find(c, &id)).await
    }

    async fn count_accounts(&self) -> Result<u64, DbError> {
        self.db.run(|c| accounts::count(c)).await
    }

    async fn list_accounts(&self) -> Result<Vec<Account>, DbError> {
        self.db.run(|c| accounts::list(c)).await
    }

    async fn create_account(&self, account: Account) -> Result<bool, DbError> {
        self.db
            .write(move |c| {
                if accounts::find(c, &account.name)?.is_some() {
                    return Ok(false);
                }
                accounts::insert(c, &account)?;
                Ok(true)
            })
            .await
    }

    async fn set_account(
        &self,
        id: &str,
        plan: Option<String>,
        grace_period: Option<bool>,
    ) -> Result<Option<Account>, DbError> {
        let id = owned(id);
        self.db
            .write(move |c| {
                if let Some(plan) = &plan {
                    accounts::set_plan(c, &id, plan)?;
                }
                if let Some(on) = grace_period {
                    accounts::set_grace_period(c, &id, on)?;
                }
                accounts::get(c, &id)
            })
            .await
    }

    async fn create_key(&self, key: KeyRecord, hash: [u8; 32]) -> Result<(), DbError> {
        self.db.write(move |c| keys::insert(c, &key, &hash)).await
    }

    async fn key(&self, id: &str) -> Result<Option<KeyRecord>, DbError> {
        let id = owned(id);
        self.db.run(move |c| keys::get(c, &id)).await
    }

    async fn list_keys(&self, account_id: Option<&str>) -> Result<Vec<KeyRecord>, DbError> {
        let acc = account_id.map(owned);
        self.db.run(move |c| keys::list(c, acc.as_deref())).await
    }

    async fn revoke_key(&self, id: &str, now: i64) -> Result<bool, DbError> {
        let id = owned(id);
        self.db.write(move |c| keys::revoke(c, &id, now)).await
    }
}

#[async_trait]
impl UploadRepo for SqliteStore {
    async fn replayed_upload(
        &self,
        account_id: &str,
        key: &str,
    ) -> Result<Option<UploadRow>, DbError> {
        let (acc, key) = (owned(account_id), owned(key));
        self.db
            .lookup(move |c| uploads::replayed(c, &acc, &key))
            .await
    }

    async fn create_upload(
        &self,
        upload: UploadRow,
        limits: Quota,
        period: &str,
    ) -> Result<CreateOutcome, DbError> {
        let period = owned(period);
        self.db
            .write(move |c| {
                let outcome = uploads::create(c, &upload, limits, &period)?;
                if outcome == CreateOutcome::Created {
                    blobs::done(c, &upload.blob_key)?;
                }
                Ok(outcome)
            })
            .await
    }

    async fn upload(&self, account_id: &str, id: &str) -> Result<Option<UploadRow>, DbError> {
        let (acc, id) = (owned(account_id), owned(id));
        self.db.lookup(move |c| uploads::get(c, &acc, &id)).await
    }

    async fn open_uploads(
        &self,
        account_id: &str,
        now: i64,
        max: u32,
    ) -> Result<Vec<UploadRow>, DbError> {
        let acc = owned(account_id);
        self.db
            .lookup(move |c| uploads::open(c, &acc, now, max))
            .await
    }

    async fn upload_tail(&self, id: &str) -> Result<Option<Vec<u8>>, DbError> {
        let id = owned(id);
        self.db.lookup(move |c| uploads::tail(c, &id)).await
    }

    async fn advance_upload(&self, id: &str, progress: Progress) -> Result<bool, DbError> {
        let id = owned(id);
        self.db
            .write(move |c| uploads::advance(c, &id, &progress))
            .await
    }

    async fn remove_upload(&self, id: &str, now: i64) -> Result<Option<bool>, DbError> {
        let id = owned(id);
        self.db.write(move |c| uploads::remove(c, &id, now)).await
    }

    async fn reap_expired_uploads(
        &self,
        now: i64,
        max: u32,
    ) -> Result<Vec<(String, String)>, DbError> {
        self.db
            .write(move |c| uploads::reap_expired(c, now, max))
            .await
    }

    async fn live_upload_keys(&self) -> Result<Vec<String>, DbError> {
        self.db.run(|c| uploads::live_keys(c)).await
    }

    async fn lease_upload(
        &self,
        id: &str,
        token: &str,
        now: i64,
        until: i64,
    ) -> Result<bool, DbError> {
        let (id, token) = (owned(id), owned(token));
        self.db
            .write(move |c| uploads::lease(c, &id, &token, now, until))
            .await
    }

    async fn seize_upload(&self, id: &str, token: &str, until: i64) -> Result<bool, DbError> {
        let (id, token) = (owned(id), owned(token));
        self.db
            .write(move |c| uploads::seize(c, &id, &token, until))
            .await
    }

    async fn release_upload(&self, id: &str, token: &str) -> Result<(), DbError> {
        let (id, token) = (owned(id), owned(token));
        self.db
            .write(move |c| uploads::release(c, &id, &token))
            .await
    }
}

#[async_trait]
impl OutboxRepo for SqliteStore {
    async fn create_webhook(&self, webhook: WebhookRow) -> Result<(), DbError> {
        self.db.write(move |c| events::create(c, &webhook)).await
    }

    async fn list_webhooks(&self, account_id: Option<&str>) -> Result<Vec<WebhookRow>, DbError> {
        let account_id = account_id.map(owned);
        self.db
            .run(move |c| events::list(c, account_id.as_deref()))
            .await
    }

    async fn delete_webhook(&self, id: &str) -> Result<Option<WebhookRow>, DbError> {
        let id = owned(id);
        self.db.write(move |c| events::delete(c, &id)).await
    }

    async fn claim_events(
        &self,
        now: i64,
        lease_until: i64,
        budget: &crate::domain::webhooks::Budget,
    ) -> Result<Vec<OutboxEvent>, DbError> {
        let budget = budget.clone();
        self.db
            .write(move |c| events::claim(c, now, lease_until, &budget))
            .await
    }

    async fn event_done(&self, seq: i64) -> Result<(), DbError> {
        self.db.write(move |c| events::done(c, seq)).await
    }

    async fn event_failed(&self, seq: i64, retry_at: i64, error: &str) -> Result<(), DbError> {
        let error = owned(error);
        self.db
            .write(move |c| events::failed(c, seq, retry_at, &error))
            .await
    }

    async fn any_due_events(
        &self,
        now: i64,
        budget: &crate::domain::webhooks::Budget,
    ) -> Result<bool, DbError> {
        let budget = budget.clone();
        self.db.run(move |c| events::any_due(c, now, &budget)).await
    }

    async fn pending_events(&self) -> Result<u64, DbError> {
        self.db.run(|c| events::pending(c)).await
    }
}

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

#[async_trait]
impl OpsRepo for SqliteStore {
    async fn meta_get_or_insert(&self, key: &str, value: String) -> Result<String, DbError> {
        let key = owned(key);
        self.db
            .write(move |c| meta_get_or_insert(c, &key, || value))
            .await
    }

    async fn ping(&self) -> Result<(), DbError> {
        self.db.ping().await
    }

    fn pool_stats(&self) -> PoolStats {
        let s = self.db.pool_state();
        PoolStats {
            connections: s.connections,
            idle_connections: s.idle_connections,
        }
    }
}
