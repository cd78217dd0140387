//! How a file's row becomes the File record (docs/api.md, "Records"), with its CDN URL.

use super::App;
use crate::api::FileRecord;
use crate::clock::rfc3339_ms;
use crate::db::FileRow;
use crate::domain::PATH_SEGMENT;
use percent_encoding::utf8_percent_encode;

/// `{cdn_url}/live/<account>/<file>/<name>`.
pub(crate) fn cdn_path_url(app: &App, f: &FileRow) -> String {
    format!(
        "{}/live/{}/{}/{}",
        app.config.cdn_url,
        f.account_id,
        f.id,
        utf8_percent_encode(&f.name, PATH_SEGMENT)
    )
}

pub(crate) fn record(app: &App, f: &FileRow) -> FileRecord {
    FileRecord {
        id: f.id.clone(),
        url: (!f.private).then(|| cdn_path_url(app, f)),
        name: f.name.clone(),
        folder: f.folder.clone(),
        size: f.size,
        content_type: f.content_type.clone(),
        private: f.private,
        expires_at: f.expires_at.map(rfc3339_ms),
        created_at: rfc3339_ms(f.created_at),
        sha256: f.sha256.clone(),
        metadata: f.metadata.clone(),
    }
}
