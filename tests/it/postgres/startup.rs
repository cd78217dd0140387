//! Nodes starting: migrated once, one generated secret, the guards and the
//! deletions in flight of nodes that are gone.

use super::*;

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

/// A database made for the test, in LATIN1, dropped when it goes.
struct Latin1 {
    admin: String,
    name: String,
    url: String,
}

impl Latin1 {
    fn new(admin: String) -> Latin1 {
        let name = format!("fs_test_latin1_{}", hex::encode(rand::random::<[u8; 8]>()));
        pg::execute(
            &admin,
            &format!(
                "CREATE DATABASE {name} ENCODING 'LATIN1' TEMPLATE template0 \
                 LC_COLLATE 'C' LC_CTYPE 'C'"
            ),
        );
        let url = pg::url_of(&name).unwrap();
        Latin1 { admin, name, url }
    }
}

impl Drop for Latin1 {
    fn drop(&mut self) {
        pg::execute(&self.admin, &format!("DROP DATABASE {}", self.name));
    }
}

/// A new database in an encoding that cannot hold every UTF-8 name
/// (LATIN1) is refused at start, naming its encoding and the fix; nothing
/// is created in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_database_not_in_utf8_is_refused_at_start() {
    let Some(admin) = pg::admin_url() else {
        return skipped();
    };
    let db = Latin1::new(admin);
    let err = PgStore::connect(&db.url).await.unwrap_err().to_string();
    assert!(
        err.contains("LATIN1") && err.contains("UTF8") && err.contains("CREATE DATABASE"),
        "{err}"
    );
    assert_eq!(
        pg::count(
            &db.url,
            "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'schema_version'"
        ),
        0
    );
}

/// A database set up in LATIN1 before that check (its schema there) runs
/// on: it holds what it held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_schema_not_in_utf8_runs_on() {
    let Some(admin) = pg::admin_url() else {
        return skipped();
    };
    let db = Latin1::new(admin);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/db/postgres/migrations");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    pg::batch(
        &db.url,
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)",
    );
    for (i, file) in files.iter().enumerate() {
        pg::batch(&db.url, &std::fs::read_to_string(file).unwrap());
        pg::execute(
            &db.url,
            &format!("INSERT INTO schema_version VALUES ({}, 0)", i + 1),
        );
    }
    let store = PgStore::connect(&db.url).await.unwrap();
    drop(store);
}
