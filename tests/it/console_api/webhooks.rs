//! `/v1/webhooks`: list (never a secret), create (the record `admin
//! webhook create` prints, its secret shown once), delete, and the
//! deliveries log after real deliveries: delivered (2xx), retrying (a
//! receiver answering 500), failed (given up after 24 h, with the test
//! clock); every refusal.

use super::*;
use crate::common::receiver::{failing, healthy};
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The deliveries of webhook `id` once `done` holds of them (10 s at most).
async fn deliveries_when(
    srv: &TestServer,
    id: &str,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let path = format!("/v1/webhooks/{id}/deliveries");
    for _ in 0..200 {
        let (status, body) = call(srv, Method::GET, &path, &srv.secret_key, None).await;
        assert_eq!(status, 200, "{body}");
        let list = body["deliveries"].as_array().unwrap().clone();
        if done(&list) {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("deliveries of {id}: never {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_are_managed_and_their_deliveries_shown() {
    let srv = TestServer::start().await;
    let sk = srv.secret_key.clone();
    let (rx, url) = healthy().await;
    let r = send(
        &srv,
        Method::POST,
        "/v1/webhooks",
        Some(&sk),
        Some(json!({"url": url})),
    )
    .await;
    assert_eq!(r.status(), 201);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let hook: Value = r.json().await.unwrap();
    let id = hook["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("wh_"), "{hook}");
    assert_eq!(location, format!("/v1/webhooks/{id}"));
    let secret = hook["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"), "{hook}");
    assert_eq!(hook["url"], url.as_str());
    assert_eq!(hook["account"], srv.account_id.as_str());
    assert_eq!(
        hook["events"],
        json!([
            "file.created",
            "file.deleted",
            "file.expired",
            "file.updated"
        ]),
        "all events by default"
    );
    *rx.secret.lock().unwrap() = secret.clone();

    let (status, list) = call(&srv, Method::GET, "/v1/webhooks", &sk, None).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["webhooks"].as_array().unwrap().len(), 1);
    assert_eq!(list["webhooks"][0]["id"], id.as_str());
    assert_eq!(list["webhooks"][0]["url"], url.as_str());
    assert!(
        !list.to_string().contains(&secret),
        "a secret listed: {list}"
    );
    assert!(list["webhooks"][0].get("secret").is_none());

    // Nothing sent yet: no delivery.
    let path = format!("/v1/webhooks/{id}/deliveries");
    let (status, none) = call(&srv, Method::GET, &path, &sk, None).await;
    assert_eq!((status, none), (200, json!({"deliveries": []})));

    // A delivery answered 204, then a second event: newest first.
    let file = srv.upload_ok("a.txt", b"hello".to_vec(), &[]).await;
    let first = deliveries_when(&srv, &id, "one delivered", |d| d.len() == 1).await;
    assert_eq!(
        rx.deliveries.load(Ordering::SeqCst),
        1,
        "the receiver took it"
    );
    let d = &first[0];
    assert_eq!(d["type"], "file.created", "{d}");
    assert_eq!(d["status"], "delivered", "{d}");
    assert_eq!(d["http_status"], 204, "{d}");
    assert_eq!(d["attempts"], 1, "{d}");
    assert!(d["event_id"].as_str().unwrap().starts_with("msg_"), "{d}");
    assert!(d["at"].as_str().unwrap().ends_with('Z'), "{d}");
    let fid = file["id"].as_str().unwrap();
    assert_eq!(srv.delete_as(&sk, fid).await.status(), 200);
    let both = deliveries_when(&srv, &id, "two delivered", |d| d.len() == 2).await;
    let types: Vec<&str> = both.iter().map(|d| d["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["file.deleted", "file.created"], "newest first");
    assert_ne!(both[0]["event_id"], both[1]["event_id"]);

    // Deleted: gone from the list, nothing more sent, its log gone too.
    let gone = call(
        &srv,
        Method::DELETE,
        &format!("/v1/webhooks/{id}"),
        &sk,
        None,
    )
    .await;
    assert_eq!(gone, (200, json!({"success": true})));
    let (_, list) = call(&srv, Method::GET, "/v1/webhooks", &sk, None).await;
    assert_eq!(list, json!({"webhooks": []}));
    let again = refused(
        &srv,
        Method::DELETE,
        &format!("/v1/webhooks/{id}"),
        Some(&sk),
        None,
    )
    .await;
    assert_eq!(again, (404, "not_found".into()));
    let log = refused(&srv, Method::GET, &path, Some(&sk), None).await;
    assert_eq!(log, (404, "not_found".into()));
    assert_eq!(
        srv.count(&format!(
            "SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = '{id}'"
        )),
        0
    );
    srv.upload_ok("b.txt", b"again".to_vec(), &[]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rx.deliveries.load(Ordering::SeqCst), 2, "nothing more sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_receiver_shows_retrying_then_failed() {
    let srv = TestServer::start().await;
    let sk = srv.secret_key.clone();
    let (attempts, url) = failing().await;
    let (status, hook) = call(
        &srv,
        Method::POST,
        "/v1/webhooks",
        &sk,
        Some(json!({"url": url, "events": ["file.created"]})),
    )
    .await;
    assert_eq!(status, 201, "{hook}");
    assert_eq!(hook["events"], json!(["file.created"]));
    let id = hook["id"].as_str().unwrap().to_string();
    srv.upload_ok("a.txt", b"hello".to_vec(), &[]).await;
    let retrying = deliveries_when(&srv, &id, "retrying", |d| {
        d.len() == 1 && d[0]["status"] == "retrying"
    })
    .await;
    assert!(attempts.load(Ordering::SeqCst) >= 1);
    assert_eq!(retrying[0]["http_status"], 500, "{retrying:?}");
    assert!(retrying[0]["attempts"].as_u64().unwrap() >= 1);
    // A day later the next attempt is the last: given up.
    srv.clock.advance(Duration::from_hours(25));
    let failed = deliveries_when(&srv, &id, "failed", |d| d[0]["status"] == "failed").await;
    assert_eq!(failed.len(), 1, "one event: {failed:?}");
    assert_eq!(failed[0]["http_status"], 500);
    assert!(
        failed[0]["attempts"].as_u64().unwrap() > retrying[0]["attempts"].as_u64().unwrap(),
        "{failed:?}"
    );
    assert_eq!(
        srv.count("SELECT COUNT(*) FROM webhook_events"),
        0,
        "out of the outbox"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_webhook_is_refused_and_only_secret_keys_manage_webhooks() {
    let srv = TestServer::start().await;
    let sk = srv.secret_key.clone();
    for (body, why) in [
        (json!({"url": "ftp://example.com/hook"}), "not http(s)"),
        (json!({"url": "/hook"}), "not absolute"),
        (json!({"url": "https://u:p@example.com/"}), "credentials"),
        (json!({"url": "https://example.com/#x"}), "a fragment"),
        (
            json!({"url": format!("https://example.com/{}", "a".repeat(2048))}),
            "too long",
        ),
        (
            json!({"url": "https://example.com/", "events": ["file.moved"]}),
            "an unknown event",
        ),
        (json!({"events": ["file.created"]}), "no url"),
        (
            json!({"url": "https://example.com/", "secret": "x"}),
            "an unknown field",
        ),
        (json!({"url": 5}), "a url not a string"),
    ] {
        let got = refused(&srv, Method::POST, "/v1/webhooks", Some(&sk), Some(body)).await;
        assert_eq!(got, (400, "bad_request".into()), "{why}");
    }
    for raw in ["nope", "[]", ""] {
        let got = refused_raw(&srv, "/v1/webhooks", &sk, raw).await;
        assert_eq!(got, (400, "bad_request".into()), "{raw:?}");
    }
    let (_, list) = call(&srv, Method::GET, "/v1/webhooks", &sk, None).await;
    assert_eq!(list, json!({"webhooks": []}), "nothing stored");

    // At most 25 of one account.
    let mut last = String::new();
    for i in 0..25 {
        let body = json!({"url": format!("https://example.com/{i}")});
        let (status, hook) = call(&srv, Method::POST, "/v1/webhooks", &sk, Some(body)).await;
        assert_eq!(status, 201, "{hook}");
        last = hook["id"].as_str().unwrap().to_string();
    }
    let body = json!({"url": "https://example.com/26"});
    let over = refused(&srv, Method::POST, "/v1/webhooks", Some(&sk), Some(body)).await;
    assert_eq!(over, (400, "bad_request".into()));

    let unknown = "/v1/webhooks/wh_nope";
    assert_eq!(
        refused(&srv, Method::DELETE, unknown, Some(&sk), None).await,
        (404, "not_found".into())
    );
    let log = "/v1/webhooks/wh_nope/deliveries";
    assert_eq!(
        refused(&srv, Method::GET, log, Some(&sk), None).await,
        (404, "not_found".into())
    );
    only_secret_keys(&srv, Method::GET, "/v1/webhooks", None).await;
    let body = json!({"url": "https://example.com/x"});
    only_secret_keys(&srv, Method::POST, "/v1/webhooks", Some(body)).await;
    only_secret_keys(&srv, Method::DELETE, &format!("/v1/webhooks/{last}"), None).await;
    let log = format!("/v1/webhooks/{last}/deliveries");
    only_secret_keys(&srv, Method::GET, &log, None).await;
    let (_, list) = call(&srv, Method::GET, "/v1/webhooks", &sk, None).await;
    assert_eq!(list["webhooks"].as_array().unwrap().len(), 25);
}
