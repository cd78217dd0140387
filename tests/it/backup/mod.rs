//! `filestore admin backup` and `admin restore` (CONTRACT §20), the real
//! binary against a test server's data dir and database; on PostgreSQL
//! when the suite runs there (`contrib/pg-test.sh`).

mod concurrent;
mod hold;
mod incremental;
mod kill;
mod refusals;
mod round_trip;
mod s3;

use crate::common::pg;
use crate::common::process;
use crate::common::{TestOptions, TestServer};
use std::collections::BTreeMap;
use std::path::Path;

/// The server's database URL, on PostgreSQL.
pub fn db_of(srv: &TestServer) -> Option<String> {
    srv.on_postgres().then(|| srv.database_url().to_string())
}

/// `admin backup DEST --json` of the server on `data` (and `db`): its record.
pub fn backup(data: &Path, db: Option<&str>, dest: &Path) -> serde_json::Value {
    let out = process::admin(data, db, &["backup", dest.to_str().unwrap(), "--json"]);
    assert!(
        out.status.success(),
        "backup failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("backup prints JSON")
}

/// `admin restore SRC --json` into `target` (SQLite there, or `db`).
pub fn restore(target: &Path, db: Option<&str>, src: &Path) -> std::process::Output {
    let mut args = vec!["restore", src.to_str().unwrap(), "--json"];
    if let Some(url) = db {
        args.extend(["--database", url]);
    }
    process::admin(target, None, &args)
}

/// A new target for a restore: a data dir that does not exist yet, and on
/// PostgreSQL an empty database of its own (which a test server on that
/// data dir then finds).
pub async fn new_target(parent: &Path, name: &str) -> (std::path::PathBuf, Option<String>) {
    let dir = parent.join(name);
    let db = pg::database_for(&dir).await;
    (dir, db)
}

/// Restores `src` into a new target (asserting success) and starts a test
/// server on it.
pub async fn restored_server(parent: &Path, name: &str, src: &Path) -> TestServer {
    restored_with(parent, name, src, None).await
}

/// [`restored_server`] with the server config's `plans_toml`.
pub async fn restored_with(
    parent: &Path,
    name: &str,
    src: &Path,
    plans_toml: Option<&str>,
) -> TestServer {
    let (dir, db) = new_target(parent, name).await;
    let out = restore(&dir, db.as_deref(), src);
    assert!(
        out.status.success(),
        "restore failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    TestServer::start_with(TestOptions {
        data_dir: Some(dir),
        plans_toml: plans_toml.map(str::to_string),
        ..Default::default()
    })
    .await
}

/// Every file of the server's default account: id → (record, bytes).
pub async fn contents(srv: &TestServer) -> BTreeMap<String, (serde_json::Value, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/files?limit=100&cursor={c}"),
            None => "/v1/files?limit=100".to_string(),
        };
        let (status, page) = srv.get_json(&srv.secret_key, &path).await;
        assert_eq!(status, 200, "{page}");
        for f in page["files"].as_array().expect("files") {
            let id = f["id"].as_str().unwrap().to_string();
            let url = if f["private"] == true {
                srv.signed_url(&id, 600).await
            } else {
                f["url"].as_str().unwrap().to_string()
            };
            let r = srv.http.get(url).send().await.unwrap();
            assert_eq!(r.status(), 200, "{id}");
            out.insert(id, (f.clone(), r.bytes().await.unwrap().to_vec()));
        }
        match page["cursor"].as_str() {
            Some(c) if !c.is_empty() => cursor = Some(c.to_string()),
            _ => break,
        }
    }
    out
}

/// Bytes of `len` from `seed` (distinct per seed).
pub fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}
