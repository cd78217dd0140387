//! The console's page calls these endpoints with its session (the cookie
//! and `X-Filestore-Console: 1`; `crate::console`), which stands for the key it signed in
//! with: the same answers as with that key, and revoking that key through
//! the session says so and ends the session.

use super::*;
use crate::console::{page, sign_in};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_session_is_its_secret_key() {
    let srv = TestServer::start().await;
    let (status, created) = call(
        &srv,
        Method::POST,
        "/v1/keys",
        &srv.secret_key,
        Some(json!({"kind": "secret", "name": "console"})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let key = created["key"].as_str().unwrap();
    let key_id = created["id"].as_str().unwrap();
    let cookie = sign_in(&srv, key).await;
    let json_of = |r: reqwest::Response| async move {
        let status = r.status().as_u16();
        (status, r.json::<Value>().await.unwrap_or(Value::Null))
    };
    for path in [
        "/v1/keys",
        "/v1/upload-tokens",
        "/v1/webhooks",
        "/v1/usage/history?days=7",
    ] {
        let r = page(&srv, Method::GET, path, &cookie).send().await.unwrap();
        let (status, body) = json_of(r).await;
        assert_eq!(status, 200, "{path}: {body}");
    }
    let file = srv.upload_ok("s.txt", b"via session".to_vec(), &[]).await;
    let r = page(&srv, Method::POST, "/v1/files/zip", &cookie)
        .json(&json!({ "ids": [file["id"]] }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/zip");
    let r = page(&srv, Method::POST, "/v1/webhooks", &cookie)
        .json(&json!({"url": "https://example.com/hook"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    // The session's own key, revoked through it: said, and the session ends.
    let r = page(&srv, Method::DELETE, &format!("/v1/keys/{key_id}"), &cookie)
        .send()
        .await
        .unwrap();
    let (status, gone) = json_of(r).await;
    assert_eq!(status, 200, "{gone}");
    assert_eq!(gone["calling_key"], true, "{gone}");
    let r = page(&srv, Method::GET, "/v1/keys", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "the session ended with its key");
}
