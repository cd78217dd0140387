//! S3 credentials (CONTRACT §18): every live secret key is one, with its
//! id as the access key id and a secret access key derived from the signing
//! secret (`Signer::s3_secret`), so the database alone reveals none and
//! every node derives the same. Public keys and upload tokens have none.

use super::caller::Caller;
use super::{App, ServiceError};
use crate::domain::ids::KeyKind;

/// A secret key's S3 credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct S3Credential {
    pub access_key_id: String,
    pub secret_access_key: String,
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
        S3Credential {
            access_key_id: key_id.to_string(),
            secret_access_key: self.signer.s3_secret(key_id),
        }
    }
}
