//! The dump on SQLite: a snapshot in one read transaction of a connection
//! of its own (WAL: the server's writes go on beside it), and the loader of
//! a new database file.

use super::{kept_column, load_order, select, Cell, ColType, Item, Items, TableHead, INLINE};
use crate::db::DbError;
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OpenFlags};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

/// The tables of the database and what each refers to.
fn catalog(c: &Connection) -> Result<BTreeMap<String, BTreeSet<String>>, DbError> {
    let names: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut out = BTreeMap::new();
    for name in names {
        let refs: BTreeSet<String> = c
            .prepare(&format!("PRAGMA foreign_key_list(\"{name}\")"))?
            .query_map([], |r| r.get::<_, String>(2))?
            .collect::<Result<_, _>>()?;
        out.insert(name, refs);
    }
    Ok(out)
}

/// A table's columns and their declared types.
fn columns(c: &Connection, table: &str) -> Result<Vec<(String, String)>, DbError> {
    Ok(c.prepare(&format!("PRAGMA table_info(\"{table}\")"))?
        .query_map([], |r| Ok((r.get::<_, String>(1)?, r.get::<_, String>(2)?)))?
        .collect::<Result<_, _>>()?)
}

fn col_type(declared: &str) -> ColType {
    let d = declared.to_ascii_uppercase();
    if d.contains("INT") {
        ColType::Int
    } else if d.contains("BLOB") {
        ColType::Bytes
    } else {
        ColType::Text
    }
}

fn cell(v: ValueRef<'_>) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(n) => Cell::Int(n),
        // No column of the schema holds a REAL; kept as its text.
        ValueRef::Real(f) => Cell::Text(f.to_string()),
        ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Cell::Bytes(b.to_vec()),
    }
}

/// Sends the snapshot of the database at `path` to `out`, all of it read
/// in one transaction. Blocking: run it on the blocking pool. Stops early
/// (Ok) when nobody receives any more.
pub(crate) fn snapshot(path: &Path, out: &Items) -> Result<(), DbError> {
    let c = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    c.busy_timeout(Duration::from_secs(30))?;
    c.execute_batch("BEGIN DEFERRED")?;
    // The read transaction (and its snapshot) starts with this first read.
    let tables = catalog(&c)?;
    let send = |item: Item| out.blocking_send(Ok(item)).is_ok();
    for table in load_order(&tables) {
        let cols: Vec<(String, String)> = columns(&c, &table)?
            .into_iter()
            .filter(|(n, _)| kept_column(&table, n))
            .collect();
        let head = TableHead {
            table: table.clone(),
            columns: cols.iter().map(|(n, _)| n.clone()).collect(),
            types: cols.iter().map(|(_, t)| col_type(t)).collect(),
        };
        let sql = select(&table, &head.columns);
        if !send(Item::Table(head)) {
            return Ok(());
        }
        let mut stmt = c.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let row = (0..cols.len())
                .map(|i| r.get_ref(i).map(cell))
                .collect::<Result<Vec<_>, _>>()?;
            if !send(Item::Row(row)) {
                return Ok(());
            }
        }
    }
    let mut stmt = c.prepare(INLINE)?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let item = Item::Inline {
            sha256: r.get(0)?,
            data: r.get(1)?,
        };
        if !send(item) {
            return Ok(());
        }
    }
    drop(rows);
    drop(stmt);
    c.execute_batch("COMMIT")?;
    Ok(())
}

/// Where a dump's column goes: its place and type in the target's INSERT
/// (None: the target lacks the column).
type Target = Option<(usize, ColType)>;

/// Loads a dump into a new SQLite database, in one transaction.
pub(crate) struct Load {
    conn: Connection,
    /// The current table's INSERT and, for each column of the dump, its
    /// place and type in the target (None: the target lacks it); None when
    /// the target lacks the table.
    table: Option<(String, Vec<Target>)>,
    current: String,
}

impl Load {
    /// Creates and migrates the database at `path`, and begins.
    pub(crate) fn open(path: &Path) -> Result<Load, DbError> {
        drop(crate::db::sqlite::Db::open(path)?);
        let conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
             PRAGMA foreign_keys = ON; BEGIN IMMEDIATE",
        )?;
        Ok(Load {
            conn,
            table: None,
            current: String::new(),
        })
    }

    pub(crate) fn table(&mut self, head: &TableHead) -> Result<(), DbError> {
        self.current.clone_from(&head.table);
        let target = columns(&self.conn, &head.table)?;
        if target.is_empty() {
            self.table = None;
            return Ok(());
        }
        let (names, map) = super::column_map(head, &target, col_type);
        let marks = (1..=names.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "INSERT INTO \"{}\" ({}) VALUES ({marks})",
            head.table,
            names.join(", ")
        );
        self.table = Some((sql, map));
        Ok(())
    }

    pub(crate) fn row(&mut self, cells: Vec<Cell>) -> Result<(), DbError> {
        let Some((sql, map)) = &self.table else {
            return Ok(());
        };
        let mut values = vec![Value::Null; map.iter().flatten().count()];
        for (cell, to) in cells.into_iter().zip(map) {
            let Some((at, ty)) = to else { continue };
            values[*at] = value(cell, *ty).ok_or_else(|| {
                DbError::Invalid(format!("a value of table {} does not fit", self.current))
            })?;
        }
        self.conn
            .prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(values))?;
        Ok(())
    }

    /// An inline file's bytes.
    pub(crate) fn inline(&mut self, blob_key: &str, data: &[u8]) -> Result<(), DbError> {
        self.conn
            .prepare_cached("INSERT INTO inline_blobs (blob_key, data) VALUES (?1, ?2)")?
            .execute(rusqlite::params![blob_key, data])?;
        Ok(())
    }

    /// Sets what the triggers counted while the rows went in, and commits.
    pub(crate) fn finish(self) -> Result<(), DbError> {
        for sql in super::FIXUPS {
            self.conn.execute_batch(sql)?;
        }
        // SQLite marks the files that have variants (none came with the dump).
        self.conn.execute_batch(
            "UPDATE files SET variants = EXISTS (SELECT 1 FROM image_variants v
                 WHERE v.file_id = files.id); COMMIT",
        )?;
        Ok(())
    }
}

fn value(cell: Cell, ty: ColType) -> Option<Value> {
    Some(match (cell, ty) {
        (Cell::Null, _) => Value::Null,
        (c, ColType::Int | ColType::Bool) => Value::Integer(c.as_int()?),
        (Cell::Text(s), ColType::Text) => Value::Text(s),
        (Cell::Int(n), ColType::Text) => Value::Text(n.to_string()),
        (Cell::Bytes(b), ColType::Bytes) => Value::Blob(b),
        (Cell::Text(s), ColType::Bytes) => Value::Blob(s.into_bytes()),
        _ => return None,
    })
}
