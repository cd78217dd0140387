//! CORS: browser uploads with public keys (a preflight carries no key, so it
//! is answered for any origin; the upload itself then checks the origin
//! against its own key, with a 403 the page can read), and the CDN routes,
//! readable from any page.

use super::auth::AnyOrigin;
use crate::domain::origins;
use crate::service::App;
use crate::service::ServiceError;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// What browsers may send and read on a route public keys use.
struct Policy {
    methods: &'static str,
    allow_headers: &'static str,
    expose_headers: &'static str,
}

const UPLOAD: Policy = Policy {
    methods: "POST, OPTIONS",
    allow_headers: "authorization, content-type, idempotency-key, content-digest, x-request-id",
    expose_headers: "location, retry-after, x-ratelimit-limit, x-ratelimit-remaining, \
x-ratelimit-reset, x-request-id",
};

/// tus (docs/api.md, "Resumable uploads"), with what tus-js-client sends besides.
const TUS: Policy = Policy {
    methods: "POST, GET, HEAD, PATCH, DELETE, OPTIONS",
    allow_headers: "authorization, content-type, tus-resumable, upload-length, upload-offset, \
upload-metadata, upload-checksum, upload-defer-length, upload-concat, idempotency-key, x-http-method-override, \
x-requested-with, x-request-id",
    expose_headers: "location, upload-offset, upload-length, upload-expires, x-file-id, \
tus-resumable, tus-version, tus-extension, tus-max-size, tus-checksum-algorithm, upload-metadata, \
retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, x-request-id",
};

async fn origin_allowed(app: &App, origin: &str) -> Result<bool, ServiceError> {
    let origins = app.public_origins().await?;
    Ok(origins::any_matches(&origins, origin))
}

/// Answers preflights of `/v1/upload` and adds CORS headers to its responses.
/// A preflight is answered for any origin (it carries no key, and only asks
/// leave to send the request): the upload itself then checks the origin
/// against its key, and a refusal (any error) is readable by the page, so a
/// browser app shows "origin not allowed" instead of "Failed to fetch". A
/// success is readable only by an origin some live public key allows, or
/// by any origin when it was an upload token's (`auth::AnyOrigin`).
pub(crate) async fn upload_cors(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    key_cors(&app, &UPLOAD, req, next).await
}

/// The same for the resumable uploads (`/v1/uploads`).
pub(crate) async fn tus_cors(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    key_cors(&app, &TUS, req, next).await
}

async fn key_cors(app: &App, policy: &Policy, req: Request, next: Next) -> Response {
    let origin = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| HeaderValue::from_bytes(o.as_bytes()).ok());
    let Some(origin) = origin else {
        return next.run(req).await;
    };
    let is_preflight = req.method() == Method::OPTIONS
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = if is_preflight {
        preflight(policy.methods, policy.allow_headers, "600")
    } else {
        next.run(req).await
    };
    let readable = is_preflight
        || !response.status().is_success()
        || response.extensions().get::<AnyOrigin>().is_some()
        || match origin.to_str() {
            Ok(o) => origin_allowed(app, o).await.unwrap_or(false),
            Err(_) => false,
        };
    let h = response.headers_mut();
    h.append(header::VARY, HeaderValue::from_static("Origin"));
    if readable {
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(policy.expose_headers),
        );
    }
    response
}

/// A 204 answer to a preflight: these methods and request headers, for
/// `max_age` seconds.
fn preflight(methods: &'static str, headers: &'static str, max_age: &'static str) -> Response {
    let mut r = StatusCode::NO_CONTENT.into_response();
    let h = r.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(methods),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(headers),
    );
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static(max_age),
    );
    r
}

/// The CDN routes may be read from any page (`fetch()` of an uploaded JSON
/// file, a `<video>` with ranges): they carry no credentials, so every
/// answer allows any origin, and preflights (a `Range` or conditional
/// header) are answered at once.
pub(crate) async fn cdn_cors(req: Request, next: Next) -> Response {
    let mut response = if req.method() == Method::OPTIONS {
        preflight(
            "GET, HEAD, OPTIONS",
            "range, if-none-match, if-modified-since, if-range",
            "86400",
        )
    } else {
        next.run(req).await
    };
    cdn_headers(response.headers_mut());
    response
}

/// The CORS headers of every CDN answer: any page may read it.
pub(crate) fn cdn_headers(h: &mut axum::http::HeaderMap) {
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(
            "content-length, content-range, content-disposition, etag, last-modified, accept-ranges, \
content-digest, x-request-id",
        ),
    );
}
