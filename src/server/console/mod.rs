//! The console (CONTRACT §19): a web page at `{base_url}/console` where an
//! account sees and manages its files, served from files in `web/console/`
//! compiled into the binary (no build step, no outside network), each
//! response with a strict Content-Security-Policy. The page speaks the
//! `/v1` API with the session [`session`] signs it in to.

pub(crate) mod session;

use crate::service::App;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use sha2::Digest;
use std::sync::Arc;

/// One file of the page: its name under `/console/assets/`, type, bytes.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $type:literal) => {
        Asset {
            name: $name,
            content_type: $type,
            bytes: include_bytes!(concat!("../../../web/console/", $name)),
        }
    };
}

/// The page's files (its HTML is [`INDEX`]).
const ASSETS: &[Asset] = &[
    asset!("console.css", "text/css; charset=utf-8"),
    asset!("main.js", "text/javascript; charset=utf-8"),
    asset!("api.js", "text/javascript; charset=utf-8"),
    asset!("ui.js", "text/javascript; charset=utf-8"),
    asset!("files.js", "text/javascript; charset=utf-8"),
    asset!("preview.js", "text/javascript; charset=utf-8"),
    asset!("upload.js", "text/javascript; charset=utf-8"),
    asset!("keys.js", "text/javascript; charset=utf-8"),
    asset!("tokens.js", "text/javascript; charset=utf-8"),
    asset!("webhooks.js", "text/javascript; charset=utf-8"),
    asset!("usage.js", "text/javascript; charset=utf-8"),
    asset!("icon.svg", "image/svg+xml"),
];

/// The page itself.
const INDEX: &[u8] = include_bytes!("../../../web/console/index.html");

/// The console's routes (none when `[console] enabled = false`).
pub(crate) fn routes(app: &Arc<App>) -> Router<Arc<App>> {
    if !app.config.console.enabled {
        return Router::new();
    }
    Router::new()
        .route("/console", get(index))
        .route("/console/", get(index))
        .route("/console/assets/{name}", get(asset))
        .route(
            "/console/session",
            get(session::current)
                .post(session::sign_in)
                .delete(session::sign_out)
                .route_layer(DefaultBodyLimit::max(session::SIGN_IN_MAX)),
        )
        .layer(from_fn_with_state(app.clone(), protect))
}

async fn index(headers: HeaderMap) -> Response {
    served(&headers, "text/html; charset=utf-8", INDEX)
}

async fn asset(Path(name): Path<String>, headers: HeaderMap) -> Response {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(a) => served(&headers, a.content_type, a.bytes),
        None => crate::server::error::ApiError(crate::service::ServiceError::NotFound(format!(
            "no console asset {name}"
        )))
        .into_response(),
    }
}

/// A file of the page, revalidated by the browser at each load (no stale
/// page after an upgrade): its `ETag` is its bytes' SHA-256, and a request
/// that has them already gets 304.
fn served(request: &HeaderMap, content_type: &'static str, bytes: &'static [u8]) -> Response {
    let digest = sha2::Sha256::digest(bytes);
    let etag = format!("\"{}\"", hex::encode(&digest[..16]));
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut r = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (StatusCode::OK, bytes).into_response()
    };
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    r
}

/// The Content-Security-Policy of every console response: its own files
/// only, no inline script or style; images, media and frames also from
/// the CDN (thumbnails, previews) and from `blob:` (a picked file's
/// preview); never framed.
pub(crate) fn csp(cdn_url: &str) -> String {
    let cdn = session::origin_of(cdn_url);
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; \
         img-src 'self' {cdn} blob: data:; media-src 'self' {cdn} blob:; \
         frame-src 'self' {cdn} blob:; connect-src 'self' {cdn}; object-src 'none'; \
         base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// Puts the console's security headers on each of its responses.
async fn protect(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&csp(&app.config.cdn_url)) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    response
}
