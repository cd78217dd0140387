//! The console (CONTRACT §19), its server side over HTTP: the page and its
//! assets with their security headers, sign-in (the cookie's flags; public
//! keys, tokens and unknown keys refused), the session standing for its key
//! on `/v1`, the CSRF rule (a cookie request from anywhere but the
//! console's page is 403 and changes nothing), and the ends of a session:
//! sign-out, idle time (the test clock) and revoking its key. On SQLite or
//! PostgreSQL, whichever the suite runs on (`contrib/pg-test.sh`).

use crate::common::{error_code, TestOptions, TestServer};
use reqwest::header::{HeaderMap, SET_COOKIE};
use serde_json::{json, Value};
use std::time::Duration;

mod assets;
mod csrf;
mod ends;
mod nodes;
mod sign_in;

/// The header the console's page sends with every request.
pub const PAGE: (&str, &str) = ("x-filestore-console", "1");

/// A server with `[console]` as `toml` says.
pub async fn server_with(toml: &str) -> TestServer {
    TestServer::start_with(TestOptions {
        plans_toml: Some(toml.into()),
        ..Default::default()
    })
    .await
}

/// Signs in with `key`: the answer.
pub async fn sign_in_raw(srv: &TestServer, key: &str) -> reqwest::Response {
    srv.http
        .post(srv.url("/console/session"))
        .json(&json!({ "key": key }))
        .send()
        .await
        .unwrap()
}

/// The session cookie a 201 sign-in set, as `name=value`.
pub fn session_cookie(headers: &HeaderMap) -> String {
    let set = headers
        .get(SET_COOKIE)
        .expect("a Set-Cookie")
        .to_str()
        .unwrap();
    set.split(';').next().unwrap().trim().to_string()
}

/// Signs in with `key`; the cookie (`filestore_console=cs_…`).
pub async fn sign_in(srv: &TestServer, key: &str) -> String {
    let r = sign_in_raw(srv, key).await;
    assert_eq!(r.status(), 201);
    session_cookie(r.headers())
}

/// `method path` as the console's page sends it: the cookie and the header.
pub fn page(
    srv: &TestServer,
    method: reqwest::Method,
    path: &str,
    cookie: &str,
) -> reqwest::RequestBuilder {
    srv.http
        .request(method, srv.url(path))
        .header("cookie", cookie)
        .header(PAGE.0, PAGE.1)
}

/// `GET /v1/files` with the session: its status (and body).
pub async fn list(srv: &TestServer, cookie: &str) -> (u16, Value) {
    let r = page(srv, reqwest::Method::GET, "/v1/files", cookie)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap())
}

/// Uploads a small file with the server's secret key; its id.
pub async fn upload(srv: &TestServer, name: &str) -> String {
    let r = srv.upload(name, b"hello".to_vec(), &[]).await;
    assert_eq!(r.status(), 201);
    r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Whether file `id` is still there (asked with the secret key).
pub async fn exists(srv: &TestServer, id: &str) -> bool {
    let (status, _) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
        .await;
    status == 200
}

/// 401 `unauthorized` for the session `cookie` on `/v1`.
pub async fn ended(srv: &TestServer, cookie: &str) {
    let r = page(srv, reqwest::Method::GET, "/v1/files", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
}

pub const MINUTE: Duration = Duration::from_mins(1);
