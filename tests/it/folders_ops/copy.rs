//! `POST /v1/files/{id}/copy`: a new file with the source's bytes (the blob
//! store copies them itself), counted and refused as an upload is, with
//! `file.created`; a refused or failed copy leaves no blob.

use crate::common::meta::webhook;
use crate::common::{error_code, get_bytes, Backend, TestOptions, TestServer};
use serde_json::{json, Value};
use std::sync::Arc;

both_stores!(
    copy_keeps_the_bytes_under_a_new_id,
    copies_outlive_their_source_and_each_other,
    copy_refusals_change_nothing,
    copy_counts_as_an_upload_against_the_plan,
    concurrent_copies_never_pass_the_quota,
    copy_with_an_idempotency_key_is_made_once,
    a_source_gone_from_the_store_is_404_and_leaves_nothing,
);

const PLANS: &str = r#"
[plans.free]
max_file_size = 200000
storage = 300000
uploads = 4
rate_limit = 1000
rate_window = "1m"

[plans.small]
max_file_size = 1000
storage = 1000000
uploads = 1000
rate_limit = 1000
rate_window = "1m"
"#;

/// Over the local store's `inline_max`: a blob in every store.
const BIG: usize = 140_000;

async fn copy_as(srv: &TestServer, key: &str, id: &str, body: Option<&Value>) -> reqwest::Response {
    let mut req = srv
        .http
        .post(srv.url(&format!("/v1/files/{id}/copy")))
        .bearer_auth(key);
    if let Some(body) = body {
        req = req.json(body);
    }
    req.send().await.unwrap()
}

async fn copy_ok(srv: &TestServer, id: &str, body: Option<&Value>) -> Value {
    let r = copy_as(srv, &srv.secret_key, id, body).await;
    let status = r.status();
    let location = r.headers().get("location").cloned();
    let text = r.text().await.unwrap();
    assert_eq!(status, 201, "{body:?}: {text}");
    let copy: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        location.unwrap().to_str().unwrap(),
        format!("/v1/files/{}", copy["id"].as_str().unwrap())
    );
    copy
}

async fn record(srv: &TestServer, id: &str) -> (u16, Value) {
    srv.get_json(&srv.secret_key, &format!("/v1/files/{id}"))
        .await
}

async fn copy_keeps_the_bytes_under_a_new_id(b: Backend) {
    let srv = TestServer::on(b).await;
    webhook(&srv.app.meta, &srv.account_id, &["file.created"]).await;
    let big: Vec<u8> = (0..BIG).map(|i| (i % 251) as u8).collect();
    for (bytes, name) in [(big, "a.bin"), (b"hello".to_vec(), "a.txt")] {
        let meta = r#"{"k":"v"}"#;
        let f = srv
            .upload_ok(
                name,
                bytes.clone(),
                &[("folder", "docs"), ("metadata", meta)],
            )
            .await;
        let id = f["id"].as_str().unwrap();
        // No body: the same name, folder and privacy.
        let c = copy_ok(&srv, id, None).await;
        assert_ne!(c["id"], f["id"]);
        assert_ne!(c["url"], f["url"]);
        for field in [
            "name",
            "folder",
            "size",
            "sha256",
            "type",
            "private",
            "metadata",
            "expires_at",
        ] {
            assert_eq!(c[field], f[field], "{field}");
        }
        for url in [&f["url"], &c["url"]] {
            assert_eq!(get_bytes(&srv.http, url.as_str().unwrap()).await, bytes);
        }
        assert_eq!(
            record(&srv, c["id"].as_str().unwrap()).await,
            (200, c.clone())
        );
        // Into another folder, under another name, private.
        let body = json!({"name": "b é.txt", "folder": "/other/x/", "private": true});
        let p = copy_ok(&srv, id, Some(&body)).await;
        assert_eq!(
            (&p["name"], &p["folder"], &p["private"], &p["url"]),
            (
                &json!("b é.txt"),
                &json!("other/x"),
                &json!(true),
                &Value::Null
            )
        );
        assert_eq!(p["sha256"], f["sha256"]);
        let signed = srv.signed_url(p["id"].as_str().unwrap(), 60).await;
        assert_eq!(get_bytes(&srv.http, signed).await, bytes);
        // To the root, with an empty object body too.
        let root = copy_ok(&srv, id, Some(&json!({"folder": null}))).await;
        assert!(root["folder"].is_null());
        let same = copy_ok(&srv, id, Some(&json!({}))).await;
        assert_eq!(same["folder"], "docs");
    }
    // Two uploads and four copies of each: every one counted, every copy
    // announced as an upload is.
    let usage = srv.usage().await;
    assert_eq!(usage["upload_count"], 10);
    assert_eq!(usage["storage_bytes"], 5 * (BIG as u64 + 5));
    assert_eq!(srv.blob_count().await, 10);
    assert_eq!(
        srv.count("SELECT COUNT(*) FROM webhook_events WHERE type = 'file.created'"),
        10
    );
    assert_eq!(srv.leftovers().1, 0);
}

