//! The buses on PostgreSQL (`db/postgres/bus.rs`, `rates.rs`): the batches
//! of several accounts (and the counts of several keys) that become ready
//! while the node's previous statement of them is in flight go together as
//! its next, each judged as if alone; and a row held long by another
//! session holds up only its own account, and sets only it apart.

use super::*;
use std::time::Duration;

/// Commits `f` (its bytes inline) within `limits`.
async fn commit_one(
    store: Arc<PgStore>,
    f: filestore::testing::db::FileRow,
    limits: Quota,
) -> CommitOutcome {
    let data = bytes::Bytes::from(vec![b'x'; usize::try_from(f.size).unwrap()]);
    let ctx = CommitContext {
        period: "2026-11".into(),
        ..Default::default()
    };
    store
        .commit_upload(f, Some(data), limits, ctx)
        .await
        .unwrap()
}

/// Two accounts' uploads that arrive while the node's commit statement is
/// in flight (held here waiting for a connection: the test holds them all)
/// go in one statement, each judged alone: one refused by its own quota,
/// the other committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_ready_together_commit_in_one_statement_each_judged_alone() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let (a, b, c) = (
        account(&*store).await,
        account(&*store).await,
        account(&*store).await,
    );
    let mut held = Vec::new();
    for _ in 0..store.pool().status().max_size {
        held.push(store.pool().get().await.unwrap());
    }
    let small = Quota {
        storage: 50,
        uploads_per_period: 1000,
        ..Quota::UNLIMITED
    };
    let first = tokio::spawn(commit_one(
        store.clone(),
        inline_file(&c, 0, 10, None),
        Quota::UNLIMITED,
    ));
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The later account's upload comes first: the statement sorts them by
    // account, and each outcome still goes back to its own upload.
    let refuse = commit_one(store.clone(), inline_file(&a, 1, 100, None), small);
    let fit = commit_one(store.clone(), inline_file(&b, 2, 40, None), small);
    let gap = Duration::from_millis(20);
    let (refused, fits) = if a > b {
        let refused = tokio::spawn(refuse);
        tokio::time::sleep(gap).await;
        (refused, tokio::spawn(fit))
    } else {
        let fits = tokio::spawn(fit);
        tokio::time::sleep(gap).await;
        (tokio::spawn(refuse), fits)
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !first.is_finished(),
        "the first statement waits for a connection"
    );
    drop(held);
    assert!(matches!(first.await.unwrap(), CommitOutcome::Committed(_)));
    let refused = refused.await.unwrap();
    assert!(
        matches!(refused, CommitOutcome::Refused(Refusal::Storage { .. })),
        "{refused:?}"
    );
    assert!(matches!(fits.await.unwrap(), CommitOutcome::Committed(_)));
    assert_eq!(store.shared_commits(), (1, 2));
    assert_eq!(store.upload_batches(), (1, 2));
    let stored = |acc: String| {
        let store = store.clone();
        async move { store.account(&acc).await.unwrap().unwrap().storage_bytes }
    };
    assert_eq!(
        (
            stored(a.clone()).await,
            stored(b.clone()).await,
            stored(c).await
        ),
        (0, 40, 10)
    );
    assert_eq!(store.usage(&a, "2026-11").await.unwrap().upload_count, 0);
    assert_eq!(store.usage(&b, "2026-11").await.unwrap().upload_count, 1);
}

/// An account row held long by another session (a delete of many files,
/// say) holds up that account's commit, but not another account's on the
/// same node: the bus's statement gives up on the lock (100 ms), and the
/// held account's batch waits on its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_account_row_holds_up_only_its_own_account() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let (a, b) = (account(&*store).await, account(&*store).await);
    let mut holder = store.pool().get().await.unwrap();
    let tx = holder.transaction().await.unwrap();
    tx.execute("SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", &[&a])
        .await
        .unwrap();
    let stuck = tokio::spawn(commit_one(
        store.clone(),
        inline_file(&a, 0, 10, None),
        Quota::UNLIMITED,
    ));
    tokio::time::sleep(Duration::from_millis(20)).await;
    for i in 1..4 {
        let other = tokio::time::timeout(
            Duration::from_secs(3),
            commit_one(
                store.clone(),
                inline_file(&b, i, 10, None),
                Quota::UNLIMITED,
            ),
        )
        .await
        .expect("another account's commit does not wait for the held row");
        assert!(matches!(other, CommitOutcome::Committed(_)), "{other:?}");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!stuck.is_finished(), "the held account's commit waits");
    tx.commit().await.unwrap();
    assert!(matches!(stuck.await.unwrap(), CommitOutcome::Committed(_)));
    assert_eq!(store.usage(&a, "2026-11").await.unwrap().upload_count, 1);
    assert_eq!(store.usage(&b, "2026-11").await.unwrap().upload_count, 3);
}

