//! `[webhooks] receivers`: where deliveries may go. By default (`loopback`)
//! a receiver written as a private, link-local or reserved address is
//! refused when the webhook is made (400) and a loopback one is taken; with
//! `public`, a name that resolves to loopback is taken but the sender never
//! connects to it (the deliveries log says so, the receiver sees nothing).

use super::*;
use crate::common::receiver::failing;
use crate::common::TestOptions;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;

async fn create(srv: &TestServer, url: &str) -> (u16, Value) {
    let body = Some(json!({"url": url}));
    call(srv, Method::POST, "/v1/webhooks", &srv.secret_key, body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_and_link_local_receivers_are_refused_loopback_is_taken() {
    let srv = TestServer::start().await;
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.5/hook",
        "http://192.168.1.1:8080/hook",
        "http://[fd00:ec2::254]/hook",
        "http://[::ffff:10.1.2.3]/hook",
        "http://0.0.0.0:9/hook",
    ] {
        let (status, body) = create(&srv, url).await;
        assert_eq!(status, 400, "{url}: {body}");
        assert_eq!(body["error"]["code"], "bad_request", "{url}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("[webhooks] receivers"), "{message}");
    }
    assert_eq!(
        srv.count("SELECT COUNT(*) FROM webhooks"),
        0,
        "nothing refused was kept"
    );
    for url in ["http://127.0.0.1:9/hook", "http://[::1]:9/hook"] {
        let (status, body) = create(&srv, url).await;
        assert_eq!(status, 201, "{url}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_public_a_name_resolving_to_loopback_is_never_connected_to() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[webhooks]\nreceivers = \"public\"\n".into()),
        ..Default::default()
    })
    .await;
    let (status, body) = create(&srv, "http://127.0.0.1:9/hook").await;
    assert_eq!(status, 400, "{body}");
    let (attempts, url) = failing().await;
    let named = url.replace("127.0.0.1", "localhost");
    let (status, hook) = create(&srv, &named).await;
    assert_eq!(status, 201, "{hook}");
    let id = hook["id"].as_str().unwrap().to_string();
    srv.upload_ok("a.txt", b"hello".to_vec(), &[]).await;
    let path = format!("/v1/webhooks/{id}/deliveries");
    let mut seen = Value::Null;
    for _ in 0..200 {
        let (status, body) = call(&srv, Method::GET, &path, &srv.secret_key, None).await;
        assert_eq!(status, 200, "{body}");
        if body["deliveries"][0]["status"] == "retrying" {
            seen = body;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(seen["deliveries"][0]["http_status"], Value::Null, "{seen}");
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        0,
        "the receiver was reached"
    );
}