async fn copies_outlive_their_source_and_each_other(b: Backend) {
    let srv = TestServer::on(b).await;
    let bytes = vec![9u8; BIG];
    for bytes in [bytes, b"tiny".to_vec()] {
        let f = srv.upload_ok("s.bin", bytes.clone(), &[]).await;
        let id = f["id"].as_str().unwrap();
        let a = copy_ok(&srv, id, None).await;
        let b = copy_ok(&srv, a["id"].as_str().unwrap(), None).await;
        // The source goes: both copies stay whole.
        assert_eq!(srv.delete_as(&srv.secret_key, id).await.status(), 200);
        assert_eq!(
            srv.http
                .get(f["url"].as_str().unwrap())
                .send()
                .await
                .unwrap()
                .status(),
            404
        );
        for c in [&a, &b] {
            assert_eq!(
                get_bytes(&srv.http, c["url"].as_str().unwrap()).await,
                bytes
            );
        }
        // A copy goes: the other stays.
        let a_id = a["id"].as_str().unwrap();
        assert_eq!(srv.delete_as(&srv.secret_key, a_id).await.status(), 200);
        assert_eq!(
            get_bytes(&srv.http, b["url"].as_str().unwrap()).await,
            bytes
        );
        // Once the collector has run, only that copy's blob is left.
        srv.eventually(10, "the deleted blobs are collected", || async {
            srv.count("SELECT COUNT(*) FROM blob_deletions") == 0
        })
        .await;
        assert_eq!(srv.blob_count().await, 1);
        let b_id = b["id"].as_str().unwrap();
        assert_eq!(srv.delete_as(&srv.secret_key, b_id).await.status(), 200);
        // A deleted file cannot be copied.
        let r = copy_as(&srv, &srv.secret_key, b_id, None).await;
        assert_eq!(error_code(r).await, (404, "not_found".into()));
    }
}

