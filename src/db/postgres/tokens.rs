//! Upload tokens on PostgreSQL ([`TokenRepo`]): made, read by id or by the
//! hash of their secret, revoked and pruned; and the guarded UPDATEs that
//! count their uses inside the transactions of files and uploads (`take`,
//! `hold`, `convert`, `give_back`). Each is one `UPDATE … WHERE <guard>`:
//! under READ COMMITTED a concurrent one waits on the row and re-checks the
//! guard on its newest version, so the count is exact across nodes.
//!
//! Lock order: the account row (`lock_account`), then a resumable upload's
//! row, then token rows (several in id order: a batch of uploads,
//! `filestore_commit`, locks its tokens so before using them);
//! nothing locks them the other way round.

use super::{execute, has_nul, query, query_opt, rows, signed, DbError, PgStore};
use crate::db::model::{Account, TokenRow};
use crate::db::store::TokenRepo;
use crate::domain::metadata;
use async_trait::async_trait;
use deadpool_postgres::GenericClient;

/// Counts a file's upload with token `id` (a multipart upload): only while
/// it is unrevoked and has a use left. False: nothing changed, and the
/// commit must write nothing either (an Ok outcome commits).
pub(super) async fn take<C: GenericClient>(c: &C, id: &str) -> Result<bool, DbError> {
    Ok(execute(
        c,
        "UPDATE upload_tokens SET uploads_used = uploads_used + 1
         WHERE id = $1 AND revoked_at IS NULL AND uploads_used + uploads_open < max_uploads",
        &[&id],
    )
    .await?
        == 1)
}

/// Holds one use of token `id` for a resumable upload created at `now`:
/// only while it is unrevoked, unexpired and has a use left.
pub(super) async fn hold<C: GenericClient>(c: &C, id: &str, now: i64) -> Result<bool, DbError> {
    Ok(execute(
        c,
        "UPDATE upload_tokens SET uploads_open = uploads_open + 1
         WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2
           AND uploads_used + uploads_open < max_uploads",
        &[&id, &now],
    )
    .await?
        == 1)
}

/// A resumable upload of token `id` completes: the use it held since its
/// creation becomes a file's, revoked or expired since or not (the upload
/// was admitted then). False only if the token lost track of it.
pub(super) async fn convert<C: GenericClient>(c: &C, id: &str) -> Result<bool, DbError> {
    Ok(execute(
        c,
        "UPDATE upload_tokens SET uploads_open = uploads_open - 1, uploads_used = uploads_used + 1
         WHERE id = $1 AND uploads_open > 0",
        &[&id],
    )
    .await?
        == 1)
}

/// Incomplete resumable uploads of these tokens ended: each gives its use
/// back, in token id order (two reapers lock the rows in one order).
pub(super) async fn give_back<C: GenericClient>(
    c: &C,
    mut ids: Vec<String>,
) -> Result<(), DbError> {
    ids.sort();
    for id in &ids {
        execute(
            c,
            "UPDATE upload_tokens SET uploads_open = uploads_open - 1
             WHERE id = $1 AND uploads_open > 0",
            &[id],
        )
        .await?;
    }
    Ok(())
}

/// PostgreSQL's text holds no NUL: a token carrying one is refused whole.
fn check_text(t: &TokenRow) -> Result<(), DbError> {
    let p = &t.policy;
    let mut texts = vec![t.id.as_str(), t.account_id.as_str(), t.created_by.as_str()];
    texts.extend(p.folder.as_deref());
    texts.extend(p.types.iter().map(String::as_str));
    texts.extend(
        p.metadata
            .iter()
            .flat_map(|(k, v)| [k.as_str(), v.as_str()]),
    );
    if has_nul(&texts) {
        return Err(DbError::Invalid("an upload token holds a NUL".into()));
    }
    Ok(())
}

#[async_trait]
impl TokenRepo for PgStore {
    async fn create_token(&self, t: TokenRow, hash: [u8; 32]) -> Result<(), DbError> {
        check_text(&t)?;
        let p = &t.policy;
        let max_size = p.max_size.map(signed).transpose()?;
        let file_expires_ms = p
            .file_expires
            .map(|d| signed(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)))
            .transpose()?;
        let types = serde_json::to_string(&p.types).map_err(|e| DbError::Invalid(e.to_string()))?;
        let count = |n: u32| i32::try_from(n).map_err(|_| DbError::Invalid(format!("{n} uses")));
        let (max, used, open) = (
            count(t.max_uploads)?,
            count(t.uploads_used)?,
            count(t.uploads_open)?,
        );
        on_conn!(self, |c| {
            let sql = format!(
                "INSERT INTO upload_tokens ({}, token_hash)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
                rows::TOKEN
            );
            execute(
                c,
                &sql,
                &[
                    &t.id,
                    &t.account_id,
                    &t.created_by,
                    &p.folder,
                    &max_size,
                    &types,
                    &max,
                    &used,
                    &open,
                    &p.private.unwrap_or(false),
                    &file_expires_ms,
                    &metadata::to_json(&p.metadata),
                    &t.created_at,
                    &t.expires_at,
                    &t.revoked_at,
                    &p.replace,
                    &&hash[..],
                ],
            )
            .await?;
            Ok(())
        })
    }

    async fn token(&self, account_id: &str, id: &str) -> Result<Option<TokenRow>, DbError> {
        if has_nul(&[account_id, id]) {
            return Ok(None);
        }
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {} FROM upload_tokens WHERE id = $1 AND account_id = $2",
                rows::TOKEN
            );
            Ok(query_opt(c, &sql, &[&id, &account_id])
                .await?
                .map(|r| rows::token(&r)))
        })
    }

    async fn active_tokens(
        &self,
        account_id: &str,
        now: i64,
        limit: u32,
    ) -> Result<Vec<TokenRow>, DbError> {
        if has_nul(&[account_id]) {
            return Ok(Vec::new());
        }
        let limit = i64::from(limit);
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {} FROM upload_tokens
                 WHERE account_id = $1 AND revoked_at IS NULL AND expires_at > $2
                 ORDER BY created_at DESC, id DESC LIMIT $3",
                rows::TOKEN
            );
            Ok(query(c, &sql, &[&account_id, &now, &limit])
                .await?
                .iter()
                .map(rows::token)
                .collect())
        })
    }

    /// The token and its account in one join (the hot path of a token's
    /// every request).
    async fn token_by_hash(&self, hash: [u8; 32]) -> Result<Option<(TokenRow, Account)>, DbError> {
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {} FROM upload_tokens t JOIN accounts a ON a.id = t.account_id
                 WHERE t.token_hash = $1",
                rows::TOKEN_AND_ACCOUNT
            );
            Ok(query_opt(c, &sql, &[&&hash[..]])
                .await?
                .map(|r| rows::token_and_account(&r)))
        })
    }

    async fn revoke_token(&self, account_id: &str, id: &str, now: i64) -> Result<bool, DbError> {
        if has_nul(&[account_id, id]) {
            return Ok(false);
        }
        on_conn!(self, |c| {
            Ok(execute(
                c,
                "UPDATE upload_tokens SET revoked_at = COALESCE(revoked_at, $3)
                 WHERE id = $1 AND account_id = $2",
                &[&id, &account_id, &now],
            )
            .await?
                == 1)
        })
    }

    async fn prune_tokens(&self, before: i64) -> Result<usize, DbError> {
        on_conn!(self, |c| {
            let n = execute(
                c,
                "DELETE FROM upload_tokens WHERE expires_at < $1 AND uploads_open = 0",
                &[&before],
            )
            .await?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
    }
}
