//! Group commit on PostgreSQL (`db/postgres/batch.rs`, `group.rs`): a
//! key's requests that arrive while its statement is in flight go together
//! as the next one, each with the outcome it would have had alone. A batch
//! is made to form by holding, from another session, the row the first
//! request's statement waits on.

use super::*;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// A request to run behind the lock.
type Job<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The lock an account's commit waits on.
const ACCOUNT_ROW: &str = "SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE";

/// Runs `jobs` while another session holds the row `lock` locks (its `$1`
/// is `key`): the first job waits on that lock, and the others queue behind
/// it, in order (300 ms, then 30 ms apart); then the lock goes. Their
/// outcomes, in order.
async fn behind_a_lock<T: Send + 'static>(
    store: &PgStore,
    lock: &str,
    key: &str,
    jobs: Vec<Job<T>>,
) -> Vec<T> {
    let mut holder = store.pool().get().await.unwrap();
    let tx = holder.transaction().await.unwrap();
    tx.execute(lock, &[&key]).await.unwrap();
    let mut tasks = Vec::new();
    for (i, job) in jobs.into_iter().enumerate() {
        tasks.push(tokio::spawn(job));
        tokio::time::sleep(Duration::from_millis(if i == 0 { 300 } else { 30 })).await;
    }
    tx.commit().await.unwrap();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

/// An account's uploads that arrive while its commit is in flight (held
/// here on the account row's lock, which another session takes first) go
/// together as one statement when it ends, each with its own outcome, in
/// the order they came: the quota, an upload guard and an upload token
/// refuse exactly what they would one by one, a refusal leaves nothing, an
/// upload after a refused one still commits, and each committed upload
/// queues its events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_queued_behind_a_commit_go_in_one_batch_with_their_own_outcomes() {
    use crate::common::meta::webhook;
    use filestore::testing::db::{DynMetaStore, TokenRepo, TokenRow, UploadPolicy};
    use filestore::testing::domain::ids;
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let dyn_store: DynMetaStore = store.clone();
    let acc = account(&*store).await;
    webhook(&dyn_store, &acc, &["file.created"]).await;
    webhook(&dyn_store, &acc, &["file.deleted"]).await;
    let token = TokenRow {
        id: ids::upload_token_id(),
        account_id: acc.clone(),
        created_by: "key_x".into(),
        policy: UploadPolicy::default(),
        max_uploads: 1,
        uploads_used: 0,
        uploads_open: 0,
        created_at: 10,
        expires_at: i64::MAX,
        revoked_at: None,
    };
    let hash = ids::key_hash(&ids::upload_token_secret());
    store.create_token(token.clone(), hash).await.unwrap();
    let limits = Quota {
        storage: 550,
        uploads_per_period: 1000,
        ..Quota::UNLIMITED
    };
    // (size, how): the first goes alone and waits on the lock; the rest
    // queue behind it, in this order. "blob": in the blob store, guarded;
    // "unguarded": its guard is gone; "token": with the upload token.
    let uploads: [(u64, &str); 12] = [
        (100, "inline"),
        (100, "inline"),
        (100, "inline"),
        (300, "inline"), // 700 > 550
        (100, "inline"),
        (100, "blob"),
        (100, "inline"), // 600 > 550
        (50, "inline"),
        (0, "unguarded"),
        (0, "token"),
        (0, "token"),  // the token's one use is taken
        (1, "inline"), // 551 > 550
    ];
    let mut jobs: Vec<Job<_>> = Vec::new();
    let mut guarded = String::new();
    for (i, (size, how)) in uploads.into_iter().enumerate() {
        let mut f = inline_file(&acc, i, size, None);
        let mut data = Some(bytes::Bytes::from(vec![
            b'x';
            usize::try_from(size).unwrap()
        ]));
        if how == "blob" || how == "unguarded" {
            f.inline = false;
            data = None;
        }
        if how == "blob" {
            store.guard_upload(&f.blob_key, 1_000).await.unwrap();
            guarded.clone_from(&f.blob_key);
        }
        let ctx = CommitContext {
            period: "2026-11".into(),
            token: (how == "token").then(|| token.id.clone()),
            ..Default::default()
        };
        let store = store.clone();
        jobs.push(Box::pin(async move {
            store.commit_upload(f, data, limits, ctx).await
        }));
    }
    let mut got = Vec::new();
    for outcome in behind_a_lock(&store, ACCOUNT_ROW, &acc, jobs).await {
        got.push(match outcome {
            Ok(CommitOutcome::Committed(_)) => "committed".to_string(),
            Ok(CommitOutcome::Refused(Refusal::Storage { .. })) => "storage".to_string(),
            Ok(CommitOutcome::TokenSpent) => "spent".to_string(),
            Ok(other) => panic!("{other:?}"),
            Err(e) => format!("error: {e}"),
        });
    }
    assert_eq!(
        got[..8],
        [
            "committed",
            "committed",
            "committed",
            "storage",
            "committed",
            "committed",
            "storage",
            "committed"
        ]
    );
    assert!(got[8].contains("upload guard"), "{}", got[8]);
    assert_eq!(got[9..], ["committed", "spent", "storage"]);
    assert_eq!(store.upload_batches(), (1, 11));
    assert_eq!(
        store.account(&acc).await.unwrap().unwrap().storage_bytes,
        550
    );
    assert_eq!(store.usage(&acc, "2026-11").await.unwrap().upload_count, 7);
    let used = store.token(&acc, &token.id).await.unwrap().unwrap();
    assert_eq!(used.uploads_used, 1);
    let holder = store.pool().get().await.unwrap();
    let count = |sql: &'static str| {
        let (holder, acc) = (&holder, acc.clone());
        async move {
            holder
                .query_one(sql, &[&acc])
                .await
                .unwrap()
                .get::<_, i64>(0)
        }
    };
    assert_eq!(
        count("SELECT COUNT(*) FROM files WHERE account_id = $1").await,
        7
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM inline_blobs WHERE blob_key LIKE $1 || '/%'").await,
        6
    );
    // One event per committed file, for the one subscription to it.
    assert_eq!(
        count(
            "SELECT COUNT(*) FROM webhook_events e JOIN files f ON f.id = e.file_id
             WHERE f.account_id = $1 AND e.type = 'file.created'"
        )
        .await,
        7
    );
    let guard: i64 = holder
        .query_one(
            "SELECT COUNT(*) FROM blob_deletions WHERE blob_key = $1",
            &[&guarded],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(guard, 0, "the committed blob's guard is gone");
}

