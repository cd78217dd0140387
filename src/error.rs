//! One error type for the HTTP API. Every failure a handler can meet becomes an
//! `ApiError`, and this is the only place that turns one into a status and the
//! spec's envelope `{"error": {"code", "message"}}`.

use crate::api::{ErrorBody, ErrorDetail};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    BadRequest(String),
    /// The uploaded bytes are not those the sender's digest names
    /// (CONTRACT §8): nothing was stored.
    #[error("{0}")]
    ChecksumMismatch(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    FileTooLarge(String),
    #[error("{0}")]
    StorageLimitExceeded(String),
    #[error("{0}")]
    GracePeriod(String),
    /// Too many requests; `reset` is the unix second when the caller may retry.
    #[error("{message}")]
    RateLimited {
        message: String,
        limit: u64,
        reset: i64,
        now: i64,
    },
    #[error("{0}")]
    MethodNotAllowed(String),
    #[error("{0}")]
    RangeNotSatisfiable(String, u64),
    #[error("{0}")]
    HeadersTooLarge(String),
    #[error("{0}")]
    Unavailable(String),
    /// The client stopped sending its request body (`server.body_timeout`).
    #[error("{0}")]
    Timeout(String),
    /// The volume is full, or an upload would take the space kept free
    /// (`storage.min_free_space`).
    #[error("{0}")]
    InsufficientStorage(String),
    /// tus: the PATCH's `Upload-Offset` is not the upload's offset.
    #[error("{0}")]
    OffsetMismatch(String),
    /// tus: the upload has expired.
    #[error("{0}")]
    Gone(String),
    /// tus: a request on another node is writing to the upload now; the
    /// client retries after `retry_after` seconds.
    #[error("{message}")]
    Locked { message: String, retry_after: u64 },
    /// tus: a `Tus-Resumable` version this server does not speak.
    #[error("{0}")]
    UnsupportedVersion(String),
    /// tus: a PATCH body that is not `application/offset+octet-stream`.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// tus: a PATCH that would pass the upload's declared length.
    #[error("{0}")]
    LengthExceeded(String),
    /// tus: the PATCH's `Upload-Checksum` does not match its body (460).
    #[error("{0}")]
    ChunkChecksumMismatch(String),
    /// Anything unexpected. The detail goes to the log, never to the caller.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    pub fn internal(e: impl std::fmt::Display) -> Self {
        ApiError::Internal(e.to_string())
    }

    pub fn bad_request(msg: impl Into<String>) -> Self {
        ApiError::BadRequest(msg.into())
    }

    pub fn not_found() -> Self {
        ApiError::NotFound("file not found".into())
    }

    pub fn status(&self) -> StatusCode {
        use ApiError::*;
        match self {
            Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Forbidden(_) | GracePeriod(_) => StatusCode::FORBIDDEN,
            BadRequest(_) | ChecksumMismatch(_) => StatusCode::BAD_REQUEST,
            NotFound(_) => StatusCode::NOT_FOUND,
            FileTooLarge(_) | StorageLimitExceeded(_) => StatusCode::PAYLOAD_TOO_LARGE,
            RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            RangeNotSatisfiable(..) => StatusCode::RANGE_NOT_SATISFIABLE,
            HeadersTooLarge(_) => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Timeout(_) => StatusCode::REQUEST_TIMEOUT,
            InsufficientStorage(_) => StatusCode::INSUFFICIENT_STORAGE,
            OffsetMismatch(_) => StatusCode::CONFLICT,
            Gone(_) => StatusCode::GONE,
            Locked { .. } => StatusCode::LOCKED,
            UnsupportedVersion(_) => StatusCode::PRECONDITION_FAILED,
            UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            LengthExceeded(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ChunkChecksumMismatch(_) => {
                StatusCode::from_u16(460).expect("460 is a valid status code")
            }
            Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        use ApiError::*;
        match self {
            Unauthorized(_) => "unauthorized",
            Forbidden(_) => "forbidden",
            BadRequest(_) | HeadersTooLarge(_) => "bad_request",
            ChecksumMismatch(_) => "checksum_mismatch",
            NotFound(_) => "not_found",
            FileTooLarge(_) => "file_too_large",
            StorageLimitExceeded(_) => "storage_limit_exceeded",
            GracePeriod(_) => "grace_period",
            RateLimited { .. } => "rate_limit_exceeded",
            MethodNotAllowed(_) => "method_not_allowed",
            RangeNotSatisfiable(..) => "range_not_satisfiable",
            Unavailable(_) => "unavailable",
            Timeout(_) => "request_timeout",
            InsufficientStorage(_) => "insufficient_storage",
            OffsetMismatch(_) => "offset_mismatch",
            Gone(_) => "upload_expired",
            Locked { .. } => "locked",
            UnsupportedVersion(_) => "unsupported_version",
            UnsupportedMediaType(_) => "unsupported_media_type",
            LengthExceeded(_) => "upload_length_exceeded",
            ChunkChecksumMismatch(_) => "checksum_mismatch",
            Internal(_) => "internal_error",
        }
    }

    fn public_message(&self) -> String {
        match self {
            ApiError::Internal(_) => "internal server error".to_string(),
            other => other.to_string(),
        }
    }
}

/// Sets `X-RateLimit-Limit`, `-Remaining` and `-Reset` (unix seconds).
pub(crate) fn rate_limit_headers(h: &mut HeaderMap, limit: u64, remaining: u64, reset: i64) {
    h.insert(
        HeaderName::from_static("x-ratelimit-limit"),
        HeaderValue::from(limit),
    );
    h.insert(
        HeaderName::from_static("x-ratelimit-remaining"),
        HeaderValue::from(remaining),
    );
    h.insert(
        HeaderName::from_static("x-ratelimit-reset"),
        HeaderValue::from(reset),
    );
}

pub(crate) fn error_body(code: &str, message: &str) -> ErrorBody {
    ErrorBody {
        error: ErrorDetail {
            code: code.to_string(),
            message: message.to_string(),
        },
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(detail) = &self {
            tracing::error!(%detail, "internal error");
        }
        let mut headers = HeaderMap::new();
        match &self {
            ApiError::RateLimited {
                limit, reset, now, ..
            } => {
                rate_limit_headers(&mut headers, *limit, 0, *reset);
                headers.insert(
                    axum::http::header::RETRY_AFTER,
                    HeaderValue::from((reset - now).max(1)),
                );
            }
            ApiError::Locked { retry_after, .. } => {
                headers.insert(
                    axum::http::header::RETRY_AFTER,
                    HeaderValue::from((*retry_after).max(1)),
                );
            }
            ApiError::RangeNotSatisfiable(_, size) => {
                if let Ok(v) = HeaderValue::from_str(&format!("bytes */{size}")) {
                    headers.insert(axum::http::header::CONTENT_RANGE, v);
                }
            }
            _ => {}
        }
        let body = error_body(self.code(), &self.public_message());
        (self.status(), headers, Json(body)).into_response()
    }
}

/// The error a bare status stands for (axum's plain-text rejections, hyper's
/// own answers): so that such a response gets a code the API documents, from
/// the same table as every other error.
fn for_status(status: StatusCode) -> ApiError {
    let m = String::new;
    match status.as_u16() {
        401 => ApiError::Unauthorized(m()),
        403 => ApiError::Forbidden(m()),
        404 => ApiError::NotFound(m()),
        405 => ApiError::MethodNotAllowed(m()),
        408 => ApiError::Timeout(m()),
        409 => ApiError::OffsetMismatch(m()),
        410 => ApiError::Gone(m()),
        412 => ApiError::UnsupportedVersion(m()),
        413 => ApiError::FileTooLarge(m()),
        415 => ApiError::UnsupportedMediaType(m()),
        416 => ApiError::RangeNotSatisfiable(m(), 0),
        423 => ApiError::Locked {
            message: m(),
            retry_after: 1,
        },
        460 => ApiError::ChunkChecksumMismatch(m()),
        429 => ApiError::RateLimited {
            message: m(),
            limit: 0,
            reset: 0,
            now: 0,
        },
        503 => ApiError::Unavailable(m()),
        507 => ApiError::InsufficientStorage(m()),
        500..=599 => ApiError::Internal(m()),
        _ => ApiError::BadRequest(m()),
    }
}

/// The envelope code of a response that carries only a status.
pub(crate) fn code_for_status(status: StatusCode) -> &'static str {
    for_status(status).code()
}

