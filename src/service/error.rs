//! The service's error: every failure a rule can meet, with its stable code
//! and the message a caller may see. It knows nothing of HTTP; `server::error`
//! turns it into a status, headers and the API's error envelope (docs/api.md, "Errors").

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    BadRequest(String),
    /// The uploaded bytes are not those the sender's digest names
    /// (docs/decisions.md, "Checksums"): nothing was stored.
    #[error("{0}")]
    ChecksumMismatch(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    FileTooLarge(String),
    /// Over the plan's maximum file size (not a policy's or the store's
    /// limit): an operator can raise it, which a door may say.
    #[error("{0}")]
    OverPlanFileSize(String),
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
    /// What is asked contradicts what is there: an upload with
    /// `if_absent=true` to a path that holds a file (409).
    #[error("{0}")]
    Conflict(String),
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
    /// The file's stored bytes are missing or not its own (CONTRACT §20):
    /// never served whole until an operator repairs them (500 `damaged`).
    #[error("{0}")]
    Damaged(String),
    /// Anything unexpected. The detail goes to the log, never to the caller.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ServiceError {
    pub fn internal(e: impl std::fmt::Display) -> Self {
        ServiceError::Internal(e.to_string())
    }

    pub fn bad_request(msg: impl Into<String>) -> Self {
        ServiceError::BadRequest(msg.into())
    }

    pub fn not_found() -> Self {
        ServiceError::NotFound("file not found".into())
    }

    pub fn code(&self) -> &'static str {
        use ServiceError::{
            BadRequest, ChecksumMismatch, ChunkChecksumMismatch, Conflict, Damaged, FileTooLarge,
            Forbidden, Gone, GracePeriod, HeadersTooLarge, InsufficientStorage, Internal,
            LengthExceeded, Locked, MethodNotAllowed, NotFound, OffsetMismatch, OverPlanFileSize,
            RangeNotSatisfiable, RateLimited, StorageLimitExceeded, Timeout, Unauthorized,
            Unavailable, UnsupportedMediaType, UnsupportedVersion,
        };
        match self {
            Conflict(_) => "conflict",
            Damaged(_) => "damaged",
            Unauthorized(_) => "unauthorized",
            Forbidden(_) => "forbidden",
            BadRequest(_) | HeadersTooLarge(_) => "bad_request",
            ChecksumMismatch(_) | ChunkChecksumMismatch(_) => "checksum_mismatch",
            NotFound(_) => "not_found",
            FileTooLarge(_) | OverPlanFileSize(_) => "file_too_large",
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
            Internal(_) => "internal_error",
        }
    }

    /// What the caller is told: the message, except for internal errors.
    pub(crate) fn public_message(&self) -> String {
        match self {
            ServiceError::Internal(_) => "internal server error".to_string(),
            other => other.to_string(),
        }
    }
}

fn disk_full() -> ServiceError {
    ServiceError::InsufficientStorage("the server's disk is full; try again later".into())
}

impl From<crate::db::DbError> for ServiceError {
    fn from(e: crate::db::DbError) -> Self {
        match &e {
            crate::db::DbError::DiskFull(_) => {
                tracing::error!(error = %e, "database: disk full");
                disk_full()
            }
            crate::db::DbError::Pool(_) => {
                tracing::error!(error = %e, "database unavailable");
                ServiceError::Unavailable("the database is unavailable; try again later".into())
            }
            crate::db::DbError::Undone(_) => {
                tracing::warn!(error = %e, "the database undid a transaction");
                ServiceError::Unavailable("the database is busy; try again".into())
            }
            _ => ServiceError::Internal(e.to_string()),
        }
    }
}

/// An operator's action taken by a door for an account (`/v1/keys`,
/// `/v1/webhooks`): its refusal is the caller's 400, its "no such" a 404.
impl From<super::admin::AdminError> for ServiceError {
    fn from(e: super::admin::AdminError) -> Self {
        match e {
            super::admin::AdminError::Invalid(m) => ServiceError::BadRequest(m),
            super::admin::AdminError::NotFound(m) => ServiceError::NotFound(m),
            super::admin::AdminError::Db(e) => e.into(),
        }
    }
}

/// A blob store that fails is unavailable (503, worth a retry), a full disk
/// is 507; the detail goes to the log only.
impl From<crate::storage::StorageError> for ServiceError {
    fn from(e: crate::storage::StorageError) -> Self {
        metrics::counter!("filestore_store_errors_total").increment(1);
        match e {
            crate::storage::StorageError::Io(io) => ServiceError::from_io(io),
            other => {
                tracing::error!(error = %other, "blob store error");
                ServiceError::Unavailable("the blob store is unavailable; try again later".into())
            }
        }
    }
}

impl ServiceError {
    /// A failure of the server's own disk (spool, local store): 507 when it
    /// is full, else 503.
    // An error constructor: takes the error as `map_err` hands it over.
    #[allow(clippy::needless_pass_by_value)]
    pub fn from_io(e: std::io::Error) -> ServiceError {
        tracing::error!(error = %e, "storage i/o error");
        if e.kind() == std::io::ErrorKind::StorageFull {
            disk_full()
        } else {
            ServiceError::Unavailable("storage is unavailable; try again later".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_insufficient_storage_and_other_io_unavailable() {
        let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
        assert_eq!(ServiceError::from_io(full).code(), "insufficient_storage");
        let other = std::io::Error::other("eio");
        assert_eq!(ServiceError::from_io(other).code(), "unavailable");
    }

    #[test]
    fn a_transaction_the_database_undid_is_unavailable_not_internal() {
        use crate::db::DbError;
        let undone = ServiceError::from(DbError::Undone("deadlock detected".into()));
        assert_eq!(undone.code(), "unavailable");
        let other = ServiceError::from(DbError::Backend("syntax error".into()));
        assert_eq!(other.code(), "internal_error");
    }

    #[test]
    fn internal_detail_is_not_leaked() {
        let e = ServiceError::Internal("disk /secret/path exploded".into());
        assert_eq!(e.public_message(), "internal server error");
    }

    #[test]
    fn database_errors_keep_their_statuses() {
        let boxed = |m: &str| -> crate::db::error::BoxError { m.to_string().into() };
        let status = |e: crate::db::DbError| ServiceError::from(e).code();
        assert_eq!(
            status(crate::db::DbError::DiskFull(boxed("full"))),
            "insufficient_storage"
        );
        assert_eq!(
            status(crate::db::DbError::Pool(boxed("gone"))),
            "unavailable"
        );
        assert_eq!(
            status(crate::db::DbError::Backend(boxed("no rows"))),
            "internal_error"
        );
    }
}
