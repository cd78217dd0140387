//! [`MetaStore`] on PostgreSQL: each method one transaction (or one
//! statement, which is its own), on a pooled connection.

use super::{execute, files, query, query_opt, rows, signed, unsigned, uploads, DbError};
use crate::db::model::*;
use crate::db::MetaStore;
use async_trait::async_trait;
use bytes::Bytes;
use deadpool_postgres::Pool;

/// How long a collector's claim on a due blob lasts: another node takes the
/// blob again only after this (the first one died mid-deletion).
const DELETION_LEASE_MS: i64 = 5 * 60 * 1000;

/// The PostgreSQL metadata store.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PgStore")
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://…`, without TLS) and migrates.
    pub async fn connect(url: &str) -> Result<PgStore, DbError> {
        Ok(PgStore {
            pool: super::connect(url).await?,
        })
    }

    /// The pool underneath (for tests and tools that read the database).
    pub fn pool(&self) -> &Pool {
        &self.pool
    }
}

/// PostgreSQL's text holds no NUL: a key with one names nothing stored (a
/// lookup answers None instead of the server refusing the parameter).
fn has_nul(keys: &[&str]) -> bool {
    keys.iter().any(|k| k.contains('\0'))
}

/// Runs `$body` with `$tx` a transaction of a pooled connection; commits
/// when it returns Ok, rolls back otherwise (the transaction dropped).
macro_rules! in_tx {
    ($self:ident, |$tx:ident| $body:expr) => {{
        let mut client = $self.pool.get().await?;
        let $tx = client.transaction().await?;
        let out = $body;
        if out.is_ok() {
            $tx.commit().await?;
        }
        out
    }};
}

#[async_trait]
impl MetaStore for PgStore {
    async fn commit_upload(
        &self,
        f: FileRow,
        inline: Option<Bytes>,
        limits: CommitLimits,
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
        let c = self.pool.get().await?;
        files::get_live(&c, account_id, id, now).await
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
        let c = self.pool.get().await?;
        files::get_live_with_data(&c, account_id, id, now).await
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
        let c = self.pool.get().await?;
        files::replayed(&c, account_id, key, since, now).await
    }

    async fn page(
        &self,
        account_id: &str,
        folder: FolderFilter,
        after: Option<PageAfter>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        let c = self.pool.get().await?;
        files::page(&c, account_id, &folder, after.as_ref(), limit, now).await
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
        in_tx!(self, |tx| files::delete_live(&tx, account_id, id, now)
            .await)
    }

    async fn reap_expired_files(&self, now: i64, max: u32) -> Result<Vec<FileRow>, DbError> {
        in_tx!(self, |tx| files::reap_expired(&tx, now, max).await)
    }

    async fn prune_idempotency(&self, before: i64) -> Result<usize, DbError> {
        let c = self.pool.get().await?;
        let n = execute(
            &c,
            "DELETE FROM idempotency_keys WHERE created_at < $1",
            &[&before],
        )
        .await?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    async fn guard_upload(&self, blob_key: &str, now: i64) -> Result<(), DbError> {
        let c = self.pool.get().await?;
        execute(
            &c,
            "INSERT INTO blob_deletions (blob_key, due_at) VALUES ($1, $2)",
            &[&blob_key, &(now + UPLOAD_GUARD_MS)],
        )
        .await?;
        Ok(())
    }

    async fn schedule_blob_deletion(&self, blob_key: &str, due: i64) -> Result<(), DbError> {
        let c = self.pool.get().await?;
        files::schedule(&c, blob_key, due).await
    }

    /// Claims due blobs: their rows are moved a lease ahead, skipping rows
    /// another node is claiming, so two nodes never take the same blob and a
    /// node that dies leaves its claims to be taken again after the lease.
    async fn due_blobs(&self, now: i64, max: u32) -> Result<Vec<(String, u32)>, DbError> {
        in_tx!(self, |tx| {
            let dropped: Result<u64, DbError> = execute(
                &tx,
                "DELETE FROM blob_deletions b WHERE due_at <= $1
                 AND EXISTS (SELECT 1 FROM files f WHERE f.blob_key = b.blob_key)",
                &[&now],
            )
            .await;
            match dropped {
                Err(e) => Err(e),
                Ok(_) => query(
                    &tx,
                    "UPDATE blob_deletions SET due_at = $3 WHERE blob_key IN (
                         SELECT blob_key FROM blob_deletions WHERE due_at <= $1
                         ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED)
                     RETURNING blob_key, attempts",
                    &[&now, &i64::from(max), &(now + DELETION_LEASE_MS)],
                )
                .await
                .map(|rows| {
                    rows.iter()
                        .map(|r| (r.get(0), u32::try_from(r.get::<_, i32>(1)).unwrap_or(0)))
                        .collect()
                }),
            }
        })
    }

