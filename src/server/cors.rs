//! CORS for browser uploads with public keys. A preflight carries no key, so
//! it is answered for any origin that some live public key allows; the
//! upload itself then checks the origin against its own key (403 otherwise).

use crate::db::keys;
use crate::domain::origins;
use crate::error::ApiError;
use crate::service::App;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

const ALLOW_HEADERS: &str = "authorization, content-type, idempotency-key";
const EXPOSE_HEADERS: &str =
    "location, retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset";

async fn origin_allowed(app: &App, origin: &str) -> Result<bool, ApiError> {
    let origin = origin.to_string();
    Ok(app
        .db
        .run(move |c| {
            Ok(origins::any_matches(
                &keys::active_public_origins(c)?,
                &origin,
            ))
        })
        .await?)
}

/// Answers preflights of `/v1/upload` and adds CORS headers to its responses
/// (errors included, so a browser app can read them).
pub(crate) async fn upload_cors(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let origin = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .map(str::to_string);
    let Some(origin) = origin else {
        return next.run(req).await;
    };
    let allowed = match origin_allowed(&app, &origin).await {
        Ok(a) => a,
        Err(e) => return e.into_response(),
    };
    let is_preflight = req.method() == Method::OPTIONS
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = if is_preflight {
        if !allowed {
            return ApiError::Forbidden(format!("origin {origin} is not allowed to upload"))
                .into_response();
        }
        let mut r = StatusCode::NO_CONTENT.into_response();
        let h = r.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("POST, OPTIONS"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(ALLOW_HEADERS),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
        r
    } else {
        next.run(req).await
    };
    let h = response.headers_mut();
    h.append(header::VARY, HeaderValue::from_static("Origin"));
    if allowed {
        if let Ok(v) = HeaderValue::from_str(&origin) {
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
            h.insert(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static(EXPOSE_HEADERS),
            );
        }
    }
    response
}
