//! Public keys from their origins (CORS); grace period and rate limits.

use super::*;

both_stores!(
    public_keys_use_it_from_their_origins,
    grace_period_and_rate_limits_apply,
    a_smaller_plan_stores_no_file_over_its_maximum,
    a_plan_that_shrinks_while_a_patch_streams_stores_no_file_over_it,
    a_public_key_holds_at_most_half_of_the_open_uploads,
);

async fn public_keys_use_it_from_their_origins(b: Backend) {
    let srv = TestServer::on(b).await;
    let pk = srv.new_key("public", &["https://app.example.com"]).await;
    let origin = "https://app.example.com";
    // The preflight allows tus's headers and methods.
    let r = srv
        .http
        .request(reqwest::Method::OPTIONS, srv.url("/v1/uploads/u_x"))
        .header("origin", origin)
        .header("access-control-request-method", "PATCH")
        .header(
            "access-control-request-headers",
            "tus-resumable, upload-offset",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let allowed = r.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap();
    for h in [
        "tus-resumable",
        "upload-offset",
        "upload-length",
        "upload-metadata",
        "upload-checksum",
    ] {
        assert!(allowed.contains(h), "{allowed}");
    }
    assert!(r.headers()["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .contains("PATCH"));
    let start = |origin: &str, meta: &[(&str, &str)]| {
        srv.http
            .post(srv.url("/v1/uploads"))
            .bearer_auth(&pk)
            .header("origin", origin)
            .header(TUS.0, TUS.1)
            .header("upload-length", 3)
            .header("upload-metadata", encode_metadata(meta))
            .send()
    };
    let r = start(origin, &[("filename", "p.txt")]).await.unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["access-control-allow-origin"], origin);
    let exposed = r.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap();
    for h in [
        "location",
        "upload-offset",
        "upload-length",
        "upload-expires",
        "x-file-id",
    ] {
        assert!(exposed.contains(h), "{exposed}");
    }
    let url = r.headers()["location"].to_str().unwrap().to_string();
    let r = srv
        .http
        .patch(&url)
        .bearer_auth(&pk)
        .header("origin", origin)
        .header(TUS.0, TUS.1)
        .header(OCTETS.0, OCTETS.1)
        .header("upload-offset", 0)
        .body("abc")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert!(r.headers().contains_key("x-file-id"));
    let r = start("https://evil.example.com", &[]).await.unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    let r = start(origin, &[("private", "true")]).await.unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    srv.stop().await;
}

async fn grace_period_and_rate_limits_apply(b: Backend) {
    let srv = on_plans(b, "[plans.free]\nrate_limit = 2\nrate_window = \"1h\"\n").await;
    let url = created(&srv, 10, &[("filename", "g.txt")]).await;
    // An account in its grace period may not start an upload; one the plan
    // admitted before goes on.
    srv.set_account(&srv.account_id, None, Some(true)).await;
    let r = create(&srv, &srv.secret_key, 10, &[]).await;
    assert_eq!(error_code(r).await, (403, "grace_period".into()));
    assert_eq!(patch(&srv, &url, 0, vec![1; 5]).await.status(), 204);
    srv.set_account(&srv.account_id, None, Some(false)).await;
    // The key's window counts creations (refusals before it do not); the
    // PATCHes of an admitted upload never meet a 429 (tus clients give up on one).
    let r = create(&srv, &srv.secret_key, 10, &[]).await;
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["x-ratelimit-remaining"], "0");
    let r = create(&srv, &srv.secret_key, 10, &[]).await;
    assert!(r.headers().contains_key("retry-after"));
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    let r = patch(&srv, &url, 5, vec![1; 5]).await;
    assert_eq!(r.status(), 204);
    assert!(r.headers().contains_key("x-file-id"));
    srv.stop().await;
}

/// An account moved to a plan with a smaller `max_file_size` while an
/// upload over it is open: its PATCHes are 413, no file is stored; one
/// within the new maximum goes on.
async fn a_smaller_plan_stores_no_file_over_its_maximum(b: Backend) {
    let srv = on_plans(b, "[plans.small]\nmax_file_size = 100\n").await;
    let large = created(&srv, 5000, &[("filename", "large.bin")]).await;
    let small = created(&srv, 50, &[("filename", "small.bin")]).await;
    assert_eq!(patch(&srv, &large, 0, vec![1; 1000]).await.status(), 204);
    srv.set_account(&srv.account_id, Some("small"), None).await;
    let r = patch(&srv, &large, 1000, vec![1; 4000]).await;
    assert_eq!(error_code(r).await, (413, "file_too_large".into()));
    // Ended: it could never complete, and held its reservation.
    assert_eq!(head_status(&srv, &large).await, 404);
    let r = patch(&srv, &small, 0, vec![2; 50]).await;
    assert_eq!(r.status(), 204);
    assert!(r.headers().contains_key("x-file-id"));
    assert_eq!(held(&srv).await, (1, 50, 0));
    srv.stop().await;
}

/// The plan is judged again when the last byte is in: a PATCH that was
/// streaming when the account moved to a smaller plan stores no file over
/// the new maximum, and its upload is ended.
async fn a_plan_that_shrinks_while_a_patch_streams_stores_no_file_over_it(b: Backend) {
    let srv = on_plans(b, "[plans.small]\nmax_file_size = 100\n").await;
    let large = created(&srv, 5000, &[("filename", "large.bin")]).await;
    // A PATCH streaming its first 1,000 bytes, its plan read at its start:
    // another PATCH of the upload is told it is busy (423) only once the
    // first holds its turn. A probe that comes first takes the turn for a
    // moment, and the streaming PATCH may then be the one told so: it is
    // sent again.
    let mut attempts = 0;
    let (tx, sending) = loop {
        attempts += 1;
        assert!(attempts <= 5, "the streaming PATCH never held its turn");
        let (tx, sending) = streaming_patch(&srv, &large);
        tx.send(Ok(vec![1; 1000].into())).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let mut holding = false;
        for _ in 0..100 {
            if sending.is_finished() {
                break;
            }
            if patch(&srv, &large, 4999, Vec::new()).await.status() == 423 {
                holding = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        if holding {
            break (tx, sending);
        }
        // Refused (or cut off mid-body, its answer come early): only a
        // probe's turn stops it.
        if let Ok(r) = sending.await.unwrap() {
            assert_eq!(r.status(), 423, "only a probe's turn stops it");
        }
    };
    srv.set_account(&srv.account_id, Some("small"), None).await;
    tx.send(Ok(vec![1; 4000].into())).await.unwrap();
    drop(tx);
    let r = sending.await.unwrap().unwrap();
    assert_eq!(error_code(r).await, (413, "file_too_large".into()));
    assert_eq!(head_status(&srv, &large).await, 404, "the upload is ended");
    assert_eq!(held(&srv).await, (0, 0, 0));
    srv.stop().await;
}

/// A server on `b` whose config has `plans` (TOML).
async fn on_plans(b: Backend, plans: &str) -> TestServer {
    TestServer::start_with(TestOptions {
        plans_toml: Some(plans.into()),
        backend: Some(b),
        ..Default::default()
    })
    .await
}

/// The status of a HEAD of the upload at `url`, with the secret key.
async fn head_status(srv: &TestServer, url: &str) -> u16 {
    srv.http
        .head(url)
        .bearer_auth(&srv.secret_key)
        .header("tus-resumable", "1.0.0")
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The account's (files, stored bytes, reserved bytes).
async fn held(srv: &TestServer) -> (u64, u64, u64) {
    let usage = srv.usage().await;
    let n = |k: &str| usage[k].as_u64().unwrap();
    (n("upload_count"), n("storage_bytes"), n("reserved_bytes"))
}

/// A PATCH of `url` at offset 0 whose body is what the sender gives, until
/// it is dropped.
fn streaming_patch(
    srv: &TestServer,
    url: &str,
) -> (
    tokio::sync::mpsc::Sender<Result<bytes::Bytes, std::io::Error>>,
    tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(4);
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let request = srv
        .http
        .patch(url)
        .bearer_auth(&srv.secret_key)
        .header("tus-resumable", "1.0.0")
        .header("upload-offset", "0")
        .header("content-type", "application/offset+octet-stream")
        .body(reqwest::Body::wrap_stream(body))
        .send();
    (tx, tokio::spawn(request))
}

/// A public key (anyone with the page has it) holds at most half of its
/// account's `open_uploads`: its creations leave the account's own room.
async fn a_public_key_holds_at_most_half_of_the_open_uploads(b: Backend) {
    let srv = on_plans(b, "[plans.free]\nopen_uploads = 4\n").await;
    let origin = "https://app.example.com";
    let pk = srv.new_key("public", &[origin]).await;
    let by_page = || {
        srv.http
            .post(srv.url("/v1/uploads"))
            .bearer_auth(&pk)
            .header("origin", origin)
            .header("tus-resumable", "1.0.0")
            .header("upload-length", "10")
    };
    let mut made = Vec::new();
    for _ in 0..2 {
        let r = by_page().send().await.unwrap();
        assert_eq!(r.status(), 201);
        made.push(r.headers()["location"].to_str().unwrap().to_string());
    }
    let r = by_page().send().await.unwrap();
    assert!(r.headers().contains_key("retry-after"));
    let (status, message) = (r.status(), r.text().await.unwrap());
    assert_eq!(status, 429, "{message}");
    assert!(message.contains("public keys"), "{message}");
    // The account's public keys share the half: another site's key too.
    let pk2 = srv.new_key("public", &[origin]).await;
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&pk2)
        .header("origin", origin)
        .header("tus-resumable", "1.0.0")
        .header("upload-length", "10")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    // The account's own key has the other half.
    for _ in 0..2 {
        assert_eq!(create(&srv, &srv.secret_key, 10, &[]).await.status(), 201);
    }
    // One ended: the public key may make one more.
    let r = srv
        .http
        .delete(&made[0])
        .bearer_auth(&pk)
        .header("origin", origin)
        .header("tus-resumable", "1.0.0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(by_page().send().await.unwrap().status(), 201);
    srv.stop().await;
}
