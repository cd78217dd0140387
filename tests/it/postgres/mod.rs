//! The PostgreSQL store's rules across nodes: several `PgStore`s on one
//! database stand for several `serve` nodes. Run with
//! `FILESTORE_TEST_DATABASE_URL` (see `common::pg`); skipped without.

use crate::common::cluster::second_node;
use crate::common::meta::{account, commit, inline_file};
use crate::common::{pg, TestOptions, TestServer};
use filestore::testing::db::{
    Account, AccountRepo, BlobRepo, CommitContext, CommitOutcome, FileRepo, OpsRepo, PgStore,
    Quota, RateRepo, Refusal, UploadRepo,
};
use std::collections::BTreeSet;
use std::sync::Arc;

mod batches;
mod bus;
mod commit_sql;
mod keys;
mod migrate;
mod one_commit;
mod outages;
mod races;
mod serve;
mod startup;
mod tls;
mod turns;

/// `n` stores on one new database, connected at once (migrating at once).
async fn nodes(n: usize) -> Option<(tempfile::TempDir, Vec<Arc<PgStore>>)> {
    pg::admin_url()?;
    let dir = tempfile::tempdir().unwrap();
    let url = pg::database_for(dir.path()).await.unwrap();
    let connecting = (0..n).map(|_| {
        let url = url.clone();
        tokio::spawn(async move { PgStore::connect(&url).await })
    });
    let mut stores = Vec::new();
    for c in connecting {
        stores.push(Arc::new(c.await.unwrap().expect("every node starts")));
    }
    Some((dir, stores))
}

fn skipped() {
    eprintln!("skipped: set FILESTORE_TEST_DATABASE_URL to run the PostgreSQL tests");
}

/// The pool hands out the connection used last: once a burst has opened
/// several, a node's statements one at a time keep to one connection (one
/// PostgreSQL backend, warm) instead of going round them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_one_at_a_time_keep_to_the_connection_used_last() {
    async fn backend(c: &deadpool_postgres::Object) -> i32 {
        c.query_one("SELECT pg_backend_pid()", &[])
            .await
            .unwrap()
            .get(0)
    }
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let pool = stores[0].pool();
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(pool.get().await.unwrap());
    }
    let mut burst = BTreeSet::new();
    for c in &held {
        burst.insert(backend(c).await);
    }
    assert_eq!(burst.len(), 4, "four connections at once");
    drop(held);
    let mut after = BTreeSet::new();
    for _ in 0..8 {
        let c = pool.get().await.unwrap();
        after.insert(backend(&c).await);
    }
    assert_eq!(after.len(), 1, "one at a time, one connection: {after:?}");
    assert!(burst.is_superset(&after));
}
