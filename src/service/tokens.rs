//! Upload tokens (docs/decisions.md, "Upload tokens"): an app server mints
//! one with its secret key for one browser's upload; the token carries the
//! upload's policy and is counted, revoked and expired here and in the
//! transactions that create files.

use super::App;
use crate::clock::millis;
use crate::db::TokenRow;
use crate::domain::policy::{self, UploadPolicy};
use crate::domain::{ids, metadata, validate};
use crate::service::error::ServiceError;
use std::time::Duration;

/// `max_uploads` when the request does not say.
const DEFAULT_MAX_UPLOADS: u32 = 1;
/// The most uploads one token may make.
const MAX_UPLOADS: u32 = 1000;
/// How long a token lives when the request does not say (seconds).
const DEFAULT_EXPIRES_IN: u64 = 3600;
/// The longest a token may live (seconds).
const MAX_EXPIRES_IN: u64 = 86_400;

/// What a new token is asked to allow: every field optional (the
/// account's defaults), checked here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(test, derive(serde::Deserialize), serde(deny_unknown_fields))]
pub(crate) struct TokenAsk {
    pub folder: Option<String>,
    pub max_size: Option<u64>,
    pub types: Option<Vec<String>>,
    pub max_uploads: Option<u32>,
    /// Seconds.
    pub expires_in: Option<u64>,
    pub private: Option<bool>,
    /// Seconds, or an upload's `expires` (`"7d"`).
    pub file_expires: Option<serde_json::Value>,
    pub metadata: Option<std::collections::BTreeMap<String, String>>,
    /// Whether its files replace the files at their paths.
    pub replace: Option<bool>,
}

/// A token just made: the only time its secret is known.
#[derive(Debug, Clone)]
pub(crate) struct Minted {
    pub token: TokenRow,
    /// `upt_…`.
    pub secret: String,
    /// The multipart upload URL that carries it.
    pub url: String,
}

/// Mints a token for the account of the secret key `key_id`.
pub(crate) async fn create(
    app: &App,
    account: &crate::db::Account,
    key_id: &str,
    req: TokenAsk,
) -> Result<Minted, ServiceError> {
    let plan = app.plan_of(account);
    let (policy, max_uploads, expires_in) =
        policy_of(req, plan.max_file_size).map_err(ServiceError::BadRequest)?;
    let now = app.clock.now_ms();
    let secret = ids::upload_token_secret();
    let row = TokenRow {
        id: ids::upload_token_id(),
        account_id: account.id.clone(),
        created_by: key_id.to_string(),
        policy,
        max_uploads,
        uploads_used: 0,
        uploads_open: 0,
        created_at: now,
        expires_at: now.saturating_add(millis(Duration::from_secs(expires_in))),
        revoked_at: None,
    };
    app.meta
        .create_token(row.clone(), ids::key_hash(&secret))
        .await?;
    Ok(Minted {
        token: row,
        url: format!("{}/v1/upload?token={secret}", app.config.base_url),
        secret,
    })
}

/// The account's token `id`: 404 for another account's, and for a revoked
/// one (deleted, as far as the API goes).
pub(crate) async fn get(app: &App, account_id: &str, id: &str) -> Result<TokenRow, ServiceError> {
    live(app, account_id, id).await
}

/// The most tokens `GET /v1/upload-tokens` lists.
pub(crate) const LIST_MAX: u32 = 1000;

/// The account's active tokens (unrevoked, unexpired), newest first, at
/// most [`LIST_MAX`].
pub(crate) async fn list(app: &App, account_id: &str) -> Result<Vec<TokenRow>, ServiceError> {
    Ok(app
        .meta
        .active_tokens(account_id, app.clock.now_ms(), LIST_MAX)
        .await?)
}

/// Revokes the account's token `id` at once: every node refuses it from
/// the next request, and a commit not yet made with it is refused. Its row
/// stays (the uploads it holds give their uses back to it) until it is
/// pruned a day after it expires.
pub(crate) async fn revoke(app: &App, account_id: &str, id: &str) -> Result<(), ServiceError> {
    live(app, account_id, id).await?;
    if app
        .meta
        .revoke_token(account_id, id, app.clock.now_ms())
        .await?
    {
        Ok(())
    } else {
        Err(no_such())
    }
}

/// The account's unrevoked token `id`.
async fn live(app: &App, account_id: &str, id: &str) -> Result<TokenRow, ServiceError> {
    match app.meta.token(account_id, id).await? {
        Some(row) if row.revoked_at.is_none() => Ok(row),
        _ => Err(no_such()),
    }
}

