//! A selection of files as a ZIP archive (`POST /v1/files/zip`, the
//! console's "Download zip"; CONTRACT §19): made as a folder's is
//! (`zip::Job`: streamed, STORED zip64 entries, memory flat, counted as
//! bandwidth, a repeated path made unique), from up to [`MAX_PICKED`] files
//! named by id. Every id must be a live file of the account, checked
//! before the answer starts (404 otherwise: another account's file is no
//! file here). Entries are the files' paths relative to the deepest folder
//! holding them all, in the order asked.

use super::error::ServiceError;
use super::zip::{FolderZip, Job, MAX_AT_ONCE};
use super::App;
use std::sync::Arc;

/// The most files one selection holds.
pub(crate) const MAX_PICKED: usize = 1000;

/// At most this many missing ids are named in a 404.
const NAMED: usize = 5;

/// Starts the archive of the account's files `asked` (each once).
pub(crate) async fn selection(
    app: &Arc<App>,
    account_id: &str,
    asked: Vec<String>,
) -> Result<FolderZip, ServiceError> {
    if asked.is_empty() || asked.len() > MAX_PICKED {
        return Err(ServiceError::bad_request(format!(
            "ids must hold 1 to {MAX_PICKED} file ids"
        )));
    }
    let mut ids: Vec<String> = Vec::with_capacity(asked.len());
    for id in asked {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let slot = app
        .in_flight
        .archive_slot(account_id, MAX_AT_ONCE, app.clock.now().timestamp())?;
    let now = app.clock.now_ms();
    let mut rows = Vec::with_capacity(ids.len());
    let mut missing = Vec::new();
    for id in ids {
        match app.meta.file(account_id, &id, now).await? {
            Some(row) => rows.push(row),
            None => missing.push(id),
        }
    }
    if let Some(first) = missing.first() {
        let more = match missing.len() {
            1 => String::new(),
            n => format!(
                " (and {} more: {})",
                n - 1,
                missing[1..missing.len().min(NAMED)].join(", ")
            ),
        };
        return Err(ServiceError::NotFound(format!(
            "no such file: {first}{more}"
        )));
    }
    let top = common_folder(rows.iter().map(|r| r.folder.as_deref().unwrap_or("")));
    let file_name = match top.rsplit('/').next() {
        Some(last) if !last.is_empty() => format!("{last}.zip"),
        _ => "files.zip".to_string(),
    };
    let count = rows.len();
    let job = Job {
        app: app.clone(),
        account_id: account_id.to_string(),
        folder: top,
        filter: None,
        max_entries: MAX_PICKED,
    };
    Ok(job.start(rows, count, slot, file_name))
}

/// The deepest folder that holds all of `folders` ("": the root), segment
/// by segment.
fn common_folder<'a>(mut folders: impl Iterator<Item = &'a str>) -> String {
    let Some(first) = folders.next() else {
        return String::new();
    };
    let mut common: Vec<&str> = first.split('/').filter(|s| !s.is_empty()).collect();
    for f in folders {
        let same = common
            .iter()
            .zip(f.split('/').filter(|s| !s.is_empty()))
            .take_while(|(a, b)| *a == b)
            .count();
        common.truncate(same);
    }
    common.join("/")
}

#[cfg(test)]
mod tests {
    use super::common_folder;

    #[test]
    fn the_deepest_folder_holding_all() {
        let c = |v: &[&str]| common_folder(v.iter().copied());
        assert_eq!(c(&["a/b", "a/b"]), "a/b");
        assert_eq!(c(&["a/b/c", "a/b", "a/b/d"]), "a/b");
        assert_eq!(c(&["a/bc", "a/b"]), "a");
        assert_eq!(c(&["a", ""]), "");
        assert_eq!(c(&["x", "y"]), "");
        assert_eq!(c(&[]), "");
    }
}
