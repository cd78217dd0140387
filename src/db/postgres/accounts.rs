//! Accounts, API keys and usage counters on PostgreSQL ([`AccountRepo`]);
//! and what a quota check reads under the account row's lock
//! (`account_lock`: the period's uploads, the bytes open uploads hold),
//! shared by the commit and the creation of an upload.

use super::group::Groups;
use super::{
    execute, has_nul, query, query_one, query_opt, rows, signed, unsigned, DbError, PgStore,
};
use crate::db::model::{Account, BandwidthCount, Commitments, KeyRecord, UsageCounters};
use crate::db::store::AccountRepo;
use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Transaction};
use std::sync::{Arc, LazyLock};

/// The statement that reads what an account has committed to (see
/// [`commitments`]), with what stands in it (parameters such as `$1`, or
/// columns) for the account, the period, the time and the upload left out.
/// Its one row is read by [`commitments_at`].
pub(super) fn commitments_sql(account: &str, period: &str, now: &str, except: &str) -> String {
    format!(
        "SELECT COALESCE((SELECT upload_count FROM usage_periods
                           WHERE account_id = {account} AND period = {period}), 0)::BIGINT,
             COALESCE(SUM(length), 0)::BIGINT,
             COUNT(*) + (SELECT COUNT(*) FROM s3_uploads
                         WHERE account_id = {account} AND completed_at IS NULL),
             (SELECT storage_bytes FROM accounts WHERE id = {account})
         FROM tus_uploads
         WHERE account_id = {account} AND completed_at IS NULL AND expires_at > {now}
           AND id IS DISTINCT FROM {except}"
    )
}

/// The commitments in the four columns of `row` from `first` on (as
/// [`commitments_sql`] gives them).
pub(super) fn commitments_at(row: &tokio_postgres::Row, first: usize) -> Commitments {
    Commitments {
        upload_count: unsigned(row.get(first)),
        reserved_bytes: unsigned(row.get(first + 1)),
        pending_uploads: unsigned(row.get(first + 2)),
        stored_bytes: row.get::<_, Option<i64>>(first + 3).map(unsigned),
    }
}

/// [`commitments_sql`] alone.
static COMMITMENTS: LazyLock<String> = LazyLock::new(|| commitments_sql("$1", "$2", "$3", "$4"));

/// What an account has committed to at `now`, in one statement: its
/// stored bytes, the uploads of `period`, and what its incomplete, unexpired resumable uploads
/// hold (bytes, uploads), but for upload `except`.
pub(super) async fn commitments<C: GenericClient>(
    c: &C,
    account_id: &str,
    period: &str,
    now: i64,
    except: Option<&str>,
) -> Result<Commitments, DbError> {
    let row = query_one(c, &COMMITMENTS, &[&account_id, &period, &now, &except]).await?;
    Ok(commitments_at(&row, 0))
}

/// The most requests one read of an account's commitments answers.
const HELD_MOST: usize = 256;

/// The accounts (and periods) with a read of their commitments in flight
/// on this node: the early checks of an account's uploads that arrive
/// meanwhile share the next read (made after they arrived, so as fresh as
/// one of their own; the commit checks again, exactly, under the lock).
/// A request is its time, and whether its upload commits in the account's
/// next batch (which then waits for the read: `flights`).
pub(super) type HeldGroups = Groups<(String, String), (i64, bool), Result<Commitments, DbError>>;

pub(super) fn held_groups() -> Arc<HeldGroups> {
    Arc::new(Groups::new(HELD_MOST))
}

/// An account by its id or its (unique) name; the id wins.
async fn find_account<C: GenericClient>(
    c: &C,
    id_or_name: &str,
) -> Result<Option<Account>, DbError> {
    let sql = format!(
        "SELECT {} FROM accounts WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC LIMIT 1",
        rows::ACCOUNT
    );
    Ok(query_opt(c, &sql, &[&id_or_name])
        .await?
        .map(|r| rows::account(&r)))
}

