//! The metadata as a logical dump, the same whichever database holds it
//! (`admin backup` and `admin restore`): every filestore table's rows in one
//! consistent snapshot, as [`Item`]s of neutral [`Cell`]s, and a loader that
//! writes them into a freshly migrated database of either kind, converting
//! each cell to the target column's type. Tables and columns are read from
//! the database's catalog, not listed here: a column a migration adds flows
//! through (a column the target lacks is left out, one the dump lacks takes
//! its default). What is not dumped is listed in [`SKIPPED`] and
//! [`NODE_COLUMNS`], with why.

pub(crate) mod postgres;
pub(crate) mod sqlite;

use super::DbError;
use std::collections::{BTreeMap, BTreeSet};

/// Tables left out of the dump: the schema's own bookkeeping (the target
/// runs its migrations), one node's passing state (rate windows, the
/// strangers' slots), the blob deletion queue (of the source's blob store),
/// inline blobs (their bytes go with the other blobs, by SHA-256, and are
/// put back into the target's `inline_blobs`), image variants (renders,
/// made again on the next request for them), and the background scrub's
/// turn and place (of the source's nodes; the target's scrub starts over),
/// and the console's sessions (a restored database asks its users to sign
/// in again).
pub(crate) const SKIPPED: &[&str] = &[
    "schema_version",
    "schema_compat",
    "sqlite_sequence",
    "rate_windows",
    "stranger_slots",
    "blob_deletions",
    "inline_blobs",
    "image_variants",
    "scrub_turn",
    "console_sessions",
];

/// Columns that name a node of the source's cluster or a lease of one of
/// its processes: none of them runs beside the restored database. And a
/// file's `damaged` mark: of the source's blobs (a backup holds only bytes
/// that match, and restore checks them again).
pub(crate) const NODE_COLUMNS: &[(&str, &str)] = &[
    ("files", "damaged_at"),
    ("tus_uploads", "lease_node"),
    ("tus_uploads", "lease_token"),
    ("tus_uploads", "lease_until"),
    ("webhook_events", "claim_node"),
];

/// The rows of `table` the dump keeps (a WHERE clause of both dialects):
/// resumable uploads only once completed (kept for their replies to a
/// retried request; one in progress has bytes in no blob of its own), and
/// `meta` without the holds of running backups.
pub(crate) fn row_filter(table: &str) -> Option<&'static str> {
    match table {
        "tus_uploads" => Some("completed_at IS NOT NULL"),
        "meta" => Some("NOT (key >= 'blob_hold:' AND key < 'blob_hold;')"),
        _ => None,
    }
}

/// A column's type, as the dump records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ColType {
    Int,
    Bool,
    Text,
    Bytes,
}

/// One value of a row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Bool(bool),
    Text(String),
    Bytes(Vec<u8>),
}

