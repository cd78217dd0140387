//! Nodes at once: commits never pass the quotas together, reaping takes each
//! file and blob once, one name is one account, rate windows and upload
//! leases are shared.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_commits_on_two_nodes_never_pass_the_quotas_together() {
    let Some((_dir, stores)) = nodes(2).await else {
        return skipped();
    };
    let acc = account(&*stores[0]).await;
    // Storage: 30 uploads of 100 bytes at once against 1000 bytes.
    let limits = Quota {
        storage: 1000,
        uploads_per_period: 1000,
        ..Quota::UNLIMITED
    };
    let tasks: Vec<_> = (0..30)
        .map(|i| {
            let store = stores[i % 2].clone();
            tokio::spawn(commit(store, inline_file(&acc, i, 100, None), limits))
        })
        .collect();
    let mut committed = 0;
    for t in tasks {
        match t.await.unwrap() {
            CommitOutcome::Committed(_) => committed += 1,
            CommitOutcome::Refused(Refusal::Storage { .. }) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(committed, 10);
    assert_eq!(
        stores[1]
            .account(&acc)
            .await
            .unwrap()
            .unwrap()
            .storage_bytes,
        1000
    );
    // Monthly uploads: 12 more at once against 15 a month (10 used).
    let limits = Quota {
        uploads_per_period: 15,
        ..Quota::UNLIMITED
    };
    let tasks: Vec<_> = (0..12)
        .map(|i| {
            let store = stores[i % 2].clone();
            tokio::spawn(commit(store, inline_file(&acc, 100 + i, 1, None), limits))
        })
        .collect();
    let mut committed = 0;
    for t in tasks {
        if let CommitOutcome::Committed(_) = t.await.unwrap() {
            committed += 1;
        }
    }
    assert_eq!(committed, 5);
    assert_eq!(
        stores[0].usage(&acc, "2026-11").await.unwrap().upload_count,
        15
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_reaping_at_once_take_each_file_and_blob_once() {
    let Some((_dir, stores)) = nodes(2).await else {
        return skipped();
    };
    let acc = account(&*stores[0]).await;
    let limits = Quota::UNLIMITED;
    for i in 0..60 {
        commit(
            stores[0].clone(),
            inline_file(&acc, i, 10, Some(5000)),
            limits,
        )
        .await;
    }
    for i in 0..80 {
        stores[0]
            .schedule_blob_deletion(&format!("gone/{i}"), 10)
            .await
            .unwrap();
    }
    let reap = |s: Arc<PgStore>| {
        tokio::spawn(async move {
            let mut files = Vec::new();
            let mut blobs = Vec::new();
            for _ in 0..10 {
                files.extend(s.reap_expired_files(6000, 7).await.unwrap());
                blobs.extend(s.due_blobs(6000, 9).await.unwrap());
            }
            (files, blobs)
        })
    };
    let (a, b) = (reap(stores[0].clone()), reap(stores[1].clone()));
    let (a, b) = (a.await.unwrap(), b.await.unwrap());
    let files: Vec<String> = a.0.iter().chain(&b.0).map(|f| f.id.clone()).collect();
    let unique: BTreeSet<&String> = files.iter().collect();
    assert_eq!(
        (files.len(), unique.len()),
        (60, 60),
        "each file reaped once"
    );
    assert_eq!(
        stores[1]
            .account(&acc)
            .await
            .unwrap()
            .unwrap()
            .storage_bytes,
        0
    );
    let blobs: Vec<String> = a.1.iter().chain(&b.1).map(|(k, _)| k.clone()).collect();
    let unique: BTreeSet<&String> = blobs.iter().collect();
    assert_eq!(
        (blobs.len(), unique.len()),
        (80, 80),
        "each blob claimed once"
    );
    // A claim is a lease: not handed out again before it ends, then again
    // (the node that took it may have died) until the deletion is recorded.
    assert!(stores[0]
        .due_blobs(6000 + 1000, 100)
        .await
        .unwrap()
        .is_empty());
    let again = stores[1]
        .due_blobs(6000 + 10 * 60 * 1000, 100)
        .await
        .unwrap();
    assert_eq!(again.len(), 80);
    for (k, _) in &again {
        assert!(stores[0].blob_deleted(k).await.unwrap());
    }
    assert!(stores[1]
        .due_blobs(i64::MAX / 2, 100)
        .await
        .unwrap()
        .is_empty());
}

/// Two nodes creating one account name at once: one creates it, the other
/// is told the name is taken (never an error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_name_created_on_two_nodes_at_once_is_one_account() {
    let Some((_dir, stores)) = nodes(2).await else {
        return skipped();
    };
    for round in 0..10 {
        let tasks: Vec<_> = stores
            .iter()
            .map(|s| {
                let s = s.clone();
                tokio::spawn(async move {
                    s.create_account(Account {
                        id: filestore::testing::domain::ids::account_id(),
                        name: format!("same-{round}"),
                        plan: "free".into(),
                        grace_period: false,
                        storage_bytes: 0,
                        created_at: 1,
                    })
                    .await
                    .unwrap()
                })
            })
            .collect();
        let mut created = 0;
        for t in tasks {
            created += usize::from(t.await.unwrap());
        }
        assert_eq!(created, 1, "round {round}");
    }
    assert_eq!(stores[0].count_accounts().await.unwrap(), 10);
}

/// The rate windows are one per key across nodes, and move exactly as the
/// in-memory rule (`domain::ratelimit`) that one SQLite node keeps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_windows_are_shared_by_the_nodes_and_follow_the_rule() {
    use filestore::testing::domain::ratelimit::RateLimiter;
    let Some((_dir, stores)) = nodes(2).await else {
        return skipped();
    };
    let model = RateLimiter::default();
    let mut now = 1_700_000_000_000i64;
    for i in 0..300u64 {
        now += i64::try_from((i * 7919) % 700).unwrap();
        let count = i % 5 != 4;
        let got = stores[usize::try_from(i % 2).unwrap()]
            .rate_window("key_a", 2_000, now, count)
            .await
            .unwrap();
        let want = model.window("key_a", 2_000, now, count);
        assert_eq!(got, want, "request {i} at {now}");
    }
    // Requests at once on both nodes: the budget is given once.
    let tasks: Vec<_> = (0..60)
        .map(|i| {
            let s = stores[i % 2].clone();
            tokio::spawn(async move {
                let w = s.rate_window("key_b", 60_000, now, true).await.unwrap();
                w.decision(25, true).allowed
            })
        })
        .collect();
    let mut allowed = 0;
    for t in tasks {
        allowed += usize::from(t.await.unwrap());
    }
    assert_eq!(allowed, 25);
    // Ended windows are forgotten; live ones kept.
    assert_eq!(stores[1].prune_rate_windows(now + 3_000).await.unwrap(), 1);
    let kept = stores[0]
        .rate_window("key_b", 60_000, now + 3_000, false)
        .await
        .unwrap();
    assert_eq!(kept.used, 60);
}

/// An upload's lease belongs to one request across nodes until it ends,
/// lapses, or its node is gone; its holder renews it; releasing a lease one
/// does not hold does nothing; expiry leaves a leased upload alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_lease_is_one_requests_across_nodes() {
    let Some((_dir, mut stores)) = nodes(3).await else {
        return skipped();
    };
    let gone = stores.pop().unwrap();
    let (a, b) = (&stores[0], &stores[1]);
    let acc = account(&**a).await;
    let row = filestore::testing::db::UploadRow {
        id: "up_lease".into(),
        account_id: acc.clone(),
        file_id: "f_lease".into(),
        blob_key: format!("{acc}/f_lease"),
        length: 10,
        received: 0,
        name: "x".into(),
        content_type: None,
        folder: None,
        private: false,
        expires_ms: None,
        hash_state: String::new(),
        store_state: String::new(),
        created_at: 1,
        expires_at: 5_000,
        completed_at: None,
        idempotency_key: None,
        created_by: None,
        // A renewal (the same token again) keeps the upload alive this long
        // past it: short here, so that the expiry at 5_000 stands.
        idle_ms: 1_000,
        metadata: std::collections::BTreeMap::new(),
    };
    let limits = Quota::UNLIMITED;
    a.create_upload(row, limits, "2026-11").await.unwrap();
    assert!(a
        .lease_upload("up_lease", "t1", 1_000, 2_000)
        .await
        .unwrap());
    assert!(!b
        .lease_upload("up_lease", "t2", 1_500, 2_500)
        .await
        .unwrap());
    assert!(a
        .lease_upload("up_lease", "t1", 1_900, 2_900)
        .await
        .unwrap());
    assert!(!b
        .lease_upload("up_lease", "t2", 2_500, 3_500)
        .await
        .unwrap());
    b.release_upload("up_lease", "t2").await.unwrap();
    assert!(!b
        .lease_upload("up_lease", "t2", 2_600, 3_600)
        .await
        .unwrap());
    // Expired but leased: not reaped until the lease ends or lapses.
    assert!(b.reap_expired_uploads(2_800, 10).await.unwrap().is_empty());
    // Lapsed: another request takes it.
    assert!(b
        .lease_upload("up_lease", "t2", 2_900, 3_900)
        .await
        .unwrap());
    b.release_upload("up_lease", "t2").await.unwrap();
    assert!(a
        .lease_upload("up_lease", "t3", 3_000, 4_000)
        .await
        .unwrap());
    a.release_upload("up_lease", "t3").await.unwrap();
    // The lease of a live node stands; once that node is gone (its session
    // advisory lock released, as when it dies) it is free at once, long
    // before it would lapse (the clock stays before 4_100). Its session
    // ends when the server sees the connection close.
    assert!(gone
        .lease_upload("up_lease", "t5", 3_100, 4_100)
        .await
        .unwrap());
    assert!(!a
        .lease_upload("up_lease", "t6", 3_200, 5_100)
        .await
        .unwrap());
    drop(gone);
    let mut taken = false;
    for _ in 0..50 {
        taken = a
            .lease_upload("up_lease", "t6", 3_200, 5_100)
            .await
            .unwrap();
        if taken {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(taken, "the gone node's lease is free before it lapses");
    a.release_upload("up_lease", "t6").await.unwrap();
    assert_eq!(a.reap_expired_uploads(6_000, 10).await.unwrap().len(), 1);
    assert!(!a
        .lease_upload("up_lease", "t4", 6_000, 7_000)
        .await
        .unwrap());
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
    let mut holder = store.pool().get().await.unwrap();
    let lock = holder.transaction().await.unwrap();
    lock.execute("SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", &[&acc])
        .await
        .unwrap();
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
    let mut tasks = Vec::new();
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
        tasks.push(tokio::spawn(async move {
            store.commit_upload(f, data, limits, ctx).await
        }));
        tokio::time::sleep(std::time::Duration::from_millis(if i == 0 {
            300
        } else {
            30
        }))
        .await;
    }
    lock.commit().await.unwrap();
    let mut got = Vec::new();
    for t in tasks {
        got.push(match t.await.unwrap() {
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
    let mut holder = store.pool().get().await.unwrap();
    let lock = holder.transaction().await.unwrap();
    lock.execute(
        "SELECT 1 FROM rate_windows WHERE key_id = 'key_q' FOR UPDATE",
        &[],
    )
    .await
    .unwrap();
    let mut tasks = Vec::new();
    for i in 0..6i64 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store
                .rate_window("key_q", 60_000, now + i, true)
                .await
                .unwrap()
        }));
        tokio::time::sleep(std::time::Duration::from_millis(if i == 0 {
            300
        } else {
            30
        }))
        .await;
    }
    lock.commit().await.unwrap();
    let mut places = Vec::new();
    for t in tasks {
        let w = t.await.unwrap();
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

/// In a batch, each upload counts what incomplete resumable uploads hold at
/// its own time, as it would alone: a reservation that expired before an
/// upload was made holds nothing against it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_counts_reservations_at_each_uploads_own_time() {
    use filestore::testing::db::{CreateOutcome, UploadRow};
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let store = stores[0].clone();
    let acc = account(&*store).await;
    // 500 bytes held until 1 003 (the uploads below are made at 1 000 + i).
    let held = UploadRow {
        id: "tus_held".into(),
        account_id: acc.clone(),
        file_id: "f_held".into(),
        blob_key: format!("{acc}/f_held"),
        length: 500,
        received: 0,
        name: "x".into(),
        content_type: None,
        folder: None,
        private: false,
        expires_ms: None,
        hash_state: String::new(),
        store_state: String::new(),
        created_at: 900,
        expires_at: 1_003,
        completed_at: None,
        idempotency_key: None,
        created_by: None,
        idle_ms: 600_000,
        metadata: std::collections::BTreeMap::new(),
    };
    let created = store
        .create_upload(held, Quota::UNLIMITED, "2026-11")
        .await
        .unwrap();
    assert!(matches!(created, CreateOutcome::Created), "{created:?}");
    let limits = Quota {
        storage: 700,
        uploads_per_period: 1000,
        ..Quota::UNLIMITED
    };
    let mut holder = store.pool().get().await.unwrap();
    let lock = holder.transaction().await.unwrap();
    lock.execute("SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", &[&acc])
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for i in 0..5 {
        let s = store.clone();
        tasks.push(tokio::spawn(commit(
            s,
            inline_file(&acc, i, 100, None),
            limits,
        )));
        tokio::time::sleep(std::time::Duration::from_millis(if i == 0 {
            300
        } else {
            30
        }))
        .await;
    }
    lock.commit().await.unwrap();
    let mut got = Vec::new();
    for t in tasks {
        got.push(matches!(t.await.unwrap(), CommitOutcome::Committed(_)));
    }
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
    let mut holder = store.pool().get().await.unwrap();
    let lock = holder.transaction().await.unwrap();
    lock.execute("SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", &[&acc])
        .await
        .unwrap();
    let files: Vec<_> = (0..4).map(|i| inline_file(&acc, i, 10, None)).collect();
    let mut twin = inline_file(&acc, 9, 10, None);
    twin.id.clone_from(&files[2].id);
    let mut tasks = Vec::new();
    for (i, f) in files.into_iter().chain([twin]).enumerate() {
        let s = store.clone();
        tasks.push(tokio::spawn(async move {
            let data = bytes::Bytes::from(vec![b'x'; 10]);
            let ctx = CommitContext {
                period: "2026-11".into(),
                ..Default::default()
            };
            s.commit_upload(f, Some(data), Quota::UNLIMITED, ctx).await
        }));
        tokio::time::sleep(std::time::Duration::from_millis(if i == 0 {
            300
        } else {
            30
        }))
        .await;
    }
    lock.commit().await.unwrap();
    let mut got = Vec::new();
    for t in tasks {
        got.push(matches!(t.await.unwrap(), Ok(CommitOutcome::Committed(_))));
    }
    assert_eq!(got, [true, true, true, true, false]);
    assert_eq!(
        store.upload_batches(),
        (0, 0),
        "no batch committed together"
    );
    let usage = store.usage(&acc, "2026-11").await.unwrap();
    assert_eq!((usage.upload_count, usage.storage_bytes), (4, 40));
}
