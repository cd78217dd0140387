//! Reads, pages, deletion and signing of files.

use super::blobs::delete_blob_now;
use super::links::{cdn_path_url, cdn_stable_url};
use super::App;
use crate::db::{FileChange, FileRow, FolderFilter, ListFilter, PageAfter};
use crate::domain::filepath;
use crate::domain::files::StoredFile;
use crate::domain::transform::Transform;
use crate::domain::validate;
use crate::service::error::ServiceError;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use std::sync::Arc;

pub(crate) async fn get(app: &App, account_id: &str, id: &str) -> Result<FileRow, ServiceError> {
    app.meta
        .file(account_id, id, app.clock.now_ms())
        .await?
        .ok_or_else(ServiceError::not_found)
}

fn encode_cursor(after: &PageAfter) -> String {
    URL_SAFE_NO_PAD.encode(format!("{}:{}", after.created_at, after.id))
}

pub fn decode_cursor(s: &str) -> Option<PageAfter> {
    let raw = String::from_utf8(URL_SAFE_NO_PAD.decode(s).ok()?).ok()?;
    let (t, id) = raw.split_once(':')?;
    let ok_id = id.starts_with("f_")
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    ok_id.then_some(PageAfter {
        created_at: t.parse().ok()?,
        id: id.to_string(),
    })
}

/// What one `GET /v1/files` asks, checked (the handler parses the query).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListQuery {
    /// None: every folder (or, with `root`, the root's files only).
    pub folder: Option<String>,
    /// The root's files only (`folder=/`).
    pub root: bool,
    /// With `folder`: its subfolders too.
    pub recursive: bool,
    /// Page size, 1-100.
    pub limit: u32,
    /// The page starts after this file (a decoded cursor).
    pub after: Option<PageAfter>,
    /// `metadata.KEY=VALUE` pairs that must all match.
    pub metadata: Vec<(String, String)>,
}

/// A page of something, and where the next one starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Page<T> {
    pub items: Vec<T>,
    pub has_more: bool,
    /// Gives the next page (None: this is the last).
    pub cursor: Option<String>,
}

/// One page of files, newest first.
pub(crate) async fn list(
    app: &App,
    account_id: &str,
    q: ListQuery,
) -> Result<Page<StoredFile>, ServiceError> {
    let ListQuery {
        folder,
        root,
        recursive,
        limit,
        after,
        metadata,
    } = q;
    let folder = match (folder, recursive) {
        (None, false) if root => FolderFilter::Root,
        (None, _) => FolderFilter::All,
        (Some(f), false) => FolderFilter::Exactly(f),
        (Some(f), true) => FolderFilter::Under(f),
    };
    let filter = ListFilter { folder, metadata };
    let now = app.clock.now_ms();
    let mut rows = app
        .meta
        .page(account_id, &filter, after, limit, now)
        .await?;
    let has_more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let cursor = match rows.last() {
        Some(last) if has_more => Some(encode_cursor(&PageAfter {
            created_at: last.created_at,
            id: last.id.clone(),
        })),
        _ => None,
    };
    Ok(Page {
        items: rows,
        has_more,
        cursor,
    })
}

/// Renames, moves or makes private or public a file (the name and folder
/// checked as an upload's; a name with a directory part is refused rather
/// than cut): `folder` unchecked, `""` the root, None to stay where it is;
/// `private` None to stay as it is. The CDN serves or refuses it at once
/// on this node (within a second on the others, as any change).
pub(crate) async fn update(
    app: &App,
    account_id: &str,
    id: &str,
    name: Option<&str>,
    folder: Option<&str>,
    private: Option<bool>,
) -> Result<StoredFile, ServiceError> {
    if name.is_none() && folder.is_none() && private.is_none() {
        return Err(ServiceError::bad_request(
            "name, folder or private is required",
        ));
    }
    let change = FileChange {
        name: name.map(new_name).transpose()?,
        moves: folder.is_some(),
        folder: folder.map(|f| new_folder(Some(f))).transpose()?.flatten(),
        private,
    };
    let updated = app
        .meta
        .update_file(account_id, id, change, app.clock.now_ms())
        .await;
    // Forgotten whatever the answer: a commit may have landed all the same.
    app.recent.forget(account_id, id);
    let row = updated?.ok_or_else(ServiceError::not_found)?;
    app.outbox.wake();
    Ok(row)
}

/// A file's new name (a rename, a copy): checked as an upload's, but one
/// with a directory part is refused rather than cut.
pub(crate) fn new_name(name: &str) -> Result<String, ServiceError> {
    if name.contains(['/', '\\']) {
        return Err(ServiceError::bad_request(
            "name may not hold / or \\ (use folder to move a file)",
        ));
    }
    validate::file_name(name).map_err(ServiceError::BadRequest)
}

