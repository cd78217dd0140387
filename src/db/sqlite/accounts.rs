//! Accounts: who owns files and keys, on which plan, in grace period or not.

use super::{DbError, OptionalExtension};
use crate::db::model::Account;
use rusqlite::{params, Connection, Row};

const COLUMNS: &str = "id, name, plan, grace_period, storage_bytes, created_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Account> {
    Ok(Account {
        id: r.get(0)?,
        name: r.get(1)?,
        plan: r.get(2)?,
        grace_period: r.get(3)?,
        storage_bytes: r.get::<_, u64>(4)?,
        created_at: r.get(5)?,
    })
}

pub(crate) fn insert(conn: &Connection, a: &Account) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO accounts (id, name, plan, grace_period, storage_bytes, created_at)
         VALUES (?1, ?2, ?3, ?4, 0, ?5)",
    )?
    .execute(params![a.id, a.name, a.plan, a.grace_period, a.created_at])
    .map_err(|e| match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            DbError::Invalid(format!("an account named {:?} already exists", a.name))
        }
        other => other.into(),
    })?;
    Ok(())
}

pub(crate) fn count(conn: &Connection) -> Result<u64, DbError> {
    Ok(conn
        .prepare_cached("SELECT COUNT(*) FROM accounts")?
        .query_row([], |r| r.get::<_, u64>(0))?)
}

pub(crate) fn get(conn: &Connection, id: &str) -> Result<Option<Account>, DbError> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM accounts WHERE id = ?1"))?
        .query_row([id], from_row)
        .optional()?)
}

/// Finds an account by its id or its (unique) name.
pub(crate) fn find(conn: &Connection, id_or_name: &str) -> Result<Option<Account>, DbError> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM accounts WHERE id = ?1 OR name = ?1 ORDER BY id = ?1 DESC LIMIT 1"))?
        .query_row([id_or_name], from_row)
        .optional()?)
}

pub(crate) fn list(conn: &Connection) -> Result<Vec<Account>, DbError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM accounts ORDER BY created_at, id"
    ))?;
    let rows = stmt
        .query_map([], from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

pub(crate) fn set_plan(conn: &Connection, id: &str, plan: &str) -> Result<(), DbError> {
    conn.prepare_cached("UPDATE accounts SET plan = ?2 WHERE id = ?1")?
        .execute(params![id, plan])?;
    Ok(())
}

pub(crate) fn set_grace_period(conn: &Connection, id: &str, on: bool) -> Result<(), DbError> {
    conn.prepare_cached("UPDATE accounts SET grace_period = ?2 WHERE id = ?1")?
        .execute(params![id, on])?;
    Ok(())
}

/// Adds `delta` (may be negative) to the account's stored bytes.
pub(crate) fn add_storage(conn: &Connection, id: &str, delta: i64) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE accounts SET storage_bytes = MAX(0, storage_bytes + ?2) WHERE id = ?1",
    )?
    .execute(params![id, delta])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_by_id_or_name_and_unique_names() {
        let (_d, db) = crate::db::sqlite::test_db();
        let c = db.conn().unwrap();
        let a = Account {
            id: "acc_1".into(),
            name: "default".into(),
            plan: "free".into(),
            grace_period: false,
            storage_bytes: 0,
            created_at: 1,
        };
        insert(&c, &a).unwrap();
        assert_eq!(find(&c, "default").unwrap().unwrap().id, "acc_1");
        assert_eq!(find(&c, "acc_1").unwrap().unwrap().name, "default");
        assert!(find(&c, "nobody").unwrap().is_none());
        let dup = Account {
            id: "acc_2".into(),
            ..a
        };
        assert!(matches!(insert(&c, &dup), Err(DbError::Invalid(_))));
        add_storage(&c, "acc_1", 10).unwrap();
        add_storage(&c, "acc_1", -3).unwrap();
        assert_eq!(get(&c, "acc_1").unwrap().unwrap().storage_bytes, 7);
    }
}
