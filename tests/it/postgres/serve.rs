//! `serve` and `admin` on the database URL: two nodes share files, keys and
//! the signing secret; admin needs no data dir.

use super::*;

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
