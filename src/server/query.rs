//! The query strings of the listing routes, parsed and checked into what
//! the service takes (docs/api.md, "List files" and "List folders"): the
//! same 400 messages whichever route.

use crate::api::{FolderParams, ListParams};
use crate::domain::validate;
use crate::service::files::{decode_cursor, decode_folder_cursor, FolderQuery, ListQuery};
use crate::service::ServiceError;

/// `GET /v1/files`: limit, folder, recursive, cursor, checked in that order;
/// `metadata` is already parsed from the raw query.
pub(super) fn list(
    p: &ListParams,
    metadata: Vec<(String, String)>,
) -> Result<ListQuery, ServiceError> {
    let limit = validate::limit(p.limit.as_deref()).map_err(ServiceError::BadRequest)?;
    let folder = folder(p.folder.as_deref())?;
    // `/` is the root: its own files only (absent or empty: every file).
    let root = p.folder.as_deref().is_some_and(is_root);
    let recursive = match p.recursive.as_deref() {
        None => false,
        Some(r) => validate::boolean(r)
            .map_err(|_| ServiceError::BadRequest(format!("recursive {r:?}: use true or false")))?,
    };
    let after = match cursor(p.cursor.as_deref()) {
        None => None,
        Some(c) => Some(decode_cursor(c).ok_or_else(invalid_cursor)?),
    };
    Ok(ListQuery {
        folder,
        root,
        recursive,
        limit,
        after,
        metadata,
    })
}

/// `GET /v1/folders`: limit, parent, cursor, checked in that order.
pub(super) fn folders(p: &FolderParams) -> Result<FolderQuery, ServiceError> {
    let limit = validate::folders_limit(p.limit.as_deref()).map_err(ServiceError::BadRequest)?;
    let parent = folder(p.parent.as_deref())?;
    let after = match cursor(p.cursor.as_deref()) {
        None => None,
        Some(c) => Some(decode_folder_cursor(c).ok_or_else(invalid_cursor)?),
    };
    Ok(FolderQuery {
        parent,
        limit,
        after,
    })
}

/// A folder as uploads take it; absent, empty or `/`: None (the root).
fn folder(raw: Option<&str>) -> Result<Option<String>, ServiceError> {
    match raw {
        None => Ok(None),
        Some(f) if is_root(f) => Ok(None),
        Some(f) => validate::folder(f).map_err(ServiceError::BadRequest),
    }
}

/// `/` (or `//`…): the root named as a folder.
fn is_root(raw: &str) -> bool {
    !raw.is_empty() && raw.len() <= validate::MAX_FOLDER && raw.bytes().all(|b| b == b'/')
}

/// A cursor given and not empty.
fn cursor(raw: Option<&str>) -> Option<&str> {
    raw.filter(|c| !c.is_empty())
}

fn invalid_cursor() -> ServiceError {
    ServiceError::bad_request("cursor is not valid")
}
