//! Files whose MD5 is filled in after they commit (`service::md5_fill`), on
//! SQLite: found on the partial index `files_without_md5` (migration 0017).

use super::file_rows::{from_row, COLUMNS};
use super::{owned, DbError, SqliteStore};
use crate::db::model::FileRow;

impl SqliteStore {
    /// Up to `max` files without an MD5, in id order after `after`.
    pub(super) async fn md5_pending(&self, after: &str, max: u32) -> Result<Vec<FileRow>, DbError> {
        let after = owned(after);
        self.db
            .lookup(move |c| {
                let mut stmt = c.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM files WHERE md5 IS NULL AND id > ?1 ORDER BY id LIMIT ?2"
                ))?;
                let rows = stmt
                    .query_map(rusqlite::params![after, max], from_row)?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            })
            .await
    }

    /// Sets the MD5 of a file that has none and still holds `sha256`.
    pub(super) async fn md5_found(
        &self,
        id: &str,
        sha256: &str,
        md5: &str,
    ) -> Result<bool, DbError> {
        let (id, sha256, md5) = (owned(id), owned(sha256), owned(md5));
        self.db
            .write(move |c| {
                Ok(c.prepare_cached(
                    "UPDATE files SET md5 = ?3 WHERE id = ?1 AND sha256 = ?2 AND md5 IS NULL",
                )?
                .execute(rusqlite::params![id, sha256, md5])?
                    == 1)
            })
            .await
    }
}
