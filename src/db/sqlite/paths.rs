//! Files by path on SQLite: the files at one path, and an account's paths
//! in byte order from any key, each on the path index (`files_by_path`,
//! migration 0016; docs/decisions.md, "Paths").

use super::file_rows::{from_row, COLUMNS, DATA};
use super::{owned, DbError, OptionalExtension, SqliteStore};
use crate::db::model::{FileRow, RowWithData};
use crate::domain::filepath;
use rusqlite::types::Value;
use rusqlite::Connection;
use std::fmt::Write as _;

/// A file's path, word for word the expression `files_by_path` indexes
/// (SQLite uses an index on an expression only for the same expression).
/// BINARY collation: the order of its UTF-8 bytes.
macro_rules! path_of {
    ($t:literal) => {
        concat!("COALESCE(", $t, "folder || '/', '') || ", $t, "name")
    };
}

/// The live files of `account_id` at `folder/name`, newest first.
pub(super) fn files_at(
    conn: &Connection,
    account_id: &str,
    folder: Option<&str>,
    name: &str,
    now: i64,
) -> Result<Vec<FileRow>, DbError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM files WHERE account_id = ?1 AND {} = ?2
         AND (expires_at IS NULL OR expires_at > ?3)
         ORDER BY created_at DESC, id DESC",
        path_of!("")
    ))?;
    let path = filepath::join(folder, name);
    let rows = stmt
        .query_map(rusqlite::params![account_id, path, now], from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// The newest live file of `account_id` at `folder/name`, with its inline
/// bytes if it has them.
pub(super) fn newest_with_data(
    conn: &Connection,
    account_id: &str,
    folder: Option<&str>,
    name: &str,
    now: i64,
) -> Result<Option<RowWithData>, DbError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS}, (SELECT data FROM inline_blobs d WHERE d.blob_key = files.blob_key)
         FROM files WHERE account_id = ?1 AND {} = ?2
         AND (expires_at IS NULL OR expires_at > ?3)
         ORDER BY created_at DESC, id DESC LIMIT 1",
        path_of!("")
    ))?;
    let path = filepath::join(folder, name);
    Ok(stmt
        .query_row(rusqlite::params![account_id, path, now], |r| {
            Ok((from_row(r)?, r.get::<_, Option<Vec<u8>>>(DATA)?))
        })
        .optional()?)
}

/// Up to `limit` live files of `account_id`, the newest at each path, in
/// byte order of the path, within `filepath::range(prefix, start_after)`.
/// One range scan of `files_by_path`; the newest at a path is the first row
/// of its run there, checked by one seek back into the same index (no live
/// file at the path is newer).
pub(super) fn list_paths(
    conn: &Connection,
    account_id: &str,
    prefix: Option<&str>,
    start_after: Option<&str>,
    limit: u32,
    now: i64,
) -> Result<Vec<FileRow>, DbError> {
    let Some(range) = filepath::range(prefix, start_after) else {
        return Ok(Vec::new());
    };
    let mut sql = format!(
        "SELECT {COLUMNS} FROM files f WHERE f.account_id = ?1
         AND (f.expires_at IS NULL OR f.expires_at > ?2)"
    );
    let mut args = vec![Value::Text(account_id.to_string()), Value::Integer(now)];
    if let Some(lower) = range.lower {
        let op = if range.inclusive { ">=" } else { ">" };
        let _ = write!(sql, " AND {} {op} ?", path_of!("f."));
        args.push(Value::Text(lower));
    }
    if let Some(upper) = range.upper {
        let _ = write!(sql, " AND {} < ?", path_of!("f."));
        args.push(Value::Text(upper));
    }
    sql.push_str(concat!(
        " AND NOT EXISTS (SELECT 1 FROM files g WHERE g.account_id = f.account_id AND ",
        path_of!("g."),
        " = ",
        path_of!("f."),
        " AND (g.expires_at IS NULL OR g.expires_at > ?2)
           AND (g.created_at, g.id) > (f.created_at, f.id))
         ORDER BY ",
        path_of!("f."),
        " LIMIT ?"
    ));
    args.push(Value::Integer(i64::from(limit)));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt
        .query_map(rusqlite::params_from_iter(args), from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

impl SqliteStore {
    /// [`files_at`] on a reading connection.
    pub(super) async fn files_at_path(
        &self,
        account_id: &str,
        folder: Option<&str>,
        name: &str,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        let (acc, folder, name) = (owned(account_id), folder.map(owned), owned(name));
        self.db
            .lookup(move |c| files_at(c, &acc, folder.as_deref(), &name, now))
            .await
    }

    /// [`newest_with_data`] on a reading connection.
    pub(super) async fn file_at_path_with_data(
        &self,
        account_id: &str,
        folder: Option<&str>,
        name: &str,
        now: i64,
    ) -> Result<Option<RowWithData>, DbError> {
        let (acc, folder, name) = (owned(account_id), folder.map(owned), owned(name));
        self.db
            .lookup(move |c| newest_with_data(c, &acc, folder.as_deref(), &name, now))
            .await
    }

    /// [`list_paths`] on a reading connection.
    pub(super) async fn paths_page(
        &self,
        account_id: &str,
        prefix: Option<&str>,
        start_after: Option<&str>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError> {
        let (acc, prefix, after) = (owned(account_id), prefix.map(owned), start_after.map(owned));
        self.db
            .run(move |c| list_paths(c, &acc, prefix.as_deref(), after.as_deref(), limit, now))
            .await
    }
}
