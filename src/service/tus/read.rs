//! Reading an upload back: the caller's, unexpired, with its file once complete.

use super::owners::{owned, unexpired, Caller};
use crate::db::UploadRow;
use crate::domain::files::StoredFile;
use crate::service::error::ServiceError;
use crate::service::App;

/// An upload the caller may read and, once complete, its file (null if
/// deleted since).
pub(crate) async fn status(
    app: &App,
    caller: &Caller,
    id: &str,
) -> Result<(UploadRow, Option<StoredFile>), ServiceError> {
    with_file(app, owned(app, caller, id).await?).await
}

pub(super) async fn with_file(
    app: &App,
    row: UploadRow,
) -> Result<(UploadRow, Option<StoredFile>), ServiceError> {
    let account_id = row.account_id.as_str();
    let file = match row.completed_at {
        Some(_) => {
            app.meta
                .file(account_id, &row.file_id, app.clock.now_ms())
                .await?
        }
        None => None,
    };
    Ok((row, file))
}

/// The upload, if it is this account's and not expired.
pub(super) async fn find(app: &App, account_id: &str, id: &str) -> Result<UploadRow, ServiceError> {
    let row = app
        .meta
        .upload(account_id, id)
        .await?
        .ok_or_else(|| ServiceError::NotFound("no such upload".into()))?;
    unexpired(app, row)
}
