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
    let mut row = crate::common::meta::upload(&acc, "up_lease", "key_x", 5_000);
    (row.created_at, row.created_by) = (1, None);
    // A renewal (the same token again) keeps the upload alive this long past
    // it: short here, so that the expiry at 5_000 stands.
    row.idle_ms = 1_000;
    let limits = Quota::UNLIMITED;
    a.create_upload(row, limits, None, "2026-11").await.unwrap();
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
