//! `GET /v1/upload-tokens`: the active tokens only (not revoked, not
//! expired), newest first, never their secret or upload url.

use super::*;
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_active_tokens_are_listed_without_secrets() {
    let srv = TestServer::start().await;
    let sk = srv.secret_key.clone();
    let mut made = Vec::new();
    for body in [
        json!({"expires_in": 60, "folder": "short"}),
        json!({"expires_in": 3600, "max_uploads": 3}),
        json!({"expires_in": 3600}),
    ] {
        let (status, t) = call(&srv, Method::POST, "/v1/upload-tokens", &sk, Some(body)).await;
        assert_eq!(status, 201, "{t}");
        made.push(t);
        // Distinct creation times: the list's order is theirs.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let id = |t: &Value| t["id"].as_str().unwrap().to_string();
    let revoked = id(&made[2]);
    let (status, _) = call(
        &srv,
        Method::DELETE,
        &format!("/v1/upload-tokens/{revoked}"),
        &sk,
        None,
    )
    .await;
    assert_eq!(status, 200);
    let (status, list) = call(&srv, Method::GET, "/v1/upload-tokens", &sk, None).await;
    assert_eq!(status, 200, "{list}");
    let listed: Vec<String> = list["tokens"].as_array().unwrap().iter().map(id).collect();
    assert_eq!(listed, [id(&made[1]), id(&made[0])], "active, newest first");
    let text = list.to_string();
    for t in &made {
        assert!(!text.contains(t["token"].as_str().unwrap()), "{text}");
    }
    for t in list["tokens"].as_array().unwrap() {
        assert!(t.get("token").is_none() && t.get("url").is_none(), "{t}");
    }
    let first = &list["tokens"][0];
    assert_eq!(first["max_uploads"], 3);
    assert_eq!(first["uploads_left"], 3);
    assert_eq!(list["tokens"][1]["policy"]["folder"], "short");

    // Expired: no longer listed.
    srv.clock.advance(Duration::from_secs(61));
    let (_, list) = call(&srv, Method::GET, "/v1/upload-tokens", &sk, None).await;
    let listed: Vec<String> = list["tokens"].as_array().unwrap().iter().map(id).collect();
    assert_eq!(listed, [id(&made[1])]);

    only_secret_keys(&srv, Method::GET, "/v1/upload-tokens", None).await;
}
