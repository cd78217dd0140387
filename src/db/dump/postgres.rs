//! The dump on PostgreSQL: a snapshot in one REPEATABLE READ, READ ONLY
//! transaction of its own connection, and the loader of an empty database.

use super::{kept_column, load_order, select, Cell, ColType, Item, Items, TableHead, INLINE};
use crate::db::{DbError, PgStore};
use deadpool_postgres::Object;
use futures_util::{pin_mut, TryStreamExt};
use std::collections::{BTreeMap, BTreeSet};
use tokio_postgres::types::{ToSql, Type};

/// No deadline inside the dump's or the load's transaction: it is as long
/// as the data.
const UNBOUNDED: &str =
    "SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0";

/// The tables of the schema and what each refers to.
async fn catalog(c: &Object) -> Result<BTreeMap<String, BTreeSet<String>>, DbError> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in c
        .query(
            "SELECT table_name::TEXT FROM information_schema.tables
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
            &[],
        )
        .await?
    {
        out.insert(r.get(0), BTreeSet::new());
    }
    for r in c
        .query(
            "SELECT conrelid::regclass::TEXT, confrelid::regclass::TEXT FROM pg_constraint
             WHERE contype = 'f' AND connamespace = current_schema()::regnamespace",
            &[],
        )
        .await?
    {
        let (from, to): (String, String) = (r.get(0), r.get(1));
        out.entry(from).or_default().insert(to);
    }
    Ok(out)
}

/// A table's columns and their types (`information_schema`'s `data_type`).
async fn columns(c: &Object, table: &str) -> Result<Vec<(String, String)>, DbError> {
    Ok(c.query(
        "SELECT column_name::TEXT, data_type::TEXT FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
        &[&table],
    )
    .await?
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect())
}

fn col_type(data_type: &str) -> Result<ColType, DbError> {
    match data_type {
        "bigint" | "integer" | "smallint" => Ok(ColType::Int),
        "boolean" => Ok(ColType::Bool),
        "bytea" => Ok(ColType::Bytes),
        "text" | "character varying" => Ok(ColType::Text),
        other => Err(DbError::Invalid(format!(
            "a column of type {other} cannot be dumped"
        ))),
    }
}

fn cell(r: &tokio_postgres::Row, i: usize, ty: ColType) -> Result<Cell, DbError> {
    let or_null = |c: Option<Cell>| c.unwrap_or(Cell::Null);
    Ok(match ty {
        ColType::Int => match *r.columns()[i].type_() {
            Type::INT2 => or_null(r.try_get::<_, Option<i16>>(i)?.map(|n| Cell::Int(n.into()))),
            Type::INT4 => or_null(r.try_get::<_, Option<i32>>(i)?.map(|n| Cell::Int(n.into()))),
            _ => or_null(r.try_get::<_, Option<i64>>(i)?.map(Cell::Int)),
        },
        ColType::Bool => or_null(r.try_get::<_, Option<bool>>(i)?.map(Cell::Bool)),
        ColType::Text => or_null(r.try_get::<_, Option<String>>(i)?.map(Cell::Text)),
        ColType::Bytes => or_null(r.try_get::<_, Option<Vec<u8>>>(i)?.map(Cell::Bytes)),
    })
}

/// Sends the snapshot of `store`'s database to `out`, all of it read in
/// one repeatable-read transaction. Stops early (Ok) when nobody receives
/// any more.
pub(crate) async fn snapshot(store: &PgStore, out: &Items) -> Result<(), DbError> {
    let c = store.pool().get().await?;
    c.batch_execute(&format!(
        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; {UNBOUNDED}"
    ))
    .await?;
    let tables = catalog(&c).await?;
    for table in load_order(&tables) {
        let cols: Vec<(String, ColType)> = columns(&c, &table)
            .await?
            .into_iter()
            .filter(|(n, _)| kept_column(&table, n))
            .map(|(n, t)| col_type(&t).map(|t| (n, t)))
            .collect::<Result<_, _>>()?;
        let head = TableHead {
            table: table.clone(),
            columns: cols.iter().map(|(n, _)| n.clone()).collect(),
            types: cols.iter().map(|(_, t)| *t).collect(),
        };
        let sql = select(&table, &head.columns);
        if out.send(Ok(Item::Table(head))).await.is_err() {
            return Ok(());
        }
        let rows = c.query_raw(&sql, std::iter::empty::<i32>()).await?;
        pin_mut!(rows);
        while let Some(r) = rows.try_next().await? {
            let row = cols
                .iter()
                .enumerate()
                .map(|(i, (_, t))| cell(&r, i, *t))
                .collect::<Result<Vec<_>, _>>()?;
            if out.send(Ok(Item::Row(row))).await.is_err() {
                return Ok(());
            }
        }
    }
    let rows = c.query_raw(INLINE, std::iter::empty::<i32>()).await?;
    pin_mut!(rows);
    while let Some(r) = rows.try_next().await? {
        let item = Item::Inline {
            sha256: r.try_get(0)?,
            data: r.try_get(1)?,
        };
        if out.send(Ok(item)).await.is_err() {
            return Ok(());
        }
    }
    c.batch_execute("COMMIT").await?;
    Ok(())
}

type Param = Box<dyn ToSql + Sync + Send>;

/// A table being loaded: its INSERT's head, each dump column's place and
/// type in the target (None: the target lacks it), and rows not yet sent.
struct Insert {
    table: String,
    head: String,
    width: usize,
    map: Vec<Option<(usize, String)>>,
    rows: Vec<Vec<Param>>,
}

