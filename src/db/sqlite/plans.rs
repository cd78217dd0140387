//! Plans on SQLite ([`PlanRepo`]): read whole, written one at a time by the
//! single writer.

use super::{owned, DbError, OptionalExtension, SqliteStore};
use crate::db::model::{PlanUse, StoredPlan};
use crate::db::store::PlanRepo;
use async_trait::async_trait;
use rusqlite::params;

#[async_trait]
impl PlanRepo for SqliteStore {
    async fn plans(&self) -> Result<Vec<StoredPlan>, DbError> {
        self.db
            .run(|c| {
                let mut stmt =
                    c.prepare_cached("SELECT name, spec, updated_at FROM plans ORDER BY name")?;
                let rows = stmt.query_map([], |r| {
                    Ok(StoredPlan {
                        name: r.get(0)?,
                        spec: r.get(1)?,
                        updated_at: r.get(2)?,
                    })
                })?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await
    }

    async fn put_plan(
        &self,
        name: &str,
        spec: &str,
        only_new: bool,
        now: i64,
    ) -> Result<Option<String>, DbError> {
        let (name, spec) = (owned(name), owned(spec));
        self.db
            .write(move |c| {
                let before: Option<String> = c
                    .prepare_cached("SELECT spec FROM plans WHERE name = ?1")?
                    .query_row([&name], |r| r.get(0))
                    .optional()?;
                match &before {
                    Some(_) if only_new => return Ok(None),
                    Some(old) if *old == spec => return Ok(None),
                    _ => {}
                }
                c.prepare_cached(
                    "INSERT INTO plans (name, spec, updated_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT (name) DO UPDATE SET spec = excluded.spec,
                         updated_at = excluded.updated_at",
                )?
                .execute(params![name, spec, now])?;
                Ok(before)
            })
            .await
    }

    async fn plan_uses(&self) -> Result<Vec<PlanUse>, DbError> {
        self.db
            .run(|c| {
                let mut stmt = c.prepare_cached(
                    "SELECT plan, COUNT(*), MIN(name) FROM accounts GROUP BY plan ORDER BY plan",
                )?;
                let rows = stmt.query_map([], |r| {
                    Ok(PlanUse {
                        plan: r.get(0)?,
                        accounts: r.get(1)?,
                        example: r.get(2)?,
                    })
                })?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await
    }
}