impl Cell {
    /// The value as an integer (a boolean is 0 or 1), if it is one.
    pub(crate) fn as_int(&self) -> Option<i64> {
        match self {
            Cell::Int(n) => Some(*n),
            Cell::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    /// The value as a boolean (an integer is true unless 0), if it is one.
    pub(crate) fn as_bool(&self) -> Option<bool> {
        match self {
            Cell::Int(n) => Some(*n != 0),
            Cell::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

/// Where each of a dump table's columns goes in the target's table (its
/// columns and declared types, from the catalogue): the quoted names of the
/// columns the INSERT names, and for each dump column its place there with
/// `kind` of its target type (None: the target lacks it; the cell is dropped).
pub(crate) fn column_map<T>(
    head: &TableHead,
    target: &[(String, String)],
    kind: impl Fn(&str) -> T,
) -> (Vec<String>, Vec<Option<(usize, T)>>) {
    let mut names = Vec::new();
    let mut map = Vec::new();
    for c in &head.columns {
        match target.iter().find(|(n, _)| n == c) {
            Some((n, t)) => {
                map.push(Some((names.len(), kind(t))));
                names.push(format!("\"{n}\""));
            }
            None => map.push(None),
        }
    }
    (names, map)
}

/// A table of the dump: its name and columns, then its rows.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct TableHead {
    pub table: String,
    pub columns: Vec<String>,
    pub types: Vec<ColType>,
}

/// What a snapshot yields, in order: each table's head then its rows;
/// then the bytes of every inline file with its SHA-256.
#[derive(Debug)]
pub(crate) enum Item {
    Table(TableHead),
    Row(Vec<Cell>),
    Inline { sha256: String, data: Vec<u8> },
}

/// Where a snapshot sends its items (bounded: the dump streams).
pub(crate) type Items = tokio::sync::mpsc::Sender<Result<Item, DbError>>;

/// The tables to dump, in an order that loads: every table after those its
/// foreign keys name (then by name). `tables` maps each to what it refers to.
pub(crate) fn load_order(tables: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut done: Vec<String> = Vec::new();
    let mut left: BTreeSet<&String> = tables
        .keys()
        .filter(|t| !SKIPPED.contains(&t.as_str()))
        .collect();
    while !left.is_empty() {
        let ready: Vec<&String> = left
            .iter()
            .copied()
            .filter(|t| {
                tables[*t]
                    .iter()
                    .all(|r| r == *t || !left.contains(r) || !tables.contains_key(r))
            })
            .collect();
        // A cycle of references (none in the schema): the rest by name.
        let ready = if ready.is_empty() {
            left.iter().copied().collect()
        } else {
            ready
        };
        for t in ready {
            left.remove(t);
            done.push(t.clone());
        }
    }
    done
}

/// The columns of `table` the dump keeps.
pub(crate) fn kept_column(table: &str, column: &str) -> bool {
    !NODE_COLUMNS.contains(&(table, column))
}

/// The SELECT of a table's kept rows.
pub(crate) fn select(table: &str, columns: &[String]) -> String {
    let cols = columns
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    match row_filter(table) {
        Some(w) => format!("SELECT {cols} FROM \"{table}\" WHERE {w}"),
        None => format!("SELECT {cols} FROM \"{table}\""),
    }
}

/// The inline files' bytes with their SHA-256 (both dialects).
pub(crate) const INLINE: &str =
    "SELECT f.sha256, i.data FROM inline_blobs i JOIN files f ON f.blob_key = i.blob_key";

/// What a restore does once the rows are in, on both databases: the
/// counters the schema's triggers moved while the files went in are set
/// from the files, and an upload token's open uploads are none (no upload
/// in progress came with the dump).
pub(crate) const FIXUPS: &[&str] = &[
    "UPDATE accounts SET file_count = (SELECT COUNT(*) FROM files WHERE files.account_id = accounts.id)",
    "UPDATE upload_tokens SET uploads_open = 0",
];

/// A target that is not empty: the table that has rows.
pub(crate) fn not_empty(table: &str) -> DbError {
    DbError::Invalid(format!(
        "the target database is not empty: table {table} has rows"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_load_after_those_they_refer_to() {
        let mut t = BTreeMap::new();
        let refs = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<BTreeSet<_>>();
        t.insert("webhook_events".to_string(), refs(&["webhooks"]));
        t.insert("webhooks".to_string(), refs(&["accounts"]));
        t.insert("accounts".to_string(), refs(&[]));
        t.insert("api_keys".to_string(), refs(&["accounts"]));
        t.insert("inline_blobs".to_string(), refs(&[]));
        t.insert("files".to_string(), refs(&["accounts", "files"]));
        assert_eq!(
            load_order(&t),
            [
                "accounts",
                "api_keys",
                "files",
                "webhooks",
                "webhook_events"
            ]
        );
    }

    #[test]
    fn cells_convert_between_dialects() {
        assert_eq!(Cell::Int(1).as_bool(), Some(true));
        assert_eq!(Cell::Bool(false).as_int(), Some(0));
        assert_eq!(Cell::Text("x".into()).as_int(), None);
    }
}