/// A key's requests that arrive while its count is in flight (held here on
/// its row's lock, which another session takes first) are counted
/// together when it ends, each in its own place, in the order they came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_queued_behind_a_rate_count_each_get_their_own_place() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let now = 1_700_000_000_000i64;
    let first = store.rate_window("key_q", 60_000, now, true).await.unwrap();
    assert_eq!(first.used, 1);
    let mut jobs: Vec<Job<_>> = Vec::new();
    for i in 0..6i64 {
        let store = store.clone();
        jobs.push(Box::pin(async move {
            store
                .rate_window("key_q", 60_000, now + i, true)
                .await
                .unwrap()
        }));
    }
    let lock = "SELECT 1 FROM rate_windows WHERE key_id = $1 FOR UPDATE";
    let mut places = Vec::new();
    for w in behind_a_lock(&store, lock, "key_q", jobs).await {
        assert_eq!((w.start, w.end), (first.start, first.end));
        places.push(w.used);
    }
    assert_eq!(places, [2, 3, 4, 5, 6, 7]);
    let seen = store
        .rate_window("key_q", 60_000, now + 10, false)
        .await
        .unwrap();
    assert_eq!(seen.used, 7);
}

/// An upload's count reads its account's commitments in the same
/// statement (`count_upload`): queued behind a count in flight with other
/// requests of its key, each still gets its own place, and each upload the
/// commitments as they stand (what a separate read gives).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uploads_count_reads_its_commitments_and_keeps_its_place() {
    use crate::common::meta::{commit, inline_file};
    use filestore::testing::db::{AccountRepo, CommitOutcome, DynMetaStore};
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let dyn_store: DynMetaStore = store.clone();
    let acc = account(&*store).await;
    for (i, size) in [100u64, 250].into_iter().enumerate() {
        let f = inline_file(&acc, i, size, None);
        let done = commit(dyn_store.clone(), f, Quota::UNLIMITED).await;
        assert!(matches!(done, CommitOutcome::Committed(_)), "{done:?}");
    }
    let now = 1_700_000_000_000i64;
    let (first, held) = store
        .count_upload("key_u", 60_000, now, &acc, "2026-11")
        .await
        .unwrap();
    assert_eq!(first.used, 1);
    let alone = store.commitments(&acc, "2026-11", now).await.unwrap();
    assert_eq!(held, Some(alone));
    assert_eq!((alone.upload_count, alone.stored_bytes), (2, Some(350)));
    // Behind a held count: uploads (even), other requests of the key (3,
    // 5), and an upload of another period (1), which the statement that
    // reads the last upload's period leaves to read its own.
    let mut jobs: Vec<Job<_>> = Vec::new();
    for i in 0..6i64 {
        let (store, acc) = (store.clone(), acc.clone());
        let period = if i == 1 { "2026-10" } else { "2026-11" };
        jobs.push(Box::pin(async move {
            if i % 2 == 0 || i == 1 {
                store
                    .count_upload("key_u", 60_000, now + i, &acc, period)
                    .await
                    .unwrap()
            } else {
                let w = store.rate_window("key_u", 60_000, now + i, true).await;
                (w.unwrap(), None)
            }
        }));
    }
    let lock = "SELECT 1 FROM rate_windows WHERE key_id = $1 FOR UPDATE";
    let mut places = Vec::new();
    let counted = behind_a_lock(&store, lock, "key_u", jobs).await;
    for (i, (w, held)) in counted.into_iter().enumerate() {
        assert_eq!((w.start, w.end), (first.start, first.end));
        assert_eq!(held, (i % 2 == 0).then_some(alone), "request {i}");
        places.push(w.used);
    }
    assert_eq!(places, [2, 3, 4, 5, 6, 7]);
    // Another period's count is its own; the account's holdings the same.
    let (_, other) = store
        .count_upload("key_u", 60_000, now + 20, &acc, "2026-12")
        .await
        .unwrap();
    let other = other.unwrap();
    assert_eq!((other.upload_count, other.stored_bytes), (0, Some(350)));
}

