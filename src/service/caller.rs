//! Who calls, and what they may do: the one place every door (the /v1 API
//! API, S3 and the console's session) asks. A door only extracts what a
//! request presents (a key or upload token, its origin, whether it may be a
//! retry); the checks come here, in the order docs/api.md's "Errors" gives:
//! 401 (no or bad key or upload token, a token on a route other than
//! upload), then 403 (public key on a route other than upload, wrong
//! origin, grace period), then the rate limit.
//!
//! An upload token (`upt_…`, docs/decisions.md, "Upload tokens") is a
//! caller like a key (`KeyKind::Token`, its id `ut_…`, its policy). It
//! needs no Origin: it is single-purpose, counted and short-lived.

use super::{App, ServiceError};
pub(crate) use crate::domain::accounts::Commitments;
use crate::domain::accounts::{Account, KeyRecord, TokenRow};
use crate::domain::ids::{self, KeyKind};
use crate::domain::origins;
use crate::domain::policy::UploadPolicy;
use crate::domain::ratelimit::Decision;

/// The account a response was for, put in the response's extensions by a
/// door (the access log names it; the CDN's account is in its path).
#[derive(Debug, Clone)]
pub(crate) struct AccountTag(pub(crate) String);

/// The authenticated caller: the key (or upload token, as a key of kind
/// `Token` carrying its policy) and its account.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub key: KeyRecord,
    pub account: Account,
}

impl Caller {
    pub(crate) fn is_public(&self) -> bool {
        self.key.kind == KeyKind::Public
    }

    pub(crate) fn is_token(&self) -> bool {
        self.key.kind == KeyKind::Token
    }

    pub(crate) fn is_secret(&self) -> bool {
        self.key.kind == KeyKind::Secret
    }
}

/// What an operation lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Upload: secret keys, and public keys from one of their origins;
    /// refused in grace period; rate limited.
    Upload,
    /// The rest of a resumable upload admitted by an [`Access::Upload`]
    /// creation (its PATCHes, HEADs, status, termination): the same keys and
    /// origins, but neither the rate window nor the grace period stops an
    /// upload the plan already admitted (a tus client gives up on a 429).
    UploadContinue,
    /// Secret keys only, rate limited (signed-url, usage).
    SecretLimited,
    /// Secret keys only (get, list, delete).
    Secret,
}

impl Access {
    /// Whether the operation counts in the caller's rate window.
    pub(crate) fn limited(self) -> bool {
        matches!(self, Access::Upload | Access::SecretLimited)
    }
}

/// What a request presents, as its door found it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Presented<'a> {
    /// The key (`sk_…`, `pk_…`) or upload token (`upt_…`).
    pub secret: &'a str,
    /// The page it comes from (`Origin`), if it says.
    pub origin: Option<&'a str>,
    /// It may be a retry (an `Idempotency-Key`), which a used-up token may
    /// still have answered with what an earlier request stored.
    pub retry: bool,
    /// `secret` is a console session's id (from its cookie, which the door
    /// accepted as coming from the console's page): the caller is the key
    /// the session was made from (`service::console`).
    pub session: bool,
}

/// A caller let through its rate window: the window's standing (for the
/// door's headers) and, for an upload's early checks, the account's
/// commitments read with the count.
#[derive(Debug, Clone)]
pub(crate) struct Admitted {
    pub decision: Option<Decision>,
    pub commitments: Option<Commitments>,
}

/// A refusal, with where the caller stands in its rate window when the
/// operation is rate limited (the door shows it even on a 401/403).
#[derive(Debug)]
pub(crate) struct Refused {
    pub error: ServiceError,
    pub standing: Option<Decision>,
    /// Who was refused, once authenticated (the door may tag its answer).
    pub caller: Option<Box<Caller>>,
}

impl From<ServiceError> for Refused {
    fn from(error: ServiceError) -> Self {
        Refused {
            error,
            standing: None,
            caller: None,
        }
    }
}

impl App {
    /// The caller `p` presents: 401 when it is no live key or token.
    pub(crate) async fn authenticate(
        &self,
        p: Presented<'_>,
        access: Access,
    ) -> Result<Caller, ServiceError> {
        let secret = p.secret;
        if p.session {
            return self.console_caller(secret).await;
        }
        if secret.starts_with("upt_") {
            return self.authenticate_token(secret, access, p.retry).await;
        }
        if !(secret.starts_with("sk_") || secret.starts_with("pk_")) || secret.len() > 200 {
            return Err(ServiceError::Unauthorized("invalid API key".into()));
        }
        let found = self.meta.key_by_hash(ids::key_hash(secret)).await?;
        found
            .map(|(key, account)| Caller { key, account })
            .ok_or_else(|| ServiceError::Unauthorized("invalid API key".into()))
    }

