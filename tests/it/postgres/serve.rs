//! `serve` and `admin` on the database URL: two nodes share files, keys and
//! the signing secret; admin needs no data dir.

use super::*;
use crate::common::error_code;

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

/// A node answers a file its CDN served in the last second from memory: a
/// delete made on another node reaches it within that second, and a rename
/// at once (a name it does not know asks the database).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_another_node_reaches_the_cdn_within_a_second() {
    if pg::admin_url().is_none() {
        return skipped();
    }
    let a = TestServer::start().await;
    let b = second_node(&a, TestOptions::default()).await;
    let on_b = |f: &serde_json::Value| f["url"].as_str().unwrap().replace(&a.base_url, &b.base_url);
    let status = |url: String| {
        let http = b.http.clone();
        async move { http.get(url).send().await.unwrap().status().as_u16() }
    };
    let gone = a.upload_ok("gone.txt", b"gone".to_vec(), &[]).await;
    let moved = a.upload_ok("moved.txt", b"moved".to_vec(), &[]).await;
    for f in [&gone, &moved] {
        assert_eq!(status(on_b(f)).await, 200);
    }
    let r = a
        .delete_as(&a.secret_key, gone["id"].as_str().unwrap())
        .await;
    assert_eq!(r.status(), 200);
    let deleted = std::time::Instant::now();
    let r = a
        .http
        .patch(a.url(&format!("/v1/files/{}", moved["id"].as_str().unwrap())))
        .bearer_auth(&a.secret_key)
        .json(&serde_json::json!({"name": "new.txt"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let renamed: serde_json::Value = r.json().await.unwrap();
    assert_eq!(status(on_b(&renamed)).await, 200, "the new name at once");
    loop {
        if status(on_b(&gone)).await == 404 {
            break;
        }
        assert!(
            deleted.elapsed() < std::time::Duration::from_millis(1500),
            "a delete on A still served by B after {:?}",
            deleted.elapsed()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Within the second the old name too is gone.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(status(on_b(&moved)).await, 404);
}

/// Each node keeps the keys it found for at most a second: a key revoked
/// on one node is refused there at once and on the other within the
/// second (after it served the key from memory), as is an account put in
/// its grace period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_reaches_every_node_within_a_second() {
    if pg::admin_url().is_none() {
        return skipped();
    }
    let a = TestServer::start().await;
    let b = second_node(&a, TestOptions::default()).await;
    let key = a.new_key("secret", &[]).await;
    for srv in [&a, &b] {
        let r = srv.upload_as(&key, "k.txt", b"k".to_vec(), &[]).await;
        assert_eq!(r.status(), 201);
    }
    let key_id = a
        .app
        .meta
        .key_by_hash(filestore::testing::domain::ids::key_hash(&key))
        .await
        .unwrap()
        .expect("the key is live")
        .0
        .id;
    filestore::testing::service::admin::revoke_key(&*a.app.meta, &key_id, 0)
        .await
        .unwrap();
    let revoked = std::time::Instant::now();
    let r = a.upload_as(&key, "k.txt", b"k".to_vec(), &[]).await;
    assert_eq!(error_code(r).await, (401, "unauthorized".into()), "at once");
    loop {
        let r = b.upload_as(&key, "k.txt", b"k".to_vec(), &[]).await;
        if r.status() == 401 {
            break;
        }
        assert_eq!(r.status(), 201);
        assert!(
            revoked.elapsed() < std::time::Duration::from_millis(1100),
            "still served {:?} after the revocation",
            revoked.elapsed()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // The grace period, set on B, holds on A within the second too.
    assert_eq!(
        a.upload_as(&a.secret_key, "g.txt", b"g".to_vec(), &[])
            .await
            .status(),
        201
    );
    b.set_account(&a.account_id, None, Some(true)).await;
    let set = std::time::Instant::now();
    loop {
        let r = a
            .upload_as(&a.secret_key, "g.txt", b"g".to_vec(), &[])
            .await;
        if r.status() == 403 {
            break;
        }
        assert_eq!(r.status(), 201);
        assert!(
            set.elapsed() < std::time::Duration::from_millis(1100),
            "uploads still taken {:?} after the grace period",
            set.elapsed()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
