//! S3 credentials (CONTRACT §18): every live secret key is one, with its
//! id as the access key id and a secret access key derived from the signing
//! secret (`Signer::s3_secret`), so the database alone reveals none and
//! every node derives the same. Public keys and upload tokens have none.
//! Shown by `admin key create` and `admin key s3` (straight on the metadata
//! store) and by `GET /v1/s3/credentials` (to the key itself).

use super::admin::{AdminError, NewKey};
use super::caller::Caller;
use super::{App, ServiceError};
use crate::config::Config;
use crate::db::{DbError, MetaStore};
use crate::domain::ids::KeyKind;
use crate::domain::secret::Secret;
use crate::domain::signing::Signer;
use serde::Serialize;

/// A secret key's S3 credential (`admin key s3 --json` prints it as is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct S3Credential {
    pub access_key_id: String,
    pub secret_access_key: Secret,
}

impl S3Credential {
    /// Secret key `key_id`'s credential, as `signer` derives it.
    pub(crate) fn of(signer: &Signer, key_id: &str) -> S3Credential {
        S3Credential {
            access_key_id: key_id.to_string(),
            secret_access_key: Secret::new(signer.s3_secret(key_id)),
        }
    }
}

impl App {
    /// The caller behind an access key id: a live secret key and its
    /// account (None for anything else, revoked keys included: read from
    /// the database each time, so a revocation holds at once on every node).
    pub(crate) async fn s3_caller(
        &self,
        access_key_id: &str,
    ) -> Result<Option<Caller>, ServiceError> {
        if !access_key_id.starts_with("key_") || access_key_id.len() > 100 {
            return Ok(None);
        }
        let Some(key) = self.meta.key(access_key_id).await? else {
            return Ok(None);
        };
        if key.kind != KeyKind::Secret || key.revoked_at.is_some() {
            return Ok(None);
        }
        let Some(account) = self.meta.account(&key.account_id).await? else {
            return Ok(None);
        };
        Ok(Some(Caller { key, account }))
    }

    /// Whether `caller` may write through the door now: not in its grace
    /// period (403, naming it), and within its key's rate limit, in which
    /// each write counts as an upload does in /v1 (503 `SlowDown` past it).
    pub(crate) async fn s3_may_write(&self, caller: &Caller) -> Result<(), ServiceError> {
        if caller.account.grace_period {
            return Err(ServiceError::GracePeriod(
                "the account is in its grace period: uploads, copies and other writes are paused"
                    .into(),
            ));
        }
        let plan = self.plan_of(&caller.account);
        let (limit, window_ms, now) = (
            plan.rate_limit,
            crate::clock::millis(plan.rate_window),
            self.clock.now_ms(),
        );
        let window = self
            .meta
            .rate_window(&caller.key.id, window_ms, now, true)
            .await?;
        let d = window.decision(limit, true);
        if d.allowed {
            Ok(())
        } else {
            Err(ServiceError::RateLimited {
                message: format!("rate limit of {} requests per window reached", d.limit),
                limit: d.limit,
                reset: d.reset,
                now: now / 1000,
            })
        }
    }

    /// The S3 credential of secret key `key_id` (whoever asks must have
    /// shown the right to see it).
    pub(crate) fn s3_credential(&self, key_id: &str) -> S3Credential {
        S3Credential::of(&self.signer, key_id)
    }
}

/// The signer every node has on this metadata store and config (for the
/// operator's commands, which open no [`App`]).
async fn signer(meta: &dyn MetaStore, config: &Config) -> Result<Signer, DbError> {
    Ok(Signer::new(super::signing_secret(meta, config).await?))
}

/// `admin key create`: a new secret key's record with its S3 credential
/// beside it (a public key's as it is).
pub(crate) async fn with_credential(
    meta: &dyn MetaStore,
    config: &Config,
    mut key: NewKey,
) -> Result<NewKey, DbError> {
    if key.kind == KeyKind::Secret {
        let c = S3Credential::of(&signer(meta, config).await?, &key.id);
        key.s3_access_key_id = Some(c.access_key_id);
        key.s3_secret_access_key = Some(c.secret_access_key);
    }
    Ok(key)
}

/// `admin key s3 KEY_ID`: the credential of a live secret key; an unknown
/// key is not found, a public or revoked one has none.
pub(crate) async fn admin_credential(
    meta: &dyn MetaStore,
    config: &Config,
    key_id: &str,
) -> Result<S3Credential, AdminError> {
    let key = meta
        .key(key_id)
        .await?
        .ok_or_else(|| AdminError::NotFound(format!("no key {key_id:?}")))?;
    if key.kind != KeyKind::Secret {
        return Err(AdminError::Invalid(format!(
            "key {} is a {} key: only secret keys have an S3 credential",
            key.id, key.kind
        )));
    }
    if key.revoked_at.is_some() {
        return Err(AdminError::Invalid(format!(
            "key {} is revoked: it has no S3 credential any more",
            key.id
        )));
    }
    Ok(S3Credential::of(&signer(meta, config).await?, &key.id))
}
