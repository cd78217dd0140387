//! `DELETE /v1/folders?folder=F`: every file in F and below at once
//! (`releases` takes in `releases/v1`, not `releases-old`), `file.deleted`
//! for each, the blobs collected in the background; the root is refused.

use crate::common::meta::webhook;
use crate::common::{Backend, TestServer};
use serde_json::{json, Value};

both_stores!(folder_delete_takes_the_tree);

/// The `file.deleted` events of the outbox, those still in a folder
/// delete's batches too.
const DELETED_EVENTS: &str =
    "SELECT (SELECT COUNT(*) FROM webhook_events WHERE type = 'file.deleted')
     + (SELECT coalesce(sum(events), 0) FROM webhook_event_batches WHERE type = 'file.deleted')";

/// Claims events until `n` different ones have come (the server's own
/// dispatcher may hold some for a moment, and PostgreSQL claims skip locked
/// rows). A claim moves an event past this far-future lease, but the
/// dispatcher's failed attempt may make one it held due again: an event is
/// kept once, by its place in the outbox.
async fn claim_all(srv: &TestServer, n: usize) -> Vec<filestore::testing::db::OutboxEvent> {
    let mut claimed = std::collections::BTreeMap::new();
    for _ in 0..200 {
        for e in srv
            .app
            .meta
            .claim_events(
                i64::MAX / 2,
                i64::MAX / 2 + 1,
                &filestore::testing::domain::webhooks::Budget::new(1000, 1000),
            )
            .await
            .unwrap()
        {
            claimed.entry(e.seq).or_insert(e);
        }
        if claimed.len() >= n {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    claimed.into_values().collect()
}

/// `n` files of 10 bytes under `big/` (100 subfolders), inserted directly.
fn insert_files(srv: &TestServer, n: usize) {
    let acc = &srv.account_id;
    let last = n - 1;
    let columns = "id, account_id, name, folder, size, content_type, private, sha256, blob_key, created_at, expires_at, inline, metadata";
    if srv.on_postgres() {
        crate::common::pg::execute(
            srv.database_url(),
            &format!(
                "INSERT INTO files ({columns}) SELECT 'f_' || lpad(to_hex(i), 44, '0'), '{acc}',
                 'n' || i, 'big/' || (i % 100), 10, 'text/plain', false, '00', 'bk' || i,
                 1000 + i, NULL, false, '{{}}' FROM generate_series(0, {last}) i"
            ),
        );
    } else {
        srv.sqlite()
            .unwrap()
            .execute_batch(&format!(
                "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})
                 INSERT INTO files ({columns}) SELECT printf('f_%044x', i), '{acc}', 'n' || i,
                 'big/' || (i % 100), 10, 'text/plain', 0, '00', 'bk' || i, 1000 + i, NULL, 0,
                 '{{}}' FROM n"
            ))
            .unwrap();
    }
    assert_eq!(srv.count("SELECT COUNT(*) FROM files"), n as i64);
}

/// A folder delete writes its events a thousand files to a batch; claims
/// expand the batches, and every file's event comes once, with its record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_deletes_events_come_from_batches_each_once() {
    let srv = TestServer::start().await;
    let kept = webhook(&srv.app.meta, &srv.account_id, &["file.deleted"]).await;
    let dropped = webhook(&srv.app.meta, &srv.account_id, &["file.deleted"]).await;
    insert_files(&srv, 2500);
    let (status, body) = delete_folder(&srv, &srv.secret_key, "?folder=big").await;
    assert_eq!(
        (status, body),
        (200, json!({"success": true, "deleted": 2500}))
    );
    // Three batches for each subscription (or, for a moment, their events).
    assert_eq!(srv.count(DELETED_EVENTS), 5000);
    assert_eq!(srv.app.meta.pending_events().await.unwrap(), 5000);
    // A subscription deleted meanwhile takes its waiting batches with it.
    srv.app
        .meta
        .delete_webhook(&dropped)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(srv.count(DELETED_EVENTS), 2500);
    let claimed = claim_all(&srv, 2500).await;
    assert!(claimed.iter().all(|e| e.webhook_id == kept));
    let mut ids: Vec<&str> = claimed.iter().map(|e| e.file.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!((claimed.len(), ids.len()), (2500, 2500));
    let mut events: Vec<&str> = claimed.iter().map(|e| e.id.as_str()).collect();
    events.sort_unstable();
    events.dedup();
    assert_eq!(events.len(), 2500, "each event its own webhook-id");
    let e = claimed
        .iter()
        .find(|e| e.file.id == format!("f_{:044x}", 1234))
        .unwrap();
    assert_eq!(
        (
            e.kind.as_str(),
            e.file.name.as_str(),
            e.file.folder.as_deref(),
            e.file.size
        ),
        ("file.deleted", "n1234", Some("big/34"), 10)
    );
    assert_eq!(srv.count("SELECT COUNT(*) FROM webhook_event_batches"), 0);
}

async fn delete_folder(srv: &TestServer, key: &str, query: &str) -> (u16, Value) {
    let r = srv
        .http
        .delete(srv.url(&format!("/v1/folders{query}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn folder_delete_takes_the_tree(b: Backend) {
    let srv = TestServer::on(b).await;
    webhook(&srv.app.meta, &srv.account_id, &["file.deleted"]).await;
    let mut gone = Vec::new();
    for (i, folder) in ["rel", "rel", "rel/v1", "rel/v1/deep"].iter().enumerate() {
        let bytes = if i % 2 == 0 {
            vec![1; 140_000]
        } else {
            vec![2; 7]
        };
        let f = srv
            .upload_ok(&format!("{i}.bin"), bytes, &[("folder", folder)])
            .await;
        gone.push(f);
    }
    let mut kept = Vec::new();
    for folder in ["rel-old", "rel0", "other/rel"] {
        kept.push(
            srv.upload_ok("k.txt", b"keep".to_vec(), &[("folder", folder)])
                .await,
        );
    }
    kept.push(srv.upload_ok("root.txt", b"root".to_vec(), &[]).await);
    let (_, other) = srv.new_account("mallory", "free").await;
    let r = srv
        .upload_as(&other, "t.txt", b"t".to_vec(), &[("folder", "rel")])
        .await;
    assert_eq!(r.status(), 201);
    for query in [
        "",
        "?folder=",
        "?folder=/",
        "?folder=a/../b",
        "?folder=a%01b",
    ] {
        let (status, body) = delete_folder(&srv, &srv.secret_key, query).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &json!("bad_request")),
            "{query}"
        );
    }
    let public = srv.new_key("public", &["https://a.example"]).await;
    assert_eq!(delete_folder(&srv, &public, "?folder=rel").await.0, 403);
    let (status, body) = delete_folder(&srv, &srv.secret_key, "?folder=/rel/").await;
    assert_eq!(
        (status, body),
        (200, json!({"success": true, "deleted": 4}))
    );
    for f in &gone {
        let id = f["id"].as_str().unwrap();
        let (status, _) = srv
            .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
            .await;
        assert_eq!(status, 404);
        let url = f["url"].as_str().unwrap();
        assert_eq!(srv.http.get(url).send().await.unwrap().status(), 404);
    }
    for f in &kept {
        let id = f["id"].as_str().unwrap();
        assert_eq!(
            srv.get_json(&srv.secret_key, &format!("/v1/files/{id}"))
                .await
                .0,
            200
        );
    }
    assert_eq!(srv.usage().await["storage_bytes"], 16);
    // One event per file, carrying the file as it was.
    assert_eq!(srv.count(DELETED_EVENTS), 4);
    let claimed = claim_all(&srv, 4).await;
    let mut ids: Vec<&str> = claimed.iter().map(|e| e.file.id.as_str()).collect();
    ids.sort_unstable();
    let mut want: Vec<&str> = gone.iter().map(|f| f["id"].as_str().unwrap()).collect();
    want.sort_unstable();
    assert_eq!(ids, want);
    let first = claimed.iter().find(|e| e.file.id == want[0]).unwrap();
    let f = gone.iter().find(|f| f["id"] == want[0]).unwrap();
    assert_eq!(
        (first.file.name.as_str(), first.file.size),
        (f["name"].as_str().unwrap(), f["size"].as_u64().unwrap())
    );
    // The two blob-store files' blobs go in the background (the other
    // account's file is inline: 5 kept blobs, all inline but none).
    srv.eventually(60, "the folder's blobs collected", || async {
        srv.count("SELECT COUNT(*) FROM blob_deletions") == 0 && srv.blob_count().await == 5
    })
    .await;
    let (status, body) = delete_folder(&srv, &srv.secret_key, "?folder=rel").await;
    assert_eq!(
        (status, body),
        (200, json!({"success": true, "deleted": 0}))
    );
}

/// The scale figure (run by hand, on either database):
/// `cargo test --test it folder_delete_of_100k -- --ignored --nocapture`.
/// 100,000 rows inserted directly under `big/` (100 subfolders), one
/// webhook subscribed to `file.deleted`; the DELETE must answer within 2 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: 100,000 files"]
async fn folder_delete_of_100k_files_answers_within_2s() {
    let srv = TestServer::start().await;
    webhook(&srv.app.meta, &srv.account_id, &["file.deleted"]).await;
    insert_files(&srv, 100_000);
    let started = std::time::Instant::now();
    let (status, body) = delete_folder(&srv, &srv.secret_key, "?folder=big").await;
    let took = started.elapsed();
    assert_eq!(
        (status, body),
        (200, json!({"success": true, "deleted": 100_000}))
    );
    println!(
        "DELETE /v1/folders of 100,000 files ({}): {took:?}",
        if srv.on_postgres() {
            "PostgreSQL"
        } else {
            "SQLite"
        }
    );
    assert_eq!(srv.count(DELETED_EVENTS), 100_000);
    assert!(took < std::time::Duration::from_secs(2), "{took:?}");
}