/// A file's new folder, checked as an upload's: None (or `""`) is the root.
pub(crate) fn new_folder(folder: Option<&str>) -> Result<Option<String>, ServiceError> {
    validate::folder(folder.unwrap_or("")).map_err(ServiceError::BadRequest)
}

/// A folders cursor: the last name of the page.
fn encode_folder_cursor(name: &str) -> String {
    URL_SAFE_NO_PAD.encode(name)
}

/// A name a folders cursor holds: one folder segment, or nothing.
pub(crate) fn decode_folder_cursor(s: &str) -> Option<String> {
    let name = String::from_utf8(URL_SAFE_NO_PAD.decode(s).ok()?).ok()?;
    let ok = !name.contains('/') && validate::folder(&name).ok()?.as_deref() == Some(&name);
    ok.then_some(name)
}

/// What one `GET /v1/folders` asks, checked (the handler parses the query).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FolderQuery {
    /// None: the root.
    pub parent: Option<String>,
    /// Page size, 1-1000.
    pub limit: u32,
    /// The page starts after this subfolder name (a decoded cursor).
    pub after: Option<String>,
}

/// A folder: its last segment and its whole path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Folder {
    pub name: String,
    pub path: String,
}

/// The immediate subfolders of `parent` holding a live file at any depth, by name.
pub(crate) async fn folders(
    app: &App,
    account_id: &str,
    q: FolderQuery,
) -> Result<Page<Folder>, ServiceError> {
    let FolderQuery {
        parent,
        limit,
        after,
    } = q;
    let mut names = app
        .meta
        .subfolders(
            account_id,
            parent.as_deref(),
            after,
            limit,
            app.clock.now_ms(),
        )
        .await?;
    let has_more = names.len() > limit as usize;
    names.truncate(limit as usize);
    let cursor = match names.last() {
        Some(last) if has_more => Some(encode_folder_cursor(last)),
        _ => None,
    };
    Ok(Page {
        items: names
            .into_iter()
            .map(|name| Folder {
                path: parent
                    .as_ref()
                    .map_or_else(|| name.clone(), |p| format!("{p}/{name}")),
                name,
            })
            .collect(),
        has_more,
        cursor,
    })
}

/// Deletes a file: the row and the bytes at once; the blob right after (or,
/// if the store fails, by the collector later).
pub(crate) async fn delete(app: &App, account_id: &str, id: &str) -> Result<(), ServiceError> {
    let now = app.clock.now_ms();
    let deleted = app.meta.delete_file(account_id, id, now).await;
    // Forgotten whatever the answer: a commit may have landed all the same.
    app.recent.forget(account_id, id);
    let row = deleted?.ok_or_else(ServiceError::not_found)?;
    app.outbox.wake();
    delete_blob_now(app, &row.blob_key).await;
    Ok(())
}

/// The most files one `POST /v1/files/delete` names.
const MAX_BULK_DELETE: usize = 1000;

/// Deletes up to 1000 files in one transaction; their blobs (queued a
/// lease ahead, as for one file) are deleted right after, in the
/// background (or by the collector, should this node stop first).
/// What a bulk delete did: the ids deleted, and those that were no file
/// of the account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BulkDeleted {
    pub deleted: Vec<String>,
    pub not_found: Vec<String>,
}

pub(crate) async fn delete_many(
    app: &Arc<App>,
    account_id: &str,
    asked: Vec<String>,
) -> Result<BulkDeleted, ServiceError> {
    if asked.is_empty() || asked.len() > MAX_BULK_DELETE {
        return Err(ServiceError::bad_request(format!(
            "ids must hold 1 to {MAX_BULK_DELETE} file ids"
        )));
    }
    let mut ids = Vec::with_capacity(asked.len());
    for id in asked {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let now = app.clock.now_ms();
    let gone = app.meta.delete_files(account_id, ids.clone(), now).await;
    // Forgotten whatever the answer: a commit may have landed all the same.
    for id in &ids {
        app.recent.forget(account_id, id);
    }
    let gone = gone?;
    app.outbox.wake();
    let keys: Vec<String> = gone
        .iter()
        .filter(|r| !r.inline)
        .map(|r| r.blob_key.clone())
        .collect();
    spawn_blob_deletions(app, keys);
    let deleted: std::collections::HashSet<&str> = gone.iter().map(|r| r.id.as_str()).collect();
    let (deleted, not_found) = ids
        .into_iter()
        .partition(|id| deleted.contains(id.as_str()));
    Ok(BulkDeleted { deleted, not_found })
}

/// Deletes every file in a folder and below at once; the collector
/// deletes their blobs in the background. The root is refused. How many
/// files went.
pub(crate) async fn delete_folder(
    app: &App,
    account_id: &str,
    folder: Option<&str>,
) -> Result<u64, ServiceError> {
    let folder = validate::folder(folder.unwrap_or(""))
        .map_err(ServiceError::BadRequest)?
        .ok_or_else(|| {
            ServiceError::bad_request("folder is required (the root cannot be deleted this way)")
        })?;
    let now = app.clock.now_ms();
    let deleted = app.meta.delete_folder(account_id, &folder, now).await;
    // Forgotten whatever the answer: a commit may have landed all the same.
    app.recent.forget_all();
    let deleted = deleted?;
    app.outbox.wake();
    Ok(deleted)
}

/// Deletes freed blobs one after the other in the background.
fn spawn_blob_deletions(app: &Arc<App>, keys: Vec<String>) {
    if keys.is_empty() {
        return;
    }
    let app = Arc::clone(app);
    tokio::spawn(async move {
        for key in keys {
            delete_blob_now(&app, &key).await;
        }
    });
}

/// A signed link and when it stops working (unix seconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignedLink {
    pub url: String,
    pub expires: i64,
}

