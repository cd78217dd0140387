//! The CSRF rule: a request the session cookie authenticates must come from
//! the console's page (`X-Filestore-Console: 1`, same origin); otherwise 403
//! in the /v1 envelope, and nothing changes.

use super::{exists, page, sign_in, upload};
use crate::common::{error_code, TestServer};
use reqwest::Method;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cookie_request_from_elsewhere_changes_nothing() {
    let srv = TestServer::start().await;
    let cookie = sign_in(&srv, &srv.secret_key).await;
    let id = upload(&srv, "keep.txt").await;
    let path = format!("/v1/files/{id}");
    // Without the page's header: a plain cross-site form post, a fetch.
    let r = srv
        .http
        .post(srv.url("/v1/files/delete"))
        .header("cookie", &cookie)
        .header("origin", "https://evil.example")
        .header("sec-fetch-site", "cross-site")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("ids={id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    let r = srv
        .http
        .delete(srv.url(&path))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    // With the header but from another origin or site.
    let r = page(&srv, Method::DELETE, &path, &cookie)
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    let r = page(&srv, Method::PATCH, &path, &cookie)
        .header("sec-fetch-site", "same-site")
        .json(&json!({"name": "stolen.txt"}))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    let r = page(&srv, Method::POST, "/v1/upload", &cookie)
        .header("origin", "https://evil.example")
        .multipart(TestServer::form("x.txt", b"x".to_vec(), &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    let r = srv
        .http
        .delete(srv.url("/console/session"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    // Nothing changed: the file is there with its name, the session lives.
    let (status, file) = srv.get_json(&srv.secret_key, &path).await;
    assert_eq!((status, file["name"].as_str()), (200, Some("keep.txt")));
    let (_, files) = srv.get_json(&srv.secret_key, "/v1/files").await;
    assert_eq!(files["files"].as_array().unwrap().len(), 1);
    assert_eq!(super::list(&srv, &cookie).await.0, 200);
    // No page of another origin signs a visitor in.
    let r = srv
        .http
        .post(srv.url("/console/session"))
        .header("origin", "https://evil.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("key={}", srv.secret_key))
        .send()
        .await
        .unwrap();
    assert!(r.headers().get("set-cookie").is_none());
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    // From the page (same origin, the header): the change is made.
    let r = page(&srv, Method::PATCH, &path, &cookie)
        .header("origin", srv.base_url.as_str())
        .header("sec-fetch-site", "same-origin")
        .json(&json!({"name": "renamed.txt"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = page(&srv, Method::DELETE, &path, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(!exists(&srv, &id).await);
    srv.stop().await;
}