/// Creates the account unless its name is an existing account's name or id
/// (false then). Two nodes creating the same name at once: the unique index
/// makes the second insert do nothing, so it answers false as well.
async fn create_account(tx: &Transaction<'_>, a: &Account) -> Result<bool, DbError> {
    if find_account(tx, &a.name).await?.is_some() {
        return Ok(false);
    }
    let inserted = execute(
        tx,
        "INSERT INTO accounts (id, name, plan, grace_period, storage_bytes, created_at)
         VALUES ($1, $2, $3, $4, 0, $5) ON CONFLICT DO NOTHING",
        &[&a.id, &a.name, &a.plan, &a.grace_period, &a.created_at],
    )
    .await?;
    Ok(inserted == 1)
}

impl PgStore {
    /// The live key whose secret hashes to `hash`, with its account, from
    /// the database.
    async fn read_key(&self, hash: [u8; 32]) -> Result<Option<(KeyRecord, Account)>, DbError> {
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {} FROM api_keys k JOIN accounts a ON a.id = k.account_id
                 WHERE k.key_hash = $1 AND k.revoked_at IS NULL",
                rows::KEY_AND_ACCOUNT
            );
            query_opt(c, &sql, &[&&hash[..]])
                .await?
                .map(|r| rows::key_and_account(&r))
                .transpose()
        })
    }
}

impl PgStore {
    /// The commitments of `account_id` in `period`, read in the next read
    /// of that account and period on this node; `ask` is the request's time
    /// and whether its upload commits in the account's next batch.
    async fn read_commitments(
        &self,
        account_id: &str,
        period: &str,
        ask: (i64, bool),
    ) -> Result<Commitments, DbError> {
        let store = self.clone();
        let key = (account_id.to_string(), period.to_string());
        self.held
            .submit(key, ask, move |(account, period), asks| {
                let store = store.clone();
                async move {
                    // One read, at the latest time asked, for all of them;
                    // the account's next commit waits for it when an
                    // upload of that batch is in it (`flights`).
                    let _aloft = asks
                        .iter()
                        .any(|&(_, batched)| batched)
                        .then(|| store.flights.take_off(account.clone()));
                    let now = asks.iter().map(|&(t, _)| t).max().unwrap_or_default();
                    let read = async {
                        on_conn!(store, |c| commitments(c, &account, &period, now, None)
                            .await)
                    }
                    .await;
                    match read {
                        Ok(held) => asks.iter().map(|_| Ok(held)).collect(),
                        Err(e) => asks
                            .iter()
                            .map(|_| Err(e.shared("reading an account's commitments")))
                            .collect::<Vec<_>>(),
                    }
                }
            })
            .await
            .unwrap_or_else(|| Err(DbError::Task("the read this request was in failed".into())))
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
        self.read_commitments(account_id, period, (now, false))
            .await
    }

    /// The read marked aloft for the account's next commit (`flights`).
    async fn upload_commitments(
        &self,
        account_id: &str,
        period: &str,
        now: i64,
    ) -> Result<Commitments, DbError> {
        self.read_commitments(account_id, period, (now, true)).await
    }

    async fn strangers(
        &self,
        account_id: &str,
        period: &str,
        now: i64,
    ) -> Result<crate::domain::quota::Holdings, DbError> {
        on_conn!(self, |c| super::strangers::strangers(
            c, account_id, period, now
        )
        .await)
    }

