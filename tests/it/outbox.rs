//! The webhook outbox's rules at the metadata store, on whichever database
//! the suite runs (SQLite, or PostgreSQL with `FILESTORE_TEST_DATABASE_URL`):
//! events are written with their change, handed out a file's in order and
//! one claim at a time, and leave the outbox once done.

use crate::common::meta::{account, commit, inline_file, stores, webhook};
use crate::common::pg;
use filestore::testing::db::{CommitOutcome, DynMetaStore, FileRow, Quota};
use filestore::testing::domain::webhooks::Budget;

/// Commits file number `i` of `account` (made at 1000 + `i`).
async fn committed(
    store: &DynMetaStore,
    account: &str,
    i: usize,
    expires_at: Option<i64>,
) -> FileRow {
    let f = inline_file(account, i, 3, expires_at);
    let limits = Quota::UNLIMITED;
    let out = commit(store.clone(), f.clone(), limits).await;
    assert!(matches!(out, CommitOutcome::Committed(_)));
    f
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_come_with_their_change_in_order_per_file_and_leave_when_done() {
    let (_dir, s) = stores(1).await;
    let s = &s[0];
    let (acc, other) = (account(&**s).await, account(&**s).await);
    let all = webhook(s, &acc, &["file.created", "file.deleted", "file.expired"]).await;
    let created_only = webhook(s, &acc, &["file.created"]).await;
    webhook(s, &other, &["file.created"]).await;
    let f = committed(s, &acc, 0, None).await;
    let g = committed(s, &acc, 1, Some(1_500)).await;
    assert!(s.delete_file(&acc, &f.id, 1_002).await.unwrap().is_some());
    assert_eq!(s.reap_expired_files(2_000, 10).await.unwrap().len(), 1);
    // f: created ×2, deleted ×1; g: created ×2, expired ×1. Nothing for
    // the other account's subscription.
    assert_eq!(s.pending_events().await.unwrap(), 6);
    // Only the first event of each (subscription, file) is handed out.
    let first = s
        .claim_events(3_000, 63_000, &Budget::new(100, 100))
        .await
        .unwrap();
    let kinds: Vec<(&str, &str, &str)> = first
        .iter()
        .map(|e| (e.webhook_id.as_str(), e.file.id.as_str(), e.kind.as_str()))
        .collect();
    assert_eq!(first.len(), 4, "{kinds:?}");
    assert!(first
        .iter()
        .all(|e| e.kind == "file.created" && e.attempts == 1));
    assert!(first.iter().all(|e| e.url == "http://127.0.0.1:9/"));
    assert_eq!(first[0].file, f, "the file row as it was committed");
    assert_eq!(first[0].created_at, 1_000);
    assert!(first.windows(2).all(|w| w[0].seq < w[1].seq));
    // Claimed: not handed out again before the lease ends, nor what follows.
    assert!(s
        .claim_events(3_001, 63_001, &Budget::new(100, 100))
        .await
        .unwrap()
        .is_empty());
    // A failed attempt comes back when due, with the same id.
    let of_all_f = first
        .iter()
        .find(|e| e.webhook_id == all && e.file.id == f.id)
        .unwrap();
    s.event_failed(of_all_f.seq, 4_000, "answered 500")
        .await
        .unwrap();
    assert!(s
        .claim_events(3_999, 64_000, &Budget::new(100, 100))
        .await
        .unwrap()
        .is_empty());
    let again = s
        .claim_events(4_000, 64_000, &Budget::new(100, 100))
        .await
        .unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].id.as_str(), again[0].attempts),
        (of_all_f.id.as_str(), 2)
    );
    // Done: the file's next event is due.
    for e in first.iter().filter(|e| e.seq != of_all_f.seq) {
        s.event_done(e.seq).await.unwrap();
    }
    s.event_done(again[0].seq).await.unwrap();
    let next = s
        .claim_events(5_000, 65_000, &Budget::new(100, 100))
        .await
        .unwrap();
    let mut kinds: Vec<(String, String)> = next
        .iter()
        .map(|e| (e.file.id.clone(), e.kind.clone()))
        .collect();
    kinds.sort();
    let mut want = vec![
        (f.id.clone(), "file.deleted".to_string()),
        (g.id.clone(), "file.expired".to_string()),
    ];
    want.sort();
    assert_eq!(kinds, want);
    assert!(next.iter().all(|e| e.webhook_id == all));
    assert_ne!(created_only, all);
    // A lapsed lease hands the event out again (its node died mid-attempt).
    let lapsed = s
        .claim_events(65_000, 125_000, &Budget::new(100, 100))
        .await
        .unwrap();
    assert_eq!(lapsed.len(), 2);
    assert!(lapsed.iter().all(|e| e.attempts == 2));
    // Deleting the subscription drops its undelivered events.
    let deleted = s.delete_webhook(&all).await.unwrap().expect("it was there");
    assert_eq!(
        (deleted.id.as_str(), deleted.events.len()),
        (all.as_str(), 3)
    );
    assert!(s.delete_webhook(&all).await.unwrap().is_none());
    assert_eq!(s.pending_events().await.unwrap(), 0);
    let listed = s.list_webhooks(Some(&acc)).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].events, ["file.created"]);
    assert_eq!(s.list_webhooks(None).await.unwrap().len(), 2);
}