/// In a batch, each upload counts what incomplete resumable uploads hold at
/// its own time, as it would alone: a reservation that expired before an
/// upload was made holds nothing against it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_counts_reservations_at_each_uploads_own_time() {
    use crate::common::meta::upload;
    use filestore::testing::db::CreateOutcome;
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let acc = account(&*store).await;
    // 500 bytes held until 1 003 (the uploads below are made at 1 000 + i).
    let mut held = upload(&acc, "held", "key_x", 1_003);
    held.length = 500;
    let created = store
        .create_upload(held, Quota::UNLIMITED, None, "2026-11")
        .await
        .unwrap();
    assert!(matches!(created, CreateOutcome::Created), "{created:?}");
    let limits = Quota {
        storage: 700,
        uploads_per_period: 1000,
        ..Quota::UNLIMITED
    };
    let jobs: Vec<Job<_>> = (0..5)
        .map(|i| -> Job<_> {
            Box::pin(commit(
                store.clone(),
                inline_file(&acc, i, 100, None),
                limits,
            ))
        })
        .collect();
    let got: Vec<bool> = behind_a_lock(&store, ACCOUNT_ROW, &acc, jobs)
        .await
        .into_iter()
        .map(|o| matches!(o, CommitOutcome::Committed(_)))
        .collect();
    // 100 + 500 held + 100 fits 700; at 1 002 the third would pass it; from
    // 1 003 on the 500 are held no more.
    assert_eq!(got, [true, true, false, true, true]);
    assert_eq!(store.upload_batches(), (1, 4));
    assert_eq!(
        store.account(&acc).await.unwrap().unwrap().storage_bytes,
        400
    );
}

