//! SQLite → PostgreSQL → SQLite (SQLite → SQLite → SQLite when the suite
//! has no PostgreSQL): each restored server answers as the first did: the
//! same ids and CDN URLs, signed URLs the first signed, usage, upload
//! tokens, webhooks and keys. Real `serve` processes throughout.

use super::bytes;
use crate::common::pg;
use crate::common::process::{self, Serve, ServeProcess};
use serde_json::{json, Value};
use std::path::Path;

const CDN: &str = "http://cdn.backup.test";

fn serve(data: &Path, db: Option<&str>) -> ServeProcess {
    Serve::new(data)
        .database_url(db)
        .args(&["--cdn-url", CDN])
        .start()
}

/// `url` (of the CDN) on `srv`.
fn on(srv: &ServeProcess, url: &str) -> String {
    srv.url(url.strip_prefix(CDN).expect("a CDN url"))
}

/// What a server shows of its account: files, usage, tokens, webhooks.
async fn view(srv: &ServeProcess, key: &str, db: Option<&str>) -> Value {
    let http = reqwest::Client::new();
    let get = |path: &str| {
        let r = http.get(srv.url(path)).bearer_auth(key).send();
        async move {
            let r = r.await.unwrap();
            assert_eq!(r.status(), 200, "{}", r.url());
            r.json::<Value>().await.unwrap()
        }
    };
    let webhooks = process::admin(&srv.data, db, &["webhook", "list", "--json"]);
    assert!(webhooks.status.success());
    json!({
        "files": get("/v1/files?limit=100").await,
        "usage": get("/v1/usage").await,
        "tokens": get("/v1/upload-tokens").await,
        "webhooks": String::from_utf8(webhooks.stdout).unwrap(),
    })
}

fn backup_and_restore(from: &ServeProcess, dest: &Path, into: &Path, db: Option<&str>) {
    let out = process::admin(
        &from.data,
        from.database_url.as_deref(),
        &["backup", dest.to_str().unwrap(), "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = super::restore(into, db, dest);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_sqlite_to_postgres_and_back_keeps_ids_urls_signatures_usage_tokens_webhooks() {
    let dir = tempfile::tempdir().unwrap();
    let a = serve(&dir.path().join("a"), None);
    let key = a.key();
    let http = reqwest::Client::new();
    let upload = |name: &str, data: Vec<u8>, private: bool| {
        let form = crate::common::upload_form(
            name,
            data,
            &[
                ("private", if private { "true" } else { "false" }),
                ("folder", "docs"),
            ],
        );
        let r = http
            .post(a.url("/v1/upload"))
            .bearer_auth(&key)
            .multipart(form)
            .send();
        async move {
            let r = r.await.unwrap();
            assert_eq!(r.status(), 201);
            r.json::<Value>().await.unwrap()
        }
    };
    let public = upload("public.txt", bytes(500, 1), false).await;
    let private_data = bytes(200_000, 2);
    let private = upload("private.bin", private_data.clone(), true).await;
    let signed: Value = http
        .post(a.url(&format!(
            "/v1/files/{}/signed-url",
            private["id"].as_str().unwrap()
        )))
        .bearer_auth(&key)
        .json(&json!({"expires_in": 3600}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let signed = signed["url"].as_str().unwrap().to_string();
    let token: Value = http
        .post(a.url("/v1/upload-tokens"))
        .bearer_auth(&key)
        .json(&json!({"max_uploads": 5, "folder": "inbox"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token_secret = token["token"].as_str().unwrap().to_string();
    let hook = process::admin(
        &a.data,
        None,
        &[
            "webhook",
            "create",
            "--account",
            "default",
            "--url",
            "http://127.0.0.1:9/hook",
        ],
    );
    assert!(hook.status.success());
    // Bandwidth: a download, counted before the backup.
    let got = http
        .get(on(&a, public["url"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 200);
    got.bytes().await.unwrap();
    // Counted in memory, written within a second (`service::bandwidth`).
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    let before = view(&a, &key, None).await;
    assert!(
        before["usage"]["bandwidth_bytes"].as_u64().unwrap() > 0,
        "{before}"
    );

    // SQLite → PostgreSQL (when the suite has one) → SQLite.
    let b_dir = dir.path().join("b");
    let b_db = pg::database_for(&b_dir).await;
    backup_and_restore(&a, &dir.path().join("dest-a"), &b_dir, b_db.as_deref());
    drop(a);
    let b = serve(&b_dir, b_db.as_deref());
    let c_dir = dir.path().join("c");
    backup_and_restore(&b, &dir.path().join("dest-b"), &c_dir, None);
    for (srv, db) in [(&b, b_db.as_deref()), (&serve(&c_dir, None), None)] {
        let after = view(srv, &key, db).await;
        assert_eq!(after, before, "{}", srv.data.display());
        // The signing secret came along: a URL the first server signed.
        let r = http.get(on(srv, &signed)).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.bytes().await.unwrap().to_vec(), private_data);
        // The token's secret too (its hash).
        let form = crate::common::upload_form("via-token.txt", bytes(10, 9), &[]);
        let r = http
            .post(srv.url(&format!("/v1/upload?token={token_secret}")))
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201, "{}", srv.data.display());
    }
}
