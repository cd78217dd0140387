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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_starting_at_once_migrate_once() {
    let Some((dir, stores)) = nodes(4).await else {
        return skipped();
    };
    let url = pg::database_for(dir.path()).await.unwrap();
    let migrations = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/db/postgres/migrations"
    ))
    .unwrap()
    .count() as i64;
    let versions = pg::count(&url, "SELECT COUNT(*) FROM schema_version");
    let last = pg::count(&url, "SELECT MAX(version)::BIGINT FROM schema_version");
    assert_eq!(
        (versions, last),
        (migrations, migrations),
        "each migration applied, recorded once"
    );
    // A node started later finds nothing to do.
    PgStore::connect(&url).await.unwrap();
    assert_eq!(
        pg::count(&url, "SELECT COUNT(*) FROM schema_version"),
        migrations
    );
    drop(stores);
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_node_gets_the_same_generated_secret() {
    let Some((_dir, stores)) = nodes(3).await else {
        return skipped();
    };
    let tasks: Vec<_> = stores
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let s = s.clone();
            tokio::spawn(async move { s.meta_get_or_insert("k", format!("v{i}")).await })
        })
        .collect();
    let mut seen = BTreeSet::new();
    for t in tasks {
        seen.insert(t.await.unwrap().unwrap());
    }
    assert_eq!(seen.len(), 1, "{seen:?}");
}

/// Two `serve` nodes on one database (small files inline, so the bytes are
/// in the database too): what one stores, signs or revokes, the other sees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_serve_nodes_share_files_keys_and_the_signing_secret() {
    if pg::admin_url().is_none() {
        return skipped();
    }
    let a = TestServer::start().await;
    let b = second_node(&a, TestOptions::default()).await;
    assert_eq!(a.account_id, b.account_id, "one bootstrap for both");
    let f = a
        .upload_ok("s.txt", b"shared".to_vec(), &[("private", "true")])
        .await;
    let id = f["id"].as_str().unwrap();
    // B reads it with A's key, and serves A's signed URL (one secret).
    let (status, body) = b.get_json(&a.secret_key, &format!("/v1/files/{id}")).await;
    assert_eq!(status, 200, "{body}");
    let r = a
        .sign_as(&a.secret_key, id, serde_json::json!({ "expires_in": 60 }))
        .await;
    assert_eq!(r.status(), 200);
    let url: serde_json::Value = r.json().await.unwrap();
    let url = url["url"]
        .as_str()
        .unwrap()
        .replace(&a.base_url, &b.base_url);
    let r = b.http.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(&r.bytes().await.unwrap()[..], b"shared");
    // Usage is one count; a deletion on B is seen on A.
    assert_eq!(b.usage().await["storage_bytes"], 6);
    let r = b
        .http
        .delete(b.url(&format!("/v1/files/{id}")))
        .bearer_auth(&b.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let (status, _) = a.get_json(&a.secret_key, &format!("/v1/files/{id}")).await;
    assert_eq!(status, 404);
    assert_eq!(a.usage().await["storage_bytes"], 0);
}

/// `filestore admin` on PostgreSQL: no data dir needed, and a running node
/// sees what it did at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_works_on_the_database_url_without_a_data_dir() {
    if pg::admin_url().is_none() {
        return skipped();
    }
    let srv = TestServer::start().await;
    let out = crate::common::process::filestore()
        .args(["admin", "account", "create", "--name", "acme", "--json"])
        .args(["--data-dir", "/nonexistent/filestore"])
        .env("FILESTORE_DATABASE_URL", srv.database_url())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let acc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = srv.app.meta.find_account("acme").await.unwrap().unwrap();
    assert_eq!(acc["id"].as_str(), Some(found.id.as_str()));
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

