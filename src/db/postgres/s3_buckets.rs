//! The S3 door's buckets and folder markers on PostgreSQL ([`BucketRepo`]);
//! a bucket's removal aborts its multipart uploads (`s3`) in its
//! transaction, under the account row's lock. Names and paths compare in
//! byte order (COLLATE "C").

use super::account_lock::lock_account;
use super::s3::{abort_in, prefix_end};
use super::{execute, query, query_opt, DbError, PgStore};
use crate::db::s3::{key_rows, BucketRemoved, BucketRepo};
use crate::domain::keylist::{KeyPage, KeyQuery, KeyRow, KeyWalk};
use async_trait::async_trait;
use deadpool_postgres::Transaction;

async fn delete_bucket(
    tx: &Transaction<'_>,
    account_id: &str,
    name: &str,
    now: i64,
) -> Result<BucketRemoved, DbError> {
    lock_account(tx, account_id).await?;
    let existed = execute(
        tx,
        "DELETE FROM s3_buckets WHERE account_id = $1 AND name = $2",
        &[&account_id, &name],
    )
    .await?
        == 1;
    let prefix = format!("{name}/");
    let ids = query(
        tx,
        "SELECT id FROM s3_uploads WHERE account_id = $1 AND completed_at IS NULL
           AND starts_with(path, $2) ORDER BY id",
        &[&account_id, &prefix],
    )
    .await?;
    let mut aborted = 0;
    for r in &ids {
        let id: &str = r.get(0);
        aborted += u64::from(abort_in(tx, account_id, id, now).await?);
    }
    Ok(BucketRemoved { existed, aborted })
}

#[async_trait]
impl BucketRepo for PgStore {
    async fn create_bucket(&self, account_id: &str, name: &str, now: i64) -> Result<bool, DbError> {
        on_conn!(self, |c| Ok(execute(
            c,
            "INSERT INTO s3_buckets (account_id, name, created_at) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
            &[&account_id, &name, &now],
        )
        .await?
            == 1))
    }

    async fn created_buckets(&self, account_id: &str) -> Result<Vec<(String, i64)>, DbError> {
        on_conn!(self, |c| Ok(query(
            c,
            "SELECT name, created_at FROM s3_buckets WHERE account_id = $1 ORDER BY name",
            &[&account_id],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()))
    }

    async fn created_bucket(&self, account_id: &str, name: &str) -> Result<Option<i64>, DbError> {
        on_conn!(self, |c| Ok(query_opt(
            c,
            "SELECT created_at FROM s3_buckets WHERE account_id = $1 AND name = $2",
            &[&account_id, &name],
        )
        .await?
        .map(|r| r.get(0))))
    }

    async fn marker_buckets(&self, account_id: &str) -> Result<Vec<(String, i64)>, DbError> {
        on_conn!(self, |c| Ok(query(
            c,
            "SELECT split_part(path, '/', 1) COLLATE \"C\" AS b, MIN(created_at)
             FROM s3_markers WHERE account_id = $1 GROUP BY b ORDER BY b",
            &[&account_id],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()))
    }

    async fn delete_bucket(
        &self,
        account_id: &str,
        name: &str,
        now: i64,
    ) -> Result<BucketRemoved, DbError> {
        let (_turn, deadline) = self.turn(account_id).await?;
        in_tx!(self, deadline, |tx| delete_bucket(
            &tx, account_id, name, now
        )
        .await)
    }

    async fn put_marker(&self, account_id: &str, path: &str, now: i64) -> Result<i64, DbError> {
        on_conn!(self, |c| {
            let r = super::query_one(
                c,
                "WITH added AS (
                     INSERT INTO s3_markers (account_id, path, created_at) VALUES ($1, $2, $3)
                     ON CONFLICT DO NOTHING RETURNING created_at)
                 SELECT created_at FROM added
                 UNION ALL
                 SELECT created_at FROM s3_markers WHERE account_id = $1 AND path = $2
                 LIMIT 1",
                &[&account_id, &path, &now],
            )
            .await?;
            Ok(r.get(0))
        })
    }

    async fn delete_marker(&self, account_id: &str, path: &str) -> Result<bool, DbError> {
        on_conn!(self, |c| Ok(execute(
            c,
            "DELETE FROM s3_markers WHERE account_id = $1 AND path = $2",
            &[&account_id, &path],
        )
        .await?
            == 1))
    }

    async fn markers(
        &self,
        account_id: &str,
        prefix: Option<&str>,
        start_after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<(String, i64)>, DbError> {
        let prefix = prefix.unwrap_or("");
        let end = prefix_end(prefix);
        on_conn!(self, |c| Ok(query(
            c,
            "SELECT path, created_at FROM s3_markers
             WHERE account_id = $1 AND path >= $2 AND path < $3
               AND ($4::TEXT IS NULL OR path > $4)
             ORDER BY path LIMIT $5",
            &[&account_id, &prefix, &end, &start_after, &i64::from(limit)],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()))
    }

    async fn list_object_keys(
        &self,
        account_id: &str,
        q: KeyQuery,
        now: i64,
    ) -> Result<KeyPage<KeyRow>, DbError> {
        // Each probe is a statement of its own (a round trip each).
        let any_marker = !self
            .markers(account_id, Some(&q.prefix), None, 1)
            .await?
            .is_empty();
        let mut walk = KeyWalk::new(q.clone());
        while let Some((after, want)) = walk.probe() {
            let after = after.map(str::to_string);
            let files = self
                .paths_page(account_id, Some(&q.prefix), after.as_deref(), want, now)
                .await?;
            let markers = if any_marker {
                self.markers(account_id, Some(&q.prefix), after.as_deref(), want)
                    .await?
            } else {
                Vec::new()
            };
            walk.feed(key_rows(files, markers, want));
        }
        Ok(walk.finish())
    }
}
