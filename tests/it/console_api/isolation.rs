//! Two accounts: neither lists, revokes, deletes, reads the log of, zips
//! or counts anything of the other's (another account's id is a 404, as an
//! unknown one is).

use super::*;
use crate::common::receiver::healthy;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_see_nothing_of_each_other() {
    let srv = TestServer::start().await;
    let a = srv.secret_key.clone();
    let (_, b) = srv.new_account("bee", "free").await;

    // A's key, token, webhook and file.
    let (_, key) = call(
        &srv,
        Method::POST,
        "/v1/keys",
        &a,
        Some(json!({"kind": "secret"})),
    )
    .await;
    let key_id = key["id"].as_str().unwrap().to_string();
    let (_, token) = call(&srv, Method::POST, "/v1/upload-tokens", &a, None).await;
    let token_id = token["id"].as_str().unwrap().to_string();
    let (_rx, url) = healthy().await;
    let (_, hook) = call(
        &srv,
        Method::POST,
        "/v1/webhooks",
        &a,
        Some(json!({"url": url})),
    )
    .await;
    let hook_id = hook["id"].as_str().unwrap().to_string();
    let file = srv.upload_ok("secret.txt", b"of a".to_vec(), &[]).await;
    let file_id = file["id"].as_str().unwrap().to_string();

    // B lists only its own.
    let (_, keys) = call(&srv, Method::GET, "/v1/keys", &b, None).await;
    assert_eq!(keys["keys"].as_array().unwrap().len(), 1, "{keys}");
    assert_ne!(keys["keys"][0]["id"], key_id.as_str());
    let (_, tokens) = call(&srv, Method::GET, "/v1/upload-tokens", &b, None).await;
    assert_eq!(tokens, json!({"tokens": []}));
    let (_, hooks) = call(&srv, Method::GET, "/v1/webhooks", &b, None).await;
    assert_eq!(hooks, json!({"webhooks": []}));
    let (_, days) = call(&srv, Method::GET, "/v1/usage/history?days=1", &b, None).await;
    assert_eq!(days["days"][0]["upload_count"], 0, "{days}");
    assert_eq!(days["days"][0]["storage_bytes"], 0, "{days}");

    // B reaching for A's: 404, and nothing changes.
    let not_found = (404, "not_found".to_string());
    for (method, path, body) in [
        (Method::DELETE, format!("/v1/keys/{key_id}"), None),
        (
            Method::DELETE,
            format!("/v1/upload-tokens/{token_id}"),
            None,
        ),
        (Method::DELETE, format!("/v1/webhooks/{hook_id}"), None),
        (
            Method::GET,
            format!("/v1/webhooks/{hook_id}/deliveries"),
            None,
        ),
        (
            Method::POST,
            "/v1/files/zip".to_string(),
            Some(json!({ "ids": [file_id] })),
        ),
    ] {
        let got = refused(&srv, method.clone(), &path, Some(&b), body).await;
        assert_eq!(got, not_found, "{method} {path}");
    }
    let sk2 = key["key"].as_str().unwrap();
    let (status, _) = call(&srv, Method::GET, "/v1/keys", sk2, None).await;
    assert_eq!(status, 200, "A's key still works");
    let (_, tokens) = call(&srv, Method::GET, "/v1/upload-tokens", &a, None).await;
    assert_eq!(tokens["tokens"][0]["id"], token_id.as_str());
    let (_, hooks) = call(&srv, Method::GET, "/v1/webhooks", &a, None).await;
    assert_eq!(hooks["webhooks"][0]["id"], hook_id.as_str());
    let (status, _) = call(
        &srv,
        Method::GET,
        &format!("/v1/webhooks/{hook_id}/deliveries"),
        &a,
        None,
    )
    .await;
    assert_eq!(status, 200);
}