    async fn blob_deleted(&self, blob_key: &str) -> Result<bool, DbError> {
        let c = self.pool.get().await?;
        files::unqueue(&c, blob_key).await
    }

    async fn blob_deletion_failed(
        &self,
        blob_key: &str,
        retry_at: i64,
        error: &str,
    ) -> Result<(), DbError> {
        let c = self.pool.get().await?;
        execute(
            &c,
            "UPDATE blob_deletions SET attempts = attempts + 1, due_at = $2, last_error = $3
             WHERE blob_key = $1",
            &[&blob_key, &retry_at, &error],
        )
        .await?;
        Ok(())
    }

    /// Nothing: with several nodes on one database, a node starting cannot
    /// tell the guards a crashed process left from those of uploads in flight
    /// on the other nodes. Every guard is collected when it falls due
    /// ([`UPLOAD_GUARD_MS`] after its upload began).
    async fn expire_upload_guards(&self, _now: i64) -> Result<usize, DbError> {
        Ok(0)
    }

    async fn commitments(
        &self,
        account_id: &str,
        period: &str,
        now: i64,
    ) -> Result<Commitments, DbError> {
        let c = self.pool.get().await?;
        let upload_count = files::upload_count(&c, account_id, period).await?;
        let (reserved_bytes, pending_uploads) = files::reserved(&c, account_id, now, None).await?;
        Ok(Commitments {
            upload_count,
            reserved_bytes,
            pending_uploads,
        })
    }

    async fn usage(&self, account_id: &str, period: &str) -> Result<UsageCounters, DbError> {
        let c = self.pool.get().await?;
        // One statement: one snapshot of both tables.
        let row = query_opt(
            &c,
            "SELECT a.storage_bytes, COALESCE(u.upload_count, 0), COALESCE(u.bandwidth_bytes, 0)
             FROM accounts a LEFT JOIN usage_periods u
               ON u.account_id = a.id AND u.period = $2
             WHERE a.id = $1",
            &[&account_id, &period],
        )
        .await?;
        Ok(row
            .map(|r| UsageCounters {
                storage_bytes: unsigned(r.get(0)),
                upload_count: unsigned(r.get(1)),
                bandwidth_bytes: unsigned(r.get(2)),
            })
            .unwrap_or_default())
    }

    async fn add_bandwidth(&self, mut counts: Vec<BandwidthCount>) -> Result<(), DbError> {
        // In key order: two nodes flushing at once lock rows in one order.
        counts.sort_by(|a, b| (&a.account_id, &a.period).cmp(&(&b.account_id, &b.period)));
        in_tx!(self, |tx| {
            let mut out = Ok(());
            for b in &counts {
                let bytes = match signed(b.bytes) {
                    Ok(n) => n,
                    Err(e) => {
                        out = Err(e);
                        break;
                    }
                };
                if let Err(e) = execute(
                    &tx,
                    "INSERT INTO usage_periods (account_id, period, bandwidth_bytes)
                     VALUES ($1, $2, $3)
                     ON CONFLICT (account_id, period)
                     DO UPDATE SET bandwidth_bytes = usage_periods.bandwidth_bytes + $3",
                    &[&b.account_id, &b.period, &bytes],
                )
                .await
                {
                    out = Err(e);
                    break;
                }
            }
            out
        })
    }

    async fn key_by_hash(&self, hash: [u8; 32]) -> Result<Option<(KeyRecord, Account)>, DbError> {
        let c = self.pool.get().await?;
        let sql = format!(
            "SELECT {} FROM api_keys k JOIN accounts a ON a.id = k.account_id
             WHERE k.key_hash = $1 AND k.revoked_at IS NULL",
            rows::KEY_AND_ACCOUNT
        );
        query_opt(&c, &sql, &[&&hash[..]])
            .await?
            .map(|r| rows::key_and_account(&r))
            .transpose()
    }

    async fn public_origins(&self) -> Result<Vec<String>, DbError> {
        let c = self.pool.get().await?;
        let rows = query(
            &c,
            "SELECT origins FROM api_keys WHERE kind = 'public' AND revoked_at IS NULL",
            &[],
        )
        .await?;
        Ok(rows
            .iter()
            .flat_map(|r| serde_json::from_str::<Vec<String>>(r.get(0)).unwrap_or_default())
            .collect())
    }

    async fn account(&self, id: &str) -> Result<Option<Account>, DbError> {
        if has_nul(&[id]) {
            return Ok(None);
        }
        let c = self.pool.get().await?;
        let sql = format!("SELECT {} FROM accounts WHERE id = $1", rows::ACCOUNT);
        Ok(query_opt(&c, &sql, &[&id])
            .await?
            .map(|r| rows::account(&r)))
    }

