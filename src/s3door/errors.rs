//! The service core's refusals in S3's words (CONTRACT §18 "Rules of the
//! account hold at the door", "Errors"): the same rule, its S3 code and
//! status.

use crate::service::ServiceError;
use s3s::{S3Error, S3ErrorCode};

/// `e` as S3 says it; `missing` is the code of a 404 (`NoSuchKey`,
/// `NoSuchBucket`, `NoSuchUpload`).
#[allow(clippy::needless_pass_by_value)] // taken as `map_err` gives it
pub(crate) fn s3(e: ServiceError, missing: S3ErrorCode) -> S3Error {
    use ServiceError as E;
    let message = e.to_string();
    let (code, status) = match &e {
        E::Unauthorized(_) | E::Forbidden(_) | E::GracePeriod(_) => {
            (S3ErrorCode::AccessDenied, 403)
        }
        E::BadRequest(_) | E::HeadersTooLarge(_) | E::UnsupportedMediaType(_) => {
            (S3ErrorCode::InvalidArgument, 400)
        }
        E::ChecksumMismatch(_) | E::ChunkChecksumMismatch(_) => (S3ErrorCode::BadDigest, 400),
        E::NotFound(_) | E::Gone(_) => (missing, 404),
        E::FileTooLarge(_) | E::OverPlanFileSize(_) | E::LengthExceeded(_) => {
            (S3ErrorCode::EntityTooLarge, 400)
        }
        // Not an AWS code: S3 has no quotas; a custom code keeps 403.
        E::StorageLimitExceeded(_) => (S3ErrorCode::Custom("QuotaExceeded".into()), 403),
        E::RateLimited { reset, now, .. } => {
            let mut err = S3Error::with_message(S3ErrorCode::SlowDown, message);
            let wait = (reset - now).max(1);
            // s3s puts these in place of its own headers: the body's type
            // goes with them, or the answer's XML is taken for none.
            let mut headers = axum::http::HeaderMap::new();
            headers.insert(
                axum::http::header::CONTENT_TYPE,
                axum::http::HeaderValue::from_static("application/xml"),
            );
            headers.insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(u64::try_from(wait).unwrap_or(1)),
            );
            err.set_headers(headers);
            err.set_status_code(axum::http::StatusCode::SERVICE_UNAVAILABLE);
            return err;
        }
        E::Locked { .. } | E::Unavailable(_) | E::Timeout(_) | E::InsufficientStorage(_) => {
            (S3ErrorCode::ServiceUnavailable, 503)
        }
        E::RangeNotSatisfiable(..) => (S3ErrorCode::InvalidRange, 416),
        E::Conflict(_) => (S3ErrorCode::PreconditionFailed, 412),
        E::MethodNotAllowed(_) => (S3ErrorCode::MethodNotAllowed, 405),
        E::OffsetMismatch(_) | E::UnsupportedVersion(_) => (S3ErrorCode::InvalidRequest, 400),
        // S3's own code for a server fault, with filestore's message: the
        // object's bytes are damaged and how an operator repairs them.
        E::Damaged(_) => (S3ErrorCode::InternalError, 500),
        E::Internal(_) => {
            tracing::error!(error = %e, "S3 door: internal error");
            (S3ErrorCode::InternalError, 500)
        }
    };
    let mut err = S3Error::with_message(code, message);
    if let Ok(status) = axum::http::StatusCode::from_u16(status) {
        err.set_status_code(status);
    }
    err
}

/// A refusal of the core's S3 rules (buckets, markers, multipart).
pub(crate) fn rule(e: crate::service::s3_error::S3Error) -> S3Error {
    use crate::service::s3_error::S3Error as R;
    let message = e.to_string();
    let (code, status) = match e {
        R::NoSuchBucket => (S3ErrorCode::NoSuchBucket, 404),
        R::BucketNotEmpty => (S3ErrorCode::BucketNotEmpty, 409),
        R::NoSuchUpload => (S3ErrorCode::NoSuchUpload, 404),
        R::InvalidPart(_) => (S3ErrorCode::InvalidPart, 400),
        R::InvalidPartOrder => (S3ErrorCode::InvalidPartOrder, 400),
        R::EntityTooSmall(_) => (S3ErrorCode::EntityTooSmall, 400),
        R::Service(e) => return s3(e, S3ErrorCode::NoSuchKey),
    };
    let mut err = S3Error::with_message(code, message);
    if let Ok(status) = axum::http::StatusCode::from_u16(status) {
        err.set_status_code(status);
    }
    err
}

/// A refusal whose 404 is `NoSuchKey`.
pub(crate) fn key(e: ServiceError) -> S3Error {
    s3(e, S3ErrorCode::NoSuchKey)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_has_its_s3_code_and_status() {
        let cases = [
            (ServiceError::Forbidden("x".into()), "AccessDenied", 403),
            (
                ServiceError::GracePeriod("grace period".into()),
                "AccessDenied",
                403,
            ),
            (ServiceError::BadRequest("x".into()), "InvalidArgument", 400),
            (ServiceError::ChecksumMismatch("x".into()), "BadDigest", 400),
            (ServiceError::not_found(), "NoSuchKey", 404),
            (
                ServiceError::OverPlanFileSize("x".into()),
                "EntityTooLarge",
                400,
            ),
            (
                ServiceError::StorageLimitExceeded("x".into()),
                "QuotaExceeded",
                403,
            ),
            (
                ServiceError::Conflict("x".into()),
                "PreconditionFailed",
                412,
            ),
            (
                ServiceError::Unavailable("x".into()),
                "ServiceUnavailable",
                503,
            ),
        ];
        for (e, code, status) in cases {
            let err = key(e);
            assert_eq!(err.code().as_str(), code);
            assert_eq!(err.status_code().map(|s| s.as_u16()), Some(status));
        }
        let slow = key(ServiceError::RateLimited {
            message: "m".into(),
            limit: 1,
            reset: 130,
            now: 100,
        });
        assert_eq!(slow.code().as_str(), "SlowDown");
        assert_eq!(slow.status_code().map(|s| s.as_u16()), Some(503));
        assert_eq!(slow.headers().unwrap()["retry-after"], "30");
        assert_eq!(slow.headers().unwrap()["content-type"], "application/xml");
    }
}