async fn copy_refusals_change_nothing(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv
        .upload_ok("a.bin", vec![1; BIG], &[("folder", "f")])
        .await;
    let id = f["id"].as_str().unwrap();
    for body in [
        json!({"name": ""}),
        json!({"name": "x/y"}),
        json!({"name": "a\\b"}),
        json!({"name": "a\u{1}"}),
        json!({"name": "n".repeat(256)}),
        json!({"folder": "a/../b"}),
        json!({"folder": "a\u{1}b"}),
        json!({"folder": "/"}),
        json!({"folder": 3}),
        json!({"private": "yes"}),
        json!({"name": "b", "expires": "1h"}),
        json!(["a"]),
    ] {
        let r = copy_as(&srv, &srv.secret_key, id, Some(&body)).await;
        let (status, text) = (r.status(), r.text().await.unwrap());
        assert_eq!(status, 400, "{body}: {text}");
        let answer: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(answer["error"]["code"], "bad_request", "{body}: {text}");
    }
    let r = srv
        .http
        .post(srv.url(&format!("/v1/files/{id}/copy")))
        .bearer_auth(&srv.secret_key)
        .body("{\"name\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (400, "bad_request".into()));
    // Another account's file, an unknown one, a public key, an upload
    // token, no key.
    let (_, other) = srv.new_account("mallory", "free").await;
    let r = copy_as(&srv, &other, id, None).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    let r = copy_as(&srv, &srv.secret_key, "f_0000", None).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    let public = srv.new_key("public", &["https://a.example"]).await;
    let r = srv
        .http
        .post(srv.url(&format!("/v1/files/{id}/copy")))
        .bearer_auth(&public)
        .header("origin", "https://a.example")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    let token: Value = srv
        .http
        .post(srv.url("/v1/upload-tokens"))
        .bearer_auth(&srv.secret_key)
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let r = copy_as(&srv, token["token"].as_str().unwrap(), id, None).await;
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
    let r = copy_as(&srv, "", id, None).await;
    assert_eq!(r.status(), 401);
    // An account in its grace period copies no more than it uploads.
    srv.set_account(&srv.account_id, None, Some(true)).await;
    let r = copy_as(&srv, &srv.secret_key, id, None).await;
    assert_eq!(error_code(r).await, (403, "grace_period".into()));
    srv.set_account(&srv.account_id, None, Some(false)).await;
    assert_eq!(record(&srv, id).await, (200, f));
    assert_eq!(srv.leftovers(), (1, 0, 0));
    assert_eq!(srv.blob_count().await, 1);
    assert_eq!(srv.usage().await["upload_count"], 1);
}

async fn limited(b: Backend) -> TestServer {
    TestServer::start_with(TestOptions {
        plans_toml: Some(PLANS.into()),
        backend: Some(b),
        ..Default::default()
    })
    .await
}

async fn copy_counts_as_an_upload_against_the_plan(b: Backend) {
    let srv = limited(b).await;
    let big = srv.upload_ok("big.bin", vec![3; BIG], &[]).await;
    let small = srv.upload_ok("small.txt", b"hello".to_vec(), &[]).await;
    let (big, small) = (big["id"].as_str().unwrap(), small["id"].as_str().unwrap());
    copy_ok(&srv, big, None).await;
    // 3 × 70,000 bytes would pass the 150,000-byte quota: refused as an
    // upload is, nothing stored.
    let r = copy_as(&srv, &srv.secret_key, big, None).await;
    assert_eq!(error_code(r).await, (413, "storage_limit_exceeded".into()));
    assert_eq!(srv.blob_count().await, 3);
    copy_ok(&srv, small, None).await;
    // The month's fourth upload was that copy: the fifth is refused.
    let usage = srv.usage().await;
    assert_eq!(
        (&usage["upload_count"], &usage["storage_bytes"]),
        (&json!(4), &json!(2 * BIG + 10))
    );
    let r = copy_as(&srv, &srv.secret_key, small, None).await;
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    // A plan whose files are smaller than the source refuses its copy.
    srv.set_account(&srv.account_id, Some("small"), None).await;
    let r = copy_as(&srv, &srv.secret_key, big, None).await;
    assert_eq!(error_code(r).await, (413, "file_too_large".into()));
    assert_eq!(srv.leftovers(), (4, 0, 0));
    assert_eq!(srv.blob_count().await, 4);
}

async fn concurrent_copies_never_pass_the_quota(b: Backend) {
    // Eight copies at once, room for one: some may pass the check before
    // the store copies and be refused by the commit's; none leaves a blob.
    let srv = Arc::new(limited(b).await);
    let f = srv.upload_ok("big.bin", vec![4; BIG], &[]).await;
    let id = f["id"].as_str().unwrap().to_string();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (srv, id) = (srv.clone(), id.clone());
            tokio::spawn(async move {
                copy_as(&srv, &srv.secret_key, &id, None)
                    .await
                    .status()
                    .as_u16()
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 413, 413, 413, 413, 413, 413, 413]);
    assert_eq!(srv.usage().await["storage_bytes"], 2 * BIG);
    assert_eq!(srv.leftovers().0, 2);
    srv.eventually(10, "refused copies leave no blob", || async {
        srv.blob_count().await == 2 && srv.leftovers().1 == 0
    })
    .await;
}

async fn copy_with_an_idempotency_key_is_made_once(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv.upload_ok("a.bin", vec![5; BIG], &[]).await;
    let id = f["id"].as_str().unwrap();
    let send = |key: &'static str| {
        srv.http
            .post(srv.url(&format!("/v1/files/{id}/copy")))
            .bearer_auth(&srv.secret_key)
            .header("idempotency-key", key)
            .send()
    };
    let first = send("copy-1").await.unwrap();
    assert_eq!(first.status(), 201);
    let first: Value = first.json().await.unwrap();
    let again = send("copy-1").await.unwrap();
    assert_eq!(again.status(), 201);
    assert_eq!(again.json::<Value>().await.unwrap(), first);
    let r = send("bad key").await.unwrap();
    assert_eq!(error_code(r).await, (400, "bad_request".into()));
    assert_eq!(srv.usage().await["upload_count"], 2);
    assert_eq!(srv.blob_count().await, 2);

    // The same key with a copy of another file, or with an upload, is
    // another request: it never gets this copy.
    let other = srv.upload_ok("b.bin", vec![6; BIG], &[]).await;
    let other_id = other["id"].as_str().unwrap();
    let r = srv
        .http
        .post(srv.url(&format!("/v1/files/{other_id}/copy")))
        .bearer_auth(&srv.secret_key)
        .header("idempotency-key", "copy-1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let copied: Value = r.json().await.unwrap();
    assert_ne!(copied["id"], first["id"]);
    assert_eq!(copied["name"], "b.bin");
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(b"fresh".to_vec()).file_name("c.txt"),
    );
    let r = srv
        .http
        .post(srv.url("/v1/upload"))
        .bearer_auth(&srv.secret_key)
        .header("idempotency-key", "copy-1")
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let uploaded: Value = r.json().await.unwrap();
    assert_eq!(
        uploaded["name"], "c.txt",
        "the upload is stored, not replayed"
    );
    assert_eq!(srv.usage().await["upload_count"], 5);
}

async fn a_source_gone_from_the_store_is_404_and_leaves_nothing(b: Backend) {
    // The source's blob went after its row was read (a delete racing the
    // copy): the store finds nothing to copy, the copy's upload guard goes.
    let srv = TestServer::on(b).await;
    let f = srv.upload_ok("a.bin", vec![6; BIG], &[]).await;
    let id = f["id"].as_str().unwrap();
    let key = format!("{}/{id}", srv.account_id);
    srv.app.store.delete(&key).await.unwrap();
    let r = copy_as(&srv, &srv.secret_key, id, None).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    assert_eq!(srv.leftovers(), (1, 0, 0));
    assert_eq!(srv.blob_count().await, 0);
    assert_eq!(srv.usage().await["upload_count"], 1);
}