/// Several nodes claiming at once (on SQLite, several handles on one file):
/// each event is handed to one of them.
/// A folder delete's events wait in a batch: the sender sees it as work
/// (`any_due_events`), a claim expands it, and a file's earlier event still
/// goes first: its `file.deleted` only once its `file.created` is done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_deletes_batch_is_due_expanded_by_a_claim_and_keeps_each_files_order() {
    let (_dir, s) = stores(1).await;
    let s = &s[0];
    let acc = account(&**s).await;
    let mut files = Vec::new();
    for i in 0..3 {
        let mut f = inline_file(&acc, i, 3, None);
        f.folder = Some("rel".into());
        let out = commit(s.clone(), f.clone(), Quota::UNLIMITED).await;
        assert!(matches!(out, CommitOutcome::Committed(_)));
        files.push(f);
    }
    let budget = Budget::new(100, 100);
    // Subscribed after the uploads: only the deletes are told.
    let hook = webhook(s, &acc, &["file.deleted"]).await;
    assert!(!s.any_due_events(3_000, &budget).await.unwrap());
    assert_eq!(s.delete_folder(&acc, "rel", 3_000).await.unwrap(), 3);
    assert_eq!(s.pending_events().await.unwrap(), 3);
    assert!(
        s.any_due_events(3_000, &budget).await.unwrap(),
        "a batch is work"
    );
    let claimed = s.claim_events(3_001, 63_001, &budget).await.unwrap();
    let mut ids: Vec<&str> = claimed.iter().map(|e| e.file.id.as_str()).collect();
    ids.sort_unstable();
    let mut want: Vec<&str> = files.iter().map(|f| f.id.as_str()).collect();
    want.sort_unstable();
    assert_eq!(ids, want);
    assert!(claimed
        .iter()
        .all(|e| e.kind == "file.deleted" && e.webhook_id == hook && e.created_at == 3_000));
    let f = claimed.iter().find(|e| e.file.id == files[1].id).unwrap();
    assert_eq!(f.file, files[1], "the file row as it was");
    for e in &claimed {
        s.event_done(e.seq).await.unwrap();
    }
    assert_eq!(s.pending_events().await.unwrap(), 0);
    assert!(!s.any_due_events(70_000, &budget).await.unwrap());

    // A file whose file.created is still undelivered to a subscription: its
    // file.deleted (from a batch) waits behind it there, not elsewhere.
    let both = webhook(s, &acc, &["file.created", "file.deleted"]).await;
    let mut g = inline_file(&acc, 9, 3, None);
    g.folder = Some("rel2".into());
    commit(s.clone(), g.clone(), Quota::UNLIMITED).await;
    let created = s.claim_events(80_000, 140_000, &budget).await.unwrap();
    assert_eq!(created.len(), 1);
    assert_eq!(
        (created[0].kind.as_str(), created[0].webhook_id.as_str()),
        ("file.created", both.as_str())
    );
    assert_eq!(s.delete_folder(&acc, "rel2", 80_001).await.unwrap(), 1);
    let deleted = s.claim_events(80_002, 140_002, &budget).await.unwrap();
    assert_eq!(deleted.len(), 1, "{deleted:?}");
    assert_eq!(
        (deleted[0].kind.as_str(), deleted[0].webhook_id.as_str()),
        ("file.deleted", hook.as_str())
    );
    s.event_done(created[0].seq).await.unwrap();
    let after = s.claim_events(80_003, 140_003, &budget).await.unwrap();
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(
        (
            after[0].kind.as_str(),
            after[0].webhook_id.as_str(),
            after[0].file.id.as_str()
        ),
        ("file.deleted", both.as_str(), g.id.as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_claiming_at_once_take_each_event_once() {
    let (_dir, s) = stores(3).await;
    let acc = account(&*s[0]).await;
    webhook(&s[0], &acc, &["file.created"]).await;
    for i in 0..90 {
        committed(&s[i % 3], &acc, i, None).await;
    }
    let tasks: Vec<_> = (0..6)
        .map(|i| {
            let s = s[i % 3].clone();
            tokio::spawn(async move {
                let mut got = Vec::new();
                loop {
                    let batch = s
                        .claim_events(10_000, 70_000, &Budget::new(7, 7))
                        .await
                        .unwrap();
                    if batch.is_empty() {
                        return got;
                    }
                    got.extend(batch.into_iter().map(|e| e.id));
                }
            })
        })
        .collect();
    let mut ids = Vec::new();
    for t in tasks {
        ids.extend(t.await.unwrap());
    }
    let unique: std::collections::BTreeSet<&String> = ids.iter().collect();
    assert_eq!((ids.len(), unique.len()), (90, 90));
}

/// Events claimed by a node that died are due again as soon as a node
/// starts, not a lease later (on SQLite every claim: one node).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_of_a_node_that_is_gone_are_due_at_the_next_start() {
    let (_dir, mut s) = stores(2).await;
    let acc = account(&*s[0]).await;
    webhook(&s[0], &acc, &["file.created"]).await;
    committed(&s[0], &acc, 0, None).await;
    let gone = s.pop().unwrap();
    let claimed = gone
        .claim_events(2_000, 62_000, &Budget::new(10, 10))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    drop(gone);
    // Its session closes a moment after (the server notices the socket).
    let mut again = Vec::new();
    for _ in 0..100 {
        s[0].expire_upload_guards(3_000).await.unwrap();
        again = s[0]
            .claim_events(3_000, 63_000, &Budget::new(10, 10))
            .await
            .unwrap();
        if !again.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(again.len(), 1, "due again at the start");
    assert_eq!(
        (again[0].id.as_str(), again[0].attempts),
        (claimed[0].id.as_str(), 2)
    );
    // A live node's claim is left alone.
    s[0].expire_upload_guards(4_000).await.unwrap();
    let on_pg = pg::admin_url().is_some();
    let live = s[0]
        .claim_events(4_000, 64_000, &Budget::new(10, 10))
        .await
        .unwrap();
    assert_eq!(
        live.is_empty(),
        on_pg,
        "PostgreSQL keeps a live node's claim"
    );
}
