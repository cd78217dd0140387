//! Reads, pages, deletion and signing of files.

use super::blobs::delete_blob_now;
use super::records::{cdn_path_url, record};
use super::App;
use crate::api::{FileList, ListParams, SignedUrl};
use crate::clock::rfc3339_ms;
use crate::db::{FileRow, FolderFilter, ListFilter, PageAfter};
use crate::domain::validate;
use crate::service::error::ServiceError;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

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

pub(crate) async fn list(
    app: &App,
    account_id: &str,
    p: ListParams,
    metadata: Vec<(String, String)>,
) -> Result<FileList, ServiceError> {
    let limit = validate::limit(p.limit.as_deref()).map_err(ServiceError::BadRequest)?;
    let folder = match p.folder.as_deref() {
        None => None,
        Some(f) => validate::folder(f).map_err(ServiceError::BadRequest)?,
    };
    let recursive = match p.recursive.as_deref() {
        None => false,
        Some(r) => validate::boolean(r)
            .map_err(|_| ServiceError::BadRequest(format!("recursive {r:?}: use true or false")))?,
    };
    let after = match p.cursor.as_deref() {
        None | Some("") => None,
        Some(c) => {
            Some(decode_cursor(c).ok_or_else(|| ServiceError::bad_request("cursor is not valid"))?)
        }
    };
    let folder = match (folder, recursive) {
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
    Ok(FileList {
        files: rows.iter().map(|r| record(app, r)).collect(),
        has_more,
        cursor,
    })
}

/// Deletes a file: the row and the bytes at once; the blob right after (or,
/// if the store fails, by the collector later).
pub(crate) async fn delete(app: &App, account_id: &str, id: &str) -> Result<(), ServiceError> {
    let now = app.clock.now_ms();
    let row = app
        .disk
        .freeing(|| app.meta.delete_file(account_id, id, now))
        .await?
        .ok_or_else(ServiceError::not_found)?;
    app.outbox.wake();
    delete_blob_now(app, &row.blob_key).await;
    Ok(())
}

pub(crate) async fn sign(
    app: &App,
    account_id: &str,
    id: &str,
    expires_in: u64,
) -> Result<SignedUrl, ServiceError> {
    let row = get(app, account_id, id).await?;
    let expires = app
        .clock
        .now()
        .timestamp()
        .saturating_add(i64::try_from(expires_in).unwrap_or(i64::MAX));
    let signature = app.signer.sign(&row.account_id, &row.id, expires);
    Ok(SignedUrl {
        url: format!(
            "{}?expires={expires}&signature={signature}",
            cdn_path_url(app, &row)
        ),
        expires_at: rfc3339_ms(expires * 1000),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