fn disk_full() -> ApiError {
    ApiError::InsufficientStorage("the server's disk is full; try again later".into())
}

impl From<crate::db::DbError> for ApiError {
    fn from(e: crate::db::DbError) -> Self {
        match &e {
            crate::db::DbError::DiskFull(_) => {
                tracing::error!(error = %e, "database: disk full");
                disk_full()
            }
            crate::db::DbError::Pool(_) => {
                tracing::error!(error = %e, "database unavailable");
                ApiError::Unavailable("the database is unavailable; try again later".into())
            }
            _ => ApiError::Internal(e.to_string()),
        }
    }
}

/// A blob store that fails is unavailable (503, worth a retry), a full disk
/// is 507; the detail goes to the log only.
impl From<crate::storage::StorageError> for ApiError {
    fn from(e: crate::storage::StorageError) -> Self {
        metrics::counter!("filestore_store_errors_total").increment(1);
        match e {
            crate::storage::StorageError::Io(io) => ApiError::from_io(io),
            other => {
                tracing::error!(error = %other, "blob store error");
                ApiError::Unavailable("the blob store is unavailable; try again later".into())
            }
        }
    }
}

impl ApiError {
    /// A failure of the server's own disk (spool, local store): 507 when it
    /// is full, else 503.
    pub fn from_io(e: std::io::Error) -> ApiError {
        tracing::error!(error = %e, "storage i/o error");
        if e.kind() == std::io::ErrorKind::StorageFull {
            disk_full()
        } else {
            ApiError::Unavailable("storage is unavailable; try again later".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_code_has_its_status() {
        let cases = [
            (ApiError::Unauthorized("x".into()), 401, "unauthorized"),
            (ApiError::Forbidden("x".into()), 403, "forbidden"),
            (ApiError::BadRequest("x".into()), 400, "bad_request"),
            (ApiError::NotFound("x".into()), 404, "not_found"),
            (
                ApiError::ChecksumMismatch("x".into()),
                400,
                "checksum_mismatch",
            ),
            (ApiError::FileTooLarge("x".into()), 413, "file_too_large"),
            (
                ApiError::StorageLimitExceeded("x".into()),
                413,
                "storage_limit_exceeded",
            ),
            (ApiError::GracePeriod("x".into()), 403, "grace_period"),
            (ApiError::Timeout("x".into()), 408, "request_timeout"),
            (ApiError::OffsetMismatch("x".into()), 409, "offset_mismatch"),
            (ApiError::Gone("x".into()), 410, "upload_expired"),
            (
                ApiError::Locked {
                    message: "x".into(),
                    retry_after: 1,
                },
                423,
                "locked",
            ),
            (
                ApiError::UnsupportedVersion("x".into()),
                412,
                "unsupported_version",
            ),
            (
                ApiError::UnsupportedMediaType("x".into()),
                415,
                "unsupported_media_type",
            ),
            (
                ApiError::LengthExceeded("x".into()),
                413,
                "upload_length_exceeded",
            ),
            (
                ApiError::ChunkChecksumMismatch("x".into()),
                460,
                "checksum_mismatch",
            ),
            (
                ApiError::InsufficientStorage("x".into()),
                507,
                "insufficient_storage",
            ),
        ];
        for (e, status, code) in cases {
            assert_eq!(e.status().as_u16(), status);
            assert_eq!(e.code(), code);
        }
    }

    #[test]
    fn bare_statuses_get_the_codes_of_their_errors() {
        for status in 400..600u16 {
            let Ok(s) = StatusCode::from_u16(status) else {
                continue;
            };
            let e = for_status(s);
            assert_eq!(code_for_status(s), e.code());
            if matches!(
                status,
                401 | 403
                    | 404
                    | 405
                    | 408
                    | 409
                    | 410
                    | 412
                    | 413
                    | 415
                    | 416
                    | 423
                    | 429
                    | 460
                    | 503
                    | 507
            ) {
                assert_eq!(e.status(), s, "{status}");
            }
        }
        assert_eq!(
            code_for_status(StatusCode::PAYLOAD_TOO_LARGE),
            "file_too_large"
        );
        assert_eq!(code_for_status(StatusCode::URI_TOO_LONG), "bad_request");
        assert_eq!(code_for_status(StatusCode::BAD_GATEWAY), "internal_error");
    }

    #[test]
    fn a_full_disk_is_507_and_other_io_503() {
        let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
        assert_eq!(ApiError::from_io(full).status().as_u16(), 507);
        let other = std::io::Error::other("eio");
        assert_eq!(ApiError::from_io(other).status().as_u16(), 503);
    }

    #[test]
    fn internal_detail_is_not_leaked() {
        let e = ApiError::Internal("disk /secret/path exploded".into());
        assert_eq!(e.public_message(), "internal server error");
    }
}
