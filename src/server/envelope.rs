//! Safety nets that keep every error in the API's error envelope (docs/api.md, "Errors"): rejections that
//! axum produces as plain text, panics, and oversized request headers.

use super::error::ApiError;
use crate::server::error::{code_for_status, error_body};
use crate::service::ServiceError;
use axum::body::{to_bytes, Body};
use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// Rewrites any error response that is not JSON (an extractor's plain-text
/// rejection, for instance) into the envelope, keeping its status.
pub(crate) async fn errors_as_envelopes(req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let message = if text.is_empty() || status.is_server_error() {
        status.canonical_reason().unwrap_or("error").to_string()
    } else {
        text
    };
    let mut out = (status, Json(error_body(code_for_status(status), &message))).into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

/// A panic in a handler becomes a 500 envelope (and a log line), never a
/// dropped connection.
// `CatchPanicLayer::custom` hands the panic payload over by value.
#[allow(clippy::needless_pass_by_value)]
pub(crate) fn panic_response(err: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let detail = err
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(ToString::to_string))
        .unwrap_or_default();
    ApiError(ServiceError::Internal(format!("panic: {detail}"))).into_response()
}

/// The size of request headers, as the limit counts it: each name and
/// value, and 4 bytes for `: ` and the line's end.
pub(crate) fn headers_size(h: &axum::http::HeaderMap) -> usize {
    h.iter().map(|(k, v)| k.as_str().len() + v.len() + 4).sum()
}

/// 431 in the envelope when the request's headers add up to more than `max`.
pub(crate) async fn limit_headers(max: usize, req: Request<Body>, next: Next) -> Response {
    if headers_size(req.headers()) > max {
        let e = ServiceError::HeadersTooLarge(format!("request headers exceed {max} bytes"));
        return ApiError(e).into_response();
    }
    next.run(req).await
}
