//! `PATCH /v1/files/{id}`: a rename or move keeps the id, bytes, sha256 and
//! created_at; the CDN url follows the name (the old one is 404); the input
//! is checked as an upload's; `file.updated` is queued with the change.

use crate::common::meta::webhook;
use crate::common::{error_code, get_bytes, Backend, TestServer};
use serde_json::{json, Value};

both_stores!(rename_and_move_keep_the_file, refusals_change_nothing);

async fn patch(srv: &TestServer, key: &str, id: &str, body: &Value) -> reqwest::Response {
    srv.http
        .patch(srv.url(&format!("/v1/files/{id}")))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap()
}

async fn patch_ok(srv: &TestServer, id: &str, body: &Value) -> Value {
    let r = patch(srv, &srv.secret_key, id, body).await;
    assert_eq!(r.status(), 200, "{body}");
    r.json().await.unwrap()
}

async fn rename_and_move_keep_the_file(b: Backend) {
    let srv = TestServer::on(b).await;
    webhook(&srv.app.meta, &srv.account_id, &["file.updated"]).await;
    // A blob-store file and an inline one.
    let big = vec![7u8; 140_000];
    for (bytes, name) in [(big, "a.bin"), (b"hello".to_vec(), "a.txt")] {
        let f = srv
            .upload_ok(name, bytes.clone(), &[("folder", "docs/x")])
            .await;
        let id = f["id"].as_str().unwrap();
        let old_url = f["url"].as_str().unwrap().to_string();
        let renamed = patch_ok(&srv, id, &json!({"name": "b é.txt"})).await;
        assert_eq!(renamed["name"], "b é.txt");
        assert_eq!(renamed["folder"], "docs/x");
        for field in ["id", "size", "sha256", "created_at", "type", "private"] {
            assert_eq!(renamed[field], f[field], "{field}");
        }
        let new_url = renamed["url"].as_str().unwrap();
        assert_ne!(new_url, old_url);
        assert!(new_url.ends_with("/b%20%C3%A9.txt"), "{new_url}");
        assert_eq!(get_bytes(&srv.http, new_url).await, bytes);
        assert_eq!(srv.http.get(&old_url).send().await.unwrap().status(), 404);
        // A move (trailing slashes trimmed as on upload), then to the root.
        let moved = patch_ok(&srv, id, &json!({"folder": "/other/"})).await;
        assert_eq!(
            (&moved["name"], &moved["folder"]),
            (&json!("b é.txt"), &json!("other"))
        );
        let listed = srv
            .get_json(&srv.secret_key, "/v1/files?folder=other")
            .await
            .1;
        assert_eq!(listed["files"][0]["id"], f["id"]);
        let root = patch_ok(&srv, id, &json!({"folder": null, "name": "c"})).await;
        assert_eq!(
            (&root["name"], &root["folder"]),
            (&json!("c"), &Value::Null)
        );
        let again = patch_ok(&srv, id, &json!({"folder": "y"})).await;
        let root = patch_ok(&srv, id, &json!({"folder": ""})).await;
        assert_eq!(
            (&again["folder"], &root["folder"]),
            (&json!("y"), &Value::Null)
        );
        let (status, got) = srv
            .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
            .await;
        assert_eq!((status, got), (200, root));
    }
    // Five changes per file, each queued with the file as it became.
    assert_eq!(
        srv.count("SELECT COUNT(*) FROM webhook_events WHERE type = 'file.updated'"),
        10
    );
    assert_eq!(srv.usage().await["storage_bytes"], 140_005);
    assert_eq!(srv.blob_count().await, 2);
}

async fn refusals_change_nothing(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv
        .upload_ok("a.txt", b"hi".to_vec(), &[("folder", "f")])
        .await;
    let id = f["id"].as_str().unwrap();
    for body in [
        json!({}),
        json!({"name": ""}),
        json!({"name": "x/y"}),
        json!({"name": "a\\b"}),
        json!({"name": "a\u{1}"}),
        json!({"name": "n".repeat(256)}),
        json!({"name": null}),
        json!({"folder": "a/../b"}),
        json!({"folder": "a\u{1}b"}),
        json!({"folder": 3}),
        // `private` is a field of its own now (a boolean); others are not.
        json!({"name": "b", "public": true}),
        json!({"name": "b", "private": "yes"}),
        json!(["a"]),
    ] {
        let r = patch(&srv, &srv.secret_key, id, &body).await;
        let (status, text) = (r.status(), r.text().await.unwrap());
        assert_eq!(status, 400, "{body}: {text}");
        let answer: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(answer["error"]["code"], "bad_request", "{body}: {text}");
    }
    let r = srv
        .http
        .patch(srv.url(&format!("/v1/files/{id}")))
        .bearer_auth(&srv.secret_key)
        .body("{\"name\": ")
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    // Another account's file, an unknown one, a public key, no key.
    let (_, other) = srv.new_account("mallory", "free").await;
    let r = patch(&srv, &other, id, &json!({"name": "mine"})).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    let r = patch(&srv, &srv.secret_key, "f_0000", &json!({"name": "x"})).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    let public = srv.new_key("public", &["https://a.example"]).await;
    let r = patch(&srv, &public, id, &json!({"name": "x"})).await;
    assert_eq!(r.status(), 403);
    let r = patch(&srv, "", id, &json!({"name": "x"})).await;
    assert_eq!(r.status(), 401);
    let (_, got) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
        .await;
    assert_eq!(got, f);
}
