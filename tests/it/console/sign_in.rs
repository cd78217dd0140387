//! Sign-in: the session cookie's flags, what may sign in, and the session
//! standing for its key on `/v1`.

use super::{list, page, session_cookie, sign_in, sign_in_raw, PAGE};
use crate::common::{error_code, TestServer};
use reqwest::header::SET_COOKIE;
use reqwest::Method;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_key_signs_in_to_an_http_only_strict_session() {
    let srv = TestServer::start().await;
    let id = super::upload(&srv, "a.txt").await;
    let r = sign_in_raw(&srv, &srv.secret_key).await;
    assert_eq!(r.status(), 201);
    let set = r.headers()[SET_COOKIE].to_str().unwrap().to_string();
    assert!(set.starts_with("filestore_console=cs_"), "{set}");
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(set.contains(flag), "{flag} in {set}");
    }
    // http base_url: not Secure (an https one is).
    assert!(!set.contains("Secure"), "{set}");
    // The key is in no cookie and not in the answer.
    assert!(!set.contains(&srv.secret_key));
    let who: Value = r.json().await.unwrap();
    assert_eq!(who["account"]["id"], srv.account_id.as_str());
    assert_eq!(who["key"]["kind"], "secret");
    assert!(!who.to_string().contains(&srv.secret_key));
    let cookie = session_cookie_of(&set);
    // The session stands for its key: the account's files, its whoami.
    let (status, body) = list(&srv, &cookie).await;
    assert_eq!(status, 200);
    assert_eq!(body["files"][0]["id"], id.as_str());
    let r = page(&srv, Method::GET, "/console/session", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), who);
    // The database keeps the session's hash, never its id.
    let session_id = cookie.split_once('=').unwrap().1;
    let rows = srv.count("SELECT COUNT(*) FROM console_sessions");
    assert_eq!(rows, 1);
    let held = srv.text("SELECT key_id FROM console_sessions");
    assert_eq!(held, who["key"]["id"].as_str().unwrap());
    let hashed = "SELECT COUNT(*) FROM console_sessions WHERE length(session_hash) = 32";
    assert_eq!(srv.count(hashed), 1);
    assert!(session_id.starts_with("cs_") && session_id.len() == 67);
    // A form sign-in works too.
    let r = srv
        .http
        .post(srv.url("/console/session"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("key={}", srv.secret_key))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let other = session_cookie(r.headers());
    assert_ne!(other, cookie);
    assert_eq!(list(&srv, &other).await.0, 200);
    // A Bearer key wins over a cookie: the request is the key's.
    let r = srv
        .http
        .get(srv.url("/v1/files"))
        .header("cookie", &cookie)
        .bearer_auth("sk_unknown")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
    srv.stop().await;
}

fn session_cookie_of(set: &str) -> String {
    set.split(';').next().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_live_secret_key_signs_in() {
    let srv = TestServer::start().await;
    let public = srv.new_key("public", &["https://app.example.com"]).await;
    let r = sign_in_raw(&srv, &public).await;
    assert!(r.headers().get(SET_COOKIE).is_none());
    let (status, code) = error_code(r).await;
    assert_eq!((status, code.as_str()), (400, "bad_request"));
    let token: Value = srv
        .http
        .post(srv.url("/v1/upload-tokens"))
        .bearer_auth(&srv.secret_key)
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = token["token"].as_str().unwrap();
    let r = sign_in_raw(&srv, token).await;
    assert_eq!(error_code(r).await, (400, "bad_request".into()));
    let r = sign_in_raw(&srv, "sk_0000000000000000000000000000000000000000000000000").await;
    assert!(r.headers().get(SET_COOKIE).is_none());
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
    let r = sign_in_raw(&srv, "").await;
    assert_eq!(error_code(r).await, (400, "bad_request".into()));
    let r = srv
        .http
        .post(srv.url("/console/session"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (400, "bad_request".into()));
    // A body past 8 KiB is refused in the envelope, not held.
    let r = sign_in_raw(&srv, &"sk_a".repeat(30_000)).await;
    assert_eq!(error_code(r).await, (400, "bad_request".into()));
    assert_eq!(srv.count("SELECT COUNT(*) FROM console_sessions"), 0);
    // No cookie, or one that is no session: 401, as no key is.
    let r = srv
        .http
        .get(srv.url("/console/session"))
        .header(PAGE.0, PAGE.1)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
    for junk in ["filestore_console=cs_nothing", "filestore_console=sk_x"] {
        super::ended(&srv, junk).await;
    }
    let _ = sign_in(&srv, &srv.secret_key).await;
    srv.stop().await;
}
