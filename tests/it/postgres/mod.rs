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
mod migrate;
mod outages;
mod races;
mod serve;
mod startup;
mod tls;

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
