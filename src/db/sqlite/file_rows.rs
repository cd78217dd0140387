//! A file's row on SQLite: the columns every query of `files` selects, and
//! the stored file they make (shared by the commit, lookups, paths and the
//! MD5 fill). A query that selects a file's inline bytes after them reads
//! them at [`DATA`].

use crate::db::model::FileRow;
use crate::domain::metadata;
use crate::domain::object::ObjectAttrs;
use rusqlite::Row;

pub(super) const COLUMNS: &str =
    "id, account_id, name, folder, size, content_type, private, sha256, blob_key, created_at, expires_at, inline, metadata, md5, attrs, damaged_at, crc32";

/// The place of a column selected after [`COLUMNS`] (a file's inline bytes).
pub(super) const DATA: usize = 17;

pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<FileRow> {
    Ok(FileRow {
        id: r.get(0)?,
        account_id: r.get(1)?,
        name: r.get(2)?,
        folder: r.get(3)?,
        size: r.get::<_, u64>(4)?,
        content_type: r.get(5)?,
        private: r.get(6)?,
        sha256: r.get(7)?,
        blob_key: r.get(8)?,
        created_at: r.get(9)?,
        expires_at: r.get(10)?,
        inline: r.get(11)?,
        metadata: metadata::from_stored(&r.get::<_, String>(12)?),
        md5: r.get(13)?,
        attrs: ObjectAttrs::from_stored(r.get::<_, Option<String>>(14)?.as_deref()),
        damaged_at: r.get(15)?,
        crc32: r.get(16)?,
    })
}
