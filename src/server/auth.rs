//! The /v1 door's half of admission: it finds what a request presents (a
//! `Bearer` key or upload token, or `?token=` on `POST /v1/upload` alone:
//! a plain form post from any page, or else the console's session cookie,
//! from the console's page only: `console::session::from_page`), and its
//! `Origin`; who may do what is the service's (`service::caller`), which
//! this asks once per request.

use super::console::session;
use crate::server::error::{rate_limit_headers, ApiError};
pub(crate) use crate::service::caller::{Access, Caller};
use crate::service::caller::{Admitted, Presented};
use crate::service::App;
use crate::service::ServiceError;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

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
pub(crate) struct EarlyCommitments(pub crate::service::caller::Commitments);

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
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| ApiError(ServiceError::Unauthorized("missing API key".into())))
    }
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
fn query_token(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| *name == "token")
        .map(|(_, value)| value)
}

/// What the request presents: the key or token it sends (else the
/// console's session, when its cookie comes from the console's page at
/// `base_url`), its origin, whether it may be a retry.
fn presented<'a>(
    headers: &'a HeaderMap,
    path: &str,
    query: Option<&'a str>,
    base_url: &str,
) -> Result<Presented<'a>, ServiceError> {
    let authorization = headers.contains_key(header::AUTHORIZATION);
    let from_query = if authorization || path != UPLOAD_PATH {
        None
    } else {
        // Only an upload token, never a key: a key in a URL ends up in
        // histories and logs.
        query_token(query).filter(|t| t.starts_with("upt_"))
    };
    let session = match from_query {
        None if !authorization => session::cookie(headers),
        _ => None,
    };
    let secret = match (from_query, session) {
        (Some(t), _) => t,
        (None, Some(id)) => {
            session::from_page(headers, base_url)?;
            id
        }
        (None, None) => bearer(headers)?,
    };
    Ok(Presented {
        secret,
        origin: headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()),
        retry: headers.contains_key("idempotency-key"),
        session: session.is_some(),
    })
}

/// The middleware of every authenticated `/v1` route: the service admits
/// the caller (or refuses it, with its rate standing when the route is rate
/// limited), then the route runs.
pub(crate) async fn guard(
    State((app, access)): State<(Arc<App>, Access)>,
    mut req: Request,
    next: Next,
) -> Response {
    let uri = req.uri();
    let base_url = app.config.base_url.as_str();
    let p = match presented(req.headers(), uri.path(), uri.query(), base_url) {
        Ok(p) => p,
        Err(e) => return ApiError(e).into_response(),
    };
    let early = reads_holdings(access, &req);
    let (
        caller,
        Admitted {
            decision,
            commitments,
        },
    ) = match app.admit(p, access, early).await {
        Ok(admitted) => admitted,
        Err(refused) => {
            let mut response = ApiError(refused.error).into_response();
            if let Some(d) = refused.standing {
                rate_limit_headers(response.headers_mut(), d.limit, d.remaining, d.reset);
            }
            if let Some(caller) = refused.caller {
                let token = caller.is_token();
                tag(&mut response, caller.account.id, token);
            }
            return response;
        }
    };
    let (account, token) = (caller.account.id.clone(), caller.is_token());
    if let Some(held) = commitments {
        req.extensions_mut().insert(EarlyCommitments(held));
    }
    req.extensions_mut().insert(caller);
    let mut response = next.run(req).await;
    if let Some(d) = decision {
        // A response that set its own (the monthly upload limit) keeps them.
        if !response.headers().contains_key("x-ratelimit-limit") {
            rate_limit_headers(response.headers_mut(), d.limit, d.remaining, d.reset);
        }
    }
    tag(&mut response, account, token);
    response
}

/// Marks a response with its caller's account (the access log's) and,
/// for an upload token, as readable from any origin.
fn tag(response: &mut Response, account: String, token: bool) {
    let account = super::observe::AccountTag(account);
    response.extensions_mut().insert(account);
    if token {
        response.extensions_mut().insert(AnyOrigin);
    }
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
        assert_eq!(query_token(Some("token=upt_a")), Some("upt_a"));
        assert_eq!(query_token(Some("x=1&token=upt_b")), Some("upt_b"));
        assert_eq!(query_token(Some("tokens=upt_c")), None);
        assert_eq!(query_token(None), None);
        assert_eq!(query_token(Some("a=1")), None);
    }
}
