//! The strangers' share (CONTRACT §23): an account's public keys and upload
//! tokens, all together, hold at most `public_share` (default half) of its
//! `concurrent_uploads`, `open_uploads`, reserved bytes (of the storage)
//! and monthly uploads; past it they get 429 with `Retry-After` while the
//! account's secret keys go on. On two nodes of one PostgreSQL database
//! (`two_nodes`) the share holds across them.

use crate::common::{error_code, TestOptions, TestServer};
use bytes::Bytes;
use reqwest::multipart::{Form, Part};
use reqwest::{RequestBuilder, Response};
use serde_json::{json, Value};
use tokio::sync::mpsc::Sender;
use tokio::task::JoinHandle;

mod expiry;
mod two_nodes;

const ORIGIN: &str = "https://app.example";

/// A server whose free plan (the default account's) has `plan` (TOML keys),
/// with no rate floor (held bodies are not cut while the test looks).
async fn server(plan: &str) -> TestServer {
    TestServer::start_with(options(plan)).await
}

fn options(plan: &str) -> TestOptions {
    TestOptions {
        plans_toml: Some(format!(
            "[server]\nmin_upload_rate = 0\n[plans.free]\nrate_limit = 100000\n{plan}\n"
        )),
        ..Default::default()
    }
}

/// Who sends a request: a public key (from its page's origin), an upload
/// token, or a secret key.
#[derive(Debug, Clone)]
enum Who {
    Page(String),
    Token(String),
    Owner(String),
}

impl Who {
    fn on(&self, b: RequestBuilder) -> RequestBuilder {
        match self {
            Who::Page(pk) => b.bearer_auth(pk).header("origin", ORIGIN),
            Who::Token(t) | Who::Owner(t) => b.bearer_auth(t),
        }
    }
}

/// A public key of the default account, and an upload token of `max_uploads`.
async fn strangers(srv: &TestServer, max_uploads: u64) -> (Who, Who) {
    let pk = srv.new_key("public", &[ORIGIN]).await;
    let r = srv
        .http
        .post(srv.url("/v1/upload-tokens"))
        .bearer_auth(&srv.secret_key)
        .json(&json!({ "max_uploads": max_uploads }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let t: Value = r.json().await.unwrap();
    (
        Who::Page(pk),
        Who::Token(t["token"].as_str().unwrap().to_string()),
    )
}

fn owner(srv: &TestServer) -> Who {
    Who::Owner(srv.secret_key.clone())
}

/// A multipart upload of `bytes` by `who`.
async fn upload(srv: &TestServer, who: &Who, bytes: &[u8]) -> Response {
    let form = TestServer::form("s.bin", bytes.to_vec(), &[]);
    who.on(srv.http.post(srv.url("/v1/upload")))
        .multipart(form)
        .send()
        .await
        .unwrap()
}

/// A multipart upload by `who` whose file part is what the sender gives
/// (one chunk sent at once), until the sender is dropped.
fn held_upload(
    srv: &TestServer,
    who: &Who,
) -> (Sender<std::io::Result<Bytes>>, JoinHandle<Response>) {
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Bytes>>(4);
    tx.try_send(Ok(Bytes::from_static(b"first bytes"))).unwrap();
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let part = Part::stream(reqwest::Body::wrap_stream(body)).file_name("held.bin");
    let request = who
        .on(srv.http.post(srv.url("/v1/upload")))
        .multipart(Form::new().part("file", part))
        .send();
    (tx, tokio::spawn(async move { request.await.unwrap() }))
}

/// `POST /v1/uploads` (tus creation) of `length` bytes by `who`.
async fn tus_create(srv: &TestServer, who: &Who, length: u64) -> Response {
    who.on(srv.http.post(srv.url("/v1/uploads")))
        .header("tus-resumable", "1.0.0")
        .header("upload-length", length.to_string())
        .send()
        .await
        .unwrap()
}

/// The `Retry-After` of a 429 (asserting its code), in seconds.
async fn refused(r: Response) -> (u64, String) {
    let retry = r
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str().unwrap_or_default()),
        (429, "rate_limit_exceeded"),
        "{body}"
    );
    let message = body["error"]["message"].as_str().unwrap().to_string();
    (retry.expect("a 429 says when to retry"), message)
}

async fn created(r: Response) {
    let status = r.status().as_u16();
    assert_eq!(status, 201, "{:?}", r.text().await);
}

/// Waits until `n` upload bodies of the default account are arriving.
async fn arriving(srv: &TestServer, n: u64) {
    let (app, account) = (srv.app.clone(), srv.account_id.clone());
    srv.eventually(10, "the bodies are arriving", move || {
        let (app, account) = (app.clone(), account.clone());
        async move { app.in_flight.uploads_of(&account) == n }
    })
    .await;
}

/// A public key and an upload token hold half the `concurrent_uploads`
/// together (4 of 8 held open: a token held all 8 before); the secret key
/// still uploads, and a body that ends gives its slot back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_hold_half_the_concurrent_uploads_together() {
    let srv = server("concurrent_uploads = 8").await;
    let (page, token) = strangers(&srv, 100).await;
    let mut held = Vec::new();
    for who in [&page, &token, &token, &page] {
        held.push(held_upload(&srv, who));
    }
    arriving(&srv, 4).await;
    for who in [&token, &page] {
        let (retry, message) = refused(upload(&srv, who, b"one more").await).await;
        assert_eq!(retry, 1, "{message}");
        assert!(
            message.contains("public keys and upload tokens"),
            "{message}"
        );
    }
    // The owner's room is whole: 4 bodies at once, and a whole upload.
    let mut own = Vec::new();
    for _ in 0..3 {
        own.push(held_upload(&srv, &owner(&srv)));
    }
    arriving(&srv, 7).await;
    created(upload(&srv, &owner(&srv), b"mine").await).await;
    drop(own);
    // A stranger's body that ends gives its slot back.
    let (tx, request) = held.pop().unwrap();
    drop(tx);
    let _ = request.await;
    srv.eventually(10, "a stranger uploads again", || async {
        upload(&srv, &token, b"again").await.status() == 201
    })
    .await;
    drop(held);
    srv.stop().await;
}

