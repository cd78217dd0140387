//! Authentication and the access rules that come before any handler runs,
//! in the contract's order: 401 (no or bad key), then 403 (public key on a
//! route other than upload, wrong origin, grace period), then the rate limit.

use crate::db::{Account, KeyRecord};
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

async fn authenticate(app: &App, headers: &HeaderMap) -> Result<Caller, ServiceError> {
    let key = bearer(headers)?;
    if !(key.starts_with("sk_") || key.starts_with("pk_")) || key.len() > 200 {
        return Err(ServiceError::Unauthorized("invalid API key".into()));
    }
    let found = app.meta.key_by_hash(ids::key_hash(key)).await?;
    found
        .map(|(key, account)| Caller { key, account })
        .ok_or_else(|| ServiceError::Unauthorized("invalid API key".into()))
}

fn authorize(caller: &Caller, access: Access, headers: &HeaderMap) -> Result<(), ServiceError> {
    if caller.is_public() {
        if !matches!(access, Access::Upload | Access::UploadContinue) {
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
    let caller = match authenticate(&app, req.headers()).await {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let account = super::observe::AccountTag(caller.account.id.clone());
    let mut response = admit(&app, access, caller, req, next).await;
    response.extensions_mut().insert(account);
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
        match app.meta.rate_window(key, window_ms, now, true).await {
            Ok(w) => Some(w.decision(limit, true)),
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
}