/// A node starting makes due the upload guards of nodes that stopped, never
/// those of a live node's uploads in flight; a commit whose guard was made
/// due is refused (its blob is being collected).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_expires_only_the_guards_of_nodes_that_are_gone() {
    let Some((dir, mut stores)) = nodes(2).await else {
        return skipped();
    };
    let url = pg::database_for(dir.path()).await.unwrap();
    let (live, gone) = (stores.remove(0), stores.remove(0));
    live.guard_upload("k/live", 0).await.unwrap();
    gone.guard_upload("k/gone", 0).await.unwrap();
    drop(gone);
    // Its session ends a moment after (the server notices the closed socket).
    let mut n = 0;
    for _ in 0..100 {
        let starting = PgStore::connect(&url).await.unwrap();
        n += starting.expire_upload_guards(10).await.unwrap();
        if n == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(n, 1, "only the gone node's guard");
    let due: Vec<String> = live
        .due_blobs(10, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(due, ["k/gone"]);
    let acc = account(&*live).await;
    let mut f = inline_file(&acc, 0, 5, None);
    f.inline = false;
    f.blob_key = "k/gone".into();
    let limits = Quota::UNLIMITED;
    let ctx = CommitContext {
        period: "2026-11".into(),
        ..Default::default()
    };
    let late = live
        .commit_upload(f.clone(), None, limits, ctx.clone())
        .await;
    assert!(late.is_err(), "{late:?}");
    f.blob_key = "k/live".into();
    let ok = live.commit_upload(f, None, limits, ctx).await.unwrap();
    assert!(matches!(ok, CommitOutcome::Committed(_)), "{ok:?}");
}

/// A file's blob that a node's DELETE was deleting when the node died is
/// due at once when a node starts (not a deletion lease later), and a live
/// node's is left to it; a survivor's collector leaves a node whose session
/// has just gone alone (it may be reconnecting).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_nodes_deletions_in_flight_are_due_when_a_node_starts() {
    let Some((dir, mut stores)) = nodes(2).await else {
        return skipped();
    };
    let url = pg::database_for(dir.path()).await.unwrap();
    let (live, gone) = (stores.remove(0), stores.remove(0));
    let acc = account(&*live).await;
    let limits = Quota::UNLIMITED;
    let mut f = inline_file(&acc, 0, 5, None);
    f.inline = false;
    gone.guard_upload(&f.blob_key, 0).await.unwrap();
    let ctx = CommitContext {
        period: "2026-11".into(),
        ..Default::default()
    };
    let done = gone.commit_upload(f.clone(), None, limits, ctx).await;
    assert!(matches!(done, Ok(CommitOutcome::Committed(_))), "{done:?}");
    // The DELETE commits; its node dies before it deletes the blob.
    assert!(gone.delete_file(&acc, &f.id, 10).await.unwrap().is_some());
    assert!(live.due_blobs(10, 100).await.unwrap().is_empty());
    assert_eq!(live.expire_dead_node_guards(10).await.unwrap(), 0);
    drop(gone);
    let mut n = 0;
    for _ in 0..100 {
        n += live.expire_dead_node_guards(10).await.unwrap();
        let starting = PgStore::connect(&url).await.unwrap();
        n += starting.expire_upload_guards(10).await.unwrap();
        if n > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(n, 1, "the dead node's deletion, made due by the start");
    let due: Vec<String> = live
        .due_blobs(10, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(due, [f.blob_key]);
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

/// A node whose own session is cut (a database restart, a network cut)
/// takes its lock again on a new session, so that other nodes starting
/// never take it for gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_session_is_cut_holds_its_lock_again() {
    let Some((dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let url = pg::database_for(dir.path()).await.unwrap();
    let holders = |url: &str| {
        pg::text(
            url,
            &format!(
                "SELECT COALESCE(string_agg(pid::TEXT || ':' || objid::TEXT, ','), '') FROM pg_locks
                 WHERE locktype = 'advisory' AND classid = {} AND objsubid = 2
                   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                0x6673_6e64
            ),
        )
    };
    let before = holders(&url);
    let (pid, node) = before.split_once(':').expect("the node holds its lock");
    pg::text(&url, &format!("SELECT pg_terminate_backend({pid})::TEXT"));
    let mut after = String::new();
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        after = holders(&url);
        if !after.is_empty() {
            break;
        }
    }
    let (new_pid, new_node) = after.split_once(':').expect("the lock is held again");
    assert_eq!(new_node, node, "the same node number");
    assert_ne!(new_pid, pid, "on a new session");
    drop(stores);
}

/// The database unreachable: requests that need it get 503 `unavailable`
/// (worth a retry), health says `degraded`, and once it is back the node
/// serves again by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_database_is_503_and_the_node_recovers() {
    let Some(admin) = pg::admin_url() else {
        return skipped();
    };
    let srv = TestServer::start().await;
    let name = pg::text(srv.database_url(), "SELECT current_database()::TEXT");
    let cut = |allow: bool| {
        pg::execute(
            &admin,
            &format!("ALTER DATABASE {name} WITH ALLOW_CONNECTIONS {allow}"),
        );
        if !allow {
            pg::text(
                &admin,
                &format!(
                    "SELECT COUNT(pg_terminate_backend(pid))::TEXT FROM pg_stat_activity
                     WHERE datname = '{name}'"
                ),
            );
        }
    };
    cut(false);
    let (status, body) = srv.get_json(&srv.secret_key, "/v1/files").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (503, Some("unavailable")),
        "{body}"
    );
    let r = srv.http.get(srv.url("/v1/health")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    cut(true);
    let mut status = 0;
    for _ in 0..50 {
        (status, _) = srv.get_json(&srv.secret_key, "/v1/files").await;
        if status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "served again once the database is back");
}
