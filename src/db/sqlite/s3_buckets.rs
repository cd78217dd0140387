//! The S3 door's buckets and folder markers on SQLite ([`BucketRepo`]);
//! a bucket's removal aborts its multipart uploads (`s3`) in its
//! transaction.

use super::paths::list_paths;
use super::s3::{abort_in, prefix_end};
use super::{owned, write_tx, DbError, OptionalExtension, SqliteStore};
use crate::db::s3::{key_rows, BucketRemoved, BucketRepo};
use crate::domain::keylist::{KeyPage, KeyQuery, KeyRow, KeyWalk};
use async_trait::async_trait;
use rusqlite::{params, Connection};

fn delete_bucket(
    c: &mut Connection,
    account_id: &str,
    name: &str,
    now: i64,
) -> Result<BucketRemoved, DbError> {
    let tx = write_tx(c)?;
    let existed = tx
        .prepare_cached("DELETE FROM s3_buckets WHERE account_id = ?1 AND name = ?2")?
        .execute(params![account_id, name])?
        == 1;
    let ids: Vec<String> = tx
        .prepare_cached(
            "SELECT id FROM s3_uploads WHERE account_id = ?1 AND completed_at IS NULL
             AND substr(path, 1, length(?2) + 1) = ?2 || '/'",
        )?
        .query_map(params![account_id, name], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut aborted = 0;
    for id in &ids {
        aborted += u64::from(abort_in(&tx, account_id, id, now)?);
    }
    tx.commit()?;
    Ok(BucketRemoved { existed, aborted })
}

#[async_trait]
impl BucketRepo for SqliteStore {
    async fn create_bucket(&self, account_id: &str, name: &str, now: i64) -> Result<bool, DbError> {
        let (a, n) = (owned(account_id), owned(name));
        self.db
            .write(move |c| {
                Ok(c.prepare_cached(
                    "INSERT INTO s3_buckets (account_id, name, created_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT DO NOTHING",
                )?
                .execute(params![a, n, now])?
                    == 1)
            })
            .await
    }

    async fn created_buckets(&self, account_id: &str) -> Result<Vec<(String, i64)>, DbError> {
        let a = owned(account_id);
        self.db
            .run(move |c| {
                Ok(c.prepare_cached(
                    "SELECT name, created_at FROM s3_buckets WHERE account_id = ?1 ORDER BY name",
                )?
                .query_map([a], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?)
            })
            .await
    }

    async fn created_bucket(&self, account_id: &str, name: &str) -> Result<Option<i64>, DbError> {
        let (a, n) = (owned(account_id), owned(name));
        self.db
            .lookup(move |c| {
                Ok(c.prepare_cached(
                    "SELECT created_at FROM s3_buckets WHERE account_id = ?1 AND name = ?2",
                )?
                .query_row(params![a, n], |r| r.get(0))
                .optional()?)
            })
            .await
    }

    async fn marker_buckets(&self, account_id: &str) -> Result<Vec<(String, i64)>, DbError> {
        let a = owned(account_id);
        self.db
            .run(move |c| {
                Ok(c.prepare_cached(
                    "SELECT substr(path, 1, instr(path, '/') - 1) AS b, MIN(created_at)
                     FROM s3_markers WHERE account_id = ?1 GROUP BY b ORDER BY b",
                )?
                .query_map([a], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?)
            })
            .await
    }

    async fn delete_bucket(
        &self,
        account_id: &str,
        name: &str,
        now: i64,
    ) -> Result<BucketRemoved, DbError> {
        let (a, n) = (owned(account_id), owned(name));
        self.db.write(move |c| delete_bucket(c, &a, &n, now)).await
    }

    async fn put_marker(&self, account_id: &str, path: &str, now: i64) -> Result<i64, DbError> {
        let (a, p) = (owned(account_id), owned(path));
        self.db
            .write(move |c| {
                c.prepare_cached(
                    "INSERT INTO s3_markers (account_id, path, created_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT DO NOTHING",
                )?
                .execute(params![a, p, now])?;
                Ok(c.prepare_cached(
                    "SELECT created_at FROM s3_markers WHERE account_id = ?1 AND path = ?2",
                )?
                .query_row(params![a, p], |r| r.get(0))?)
            })
            .await
    }

    async fn delete_marker(&self, account_id: &str, path: &str) -> Result<bool, DbError> {
        let (a, p) = (owned(account_id), owned(path));
        self.db
            .write(move |c| {
                Ok(
                    c.prepare_cached("DELETE FROM s3_markers WHERE account_id = ?1 AND path = ?2")?
                        .execute(params![a, p])?
                        == 1,
                )
            })
            .await
    }

    async fn markers(
        &self,
        account_id: &str,
        prefix: Option<&str>,
        start_after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<(String, i64)>, DbError> {
        let a = owned(account_id);
        let prefix = prefix.unwrap_or("").to_string();
        let after = start_after.map(str::to_string);
        self.db
            .run(move |c| markers_in(c, &a, &prefix, after.as_deref(), limit))
            .await
    }

    async fn list_object_keys(
        &self,
        account_id: &str,
        q: KeyQuery,
        now: i64,
    ) -> Result<KeyPage<KeyRow>, DbError> {
        let a = owned(account_id);
        self.db
            .run(move |c| {
                // One transaction: every probe sees the same rows.
                let tx = c.transaction()?;
                let any_marker = !markers_in(&tx, &a, &q.prefix, None, 1)?.is_empty();
                let mut walk = KeyWalk::new(q.clone());
                while let Some((after, want)) = walk.probe() {
                    let files = list_paths(&tx, &a, Some(&q.prefix), after, want, now)?;
                    let markers = if any_marker {
                        markers_in(&tx, &a, &q.prefix, after, want)?
                    } else {
                        Vec::new()
                    };
                    walk.feed(key_rows(files, markers, want));
                }
                tx.commit()?;
                Ok(walk.finish())
            })
            .await
    }
}

/// Up to `limit` markers starting with `prefix`, after `after`, in byte
/// order (SQLite compares TEXT with memcmp).
fn markers_in(
    c: &Connection,
    account_id: &str,
    prefix: &str,
    after: Option<&str>,
    limit: u32,
) -> Result<Vec<(String, i64)>, DbError> {
    Ok(c.prepare_cached(
        "SELECT path, created_at FROM s3_markers
         WHERE account_id = ?1 AND path >= ?2 AND path < ?3
           AND (?4 IS NULL OR path > ?4)
         ORDER BY path LIMIT ?5",
    )?
    .query_map(
        params![account_id, prefix, prefix_end(prefix), after, limit],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?
    .collect::<Result<_, _>>()?)
}