/// A batch the database refuses as a whole (here two uploads naming one
/// file id) is committed one by one instead: each upload gets its own
/// outcome, and the good ones are stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_refused_as_a_whole_commits_one_by_one() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let acc = account(&*store).await;
    let files: Vec<_> = (0..4).map(|i| inline_file(&acc, i, 10, None)).collect();
    let mut twin = inline_file(&acc, 9, 10, None);
    twin.id.clone_from(&files[2].id);
    let mut jobs: Vec<Job<_>> = Vec::new();
    for f in files.into_iter().chain([twin]) {
        let s = store.clone();
        jobs.push(Box::pin(async move {
            let data = bytes::Bytes::from(vec![b'x'; 10]);
            let ctx = CommitContext {
                period: "2026-11".into(),
                ..Default::default()
            };
            s.commit_upload(f, Some(data), Quota::UNLIMITED, ctx).await
        }));
    }
    let got: Vec<bool> = behind_a_lock(&store, ACCOUNT_ROW, &acc, jobs)
        .await
        .into_iter()
        .map(|o| matches!(o, Ok(CommitOutcome::Committed(_))))
        .collect();
    assert_eq!(got, [true, true, true, true, false]);
    assert_eq!(
        store.upload_batches(),
        (0, 0),
        "no batch committed together"
    );
    let usage = store.usage(&acc, "2026-11").await.unwrap();
    assert_eq!((usage.upload_count, usage.storage_bytes), (4, 40));
}

/// An account's next commit waits for the early reads of its uploads in
/// flight on its node (`flights`), but only for a moment (5 ms): with a
/// rate count of the account stuck behind its row's lock, an upload of the
/// account commits after that moment, and the count is still stuck when it
/// has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_waits_for_an_early_read_in_flight_only_a_moment() {
    use crate::common::meta::{commit, inline_file};
    use filestore::testing::db::DynMetaStore;
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let dyn_store: DynMetaStore = store.clone();
    let acc = account(&*store).await;
    let now = 1_700_000_000_000i64;
    store
        .count_upload("key_s", 60_000, now, &acc, "2026-11")
        .await
        .unwrap();
    let mut holder = store.pool().get().await.unwrap();
    let tx = holder.transaction().await.unwrap();
    tx.execute(
        "SELECT 1 FROM rate_windows WHERE key_id = $1 FOR UPDATE",
        &[&"key_s"],
    )
    .await
    .unwrap();
    let stuck = {
        let (store, acc) = (store.clone(), acc.clone());
        tokio::spawn(async move {
            store
                .count_upload("key_s", 60_000, now + 1, &acc, "2026-11")
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!stuck.is_finished(), "the count waits on the row");
    let started = std::time::Instant::now();
    let done = tokio::time::timeout(
        Duration::from_secs(3),
        commit(dyn_store, inline_file(&acc, 1, 10, None), Quota::UNLIMITED),
    )
    .await
    .expect("the commit waited for the stuck count");
    assert!(matches!(done, CommitOutcome::Committed(_)), "{done:?}");
    // It waited for the count in flight (the bound is 5 ms).
    assert!(started.elapsed() >= Duration::from_millis(5));
    assert!(!stuck.is_finished(), "the count was still stuck");
    tx.commit().await.unwrap();
    let (w, held) = stuck.await.unwrap().unwrap();
    assert_eq!(w.used, 2);
    assert!(held.is_some());
}