    /// The account's stored bytes and the period's counters, in one statement
    /// (one snapshot of both tables).
    async fn usage(&self, account_id: &str, period: &str) -> Result<UsageCounters, DbError> {
        on_conn!(self, |c| {
            let row = query_opt(
                c,
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
        })
    }

    /// Adds the bytes sent, in key order: two nodes flushing at once lock the
    /// rows in one order (no deadlock).
    async fn add_bandwidth(&self, mut counts: Vec<BandwidthCount>) -> Result<(), DbError> {
        in_tx!(self, |tx| {
            counts.sort_by(|a, b| (&a.account_id, &a.period).cmp(&(&b.account_id, &b.period)));
            for b in &counts {
                execute(
                    &tx,
                    "INSERT INTO usage_periods (account_id, period, bandwidth_bytes)
                     VALUES ($1, $2, $3)
                     ON CONFLICT (account_id, period)
                     DO UPDATE SET bandwidth_bytes = usage_periods.bandwidth_bytes + $3",
                    &[&b.account_id, &b.period, &signed(b.bytes)?],
                )
                .await?;
            }
            Ok(())
        })
    }

    /// The live key whose secret hashes to `hash`, with its account (one
    /// join), as read in the last second (`db::keys`).
    async fn key_by_hash(&self, hash: [u8; 32]) -> Result<Option<(KeyRecord, Account)>, DbError> {
        self.keys.get_or_read(hash, || self.read_key(hash)).await
    }

    async fn public_origins(&self) -> Result<Vec<String>, DbError> {
        on_conn!(self, |c| {
            let rows = query(
                c,
                "SELECT origins FROM api_keys WHERE kind = 'public' AND revoked_at IS NULL",
                &[],
            )
            .await?;
            Ok(rows
                .iter()
                .flat_map(|r| serde_json::from_str::<Vec<String>>(r.get(0)).unwrap_or_default())
                .collect())
        })
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
        on_conn!(self, |c| find_account(c, id_or_name).await)
    }

    async fn count_accounts(&self) -> Result<u64, DbError> {
        on_conn!(self, |c| {
            let row = query_one(c, "SELECT COUNT(*) FROM accounts", &[]).await?;
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
        in_tx!(self, |tx| create_account(&tx, &account).await)
    }

    /// Changes what is given (one statement; NULL leaves a column as it is).
    async fn set_account(
        &self,
        id: &str,
        plan: Option<String>,
        grace_period: Option<bool>,
    ) -> Result<Option<Account>, DbError> {
        let changed = on_conn!(self, |c| {
            let sql = format!(
                "UPDATE accounts SET plan = COALESCE($2, plan),
                     grace_period = COALESCE($3, grace_period)
                 WHERE id = $1 RETURNING {}, {TELL_NODES}",
                rows::ACCOUNT
            );
            Ok(query_opt(c, &sql, &[&id, &plan, &grace_period])
                .await?
                .map(|r| rows::account(&r)))
        });
        self.keys.forget();
        changed
    }

    async fn create_key(&self, key: KeyRecord, hash: [u8; 32]) -> Result<(), DbError> {
        on_conn!(self, |c| {
            let origins =
                serde_json::to_string(&key.origins).map_err(|e| DbError::Invalid(e.to_string()))?;
            // A public key's policy keeps folder, max_size and types only.
            let p = &key.policy;
            let types =
                serde_json::to_string(&p.types).map_err(|e| DbError::Invalid(e.to_string()))?;
            execute(
                c,
                "INSERT INTO api_keys (id, account_id, kind, name, key_hash, origins, created_at,
                     folder, max_size, types)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                &[
                    &key.id,
                    &key.account_id,
                    &key.kind.as_str(),
                    &key.name,
                    &&hash[..],
                    &origins,
                    &key.created_at,
                    &p.folder,
                    &p.max_size.map(signed).transpose()?,
                    &types,
                ],
            )
            .await?;
            Ok(())
        })
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

    /// Every key, or those of one account, oldest first.
    async fn list_keys(&self, account_id: Option<&str>) -> Result<Vec<KeyRecord>, DbError> {
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {} FROM api_keys WHERE $1::TEXT IS NULL OR account_id = $1
                 ORDER BY created_at, id",
                rows::KEY
            );
            query(c, &sql, &[&account_id])
                .await?
                .iter()
                .map(rows::key)
                .collect()
        })
    }

    async fn revoke_key(&self, id: &str, now: i64) -> Result<bool, DbError> {
        if has_nul(&[id]) {
            return Ok(false);
        }
        let revoked = on_conn!(self, |c| {
            Ok(execute(
                c,
                &format!(
                    "UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL
                     RETURNING {TELL_NODES}"
                ),
                &[&id, &now],
            )
            .await?
                == 1)
        });
        self.keys.forget();
        revoked
    }
}

/// What the statements that change keys or accounts return besides: the
/// notice that tells every node's session (`node::KEYS_CHANNEL`) to forget
/// the keys it remembers, sent with each row changed and delivered when the
/// change commits (so one that timed out but committed still tells them,
/// and one that changed nothing tells nobody).
pub(super) const TELL_NODES: &str = "pg_notify('filestore_keys', '')";

#[cfg(test)]
mod tests {
    use super::super::node::KEYS_CHANNEL;
    use super::TELL_NODES;

    #[test]
    fn the_notice_goes_on_the_channel_the_sessions_hear() {
        assert_eq!(TELL_NODES, format!("pg_notify('{KEYS_CHANNEL}', '')"));
    }
}