/// A row of one account held long, in a statement shared with another
/// account's upload: the statement gives up on the lock (100 ms) and names
/// the account. Only that account commits on its own for a while; the
/// other's upload goes in the bus's next statement, at once, and its
/// account stays on the bus. Whether the held account's uploads come first
/// in the statement or after the other's (written, then undone).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_row_in_a_shared_statement_sets_only_its_own_account_apart() {
    for held_first in [true, false] {
        let Some((_dir, stores)) = nodes(1).await else {
            return skipped();
        };
        held_row_in_a_shared_statement(stores[0].clone(), held_first).await;
    }
}

async fn held_row_in_a_shared_statement(store: Arc<PgStore>, held_first: bool) {
    let (one_of, another, c) = (
        account(&*store).await,
        account(&*store).await,
        account(&*store).await,
    );
    let (lo, hi) = if one_of < another {
        (one_of, another)
    } else {
        (another, one_of)
    };
    let (a, b) = if held_first { (lo, hi) } else { (hi, lo) };
    let mut holder = store.pool().get().await.unwrap();
    let tx = holder.transaction().await.unwrap();
    tx.execute("SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", &[&a])
        .await
        .unwrap();
    // Every other connection held: the first statement waits for one, and
    // the two uploads after it go together in the next.
    let mut held = Vec::new();
    for _ in 1..store.pool().status().max_size {
        held.push(store.pool().get().await.unwrap());
    }
    let one = |acc: &String, i: usize| {
        tokio::spawn(commit_one(
            store.clone(),
            inline_file(acc, i, 10, None),
            Quota::UNLIMITED,
        ))
    };
    let first = one(&c, 0);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stuck = one(&a, 1);
    let other = one(&b, 2);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!other.is_finished(), "the statements wait for a connection");
    drop(held);
    assert!(matches!(first.await.unwrap(), CommitOutcome::Committed(_)));
    // While that statement waits on the lock, one more upload of each
    // account queues for the next: the held account's, set apart by then,
    // does not go in it, so the other's waits no second time.
    waiting_on_a_lock(&store).await;
    let (stuck_too, other_too) = (one(&a, 3), one(&b, 4));
    for other in [other, other_too] {
        let other = tokio::time::timeout(Duration::from_secs(3), other)
            .await
            .expect("the other account's upload does not wait for the held row")
            .unwrap();
        assert!(matches!(other, CommitOutcome::Committed(_)), "{other:?}");
    }
    assert_eq!(store.bus_lock_give_ups(), (1, 2), "one statement gave up");
    assert_eq!(store.solo_accounts(), vec![a.clone()]);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!stuck.is_finished(), "the held account's upload waits");
    assert!(!stuck_too.is_finished(), "the held account's upload waits");
    tx.commit().await.unwrap();
    for stuck in [stuck, stuck_too] {
        assert!(matches!(stuck.await.unwrap(), CommitOutcome::Committed(_)));
    }
    assert_eq!(store.usage(&a, "2026-11").await.unwrap().upload_count, 2);
    assert_eq!(store.usage(&b, "2026-11").await.unwrap().upload_count, 2);
    let stored = store.account(&b).await.unwrap().unwrap().storage_bytes;
    assert_eq!(stored, 20, "the other account's uploads counted once each");
    assert_eq!(store.solo_accounts(), vec![a]);
}

