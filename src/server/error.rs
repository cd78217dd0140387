//! The one place a `ServiceError` becomes a /v1 answer ([`ApiError`]): its
//! status, its headers (`Retry-After`, the rate-limit trio, `Content-Range`)
//! and the API's envelope `{"error": {"code", "message"}}`, also for bare
//! statuses.

use crate::api::{ErrorBody, ErrorDetail};
use crate::service::ServiceError;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

impl ServiceError {
    /// The HTTP status of the error.
    pub fn status(&self) -> StatusCode {
        use ServiceError::{
            BadRequest, ChecksumMismatch, ChunkChecksumMismatch, Conflict, Damaged, FileTooLarge,
            Forbidden, Gone, GracePeriod, HeadersTooLarge, InsufficientStorage, Internal,
            LengthExceeded, Locked, MethodNotAllowed, NotFound, OffsetMismatch, OverPlanFileSize,
            RangeNotSatisfiable, RateLimited, StorageLimitExceeded, Timeout, Unauthorized,
            Unavailable, UnsupportedMediaType, UnsupportedVersion,
        };
        match self {
            Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Forbidden(_) | GracePeriod(_) => StatusCode::FORBIDDEN,
            BadRequest(_) | ChecksumMismatch(_) => StatusCode::BAD_REQUEST,
            NotFound(_) => StatusCode::NOT_FOUND,
            FileTooLarge(_) | OverPlanFileSize(_) | StorageLimitExceeded(_) | LengthExceeded(_) => {
                StatusCode::PAYLOAD_TOO_LARGE
            }
            RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            RangeNotSatisfiable(..) => StatusCode::RANGE_NOT_SATISFIABLE,
            HeadersTooLarge(_) => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Timeout(_) => StatusCode::REQUEST_TIMEOUT,
            InsufficientStorage(_) => StatusCode::INSUFFICIENT_STORAGE,
            OffsetMismatch(_) | Conflict(_) => StatusCode::CONFLICT,
            Gone(_) => StatusCode::GONE,
            Locked { .. } => StatusCode::LOCKED,
            UnsupportedVersion(_) => StatusCode::PRECONDITION_FAILED,
            UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ChunkChecksumMismatch(_) => {
                StatusCode::from_u16(460).expect("460 is a valid status code")
            }
            Internal(_) | Damaged(_) => StatusCode::INTERNAL_SERVER_ERROR,
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

/// A service error as the /v1 door answers it: the door's own type, so
/// that another door (S3, the console) renders the same error its own way
/// and never answers in this envelope by accident.
#[derive(Debug)]
pub(crate) struct ApiError(pub ServiceError);

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        ApiError(e)
    }
}

impl From<crate::service::caller::Refused> for ApiError {
    fn from(r: crate::service::caller::Refused) -> Self {
        ApiError(r.error)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let ApiError(e) = self;
        e.into_envelope()
    }
}

impl ServiceError {
    /// The /v1 answer: status, headers and the API's envelope.
    fn into_envelope(self) -> Response {
        if let ServiceError::Internal(detail) = &self {
            tracing::error!(%detail, "internal error");
        }
        let mut headers = HeaderMap::new();
        match &self {
            ServiceError::OverPlanFileSize(_) => {
                headers.insert(
                    HeaderName::from_static(crate::api::LIMIT_HEADER),
                    HeaderValue::from_static(crate::api::PLAN_MAX_FILE_SIZE),
                );
            }
            ServiceError::RateLimited {
                limit, reset, now, ..
            } => {
                rate_limit_headers(&mut headers, *limit, 0, *reset);
                headers.insert(
                    axum::http::header::RETRY_AFTER,
                    HeaderValue::from((reset - now).max(1)),
                );
            }
            // A render queue that is full, a database or store that is
            // away: worth trying again in a moment.
            ServiceError::Unavailable(_) => {
                headers.insert(axum::http::header::RETRY_AFTER, HeaderValue::from(1));
            }
            ServiceError::Locked { retry_after, .. } => {
                headers.insert(
                    axum::http::header::RETRY_AFTER,
                    HeaderValue::from((*retry_after).max(1)),
                );
            }
            ServiceError::RangeNotSatisfiable(_, size) => {
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
fn for_status(status: StatusCode) -> ServiceError {
    let m = String::new;
    match status.as_u16() {
        401 => ServiceError::Unauthorized(m()),
        403 => ServiceError::Forbidden(m()),
        404 => ServiceError::NotFound(m()),
        405 => ServiceError::MethodNotAllowed(m()),
        408 => ServiceError::Timeout(m()),
        409 => ServiceError::OffsetMismatch(m()),
        410 => ServiceError::Gone(m()),
        412 => ServiceError::UnsupportedVersion(m()),
        413 => ServiceError::FileTooLarge(m()),
        415 => ServiceError::UnsupportedMediaType(m()),
        416 => ServiceError::RangeNotSatisfiable(m(), 0),
        423 => ServiceError::Locked {
            message: m(),
            retry_after: 1,
        },
        460 => ServiceError::ChunkChecksumMismatch(m()),
        429 => ServiceError::RateLimited {
            message: m(),
            limit: 0,
            reset: 0,
            now: 0,
        },
        503 => ServiceError::Unavailable(m()),
        507 => ServiceError::InsufficientStorage(m()),
        500..=599 => ServiceError::Internal(m()),
        _ => ServiceError::BadRequest(m()),
    }
}

/// The envelope code of a response that carries only a status.
pub(crate) fn code_for_status(status: StatusCode) -> &'static str {
    for_status(status).code()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_code_has_its_status() {
        let cases = [
            (ServiceError::Unauthorized("x".into()), 401, "unauthorized"),
            (ServiceError::Forbidden("x".into()), 403, "forbidden"),
            (ServiceError::BadRequest("x".into()), 400, "bad_request"),
            (ServiceError::NotFound("x".into()), 404, "not_found"),
            (
                ServiceError::ChecksumMismatch("x".into()),
                400,
                "checksum_mismatch",
            ),
            (
                ServiceError::FileTooLarge("x".into()),
                413,
                "file_too_large",
            ),
            (
                ServiceError::StorageLimitExceeded("x".into()),
                413,
                "storage_limit_exceeded",
            ),
            (ServiceError::GracePeriod("x".into()), 403, "grace_period"),
            (ServiceError::Timeout("x".into()), 408, "request_timeout"),
            (
                ServiceError::OffsetMismatch("x".into()),
                409,
                "offset_mismatch",
            ),
            (ServiceError::Gone("x".into()), 410, "upload_expired"),
            (
                ServiceError::Locked {
                    message: "x".into(),
                    retry_after: 1,
                },
                423,
                "locked",
            ),
            (
                ServiceError::UnsupportedVersion("x".into()),
                412,
                "unsupported_version",
            ),
            (
                ServiceError::UnsupportedMediaType("x".into()),
                415,
                "unsupported_media_type",
            ),
            (
                ServiceError::LengthExceeded("x".into()),
                413,
                "upload_length_exceeded",
            ),
            (
                ServiceError::ChunkChecksumMismatch("x".into()),
                460,
                "checksum_mismatch",
            ),
            (
                ServiceError::InsufficientStorage("x".into()),
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
        assert_eq!(ServiceError::from_io(full).status().as_u16(), 507);
        let other = std::io::Error::other("eio");
        assert_eq!(ServiceError::from_io(other).status().as_u16(), 503);
    }
}
