//! Plans on PostgreSQL ([`PlanRepo`]): read whole; a write is one guarded
//! upsert that returns the spec it replaced, so nodes starting at once each
//! write whole plans and each learns what it changed.

use super::{query, query_opt, unsigned, DbError, PgStore};
use crate::db::model::{PlanUse, StoredPlan};
use crate::db::store::PlanRepo;
use async_trait::async_trait;

#[async_trait]
impl PlanRepo for PgStore {
    async fn plans(&self) -> Result<Vec<StoredPlan>, DbError> {
        on_conn!(self, |c| {
            let rows = query(
                c,
                "SELECT name, spec, updated_at FROM plans ORDER BY name",
                &[],
            )
            .await?;
            Ok(rows
                .iter()
                .map(|r| StoredPlan {
                    name: r.get(0),
                    spec: r.get(1),
                    updated_at: r.get(2),
                })
                .collect())
        })
    }

    async fn put_plan(
        &self,
        name: &str,
        spec: &str,
        only_new: bool,
        now: i64,
    ) -> Result<Option<String>, DbError> {
        on_conn!(self, |c| {
            // The old spec comes from the row the upsert locked; a plan that
            // is new, unchanged, or kept (only_new) gives no row.
            let row = query_opt(
                c,
                "WITH old AS (SELECT spec FROM plans WHERE name = $1)
                 INSERT INTO plans AS p (name, spec, updated_at) VALUES ($1, $2, $3)
                 ON CONFLICT (name) DO UPDATE SET spec = EXCLUDED.spec,
                     updated_at = EXCLUDED.updated_at
                 WHERE NOT $4 AND p.spec <> EXCLUDED.spec
                 RETURNING (SELECT spec FROM old)",
                &[&name, &spec, &now, &only_new],
            )
            .await?;
            Ok(row.and_then(|r| r.get::<_, Option<String>>(0)))
        })
    }

    async fn plan_uses(&self) -> Result<Vec<PlanUse>, DbError> {
        on_conn!(self, |c| {
            let rows = query(
                c,
                "SELECT plan, COUNT(*), MIN(name) FROM accounts GROUP BY plan ORDER BY plan",
                &[],
            )
            .await?;
            Ok(rows
                .iter()
                .map(|r| PlanUse {
                    plan: r.get(0),
                    accounts: unsigned(r.get(1)),
                    example: r.get(2),
                })
                .collect())
        })
    }
}
