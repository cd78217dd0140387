//! Files by path on PostgreSQL: the files at one path, and an account's
//! paths in byte order from any key, each on the path index
//! (`files_by_path`, migration 0019; docs/decisions.md, "Paths").

use super::{has_nul, query, query_opt, rows, DbError, PgStore};
use crate::db::model::{FileRow, RowWithData};
use crate::domain::filepath;
use std::fmt::Write as _;
use tokio_postgres::types::ToSql;

/// A file's path, word for word the expression `files_by_path` indexes (the
/// planner matches an index on an expression only to the same expression),
/// in the "C" collation: the order of its UTF-8 bytes.
const PATH: &str = "((COALESCE(folder || '/', '') || name) COLLATE \"C\")";

impl PgStore {
    /// The live files of `account_id` at `folder/name`, newest first: one
    /// seek of `files_by_path`.
    pub(super) async fn files_at_path(
        &self,
        account_id: &str,
        folder: Option<&str>,
        name: &str,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        let path = filepath::join(folder, name);
        // A NUL matches nothing stored (PostgreSQL's text holds none).
        if has_nul(&[account_id, &path]) {
            return Ok(Vec::new());
        }
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {} FROM files WHERE account_id = $1 AND {PATH} = $2
                 AND (expires_at IS NULL OR expires_at > $3)
                 ORDER BY created_at DESC, id DESC",
                rows::FILE
            );
            Ok(query(c, &sql, &[&account_id, &path, &now])
                .await?
                .iter()
                .map(rows::file)
                .collect())
        })
    }

    /// The newest live file of `account_id` at `folder/name`, with its
    /// inline bytes if it has them: one seek of `files_by_path`.
    pub(super) async fn file_at_path_with_data(
        &self,
        account_id: &str,
        folder: Option<&str>,
        name: &str,
        now: i64,
    ) -> Result<Option<RowWithData>, DbError> {
        let path = filepath::join(folder, name);
        if has_nul(&[account_id, &path]) {
            return Ok(None);
        }
        on_conn!(self, |c| {
            let sql = format!(
                "SELECT {}, (SELECT data FROM inline_blobs d WHERE d.blob_key = files.blob_key)
                 FROM files WHERE account_id = $1 AND {PATH} = $2
                 AND (expires_at IS NULL OR expires_at > $3)
                 ORDER BY created_at DESC, id DESC LIMIT 1",
                rows::FILE
            );
            Ok(query_opt(c, &sql, &[&account_id, &path, &now])
                .await?
                .map(|r| (rows::file(&r), r.get::<_, Option<Vec<u8>>>(rows::FILE_DATA))))
        })
    }

    /// Up to `limit` live files of `account_id`, the newest at each path,
    /// in byte order of the path, within `filepath::range(prefix,
    /// start_after)`: one range scan of `files_by_path`, whose rows come
    /// newest first within a path, so `DISTINCT ON` keeps the first of each.
    pub(super) async fn paths_page(
        &self,
        account_id: &str,
        prefix: Option<&str>,
        start_after: Option<&str>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        let Some(range) = filepath::range(prefix, start_after) else {
            return Ok(Vec::new());
        };
        if has_nul(&[account_id]) {
            return Ok(Vec::new());
        }
        on_conn!(self, |c| {
            let mut sql = format!(
                "SELECT DISTINCT ON ({PATH}) {} FROM files WHERE account_id = $1
                 AND (expires_at IS NULL OR expires_at > $2)",
                rows::FILE
            );
            let mut args: Vec<Box<dyn ToSql + Sync + Send>> =
                vec![Box::new(account_id.to_string()), Box::new(now)];
            if let Some(lower) = &range.lower {
                args.push(Box::new(lower.clone()));
                let op = if range.inclusive { ">=" } else { ">" };
                let _ = write!(sql, " AND {PATH} {op} ${}", args.len());
            }
            if let Some(upper) = &range.upper {
                args.push(Box::new(upper.clone()));
                let _ = write!(sql, " AND {PATH} < ${}", args.len());
            }
            args.push(Box::new(i64::from(limit)));
            let _ = write!(
                sql,
                " ORDER BY {PATH}, created_at DESC, id DESC LIMIT ${}",
                args.len()
            );
            let params: Vec<&(dyn ToSql + Sync)> =
                args.iter().map(|b| &**b as &(dyn ToSql + Sync)).collect();
            Ok(query(c, &sql, &params)
                .await?
                .iter()
                .map(rows::file)
                .collect())
        })
    }
}
