//! Upload tokens at the metadata store, on whichever database the suite runs
//! (SQLite, or PostgreSQL with `FILESTORE_TEST_DATABASE_URL`): made, read,
//! revoked and pruned; `max_uploads` exact, a spent token or a refusal
//! writing nothing; resumable uploads holding a use from creation; public
//! keys' policies; the metadata filter of a page.

use crate::common::meta::{account, inline_file, stores, upload};
use filestore::testing::db::{
    CommitContext, CommitOutcome, CreateOutcome, DynMetaStore, FileRow, FolderFilter, KeyRecord,
    ListFilter, PageAfter, Quota, Refusal, TokenRow, UploadPolicy, UploadRow,
};
use filestore::testing::domain::ids;
use std::time::Duration;

/// A token of `account`, `max` uses, expiring at 100 000; its secret's hash.
async fn token(store: &DynMetaStore, account: &str, max: u32) -> (TokenRow, [u8; 32]) {
    let row = TokenRow {
        id: ids::upload_token_id(),
        account_id: account.into(),
        created_by: "key_x".into(),
        policy: UploadPolicy {
            folder: Some("avatars".into()),
            max_size: Some(5_000),
            types: vec!["image/*".into(), "application/pdf".into()],
            private: Some(true),
            file_expires: Some(Duration::from_hours(168)),
            metadata: [("user".to_string(), "u1".to_string())].into(),
            decides: true,
            at_once: None,
            // Kept as it is, as every field of the policy.
            replace: true,
        },
        max_uploads: max,
        uploads_used: 0,
        uploads_open: 0,
        created_at: 10,
        expires_at: 100_000,
        revoked_at: None,
    };
    let hash = ids::key_hash(&ids::upload_token_secret());
    store.create_token(row.clone(), hash).await.unwrap();
    (row, hash)
}

/// The token as stored now.
async fn stored(store: &DynMetaStore, t: &TokenRow) -> TokenRow {
    store.token(&t.account_id, &t.id).await.unwrap().unwrap()
}

/// Commits inline file `f` in period 2026-11 with `ctx`'s token and key.
async fn commit_with(
    store: &DynMetaStore,
    f: FileRow,
    limits: Quota,
    token: Option<&str>,
    idempotency_key: Option<&str>,
) -> CommitOutcome {
    let data = bytes::Bytes::from(vec![b'x'; f.size as usize]);
    store
        .commit_upload(
            f,
            Some(data),
            limits,
            CommitContext {
                period: "2026-11".into(),
                token: token.map(str::to_string),
                idempotency_key: idempotency_key.map(str::to_string),
                ..Default::default()
            },
        )
        .await
        .unwrap()
}

/// Completes upload `u` at 2 000 with `token`'s use.
async fn complete(store: &DynMetaStore, u: &UploadRow, token: &str) -> CommitOutcome {
    try_complete(store, u, Some(token)).await.unwrap()
}

