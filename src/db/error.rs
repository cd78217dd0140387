//! The metadata store's one error type, whichever database it runs on.

/// Any failure of the database or its driver, boxed.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A failure of the metadata store, whichever database it runs on.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The database's disk is full (507: try again later).
    #[error("database error: {0}")]
    DiskFull(BoxError),
    /// The database refused or failed a statement.
    #[error("database error: {0}")]
    Backend(BoxError),
    /// No connection could be had, it went mid-statement, or the database
    /// did not answer within the deadline: unavailable for now (503, worth
    /// a retry).
    #[error("database unavailable: {0}")]
    Pool(BoxError),
    /// The database undid the transaction to break a deadlock, or for a
    /// serialization failure: nothing of it stays, and the same request
    /// again goes through (503). A batch that meets it goes one by one.
    #[error("database undid the transaction: {0}")]
    Undone(BoxError),
    #[error("database task failed: {0}")]
    Task(String),
    #[error("{0}")]
    Invalid(String),
}

impl DbError {
    /// The database did not answer within `limit` (503, worth a retry).
    pub(crate) fn timed_out(limit: std::time::Duration) -> DbError {
        DbError::Pool(format!("no answer from the database within {limit:?}").into())
    }

    /// The same kind of failure, for another caller it also failed (a group
    /// commit fails every job of its batch): a full disk stays a full disk,
    /// an unreachable database stays unreachable.
    pub(crate) fn shared(&self, context: &str) -> DbError {
        let msg = format!("{context}: {self}");
        match self {
            DbError::DiskFull(_) => DbError::DiskFull(msg.into()),
            DbError::Pool(_) => DbError::Pool(msg.into()),
            DbError::Undone(_) => DbError::Undone(msg.into()),
            _ => DbError::Task(msg),
        }
    }
}
