//! Authentication and the access rules that come before any handler runs,
//! in the order docs/api.md's "Errors" gives: 401 (no or bad key or upload token, a token on
//! a route other than upload), then 403 (public key on a route other than
//! upload, wrong origin, grace period), then the rate limit.
//!
//! An upload token (`upt_…`, docs/decisions.md, "Upload tokens") is a
//! caller like a key (`KeyKind::Token`, its id `ut_…`, its policy): sent as
//! `Bearer`, or as `?token=` on `POST /v1/upload` alone (a plain form
//! post from any page). It needs no Origin: it is single-purpose, counted
//! and short-lived, so its answers are readable from any origin.

use crate::db::{Account, Commitments, KeyRecord, TokenRow, UploadPolicy};
use crate::domain::ids::KeyKind;
use crate::domain::{ids, origins};
use crate::server::error::rate_limit_headers;
use crate::service::App;
use crate::service::ServiceError;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The authenticated caller, put in the request's extensions by [`guard`].
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
}

/// In a response's extensions: its caller used an upload token, so the
/// page of any origin may read it (`cors`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AnyOrigin;

/// The multipart upload's route: the one that takes a token in its query
/// string, and whose rate count reads the early checks' commitments.
const UPLOAD_PATH: &str = "/v1/upload";

/// In a request's extensions: the account's commitments, read with the
/// upload's rate count (`RateRepo::count_upload`) for its early checks
/// (`service::upload`), which then make no read of their own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EarlyCommitments(pub Commitments);

/// Whether a request's early checks read the account's commitments: a
/// multipart upload (`POST /v1/upload`), unless it may be a replay (an
/// `Idempotency-Key`), which is answered without them. A resumable upload
/// checks them under the account's lock instead.
fn reads_holdings(access: Access, req: &Request) -> bool {
    access == Access::Upload
        && req.uri().path() == UPLOAD_PATH
        && !req.headers().contains_key("idempotency-key")
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ServiceError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| ServiceError::Unauthorized("missing API key".into()))
    }
}

/// What a route lets through.
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

pub fn bearer(headers: &HeaderMap) -> Result<&str, ServiceError> {
    let value = headers.get(header::AUTHORIZATION).ok_or_else(|| {
        ServiceError::Unauthorized("missing API key: send Authorization: Bearer <key>".into())
    })?;
    let value = value
        .to_str()
        .map_err(|_| ServiceError::Unauthorized("invalid API key".into()))?;
    let (scheme, key) = value
        .split_once(' ')
        .ok_or_else(|| ServiceError::Unauthorized("Authorization must be: Bearer <key>".into()))?;
    if !scheme.eq_ignore_ascii_case("bearer") || key.trim().is_empty() {
        return Err(ServiceError::Unauthorized(
            "Authorization must be: Bearer <key>".into(),
        ));
    }
    Ok(key.trim())
}

/// The `token` of a query string (`?token=upt_…`), if any.
fn query_token(query: Option<&str>) -> Option<String> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| *name == "token")
        .map(|(_, value)| value.to_string())
}

async fn authenticate(
    app: &App,
    headers: &HeaderMap,
    path: &str,
    query: Option<&str>,
    access: Access,
) -> Result<Caller, ServiceError> {
    let from_query = if headers.contains_key(header::AUTHORIZATION) || path != UPLOAD_PATH {
        None
    } else {
        // Only an upload token, never a key: a key in a URL ends up in
        // histories and logs.
        query_token(query).filter(|t| t.starts_with("upt_"))
    };
    let key = match &from_query {
        Some(t) => t.as_str(),
        None => bearer(headers)?,
    };
    if key.starts_with("upt_") {
        let retry = headers.contains_key("idempotency-key");
        return authenticate_token(app, key, access, retry).await;
    }
    if !(key.starts_with("sk_") || key.starts_with("pk_")) || key.len() > 200 {
        return Err(ServiceError::Unauthorized("invalid API key".into()));
    }
    let found = app.meta.key_by_hash(ids::key_hash(key)).await?;
    found
        .map(|(key, account)| Caller { key, account })
        .ok_or_else(|| ServiceError::Unauthorized("invalid API key".into()))
}

