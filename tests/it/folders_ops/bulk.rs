//! `POST /v1/files/delete`: up to 1000 files in one transaction, each
//! reported deleted or not found (another account's file is not found),
//! `file.deleted` for each, the blobs deleted in the background.

use crate::common::meta::webhook;
use crate::common::{Backend, TestServer};
use serde_json::{json, Value};

both_stores!(bulk_delete_reports_each_id, bulk_delete_refusals);

async fn bulk(srv: &TestServer, key: &str, body: &Value) -> (u16, Value) {
    let r = srv
        .http
        .post(srv.url("/v1/files/delete"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn bulk_delete_reports_each_id(b: Backend) {
    let srv = TestServer::on(b).await;
    webhook(&srv.app.meta, &srv.account_id, &["file.deleted"]).await;
    let mut ids = Vec::new();
    for i in 0..4 {
        // Two in the blob store, two inline.
        let bytes = if i < 2 { vec![i; 140_000] } else { vec![i; 10] };
        let f = srv.upload_ok(&format!("{i}.bin"), bytes, &[]).await;
        ids.push(f["id"].as_str().unwrap().to_string());
    }
    let (other_acc, other) = srv.new_account("mallory", "free").await;
    let theirs = srv
        .upload_as(&other, "t.txt", b"theirs".to_vec(), &[])
        .await
        .json::<Value>()
        .await
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(srv.blob_count().await, 4 + 1);
    let body = json!({"ids": [ids[0], "f_missing", ids[1], theirs, ids[2], ids[0]]});
    let (status, answer) = bulk(&srv, &srv.secret_key, &body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({"deleted": [ids[0], ids[1], ids[2]], "not_found": ["f_missing", theirs]})
    );
    for id in &ids[..3] {
        let (status, _) = srv
            .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
            .await;
        assert_eq!(status, 404);
    }
    let (status, _) = srv.get_json(&other, &format!("/v1/files/{theirs}")).await;
    assert_eq!(status, 200, "{other_acc}'s file stays");
    assert_eq!(srv.usage().await["storage_bytes"], 10);
    assert_eq!(
        srv.count("SELECT COUNT(*) FROM webhook_events WHERE type = 'file.deleted'"),
        3
    );
    srv.eventually(10, "the freed blobs deleted", || async {
        srv.blob_count().await == 2 && srv.count("SELECT COUNT(*) FROM blob_deletions") == 0
    })
    .await;
    // Again: all not found now.
    let (status, answer) = bulk(&srv, &srv.secret_key, &json!({"ids": [ids[0]]})).await;
    assert_eq!(
        (status, answer),
        (200, json!({"deleted": [], "not_found": [ids[0]]}))
    );
}

async fn bulk_delete_refusals(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv.upload_ok("a.txt", b"a".to_vec(), &[]).await;
    let too_many: Vec<String> = (0..1001).map(|i| format!("f_{i}")).collect();
    for body in [
        json!({}),
        json!({"ids": []}),
        json!({"ids": too_many}),
        json!({"ids": "f_1"}),
        json!({"ids": [1]}),
        json!({"ids": [f["id"]], "recursive": true}),
        json!([f["id"]]),
    ] {
        let (status, answer) = bulk(&srv, &srv.secret_key, &body).await;
        assert_eq!(
            (status, &answer["error"]["code"]),
            (400, &json!("bad_request"))
        );
    }
    let public = srv.new_key("public", &["https://a.example"]).await;
    assert_eq!(bulk(&srv, &public, &json!({"ids": [f["id"]]})).await.0, 403);
    assert_eq!(bulk(&srv, "", &json!({"ids": [f["id"]]})).await.0, 401);
    // 1000 is allowed; the file is still there after the refusals.
    let mut most: Vec<Value> = (0..999).map(|i| json!(format!("f_{i}"))).collect();
    most.push(f["id"].clone());
    let (status, answer) = bulk(&srv, &srv.secret_key, &json!({"ids": most})).await;
    assert_eq!(status, 200);
    assert_eq!(answer["deleted"], json!([f["id"]]));
    assert_eq!(answer["not_found"].as_array().unwrap().len(), 999);
}