/// As [`complete`]; an error when the upload is gone. The use converted is
/// the upload's creator's, whether the context names the token or not.
async fn try_complete(
    store: &DynMetaStore,
    u: &UploadRow,
    token: Option<&str>,
) -> Result<CommitOutcome, String> {
    let f = FileRow {
        id: u.file_id.clone(),
        account_id: u.account_id.clone(),
        name: u.name.clone(),
        size: u.length,
        content_type: "application/octet-stream".into(),
        blob_key: u.blob_key.clone(),
        created_at: 2_000,
        ..Default::default()
    };
    store
        .commit_upload(
            f,
            None,
            Quota::UNLIMITED,
            CommitContext {
                period: "2026-11".into(),
                tus_upload: Some(u.id.clone()),
                token: token.map(str::to_string),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_is_made_read_revoked_and_pruned() {
    let (_dir, s) = stores(1).await;
    let s = &s[0];
    let (acc, other) = (account(&**s).await, account(&**s).await);
    let (t, hash) = token(s, &acc, 3).await;
    assert_eq!(stored(s, &t).await, t, "the policy round-trips");
    assert!(s.token(&other, &t.id).await.unwrap().is_none());
    assert!(s.token(&acc, "ut_unknown").await.unwrap().is_none());
    let (by_hash, owner) = s.token_by_hash(hash).await.unwrap().unwrap();
    assert_eq!((by_hash, owner.id), (t.clone(), acc.clone()));
    assert!(s.token_by_hash([7; 32]).await.unwrap().is_none());
    // An empty policy stays empty (private: false, as stored).
    let bare = TokenRow {
        id: ids::upload_token_id(),
        policy: UploadPolicy::default(),
        ..t.clone()
    };
    s.create_token(bare.clone(), [8; 32]).await.unwrap();
    let read = stored(s, &bare).await;
    assert_eq!(
        read.policy,
        UploadPolicy {
            private: Some(false),
            decides: true,
            ..UploadPolicy::default()
        }
    );
    // Revoked once, at the first time; only by its account.
    assert!(!s.revoke_token(&other, &t.id, 50).await.unwrap());
    assert!(s.revoke_token(&acc, &t.id, 50).await.unwrap());
    assert!(s.revoke_token(&acc, &t.id, 60).await.unwrap());
    assert_eq!(stored(s, &t).await.revoked_at, Some(50));
    assert!(!s.revoke_token(&acc, "ut_unknown", 60).await.unwrap());
    // A revoked token is still found by hash (the caller decides).
    let found = s.token_by_hash(hash).await.unwrap().unwrap().0;
    assert_eq!(
        found.refusal(60, false, false),
        Some("this upload token was revoked")
    );
    // Revoked: not even the rest of an upload it made.
    assert!(found.refusal(60, true, false).is_some());
    // Pruned once expired, unless an incomplete upload holds a use.
    let (held, _) = token(s, &acc, 1).await;
    let u = upload(&acc, "up_held", &held.id, 500_000);
    assert_eq!(
        s.create_upload(u, Quota::UNLIMITED, None, "2026-11")
            .await
            .unwrap(),
        CreateOutcome::Created
    );
    assert_eq!(s.prune_tokens(100_000).await.unwrap(), 0, "not expired yet");
    assert_eq!(s.prune_tokens(100_001).await.unwrap(), 2);
    assert!(s.token(&acc, &t.id).await.unwrap().is_none());
    assert_eq!(stored(s, &held).await.uploads_open, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_uploads_is_exact_and_a_spent_token_writes_nothing() {
    let (_dir, s) = stores(1).await;
    let s = &s[0];
    let acc = account(&**s).await;
    let (t, _) = token(s, &acc, 3).await;
    let limits = Quota::UNLIMITED;
    let mut files = Vec::new();
    for i in 0..4 {
        let f = inline_file(&acc, i, 10, None);
        files.push(f.clone());
        let key = format!("k{i}");
        let out = commit_with(s, f, limits, Some(&t.id), Some(&key)).await;
        if i < 3 {
            assert!(matches!(out, CommitOutcome::Committed(_)), "{i}: {out:?}");
        } else {
            assert_eq!(out, CommitOutcome::TokenSpent);
        }
    }
    assert!(s.file(&acc, &files[3].id, 2_000).await.unwrap().is_none());
    let usage = s.usage(&acc, "2026-11").await.unwrap();
    assert_eq!((usage.upload_count, usage.storage_bytes), (3, 30));
    assert_eq!(stored(s, &t).await.uploads_used, 3);
    // The spent commit's idempotency key was not recorded either.
    assert!(s
        .replayed_file(&acc, "k3", 0, 2_000)
        .await
        .unwrap()
        .is_none());
    // A replay takes no use: a token with one left keeps it.
    let (t2, _) = token(s, &acc, 2).await;
    let f = inline_file(&acc, 10, 10, None);
    let first = commit_with(s, f.clone(), limits, Some(&t2.id), Some("same")).await;
    assert!(matches!(first, CommitOutcome::Committed(_)));
    let again = inline_file(&acc, 11, 10, None);
    let replay = commit_with(s, again, limits, Some(&t2.id), Some("same")).await;
    assert_eq!(replay, CommitOutcome::Replayed(f));
    assert_eq!(stored(s, &t2).await.uploads_used, 1);
    // Revoked: spent at once.
    assert!(s.revoke_token(&acc, &t2.id, 20).await.unwrap());
    let late = commit_with(
        s,
        inline_file(&acc, 12, 10, None),
        limits,
        Some(&t2.id),
        None,
    )
    .await;
    assert_eq!(late, CommitOutcome::TokenSpent);
    assert_eq!(s.usage(&acc, "2026-11").await.unwrap().upload_count, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quota_refusal_takes_no_use_of_the_token() {
    let (_dir, s) = stores(1).await;
    let s = &s[0];
    let acc = account(&**s).await;
    let (t, _) = token(s, &acc, 2).await;
    let limits = Quota {
        storage: 100,
        ..Quota::UNLIMITED
    };
    let out = commit_with(
        s,
        inline_file(&acc, 0, 200, None),
        limits,
        Some(&t.id),
        None,
    )
    .await;
    assert!(
        matches!(out, CommitOutcome::Refused(Refusal::Storage { .. })),
        "{out:?}"
    );
    let now = stored(s, &t).await;
    assert_eq!((now.uploads_used, now.uploads_open), (0, 0));
    let usage = s.usage(&acc, "2026-11").await.unwrap();
    assert_eq!((usage.upload_count, usage.storage_bytes), (0, 0));
    // It still has both uses.
    for i in 1..3 {
        let out = commit_with(s, inline_file(&acc, i, 10, None), limits, Some(&t.id), None).await;
        assert!(matches!(out, CommitOutcome::Committed(_)), "{out:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumable_upload_holds_a_use_from_creation_until_it_completes_or_ends() {
    let (_dir, s) = stores(1).await;
    let s = &s[0];
    let acc = account(&**s).await;
    let (t, _) = token(s, &acc, 2).await;
    let create = |u: UploadRow| {
        let s = s.clone();
        async move {
            s.create_upload(u, Quota::UNLIMITED, None, "2026-11")
                .await
                .unwrap()
        }
    };
    let (u1, u2) = (
        upload(&acc, "up_1", &t.id, 50_000),
        upload(&acc, "up_2", &t.id, 50_000),
    );
    assert_eq!(create(u1.clone()).await, CreateOutcome::Created);
    assert_eq!(create(u2.clone()).await, CreateOutcome::Created);
    let now = stored(s, &t).await;
    assert_eq!(
        (now.uploads_used, now.uploads_open, now.uploads_left()),
        (0, 2, 0)
    );
    // Both uses held: a third is spent, and nothing is created.
    let u3 = upload(&acc, "up_3", &t.id, 50_000);
    assert_eq!(create(u3).await, CreateOutcome::TokenSpent);
    assert!(s.upload(&acc, "up_3").await.unwrap().is_none());
    // Nor can a multipart upload take one.
    let out = commit_with(
        s,
        inline_file(&acc, 0, 1, None),
        Quota::UNLIMITED,
        Some(&t.id),
        None,
    )
    .await;
    assert_eq!(out, CommitOutcome::TokenSpent);
    // Ended incomplete: its use comes back.
    assert_eq!(s.remove_upload("up_2", 1_500).await.unwrap(), Some(true));
    assert_eq!(stored(s, &t).await.uploads_open, 1);
    // Completed: the use held becomes a file's, though the token was revoked
    // meanwhile (the upload was admitted at its creation).
    assert!(s.revoke_token(&acc, &t.id, 1_800).await.unwrap());
    let out = complete(s, &u1, &t.id).await;
    assert!(matches!(out, CommitOutcome::Committed(_)), "{out:?}");
    let now = stored(s, &t).await;
    assert_eq!((now.uploads_used, now.uploads_open), (1, 0));
    // Removing the completed upload's row gives nothing back.
    assert_eq!(s.remove_upload("up_1", 2_500).await.unwrap(), Some(false));
    assert_eq!(stored(s, &t).await.uploads_open, 0);
    // Revoked: no new upload.
    let u4 = upload(&acc, "up_4", &t.id, 50_000);
    assert_eq!(create(u4).await, CreateOutcome::TokenSpent);
    // Expired at the upload's creation: none either.
    let (old, _) = token(s, &acc, 1).await;
    let mut late = upload(&acc, "up_5", &old.id, 500_000);
    late.created_at = 100_000;
    assert_eq!(create(late).await, CreateOutcome::TokenSpent);
    assert_eq!(stored(s, &old).await.uploads_open, 0);
    // Reaped incomplete: its use comes back too.
    let (t3, _) = token(s, &acc, 1).await;
    assert_eq!(
        create(upload(&acc, "up_6", &t3.id, 5_000)).await,
        CreateOutcome::Created
    );
    assert_eq!(stored(s, &t3).await.uploads_open, 1);
    assert_eq!(s.reap_expired_uploads(6_000, 10).await.unwrap().len(), 1);
    assert_eq!(stored(s, &t3).await.uploads_open, 0);
    // An upload of a key, not a token, touches no token.
    assert_eq!(
        create(upload(&acc, "up_7", "key_x", 5_000)).await,
        CreateOutcome::Created
    );
    assert_eq!(s.reap_expired_uploads(6_000, 10).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_commits_on_two_handles_take_exactly_max_uploads() {
    let (_dir, stores) = stores(2).await;
    let acc = account(&*stores[0]).await;
    let (t, _) = token(&stores[0], &acc, 5).await;
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let s = stores[i % 2].clone();
            let (acc, id) = (acc.clone(), t.id.clone());
            tokio::spawn(async move {
                let f = inline_file(&acc, i, 10, None);
                commit_with(&s, f, Quota::UNLIMITED, Some(&id), None).await
            })
        })
        .collect();
    let (mut committed, mut spent) = (0, 0);
    for task in tasks {
        match task.await.unwrap() {
            CommitOutcome::Committed(_) => committed += 1,
            CommitOutcome::TokenSpent => spent += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((committed, spent), (5, 15));
    assert_eq!(stored(&stores[1], &t).await.uploads_used, 5);
    let usage = stores[1].usage(&acc, "2026-11").await.unwrap();
    assert_eq!((usage.upload_count, usage.storage_bytes), (5, 50));
    let all = ListFilter {
        folder: FolderFilter::All,
        metadata: vec![],
    };
    let page = stores[0].page(&acc, &all, None, 100, 5_000).await.unwrap();
    assert_eq!(page.len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_keys_policy_round_trips() {
    let (_dir, s) = stores(1).await;
    let s = &s[0];
    let acc = account(&**s).await;
    let public = KeyRecord {
        id: ids::key_id(),
        account_id: acc.clone(),
        kind: ids::KeyKind::Public,
        name: None,
        origins: vec!["https://app.example".into()],
        created_at: 1,
        revoked_at: None,
        policy: UploadPolicy {
            folder: Some("uploads/web".into()),
            max_size: Some(1_000_000),
            types: vec!["image/png".into(), "text/*".into()],
            ..UploadPolicy::default()
        },
    };
    let secret = KeyRecord {
        id: ids::key_id(),
        kind: ids::KeyKind::Secret,
        origins: vec![],
        policy: UploadPolicy::default(),
        created_at: 2,
        ..public.clone()
    };
    s.create_key(public.clone(), [1; 32]).await.unwrap();
    s.create_key(secret.clone(), [2; 32]).await.unwrap();
    assert_eq!(s.key(&public.id).await.unwrap().unwrap(), public);
    assert_eq!(s.key_by_hash([1; 32]).await.unwrap().unwrap().0, public);
    assert_eq!(s.key_by_hash([2; 32]).await.unwrap().unwrap().0, secret);
    assert_eq!(s.list_keys(Some(&acc)).await.unwrap(), vec![public, secret]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_filters_by_metadata_and_pages_with_a_cursor() {
    let (_dir, s) = stores(1).await;
    let s = &s[0];
    let acc = account(&**s).await;
    // 12 files: user u1 on the even ones, u2 on the odd; kind "a" on every
    // third; folders "x" and "x/y" alternating in pairs.
    let mut rows = Vec::new();
    for i in 0..12 {
        let mut f = inline_file(&acc, i, 1, None);
        f.folder = Some(if i % 4 < 2 { "x" } else { "x/y" }.into());
        f.metadata
            .insert("user".into(), if i % 2 == 0 { "u1" } else { "u2" }.into());
        if i % 3 == 0 {
            f.metadata.insert("kind".into(), "a".into());
        }
        f.metadata.insert("note".into(), "quote \" and é".into());
        rows.push(f.clone());
        let out = commit_with(s, f, Quota::UNLIMITED, None, None).await;
        assert!(matches!(out, CommitOutcome::Committed(_)));
    }
    let pages = |filter: ListFilter, limit: u32| {
        let s = s.clone();
        let acc = acc.clone();
        async move {
            let mut seen = Vec::new();
            let mut after: Option<PageAfter> = None;
            loop {
                let mut page = s
                    .page(&acc, &filter, after.clone(), limit, 5_000)
                    .await
                    .unwrap();
                let more = page.len() > limit as usize;
                page.truncate(limit as usize);
                after = page.last().map(|f| PageAfter {
                    created_at: f.created_at,
                    id: f.id.clone(),
                });
                seen.extend(page.into_iter().map(|f| f.name));
                if !more {
                    return seen;
                }
            }
        }
    };
    let names = |pick: &dyn Fn(usize) -> bool| -> Vec<String> {
        (0..12)
            .rev()
            .filter(|&i| pick(i))
            .map(|i| format!("f{i}"))
            .collect()
    };
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    let u1 = ListFilter {
        folder: FolderFilter::All,
        metadata: vec![pair("user", "u1")],
    };
    assert_eq!(pages(u1, 2).await, names(&|i| i % 2 == 0));
    let both = ListFilter {
        folder: FolderFilter::All,
        metadata: vec![pair("user", "u1"), pair("kind", "a")],
    };
    assert_eq!(pages(both, 1).await, names(&|i| i % 6 == 0));
    let in_folder = ListFilter {
        folder: FolderFilter::Exactly("x/y".into()),
        metadata: vec![pair("user", "u2")],
    };
    assert_eq!(pages(in_folder, 1).await, names(&|i| i % 4 == 3));
    let under = ListFilter {
        folder: FolderFilter::Under("x".into()),
        metadata: vec![pair("note", "quote \" and é")],
    };
    assert_eq!(pages(under, 5).await, names(&|_| true));
    for nothing in [
        vec![pair("user", "u3")],
        vec![pair("missing", "u1")],
        vec![pair("user", "U1")],
        vec![pair("user", "u1\0")],
    ] {
        let f = ListFilter {
            folder: FolderFilter::All,
            metadata: nothing,
        };
        assert!(pages(f, 3).await.is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_resumable_uploads_hold_exactly_and_racing_endings_count_once() {
    let (_dir, stores) = stores(2).await;
    let acc = account(&*stores[0]).await;
    let (t, _) = token(&stores[0], &acc, 3).await;
    let creations: Vec<_> = (0..10)
        .map(|i| {
            let s = stores[i % 2].clone();
            let u = upload(&acc, &format!("up_c{i}"), &t.id, 50_000);
            tokio::spawn(async move {
                let out = s
                    .create_upload(u.clone(), Quota::UNLIMITED, None, "2026-11")
                    .await;
                (u, out.unwrap())
            })
        })
        .collect();
    let mut created = Vec::new();
    for c in creations {
        let (u, out) = c.await.unwrap();
        match out {
            CreateOutcome::Created => created.push(u),
            CreateOutcome::TokenSpent => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(created.len(), 3);
    assert_eq!(stored(&stores[0], &t).await.uploads_open, 3);
    // Each upload completed on one handle and ended on the other at once:
    // whichever wins, its use is counted once (a file's, or given back).
    let races: Vec<_> = created
        .into_iter()
        .map(|u| {
            let (a, b) = (stores[0].clone(), stores[1].clone());
            tokio::spawn(async move {
                let id = u.id.clone();
                let completing = tokio::spawn(async move { try_complete(&a, &u, None).await });
                let ending = b.remove_upload(&id, 1_500).await.unwrap();
                (completing.await.unwrap(), ending)
            })
        })
        .collect();
    let mut files = 0;
    for r in races {
        match r.await.unwrap() {
            (Ok(CommitOutcome::Committed(_)), Some(false)) => files += 1,
            (Err(_), Some(true)) => {}
            other => panic!("{other:?}"),
        }
    }
    let now = stored(&stores[1], &t).await;
    assert_eq!((now.uploads_used, now.uploads_open), (files, 0));
}