/// An upload token, as [`TokenRow::refusal`] admits it.
async fn authenticate_token(
    app: &App,
    token: &str,
    access: Access,
    retry: bool,
) -> Result<Caller, ServiceError> {
    let invalid = || ServiceError::Unauthorized("invalid upload token".into());
    if token.len() > 200 {
        return Err(invalid());
    }
    let (row, account) = app
        .meta
        .token_by_hash(ids::key_hash(token))
        .await?
        .ok_or_else(invalid)?;
    let continuing = access == Access::UploadContinue;
    if let Some(why) = row.refusal(app.clock.now_ms(), continuing, retry) {
        return Err(ServiceError::Unauthorized(why.into()));
    }
    Ok(token_caller(row, account))
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

fn authorize(caller: &Caller, access: Access, headers: &HeaderMap) -> Result<(), ServiceError> {
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
        let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
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

/// The middleware of every authenticated `/v1` route.
pub(crate) async fn guard(
    State((app, access)): State<(Arc<App>, Access)>,
    req: Request,
    next: Next,
) -> Response {
    let uri = req.uri();
    let caller = match authenticate(&app, req.headers(), uri.path(), uri.query(), access).await {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let account = super::observe::AccountTag(caller.account.id.clone());
    let token = caller.is_token();
    let mut response = admit(&app, access, caller, req, next).await;
    response.extensions_mut().insert(account);
    if token {
        response.extensions_mut().insert(AnyOrigin);
    }
    response
}

/// After authentication: the key's rights, then its rate window, then the
/// route itself.
async fn admit(
    app: &App,
    access: Access,
    caller: Caller,
    mut req: Request,
    next: Next,
) -> Response {
    let limited = matches!(access, Access::Upload | Access::SecretLimited);
    let plan = app.plan_of(&caller.account);
    let (key, limit, window_ms, now) = (
        caller.key.id.as_str(),
        plan.rate_limit,
        crate::clock::millis(plan.rate_window),
        app.clock.now_ms(),
    );
    if let Err(e) = authorize(&caller, access, req.headers()) {
        // Refused before being counted; a rate-limited route still says
        // where the caller stands.
        let mut response = e.into_response();
        if limited {
            if let Ok(w) = app.meta.rate_window(key, window_ms, now, false).await {
                let d = w.decision(limit, false);
                rate_limit_headers(response.headers_mut(), d.limit, d.remaining, d.reset);
            }
        }
        return response;
    }
    let decision = if limited {
        let counted = if reads_holdings(access, &req) {
            let period = crate::clock::with_period_key(now, str::to_string);
            let account = caller.account.id.as_str();
            app.meta
                .count_upload(key, window_ms, now, account, &period)
                .await
        } else {
            let counted = app.meta.rate_window(key, window_ms, now, true).await;
            counted.map(|w| (w, None))
        };
        match counted {
            Ok((w, held)) => {
                if let Some(held) = held {
                    req.extensions_mut().insert(EarlyCommitments(held));
                }
                Some(w.decision(limit, true))
            }
            Err(e) => return ServiceError::from(e).into_response(),
        }
    } else {
        None
    };
    if let Some(d) = decision {
        if !d.allowed {
            return ServiceError::RateLimited {
                message: format!("rate limit of {} requests per window reached", d.limit),
                limit: d.limit,
                reset: d.reset,
                now: now / 1000,
            }
            .into_response();
        }
    }
    req.extensions_mut().insert(caller);
    let mut response = next.run(req).await;
    if let Some(d) = decision {
        // A response that set its own (the monthly upload limit) keeps them.
        if !response.headers().contains_key("x-ratelimit-limit") {
            rate_limit_headers(response.headers_mut(), d.limit, d.remaining, d.reset);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn bearer_parsing() {
        let mut h = HeaderMap::new();
        assert!(bearer(&h).is_err());
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer sk_abc"),
        );
        assert_eq!(bearer(&h).unwrap(), "sk_abc");
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  sk_abc "),
        );
        assert_eq!(bearer(&h).unwrap(), "sk_abc");
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert!(bearer(&h).is_err());
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer"));
        assert!(bearer(&h).is_err());
    }

    #[test]
    fn a_token_in_the_query_string() {
        assert_eq!(query_token(Some("token=upt_a")).as_deref(), Some("upt_a"));
        assert_eq!(
            query_token(Some("x=1&token=upt_b")).as_deref(),
            Some("upt_b")
        );
        assert_eq!(query_token(Some("tokens=upt_c")), None);
        assert_eq!(query_token(None), None);
        assert_eq!(query_token(Some("a=1")), None);
    }
}
