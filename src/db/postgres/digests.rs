//! Files whose MD5 is filled in after they commit (`service::md5_fill`), on
//! PostgreSQL: found on the partial index `files_without_md5` (migration
//! 0020). Every node fills; two that pick the same file write the same value.

use super::{execute, has_nul, query, rows, DbError, PgStore};
use crate::db::model::FileRow;

impl PgStore {
    /// Up to `max` files without an MD5, in id order after `after`.
    pub(super) async fn md5_pending(&self, after: &str, max: u32) -> Result<Vec<FileRow>, DbError> {
        if has_nul(&[after]) {
            return Ok(Vec::new());
        }
        let max = i64::from(max);
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {} FROM files WHERE md5 IS NULL AND id > $1 ORDER BY id LIMIT $2",
                rows::FILE
            );
            Ok(query(c, &sql, &[&after, &max])
                .await?
                .iter()
                .map(rows::file)
                .collect())
        })
    }

    /// Sets the MD5 of a file that has none and still holds `sha256`.
    pub(super) async fn md5_found(
        &self,
        id: &str,
        sha256: &str,
        md5: &str,
    ) -> Result<bool, DbError> {
        if has_nul(&[id, sha256, md5]) {
            return Ok(false);
        }
        on_conn!(self, |c| {
            let n = execute(
                c,
                "UPDATE files SET md5 = $3 WHERE id = $1 AND sha256 = $2 AND md5 IS NULL",
                &[&id, &sha256, &md5],
            )
            .await?;
            Ok(n == 1)
        })
    }
}
