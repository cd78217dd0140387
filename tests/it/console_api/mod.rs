//! The /v1 endpoints the console stands on (CONTRACT §19), called with a
//! secret key as any client would: `GET/POST /v1/keys`, `DELETE
//! /v1/keys/{id}`; `GET /v1/upload-tokens`; `GET/POST /v1/webhooks`,
//! `DELETE /v1/webhooks/{id}`, `GET /v1/webhooks/{id}/deliveries` (after
//! real deliveries to a receiver, answered 2xx, failing, then given up);
//! `GET /v1/usage/history` (zero-filled days and the day boundary, with the
//! test clock); `POST /v1/files/zip` (read back with Python's zipfile).
//! Every error each can give (400, 401, 403, 404) is provoked, two
//! accounts see nothing of each other's, and a console session gets what
//! its key gets.

use crate::common::{error_code, TestServer};
use reqwest::Method;
use serde_json::Value;

mod history;
mod isolation;
mod keys;
mod receivers;
mod session;
mod tokens;
mod webhooks;
mod zip;

/// A request to `path` with `key` (none: no Authorization) and a JSON body.
async fn send(
    srv: &TestServer,
    method: Method,
    path: &str,
    key: Option<&str>,
    body: Option<Value>,
) -> reqwest::Response {
    let mut req = srv.http.request(method, srv.url(path));
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    req.send().await.expect("request")
}

/// The status and JSON body of a request.
async fn call(
    srv: &TestServer,
    method: Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let r = send(srv, method, path, Some(key), body).await;
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// The status and error code of a refused request (the envelope checked).
async fn refused(
    srv: &TestServer,
    method: Method,
    path: &str,
    key: Option<&str>,
    body: Option<Value>,
) -> (u16, String) {
    error_code(send(srv, method, path, key, body).await).await
}

/// A raw body (not JSON, or JSON of the wrong shape) to `path`.
async fn refused_raw(srv: &TestServer, path: &str, key: &str, body: &str) -> (u16, String) {
    let r = srv
        .http
        .post(srv.url(path))
        .bearer_auth(key)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    error_code(r).await
}

/// 401 without a key, with an unknown one and with an upload token; 403
/// with a public key (from one of its origins): every console endpoint
/// `method path` (with `body`) refuses them so.
async fn only_secret_keys(srv: &TestServer, method: Method, path: &str, body: Option<Value>) {
    let no_key = refused(srv, method.clone(), path, None, body.clone()).await;
    assert_eq!(no_key, (401, "unauthorized".into()), "{method} {path}");
    let bad = refused(srv, method.clone(), path, Some("sk_nope"), body.clone()).await;
    assert_eq!(bad, (401, "unauthorized".into()), "{method} {path}");
    let (status, token) = call(
        srv,
        Method::POST,
        "/v1/upload-tokens",
        &srv.secret_key,
        None,
    )
    .await;
    assert_eq!(status, 201, "{token}");
    let upt = token["token"].as_str().unwrap();
    let with_token = refused(srv, method.clone(), path, Some(upt), body.clone()).await;
    assert_eq!(with_token, (401, "unauthorized".into()), "{method} {path}");
    let origin = "https://app.example.com";
    let pk = srv.new_key("public", &[origin]).await;
    let mut req = srv
        .http
        .request(method.clone(), srv.url(path))
        .bearer_auth(&pk)
        .header("origin", origin);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let public = error_code(req.send().await.unwrap()).await;
    assert_eq!(public, (403, "forbidden".into()), "{method} {path}");
}