/// A link to file `id` (a variant of it, with `transform`) that works for
/// `expires_in` seconds, private or not; `by_path`: to the file's path (a
/// stable link, `/p/…`), which serves whatever is newest there until then.
pub(crate) async fn sign(
    app: &App,
    account_id: &str,
    id: &str,
    expires_in: u64,
    transform: Option<Transform>,
    by_path: bool,
) -> Result<SignedLink, ServiceError> {
    let row = get(app, account_id, id).await?;
    let expires = link_expiry(app.clock.now(), expires_in);
    let scope = transform.map(|t| t.canonical());
    let (link, signature) = if by_path {
        let path = filepath::join(row.folder.as_deref(), &row.name);
        let signature = app
            .signer
            .sign_path(&row.account_id, &path, expires, scope.as_deref());
        (cdn_stable_url(app, &row), signature)
    } else {
        let signature = app
            .signer
            .sign(&row.account_id, &row.id, expires, scope.as_deref());
        (cdn_path_url(app, &row), signature)
    };
    let variant = transform
        .map(|t| format!("{}&", t.query()))
        .unwrap_or_default();
    Ok(SignedLink {
        url: format!("{link}?{variant}expires={expires}&signature={signature}"),
        expires,
    })
}

/// The whole second a link made at `now` for `expires_in` seconds stops
/// working: `now` rounded up, so it works at least `expires_in` seconds (a
/// 1-second link made at 9.997 s would otherwise die 3 ms later).
fn link_expiry(now: chrono::DateTime<chrono::Utc>, expires_in: u64) -> i64 {
    let whole = now
        .timestamp()
        .saturating_add(i64::from(now.timestamp_subsec_nanos() > 0));
    whole.saturating_add(i64::try_from(expires_in).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_works_at_least_the_seconds_asked() {
        use chrono::TimeZone;
        let at = |ms: i64| chrono::Utc.timestamp_millis_opt(ms).unwrap();
        // Made at 9.997 s for 1 s: good until 11 s, not 10 s.
        assert_eq!(link_expiry(at(9_997), 1), 11);
        // Made on a whole second: exactly the seconds asked.
        assert_eq!(link_expiry(at(10_000), 1), 11);
        assert_eq!(link_expiry(at(10_001), 604_800), 11 + 604_800);
        assert_eq!(link_expiry(at(0), u64::MAX), i64::MAX);
    }

    proptest::proptest! {
        #[test]
        fn cursors_round_trip(t in proptest::num::i64::ANY, id in "f_[0-9a-f]{1,44}") {
            let a = PageAfter { created_at: t, id };
            proptest::prop_assert_eq!(decode_cursor(&encode_cursor(&a)), Some(a));
        }

        #[test]
        fn any_cursor_decodes_to_a_safe_id_or_nothing(raw in "\\PC{0,120}|[A-Za-z0-9_-]{0,80}") {
            if let Some(a) = decode_cursor(&raw) {
                proptest::prop_assert!(a.id.starts_with("f_") && a.id.len() <= 64);
                proptest::prop_assert!(a.id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
            }
        }
    }

    #[test]
    fn folder_cursors_hold_one_segment() {
        for name in ["a", "v1.2", "-x", ".hidden", "é", "a b", "+%*\\"] {
            assert_eq!(
                decode_folder_cursor(&encode_folder_cursor(name)).as_deref(),
                Some(name)
            );
        }
        for bad in ["a/b", "", "..", "a\u{1}", "a\u{202e}", &"x".repeat(256)] {
            assert_eq!(
                decode_folder_cursor(&encode_folder_cursor(bad)),
                None,
                "{bad}"
            );
        }
        assert_eq!(decode_folder_cursor("!!"), None);
    }

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        let a = PageAfter {
            created_at: 1_700_000_000_000,
            id: "f_abc".into(),
        };
        assert_eq!(decode_cursor(&encode_cursor(&a)), Some(a));
        assert_eq!(decode_cursor("!!"), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("x:f_1")), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("1:'; DROP")), None);
    }
}
