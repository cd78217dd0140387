//! Files reached by their path (`folder/name`, docs/api.md "Paths"): the
//! core's reads for the doors that name files by path (`GET
//! /v1/files/at`, later S3's keys). Each answers stored rows; the door
//! renders them.

use super::App;
use crate::db::FileRow;
use crate::domain::filepath;
use crate::service::error::ServiceError;

/// The most files one page of [`list_paths`] holds (S3's `max-keys` cap).
pub const MAX_PATHS_PAGE: u32 = 1000;

/// The live files at `path` (a leading `/` dropped), newest first; a path
/// no file can have is 400 bad_request.
pub async fn files_at(
    app: &App,
    account_id: &str,
    path: &str,
) -> Result<Vec<FileRow>, ServiceError> {
    let (folder, name) = filepath::split(path).map_err(ServiceError::BadRequest)?;
    Ok(app
        .meta
        .files_at(account_id, folder.as_deref(), &name, app.clock.now_ms())
        .await?)
}

/// The file at `path`: the newest there (docs/api.md, "Folders and paths"); 404
/// not_found when there is none.
pub async fn file_at(app: &App, account_id: &str, path: &str) -> Result<FileRow, ServiceError> {
    files_at(app, account_id, path)
        .await?
        .into_iter()
        .next()
        .ok_or_else(ServiceError::not_found)
}

/// 409 conflict when `folder/name` holds a file: an upload with
/// `if_absent=true` told early (its commit decides, in its transaction).
pub(crate) async fn refuse_taken(
    app: &App,
    account_id: &str,
    folder: Option<&str>,
    name: &str,
) -> Result<(), ServiceError> {
    let now = app.clock.now_ms();
    if app
        .meta
        .files_at(account_id, folder, name, now)
        .await?
        .is_empty()
    {
        Ok(())
    } else {
        Err(path_taken(folder, name))
    }
}

/// The refusal of an upload with `if_absent=true` to a path that holds a file.
pub(crate) fn path_taken(folder: Option<&str>, name: &str) -> ServiceError {
    ServiceError::Conflict(format!(
        "{} already holds a file (if_absent=true)",
        filepath::join(folder, name)
    ))
}

/// Up to `limit` (at most [`MAX_PATHS_PAGE`]) live files, the newest at
/// each path, in byte order of the path: those starting with `prefix` and
/// after `start_after` (`filepath::past_prefix` skips a common prefix).
pub async fn list_paths(
    app: &App,
    account_id: &str,
    prefix: Option<&str>,
    start_after: Option<&str>,
    limit: u32,
) -> Result<Vec<FileRow>, ServiceError> {
    let limit = limit.min(MAX_PATHS_PAGE);
    if limit == 0 {
        return Ok(Vec::new());
    }
    Ok(app
        .meta
        .list_paths(account_id, prefix, start_after, limit, app.clock.now_ms())
        .await?)
}