fn no_such() -> ServiceError {
    ServiceError::NotFound("no such upload token".into())
}

/// The request checked: the policy, `max_uploads` and `expires_in`.
fn policy_of(req: TokenAsk, plan_max: u64) -> Result<(UploadPolicy, u32, u64), String> {
    let folder = match req.folder.as_deref() {
        Some(f) => validate::folder(f)?,
        None => None,
    };
    let max_size = match req.max_size {
        Some(n) if n == 0 || n > plan_max => {
            return Err(format!(
                "max_size must be from 1 to the plan's maximum file size, {plan_max} bytes ({})",
                crate::domain::units::human_bytes(plan_max)
            ))
        }
        other => other,
    };
    let types = policy::parse_types(&req.types.unwrap_or_default())?;
    let max_uploads = req.max_uploads.unwrap_or(DEFAULT_MAX_UPLOADS);
    if !(1..=MAX_UPLOADS).contains(&max_uploads) {
        return Err(format!("max_uploads must be from 1 to {MAX_UPLOADS}"));
    }
    let expires_in = req.expires_in.unwrap_or(DEFAULT_EXPIRES_IN);
    if !(1..=MAX_EXPIRES_IN).contains(&expires_in) {
        return Err(format!(
            "expires_in must be from 1 to {MAX_EXPIRES_IN} seconds"
        ));
    }
    let file_expires = req.file_expires.as_ref().map(file_expires).transpose()?;
    let metadata = req.metadata.unwrap_or_default();
    metadata::check(&metadata)?;
    let policy = UploadPolicy {
        folder,
        max_size,
        types,
        private: Some(req.private.unwrap_or(false)),
        file_expires,
        metadata,
        decides: true,
        at_once: None,
        replace: req.replace.unwrap_or(false),
    };
    Ok((policy, max_uploads, expires_in))
}

/// `file_expires`: seconds, or the upload form's `expires` (`"7d"`), with
/// its bounds.
fn file_expires(v: &serde_json::Value) -> Result<Duration, String> {
    let raw = match v {
        serde_json::Value::String(s) => s.clone(),
        n => match validate::json_integer(n) {
            Some(secs) => format!("{secs}s"),
            None => return Err("file_expires must be seconds or a duration such as \"7d\"".into()),
        },
    };
    validate::expires(&raw).map_err(|e| format!("file_{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(v: serde_json::Value) -> Result<(UploadPolicy, u32, u64), String> {
        let r: TokenAsk = serde_json::from_value(v).map_err(|e| e.to_string())?;
        policy_of(r, 1000)
    }

    #[test]
    fn defaults_and_a_full_policy() {
        let (p, n, secs) = req(serde_json::json!({})).unwrap();
        assert_eq!((n, secs), (1, 3600));
        assert_eq!(p.private, Some(false));
        assert!(p.types.is_empty() && p.folder.is_none() && p.max_size.is_none());
        let (p, n, secs) = req(serde_json::json!({
            "folder": "avatars/u1", "max_size": 500, "types": ["image/*", "application/pdf"],
            "max_uploads": 5, "expires_in": 60, "private": true, "file_expires": "7d",
            "metadata": {"user": "u1"}
        }))
        .unwrap();
        assert_eq!((n, secs), (5, 60));
        assert_eq!(p.folder.as_deref(), Some("avatars/u1"));
        assert_eq!(p.max_size, Some(500));
        assert_eq!(p.types, vec!["image/*", "application/pdf"]);
        assert_eq!(p.private, Some(true));
        assert_eq!(p.file_expires, Some(Duration::from_hours(7 * 24)));
        assert_eq!(p.metadata["user"], "u1");
        let (p, _, _) = req(serde_json::json!({"file_expires": 90})).unwrap();
        assert_eq!(p.file_expires, Some(Duration::from_secs(90)));
    }

    #[test]
    fn every_out_of_range_field_is_refused() {
        for bad in [
            serde_json::json!({"max_uploads": 0}),
            serde_json::json!({"max_uploads": 1001}),
            serde_json::json!({"expires_in": 0}),
            serde_json::json!({"expires_in": 86_401}),
            serde_json::json!({"max_size": 0}),
            serde_json::json!({"max_size": 1001}),
            serde_json::json!({"types": ["png"]}),
            serde_json::json!({"folder": "../x"}),
            serde_json::json!({"file_expires": "soon"}),
            serde_json::json!({"file_expires": -1}),
            serde_json::json!({"metadata": {"Bad Key": "v"}}),
            serde_json::json!({"unknown": 1}),
        ] {
            assert!(req(bad.clone()).is_err(), "{bad}");
        }
    }
}
