//! One turn per account at its row on a node (`db/postgres/turns.rs`): the
//! requests of one account that wait on its row (commits with an
//! idempotency key, resumable creations, deletes) hold at most one of the
//! node's pooled connections, so they cannot take the pool from the others.

use super::*;
use std::time::Duration;

/// An idempotent commit of `f` (its bytes inline).
async fn commit_with_key(
    store: Arc<PgStore>,
    f: filestore::testing::db::FileRow,
    key: String,
) -> Result<CommitOutcome, String> {
    let data = bytes::Bytes::from(vec![b'x'; usize::try_from(f.size).unwrap()]);
    let ctx = CommitContext {
        period: "2026-11".into(),
        idempotency_key: Some(key),
        ..Default::default()
    };
    store
        .commit_upload(f, Some(data), Quota::UNLIMITED, ctx)
        .await
        .map_err(|e| e.to_string())
}

/// Twice the pool's connections of one account's commits wait on its row,
/// held by another session: another account's commits and reads on the
/// same node go on meanwhile, and only one session of the node waits on
/// the row. Once it is let go, every one of them commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_accounts_waits_on_its_row_hold_one_connection_of_the_node() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let (a, b) = (account(&*store).await, account(&*store).await);
    let url = store_url(&store).await;
    let mut holder = store.pool().get().await.unwrap();
    let tx = holder.transaction().await.unwrap();
    tx.execute("SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", &[&a])
        .await
        .unwrap();
    let many = 2 * store.pool().status().max_size;
    let waiting: Vec<_> = (0..many)
        .map(|i| {
            let key = format!("key-{i}");
            tokio::spawn(commit_with_key(
                store.clone(),
                inline_file(&a, i, 10, None),
                key,
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    for i in 0..4 {
        let other = tokio::time::timeout(
            Duration::from_secs(3),
            commit_with_key(
                store.clone(),
                inline_file(&b, 1000 + i, 10, None),
                format!("other-{i}"),
            ),
        )
        .await
        .expect("another account's commit gets a connection")
        .unwrap();
        assert!(matches!(other, CommitOutcome::Committed(_)), "{other:?}");
    }
    let usage = tokio::time::timeout(Duration::from_secs(3), store.usage(&b, "2026-11"))
        .await
        .expect("a read gets a connection")
        .unwrap();
    assert_eq!(usage.upload_count, 4);
    assert_eq!(
        pg::count(
            &url,
            "SELECT COUNT(*) FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ),
        1,
        "one session of the node waits on the row"
    );
    assert!(waiting.iter().all(|w| !w.is_finished()));
    tx.commit().await.unwrap();
    for w in waiting {
        let done = w.await.unwrap().unwrap();
        assert!(matches!(done, CommitOutcome::Committed(_)), "{done:?}");
    }
    assert_eq!(
        store.usage(&a, "2026-11").await.unwrap().upload_count,
        u64::try_from(many).unwrap()
    );
}

/// The store's database, as a URL the test can open its own sessions on.
async fn store_url(store: &PgStore) -> String {
    let c = store.pool().get().await.unwrap();
    let name: String = c
        .query_one("SELECT current_database()", &[])
        .await
        .unwrap()
        .get(0);
    pg::url_of(&name).unwrap()
}

/// A deadlock PostgreSQL breaks by undoing the node's transaction is an
/// outage of the moment (503, worth the same request again), not an
/// error of the server's (500): here another session holds the account's
/// row and then writes the idempotency key the node's commit just wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_undone_by_a_deadlock_is_unavailable_for_now() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let a = account(&*store).await;
    let mut holder = store.pool().get().await.unwrap();
    // The node's session finds the cycle (after its 1 s), and is undone.
    holder
        .batch_execute("SET deadlock_timeout = '30s'")
        .await
        .unwrap();
    let tx = holder.transaction().await.unwrap();
    tx.execute("SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", &[&a])
        .await
        .unwrap();
    let commit = tokio::spawn(commit_with_key(
        store.clone(),
        inline_file(&a, 0, 10, None),
        "the-key".into(),
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&a];
    let insert = tx.execute(
        "INSERT INTO idempotency_keys (account_id, key, file_id, created_at)
         VALUES ($1, 'the-key', 'f_other', 0)",
        &params,
    );
    let (insert, outcome) = tokio::join!(insert, commit);
    insert.unwrap();
    let err = outcome.unwrap().unwrap_err();
    assert!(err.starts_with("database undid the transaction"), "{err}");
    tx.rollback().await.unwrap();
}