    /// An upload token, as [`TokenRow::refusal`] admits it.
    async fn authenticate_token(
        &self,
        token: &str,
        access: Access,
        retry: bool,
    ) -> Result<Caller, ServiceError> {
        let invalid = || ServiceError::Unauthorized("invalid upload token".into());
        if token.len() > 200 {
            return Err(invalid());
        }
        let (row, account) = self
            .meta
            .token_by_hash(ids::key_hash(token))
            .await?
            .ok_or_else(invalid)?;
        let continuing = access == Access::UploadContinue;
        if let Some(why) = row.refusal(self.clock.now_ms(), continuing, retry) {
            return Err(ServiceError::Unauthorized(why.into()));
        }
        Ok(token_caller(row, account))
    }

    /// Authenticates, checks the caller's rights ([`authorize`]) and counts
    /// the operation in its rate window: the whole admission of a request,
    /// in the order of docs/api.md's "Errors". `early` asks for the
    /// account's commitments, read with the count (a multipart upload's
    /// early checks, which then make no read of their own).
    pub(crate) async fn admit(
        &self,
        p: Presented<'_>,
        access: Access,
        early: bool,
    ) -> Result<(Caller, Admitted), Refused> {
        let caller = self.authenticate(p, access).await?;
        let plan = self.plan_of(&caller.account);
        let (key, limit, window_ms, now) = (
            caller.key.id.as_str(),
            plan.rate_limit,
            crate::clock::millis(plan.rate_window),
            self.clock.now_ms(),
        );
        if let Err(error) = authorize(&caller, access, p.origin) {
            // Refused before being counted; a rate-limited operation still
            // says where the caller stands.
            let standing = if access.limited() {
                let w = self.meta.rate_window(key, window_ms, now, false).await;
                w.ok().map(|w| w.decision(limit, false))
            } else {
                None
            };
            let caller = Some(Box::new(caller));
            return Err(Refused {
                error,
                standing,
                caller,
            });
        }
        if !access.limited() {
            let admitted = Admitted {
                decision: None,
                commitments: None,
            };
            return Ok((caller, admitted));
        }
        let (window, commitments) = if early && access == Access::Upload {
            let period = crate::clock::with_period_key(now, str::to_string);
            let account = caller.account.id.as_str();
            self.meta
                .count_upload(key, window_ms, now, account, &period)
                .await
                .map_err(ServiceError::from)?
        } else {
            let w = self.meta.rate_window(key, window_ms, now, true).await;
            (w.map_err(ServiceError::from)?, None)
        };
        let d = window.decision(limit, true);
        if !d.allowed {
            let error = ServiceError::RateLimited {
                message: format!("rate limit of {} requests per window reached", d.limit),
                limit: d.limit,
                reset: d.reset,
                now: now / 1000,
            };
            let caller = Some(Box::new(caller));
            return Err(Refused {
                error,
                standing: None,
                caller,
            });
        }
        let admitted = Admitted {
            decision: Some(d),
            commitments,
        };
        Ok((caller, admitted))
    }

    /// The origins of every live public key (a CORS preflight's question:
    /// may this page send an upload at all).
    pub(crate) async fn public_origins(&self) -> Result<Vec<String>, ServiceError> {
        Ok(self.meta.public_origins().await?)
    }
}

/// A token as a caller: a key of kind `Token` carrying its policy, which
/// decides folder and lifetime whether it names them or not.
fn token_caller(row: TokenRow, account: Account) -> Caller {
    let at_once = u64::from(row.uploads_left().max(1));
    Caller {
        key: KeyRecord {
            id: row.id,
            account_id: row.account_id,
            kind: KeyKind::Token,
            name: None,
            origins: Vec::new(),
            created_at: row.created_at,
            revoked_at: row.revoked_at,
            // Its bodies at once: its uploads left (one for a retry of its
            // last, which the commit answers or refuses).
            policy: UploadPolicy {
                at_once: Some(at_once),
                ..row.policy
            },
        },
        account,
    }
}

/// The one permission check: what `caller` may do, from `origin`.
pub(crate) fn authorize(
    caller: &Caller,
    access: Access,
    origin: Option<&str>,
) -> Result<(), ServiceError> {
    let uploading = matches!(access, Access::Upload | Access::UploadContinue);
    if caller.is_token() && !uploading {
        return Err(ServiceError::Unauthorized(
            "an upload token may only upload; use a secret key".into(),
        ));
    }
    if caller.is_public() {
        if !uploading {
            return Err(ServiceError::Forbidden(
                "public keys may only upload; use a secret key".into(),
            ));
        }
        match origin {
            Some(o) if origins::any_matches(&caller.key.origins, o) => {}
            Some(o) => {
                return Err(ServiceError::Forbidden(format!(
                    "origin {o} is not allowed for this key"
                )))
            }
            None => {
                return Err(ServiceError::Forbidden(
                    "public keys need an Origin header".into(),
                ))
            }
        }
    }
    if access == Access::Upload && caller.account.grace_period {
        return Err(ServiceError::GracePeriod(
            "the account is in its grace period: uploads are paused".into(),
        ));
    }
    Ok(())
}