/// Loads a dump into an empty PostgreSQL database, in one transaction.
pub(crate) struct Load {
    client: Object,
    table: Option<Insert>,
}

/// Rows sent in one INSERT (within PostgreSQL's 65,535 parameters).
const BATCH: usize = 500;

impl Load {
    /// Begins on a database that `store` migrated; refuses one that has
    /// rows in any filestore table, naming it.
    pub(crate) async fn open(store: &PgStore) -> Result<Load, DbError> {
        let client = store.pool().get().await?;
        client.batch_execute(&format!("BEGIN; {UNBOUNDED}")).await?;
        for table in catalog(&client).await?.into_keys() {
            if table == "schema_version" || table == "schema_compat" {
                continue;
            }
            let any: bool = client
                .query_one(&format!("SELECT EXISTS (SELECT 1 FROM \"{table}\")"), &[])
                .await?
                .get(0);
            if any {
                return Err(super::not_empty(&table));
            }
        }
        Ok(Load {
            client,
            table: None,
        })
    }

    pub(crate) async fn table(&mut self, head: &TableHead) -> Result<(), DbError> {
        self.flush().await?;
        let target = columns(&self.client, &head.table).await?;
        if target.is_empty() {
            self.table = None;
            return Ok(());
        }
        let (names, map) = super::column_map(head, &target, str::to_string);
        self.table = Some(Insert {
            table: head.table.clone(),
            head: format!(
                "INSERT INTO \"{}\" ({}) VALUES ",
                head.table,
                names.join(", ")
            ),
            width: names.len(),
            map,
            rows: Vec::new(),
        });
        Ok(())
    }

    pub(crate) async fn row(&mut self, cells: Vec<Cell>) -> Result<(), DbError> {
        let Some(t) = &mut self.table else {
            return Ok(());
        };
        let mut values: Vec<Option<Param>> = (0..t.width).map(|_| None).collect();
        for (cell, to) in cells.into_iter().zip(&t.map) {
            let Some((at, ty)) = to else { continue };
            values[*at] = Some(param(cell, ty).ok_or_else(|| {
                DbError::Invalid(format!("a value of table {} does not fit", t.table))
            })?);
        }
        t.rows.push(
            values
                .into_iter()
                .map(|v| v.expect("every column set"))
                .collect(),
        );
        if t.rows.len() >= BATCH {
            self.flush().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), DbError> {
        let Some(t) = &mut self.table else {
            return Ok(());
        };
        if t.rows.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut t.rows);
        let mut sql = t.head.clone();
        let mut n = 0;
        for (i, _) in rows.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            let marks = (0..t.width)
                .map(|_| {
                    n += 1;
                    format!("${n}")
                })
                .collect::<Vec<_>>()
                .join(", ");
            sql.push('(');
            sql.push_str(&marks);
            sql.push(')');
        }
        let params: Vec<&(dyn ToSql + Sync)> = rows
            .iter()
            .flatten()
            .map(|p| &**p as &(dyn ToSql + Sync))
            .collect();
        self.client.execute(&sql, &params).await?;
        Ok(())
    }

    /// An inline file's bytes.
    pub(crate) async fn inline(&mut self, blob_key: &str, data: &[u8]) -> Result<(), DbError> {
        self.flush().await?;
        self.client
            .execute(
                "INSERT INTO inline_blobs (blob_key, data) VALUES ($1, $2)",
                &[&blob_key, &data],
            )
            .await?;
        Ok(())
    }

    /// Sets what the triggers counted while the rows went in, moves every
    /// sequence past the ids that came with the dump, and commits.
    pub(crate) async fn finish(mut self) -> Result<(), DbError> {
        self.flush().await?;
        for sql in super::FIXUPS {
            self.client.batch_execute(sql).await?;
        }
        let serials = self
            .client
            .query(
                "SELECT table_name::TEXT, column_name::TEXT FROM information_schema.columns
                 WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%'",
                &[],
            )
            .await?;
        for r in serials {
            let (table, column): (String, String) = (r.get(0), r.get(1));
            self.client
                .execute(
                    &format!(
                        "SELECT setval(pg_get_serial_sequence($1, $2),
                             COALESCE((SELECT MAX(\"{column}\") FROM \"{table}\"), 0) + 1, false)"
                    ),
                    &[&table, &column],
                )
                .await?;
        }
        self.client.batch_execute("COMMIT").await?;
        Ok(())
    }
}

fn param(cell: Cell, pg_type: &str) -> Option<Param> {
    let null = matches!(cell, Cell::Null);
    Some(match pg_type {
        "bigint" => Box::new(if null { None } else { Some(cell.as_int()?) }),
        "integer" => Box::new(if null {
            None
        } else {
            Some(i32::try_from(cell.as_int()?).ok()?)
        }),
        "smallint" => Box::new(if null {
            None
        } else {
            Some(i16::try_from(cell.as_int()?).ok()?)
        }),
        "boolean" => Box::new(if null { None } else { Some(cell.as_bool()?) }),
        "bytea" => Box::new(match cell {
            Cell::Null => None,
            Cell::Bytes(b) => Some(b),
            Cell::Text(s) => Some(s.into_bytes()),
            _ => return None,
        }),
        _ => Box::new(match cell {
            Cell::Null => None,
            Cell::Text(s) => Some(s),
            Cell::Int(n) => Some(n.to_string()),
            _ => return None,
        }),
    })
}