    async fn find_account(&self, id_or_name: &str) -> Result<Option<Account>, DbError> {
        if has_nul(&[id_or_name]) {
            return Ok(None);
        }
        let c = self.pool.get().await?;
        super::admin::find_account(&c, id_or_name).await
    }

    async fn count_accounts(&self) -> Result<u64, DbError> {
        let c = self.pool.get().await?;
        let row = super::query_one(&c, "SELECT COUNT(*) FROM accounts", &[]).await?;
        Ok(unsigned(row.get(0)))
    }

    async fn list_accounts(&self) -> Result<Vec<Account>, DbError> {
        let c = self.pool.get().await?;
        let sql = format!(
            "SELECT {} FROM accounts ORDER BY created_at, id",
            rows::ACCOUNT
        );
        Ok(query(&c, &sql, &[])
            .await?
            .iter()
            .map(rows::account)
            .collect())
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
        let c = self.pool.get().await?;
        // One statement; NULL leaves a column as it is.
        let sql = format!(
            "UPDATE accounts SET plan = COALESCE($2, plan),
                 grace_period = COALESCE($3, grace_period)
             WHERE id = $1 RETURNING {}",
            rows::ACCOUNT
        );
        Ok(query_opt(&c, &sql, &[&id, &plan, &grace_period])
            .await?
            .map(|r| rows::account(&r)))
    }

    async fn create_key(&self, key: KeyRecord, hash: [u8; 32]) -> Result<(), DbError> {
        let c = self.pool.get().await?;
        super::admin::create_key(&c, &key, &hash).await
    }

    async fn key(&self, id: &str) -> Result<Option<KeyRecord>, DbError> {
        if has_nul(&[id]) {
            return Ok(None);
        }
        let c = self.pool.get().await?;
        let sql = format!("SELECT {} FROM api_keys WHERE id = $1", rows::KEY);
        query_opt(&c, &sql, &[&id])
            .await?
            .map(|r| rows::key(&r))
            .transpose()
    }

    async fn list_keys(&self, account_id: Option<&str>) -> Result<Vec<KeyRecord>, DbError> {
        let c = self.pool.get().await?;
        let sql = format!(
            "SELECT {} FROM api_keys WHERE $1::TEXT IS NULL OR account_id = $1
             ORDER BY created_at, id",
            rows::KEY
        );
        query(&c, &sql, &[&account_id])
            .await?
            .iter()
            .map(rows::key)
            .collect()
    }

    async fn revoke_key(&self, id: &str, now: i64) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
        }
        let c = self.pool.get().await?;
        Ok(execute(
            &c,
            "UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
            &[&id, &now],
        )
        .await?
            == 1)
    }

    async fn meta_get_or_insert(&self, key: &str, value: String) -> Result<String, DbError> {
        in_tx!(self, |tx| super::admin::meta_get_or_insert(
            &tx, key, &value
        )
        .await)
    }

    async fn replayed_upload(
        &self,
        account_id: &str,
        key: &str,
    ) -> Result<Option<UploadRow>, DbError> {
        if has_nul(&[account_id, key]) {
            return Ok(None);
        }
        let c = self.pool.get().await?;
        uploads::replayed(&c, account_id, key).await
    }

    async fn create_upload(
        &self,
        upload: UploadRow,
        storage_quota: u64,
        uploads_quota: u64,
        period: &str,
    ) -> Result<CreateOutcome, DbError> {
        in_tx!(self, |tx| uploads::create(
            &tx,
            &upload,
            storage_quota,
            uploads_quota,
            period
        )
        .await)
    }

    async fn upload(&self, account_id: &str, id: &str) -> Result<Option<UploadRow>, DbError> {
        if has_nul(&[account_id, id]) {
            return Ok(None);
        }
        let c = self.pool.get().await?;
        uploads::get(&c, account_id, id).await
    }

    async fn upload_tail(&self, id: &str) -> Result<Option<Vec<u8>>, DbError> {
        if has_nul(&[id]) {
            return Ok(None);
        }
        let c = self.pool.get().await?;
        uploads::tail(&c, id).await
    }

    async fn advance_upload(&self, id: &str, progress: Progress) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
        }
        let c = self.pool.get().await?;
        uploads::advance(&c, id, &progress).await
    }

    async fn remove_upload(&self, id: &str, now: i64) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
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
        let c = self.pool.get().await?;
        uploads::live_keys(&c).await
    }

    async fn ping(&self) -> Result<(), DbError> {
        let c = self.pool.get().await?;
        query(&c, "SELECT 1", &[]).await.map(|_| ())
    }

    fn pool_stats(&self) -> PoolStats {
        let s = self.pool.status();
        PoolStats {
            connections: u32::try_from(s.size).unwrap_or(u32::MAX),
            idle_connections: u32::try_from(s.available).unwrap_or(0),
        }
    }
}