/// Until a session of the store's database waits on a row's lock.
async fn waiting_on_a_lock(store: &PgStore) {
    let c = store.pool().get().await.unwrap();
    for _ in 0..2_000 {
        let n: i64 = c
            .query_one(
                "SELECT COUNT(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if n > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("no session waits on a lock");
}

/// Counts of several keys that arrive while the node's count is in flight
/// (held here on its key's row) go in one statement: each key gets its own
/// place, and an upload's count the commitments of its own account.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_of_several_keys_go_in_one_statement_each_in_its_place() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let dyn_store: filestore::testing::db::DynMetaStore = store.clone();
    let (a, d) = (account(&*store).await, account(&*store).await);
    let done = commit(dyn_store, inline_file(&d, 0, 70, None), Quota::UNLIMITED).await;
    assert!(matches!(done, CommitOutcome::Committed(_)), "{done:?}");
    let now = 1_700_000_000_000i64;
    for key in ["key_a", "key_b", "key_c"] {
        store.rate_window(key, 60_000, now, true).await.unwrap();
    }
    store.rate_window("key_b", 60_000, now, true).await.unwrap();
    let mut holder = store.pool().get().await.unwrap();
    let tx = holder.transaction().await.unwrap();
    tx.execute(
        "SELECT 1 FROM rate_windows WHERE key_id = $1 FOR UPDATE",
        &[&"key_c"],
    )
    .await
    .unwrap();
    let stuck = {
        let store = store.clone();
        tokio::spawn(async move { store.rate_window("key_c", 60_000, now + 1, true).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let upload = |key: &'static str, acc: String| {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .count_upload(key, 60_000, now + 2, &acc, "2026-11")
                .await
                .unwrap()
        })
    };
    let (on_a, on_d) = (upload("key_a", a.clone()), upload("key_d", d.clone()));
    let plain = {
        let store = store.clone();
        tokio::spawn(async move { store.rate_window("key_b", 60_000, now + 2, true).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!on_a.is_finished(), "the keys wait for the count in flight");
    tx.commit().await.unwrap();
    assert_eq!(stuck.await.unwrap().unwrap().used, 2);
    let (wa, held_a) = on_a.await.unwrap();
    let (wd, held_d) = on_d.await.unwrap();
    let wb = plain.await.unwrap().unwrap();
    assert_eq!((wa.used, wb.used, wd.used), (2, 3, 1));
    assert_eq!((wa.start, wd.start), (now, now + 2));
    let (held_a, held_d) = (held_a.unwrap(), held_d.unwrap());
    assert_eq!((held_a.upload_count, held_a.stored_bytes), (0, Some(0)));
    assert_eq!((held_d.upload_count, held_d.stored_bytes), (1, Some(70)));
    assert_eq!(store.shared_counts(), 1);
}

/// A key whose count lands while another key's waits on the bus hands its
/// next count (requests that came meanwhile) to the bus before the next
/// statement is made: both go in it, rather than one statement each, in
/// turns. (It relies on tokio running the key's group task, woken by the
/// landing into the worker's LIFO slot, before the bus's task that
/// yielded: `yield_now` defers it to the end of the tick.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_whose_count_lands_joins_the_count_waiting_on_the_bus() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let now = 1_700_000_000_000i64;
    store.rate_window("key_a", 60_000, now, true).await.unwrap();
    let mut holder = store.pool().get().await.unwrap();
    let tx = holder.transaction().await.unwrap();
    tx.execute(
        "SELECT 1 FROM rate_windows WHERE key_id = $1 FOR UPDATE",
        &[&"key_a"],
    )
    .await
    .unwrap();
    let count = |key: &'static str, at: i64| {
        let store = store.clone();
        tokio::spawn(async move { store.rate_window(key, 60_000, at, true).await })
    };
    // key_a's count is in flight (held on its row); key_b's waits on the
    // bus behind it; key_a's next request waits in its key's group.
    let a1 = count("key_a", now + 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let b1 = count("key_b", now + 2);
    let a2 = count("key_a", now + 3);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!a1.is_finished() && !b1.is_finished() && !a2.is_finished());
    tx.commit().await.unwrap();
    let (a1, b1, a2) = (
        a1.await.unwrap().unwrap(),
        b1.await.unwrap().unwrap(),
        a2.await.unwrap().unwrap(),
    );
    assert_eq!((a1.used, a2.used, b1.used), (2, 3, 1));
    assert_eq!(
        store.shared_counts(),
        1,
        "key_b's count and key_a's next went in one statement"
    );
}