/// What an upload may ask of the kind of key it comes with, the same rule
/// for every door: a private file needs a secret key or an upload token;
/// `replace=true` a secret key, or a token whose policy replaces;
/// `if_absent` a secret key. A public key and a token are in strangers'
/// hands: with `replace` they could delete the account's files by path,
/// and with `if_absent` probe which paths hold a file.
pub(crate) fn may_ask(
    key: &KeyRecord,
    private: Option<bool>,
    replace: Option<bool>,
    if_absent: bool,
) -> Result<(), ServiceError> {
    let refused = match key.kind {
        KeyKind::Secret => None,
        KeyKind::Public if private == Some(true) => Some("public keys cannot upload private files"),
        _ if replace == Some(true) && !key.policy.replace => {
            Some("replace=true needs a secret key, or an upload token whose policy replaces")
        }
        _ if if_absent => Some("if_absent needs a secret key"),
        _ => None,
    };
    refused.map_or(Ok(()), |why| Err(ServiceError::Forbidden(why.into())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strangers_may_not_replace_or_probe_paths() {
        let key = |kind, replace| KeyRecord {
            id: "k".into(),
            account_id: "a".into(),
            kind,
            name: None,
            origins: vec![],
            created_at: 0,
            revoked_at: None,
            policy: UploadPolicy {
                replace,
                ..UploadPolicy::default()
            },
        };
        let asks = |k: &KeyRecord, private, replace, if_absent| {
            may_ask(k, private, replace, if_absent).is_ok()
        };
        let secret = key(KeyKind::Secret, false);
        assert!(asks(&secret, Some(true), Some(true), false));
        assert!(asks(&secret, None, None, true));
        for stranger in [key(KeyKind::Public, false), key(KeyKind::Token, false)] {
            assert!(!asks(&stranger, None, Some(true), false), "{stranger:?}");
            assert!(!asks(&stranger, None, None, true), "{stranger:?}");
            assert!(asks(&stranger, None, Some(false), false), "{stranger:?}");
            assert!(asks(&stranger, Some(false), None, false), "{stranger:?}");
        }
        assert!(!asks(&key(KeyKind::Public, false), Some(true), None, false));
        assert!(asks(&key(KeyKind::Token, false), Some(true), None, false));
        // A token whose policy replaces: replace may be repeated.
        let replacing = key(KeyKind::Token, true);
        assert!(asks(&replacing, None, Some(true), false));
        assert!(!asks(&replacing, None, None, true));
    }

    fn caller(kind: KeyKind, origins: &[&str], grace: bool) -> Caller {
        Caller {
            key: KeyRecord {
                id: "key_1".into(),
                account_id: "acc_1".into(),
                kind,
                name: None,
                origins: origins.iter().map(|o| (*o).to_string()).collect(),
                created_at: 0,
                revoked_at: None,
                policy: UploadPolicy::default(),
            },
            account: Account {
                id: "acc_1".into(),
                name: "a".into(),
                plan: "free".into(),
                grace_period: grace,
                storage_bytes: 0,
                created_at: 0,
            },
        }
    }

    fn status(r: Result<(), ServiceError>) -> Option<u16> {
        r.err().map(|e| e.status().as_u16())
    }

    #[test]
    fn who_may_do_what() {
        let secret = caller(KeyKind::Secret, &[], false);
        for access in [
            Access::Upload,
            Access::UploadContinue,
            Access::Secret,
            Access::SecretLimited,
        ] {
            assert_eq!(status(authorize(&secret, access, None)), None);
        }
        let public = caller(KeyKind::Public, &["https://a.example"], false);
        let from = Some("https://a.example");
        assert_eq!(status(authorize(&public, Access::Upload, from)), None);
        assert_eq!(status(authorize(&public, Access::Secret, from)), Some(403));
        let other = Some("https://b.example");
        assert_eq!(status(authorize(&public, Access::Upload, other)), Some(403));
        assert_eq!(status(authorize(&public, Access::Upload, None)), Some(403));
        let token = caller(KeyKind::Token, &[], false);
        assert_eq!(status(authorize(&token, Access::Upload, None)), None);
        assert_eq!(status(authorize(&token, Access::Secret, None)), Some(401));
        // The grace period stops new uploads, not the rest of one admitted.
        let grace = caller(KeyKind::Secret, &[], true);
        assert_eq!(status(authorize(&grace, Access::Upload, None)), Some(403));
        let go_on = authorize(&grace, Access::UploadContinue, None);
        assert_eq!(status(go_on), None);
        assert_eq!(status(authorize(&grace, Access::Secret, None)), None);
    }
}
