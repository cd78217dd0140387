//! One commit per database: after migrating, PostgreSQL holds one function
//! whose body inserts into `files` (`filestore_commit`, migration 0018) and
//! the store's Rust code has none (it calls the function); SQLite's Rust
//! code has one. And that function's idempotency key, as an upload with
//! one commits it: taken before the account, replayed, left as it was by a
//! refused upload.

use super::*;
use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migrated_database_holds_one_function_that_inserts_into_files() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let c = stores[0].pool().get().await.unwrap();
    let rows = c
        .query(
            "SELECT proname::TEXT FROM pg_proc WHERE prosrc ILIKE '%INSERT INTO files%'",
            &[],
        )
        .await
        .unwrap();
    let names: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(names, ["filestore_commit"]);
    let old: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_proc WHERE proname IN
                 ('filestore_commit_upload', 'filestore_commit_uploads', 'filestore_commit_accounts')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(old, 0, "the older commit functions are dropped");
}

/// `INSERT INTO files` outside comments in the `.rs` files of `dir`.
fn inserts_into_files(dir: &str) -> usize {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .filter(|l| l.to_ascii_uppercase().contains("INSERT INTO FILES"))
                .count()
        })
        .sum()
}

#[test]
fn each_stores_rust_code_commits_files_in_one_place() {
    assert_eq!(inserts_into_files("src/db/sqlite"), 1);
    assert_eq!(inserts_into_files("src/db/postgres"), 0);
}

/// One upload of `account` (`id`, 10 inline bytes at `at`) with
/// idempotency key `key` and `max_storage`: its (code, replayed).
async fn keyed(
    c: &impl GenericClient,
    id: &str,
    at: i64,
    key: &str,
    max_storage: i64,
) -> (Option<String>, Option<String>) {
    let one = |s: &str| vec![s.to_string()];
    let (account, ends) = (one("acc_key"), vec![1i32]);
    let (ids, blob) = (one(id), one(&format!("blob_{id}")));
    let (name, ty, meta, sha, ev) = (one("n"), one("text/plain"), one("{}"), one("00"), one("{}"));
    let md5: Vec<Option<String>> = vec![Some("0".repeat(32))];
    let folder: Vec<Option<String>> = vec![None];
    let expires: Vec<Option<i64>> = vec![None];
    let token: Vec<Option<String>> = vec![None];
    let data: Vec<Option<Vec<u8>>> = vec![Some(vec![b'x'; 10])];
    let (size, private, when, inline) = (vec![10i64], vec![false], vec![at], vec![true]);
    let (storage, uploads) = (vec![max_storage], vec![100i64]);
    let (period, key, since) = ("2026-11", Some(key.to_string()), Some(0i64));
    let at_path: Vec<Option<String>> = vec![None];
    let attrs: Vec<Option<String>> = vec![None];
    let params: [&(dyn ToSql + Sync); 29] = [
        &account,
        &ends,
        &ids,
        &name,
        &folder,
        &size,
        &ty,
        &private,
        &sha,
        &md5,
        &blob,
        &when,
        &expires,
        &inline,
        &meta,
        &attrs,
        &data,
        &ev,
        &period,
        &token,
        &storage,
        &uploads,
        &key,
        &since,
        &false,
        &false,
        &false,
        &at_path,
        &300_000i64,
    ];
    let row = c
        .query_one(
            "SELECT code, replayed FROM filestore_commit($1, $2, $3, $4, $5, $6, $7, $8, $9,
                 $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24,
                 $25, $26, $27, $28, $29)",
            &params,
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_replays_and_a_refusal_leaves_it_as_it_was() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let c = stores[0].pool().get().await.unwrap();
    c.batch_execute(
        "INSERT INTO accounts (id, name, plan, storage_bytes, created_at)
         VALUES ('acc_key', 'key', 'free', 0, 1)",
    )
    .await
    .unwrap();
    let key_row = || async {
        c.query_opt(
            "SELECT file_id || ' ' || created_at FROM idempotency_keys WHERE key = 'k'",
            &[],
        )
        .await
        .unwrap()
        .map(|r| r.get::<_, String>(0))
    };
    // Refused (over the storage quota): no key, no file.
    assert_eq!(
        keyed(&c, "f_1", 100, "k", 5).await,
        (Some("FS001".into()), None)
    );
    assert_eq!(key_row().await, None);
    // Committed: the key points to it; again, the same file is replayed.
    assert_eq!(keyed(&c, "f_2", 200, "k", 1000).await, (None, None));
    assert_eq!(key_row().await.as_deref(), Some("f_2 200"));
    assert_eq!(
        keyed(&c, "f_3", 300, "k", 1000).await,
        (None, Some("f_2".into()))
    );
    // The replayed file gone, the key is stale: refused again, it still
    // points where it did; admitted, it points to the new file.
    c.batch_execute("DELETE FROM files WHERE id = 'f_2'")
        .await
        .unwrap();
    assert_eq!(
        keyed(&c, "f_4", 400, "k", 0).await,
        (Some("FS001".into()), None)
    );
    assert_eq!(key_row().await.as_deref(), Some("f_2 200"));
    assert_eq!(keyed(&c, "f_5", 500, "k", 1000).await, (None, None));
    assert_eq!(key_row().await.as_deref(), Some("f_5 500"));
    let files: i64 = c
        .query_one("SELECT count(*) FROM files", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(files, 1);
}