/// A public key and an upload token hold half the `open_uploads` together
/// (a token held all 16 before); the secret key creates the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_hold_half_the_open_uploads_together() {
    let srv = server("open_uploads = 4").await;
    let (page, token) = strangers(&srv, 100).await;
    created(tus_create(&srv, &page, 10).await).await;
    created(tus_create(&srv, &token, 10).await).await;
    for who in [&token, &page] {
        let (retry, message) = refused(tus_create(&srv, who, 10).await).await;
        assert!(
            (1..=600).contains(&retry),
            "when a stranger's upload expires: {retry}"
        );
        assert!(message.contains("2 of the 2"), "{message}");
    }
    for _ in 0..2 {
        created(tus_create(&srv, &owner(&srv), 10).await).await;
    }
    srv.stop().await;
}

/// Public keys' and tokens' resumable uploads reserve at most half the
/// storage together (10 creations reserved all of it before, with no byte
/// sent); the owner reserves and stores the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_reserve_at_most_half_the_storage() {
    let srv = server("storage = 1000\nmax_file_size = 1000").await;
    let (page, token) = strangers(&srv, 100).await;
    created(tus_create(&srv, &page, 400).await).await;
    created(tus_create(&srv, &token, 100).await).await;
    for who in [&page, &token] {
        let (retry, message) = refused(tus_create(&srv, who, 1).await).await;
        assert!(
            (1..=600).contains(&retry),
            "when a stranger's upload expires: {retry}"
        );
        assert!(message.contains("share of the storage"), "{message}");
    }
    // A stranger's file is stored, not reserved: it still fits.
    created(upload(&srv, &page, &[7; 100]).await).await;
    // The owner has the rest: a reservation and a file.
    created(tus_create(&srv, &owner(&srv), 300).await).await;
    created(upload(&srv, &owner(&srv), &[8; 100]).await).await;
    assert_eq!(srv.usage().await["reserved_bytes"], 800);
    srv.stop().await;
}

/// Public keys and tokens make at most half the month's uploads together
/// (a public key used them all in 62 s before, and the owner got 429 for
/// the rest of the month); the owner makes the other half.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_make_at_most_half_the_months_uploads() {
    let srv = server("uploads = 6").await;
    let (page, token) = strangers(&srv, 100).await;
    created(upload(&srv, &page, b"1").await).await;
    created(upload(&srv, &token, b"2").await).await;
    // A resumable upload counts from its creation.
    created(tus_create(&srv, &page, 5).await).await;
    let month = 32 * 86_400;
    for r in [
        upload(&srv, &page, b"4").await,
        upload(&srv, &token, b"4").await,
        tus_create(&srv, &token, 5).await,
    ] {
        let (retry, message) = refused(r).await;
        assert!((1..=month).contains(&retry), "at the month's end: {retry}");
        assert!(message.contains("3 of the 3"), "{message}");
    }
    for i in 0..3u8 {
        created(upload(&srv, &owner(&srv), &[i]).await).await;
    }
    // The plan's own limit, for everyone.
    let (code, _) = error_code(upload(&srv, &owner(&srv), b"7").await).await;
    assert_eq!(code, 429);
    srv.stop().await;
}

/// An upload token's own limits still apply within the share: its
/// `max_uploads` (2 of a share of 4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokens_own_limits_apply_within_the_share() {
    let srv = server("uploads = 8").await;
    let (_, token) = strangers(&srv, 2).await;
    created(upload(&srv, &token, b"1").await).await;
    created(upload(&srv, &token, b"2").await).await;
    let (code, _) = error_code(upload(&srv, &token, b"3").await).await;
    assert_eq!(code, 401, "a used-up token");
    srv.stop().await;
}

/// A `public_share` outside `0 < x ≤ 1` is a config error naming the plan
/// and the key (exit 2), before anything starts.
#[test]
fn public_share_outside_0_and_1_is_a_config_error() {
    for (share, ok) in [
        ("0", None),
        ("1.5", None),
        ("-0.5", None),
        ("0.25", Some(0.25)),
        ("1", Some(1.0)),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(&config, format!("[plans.team]\npublic_share = {share}\n")).unwrap();
        let config = config.to_str().unwrap();
        let out = crate::common::process::admin(
            dir.path(),
            None,
            &["plan", "list", "--json", "--config", config],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        if let Some(share) = ok {
            assert!(out.status.success(), "{share}: {err}");
            let team = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .find(|p| p["name"] == "team")
                .expect("the plan is listed");
            assert_eq!(team["public_share"].as_f64(), Some(share), "{team}");
        } else {
            assert_eq!(out.status.code(), Some(2), "{share}: {err}");
            assert!(
                err.contains("plan team: public_share must be more than 0 and at most 1"),
                "{err}"
            );
        }
    }
}
