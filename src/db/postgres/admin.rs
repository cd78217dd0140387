//! Accounts, keys and the server's settings on PostgreSQL.

use super::{execute, query, query_opt, rows, DbError};
use crate::db::model::{Account, KeyRecord};
use deadpool_postgres::{GenericClient, Transaction};

/// An account by its id or its (unique) name; the id wins.
pub(crate) async fn find_account<C: GenericClient>(
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
pub(crate) async fn create_account(tx: &Transaction<'_>, a: &Account) -> Result<bool, DbError> {
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

pub(crate) async fn create_key<C: GenericClient>(
    c: &C,
    k: &KeyRecord,
    hash: &[u8; 32],
) -> Result<(), DbError> {
    let origins = serde_json::to_string(&k.origins).map_err(|e| DbError::Invalid(e.to_string()))?;
    execute(
        c,
        "INSERT INTO api_keys (id, account_id, kind, name, key_hash, origins, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &k.id,
            &k.account_id,
            &k.kind.as_str(),
            &k.name,
            &&hash[..],
            &origins,
            &k.created_at,
        ],
    )
    .await?;
    Ok(())
}

/// The value of `key`, or `value` stored now. The insert waits for a
/// concurrent one of the same key, then the read sees the winner's value.
pub(crate) async fn meta_get_or_insert(
    tx: &Transaction<'_>,
    key: &str,
    value: &str,
) -> Result<String, DbError> {
    execute(
        tx,
        "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
        &[&key, &value],
    )
    .await?;
    let row = super::query_one(tx, "SELECT value FROM meta WHERE key = $1", &[&key]).await?;
    Ok(row.get(0))
}

/// The live key whose secret hashes to `hash`, with its account (one join).
pub(crate) async fn key_by_hash<C: GenericClient>(
    c: &C,
    hash: &[u8; 32],
) -> Result<Option<(KeyRecord, Account)>, DbError> {
    let sql = format!(
        "SELECT {} FROM api_keys k JOIN accounts a ON a.id = k.account_id
         WHERE k.key_hash = $1 AND k.revoked_at IS NULL",
        rows::KEY_AND_ACCOUNT
    );
    query_opt(c, &sql, &[&&hash[..]])
        .await?
        .map(|r| rows::key_and_account(&r))
        .transpose()
}

pub(crate) async fn public_origins<C: GenericClient>(c: &C) -> Result<Vec<String>, DbError> {
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
}

/// Every key, or those of one account, oldest first.
pub(crate) async fn list_keys<C: GenericClient>(
    c: &C,
    account_id: Option<&str>,
) -> Result<Vec<KeyRecord>, DbError> {
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
}

/// Changes what is given (one statement; NULL leaves a column as it is).
pub(crate) async fn set_account<C: GenericClient>(
    c: &C,
    id: &str,
    plan: Option<String>,
    grace_period: Option<bool>,
) -> Result<Option<Account>, DbError> {
    let sql = format!(
        "UPDATE accounts SET plan = COALESCE($2, plan),
             grace_period = COALESCE($3, grace_period)
         WHERE id = $1 RETURNING {}",
        rows::ACCOUNT
    );
    Ok(query_opt(c, &sql, &[&id, &plan, &grace_period])
        .await?
        .map(|r| rows::account(&r)))
}
