//! What the door refuses, as clients see it: credentials (wrong secret,
//! unknown key, a public key's id, none at all), a missing key, and
//! digests that do not match (nothing stored).

use super::harness::{tools, Door};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn door_errors_seen_by_boto3() {
    if !tools(
        "door_errors_seen_by_boto3",
        &[&["python3", "-c", "import boto3"]],
    ) {
        return;
    }
    let door = Door::start("door_errors_seen_by_boto3").await;
    door.bucket("errs");
    let public = door.public_key_id().await;
    let out = door.python("errors", &["errs", &public]);
    assert_eq!(out.status, 0, "clients.py errors: {out:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_get_is_403_access_denied() {
    let door = Door::start("anonymous_get").await;
    let up = door
        .srv
        .upload_ok(
            "open.txt",
            b"open".to_vec(),
            &[("folder", "anon"), ("private", "false")],
        )
        .await;
    assert!(up["url"].is_string(), "a public file: {up}");
    for path in ["/anon/open.txt", "/anon", "/"] {
        let r = door
            .srv
            .http
            .get(format!("{}{path}", door.endpoint))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "anonymous GET {path}");
        let body = r.text().await.unwrap();
        assert!(body.contains("<Code>AccessDenied</Code>"), "{path}: {body}");
    }
}
