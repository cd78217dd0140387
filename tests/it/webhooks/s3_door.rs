//! Files written and removed through the S3 door send the same events as
//! /v1's: a PUT is `file.created`, a PUT over a key `file.deleted` of the
//! file it replaces, a DELETE `file.deleted`.

use super::*;
use crate::common::receiver::{tools, RxOptions};
use crate::common::{s3door, TestOptions};
use aws_sdk_s3::primitives::ByteStream;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_writes_send_the_events_v1_writes_send() {
    if !tools("s3_writes_send_the_events_v1_writes_send") {
        return;
    }
    let srv = TestServer::start_with(TestOptions {
        s3: true,
        ..Default::default()
    })
    .await;
    let rx = Receiver::start(&RxOptions::default());
    hook(&srv, &rx, &[]);
    let creds = s3door::credentials(&srv.http, &srv.base_url, &srv.secret_key).await;
    let s3 = s3door::client(&creds);
    s3.create_bucket().bucket("hooks").send().await.unwrap();
    let put = |body: &'static [u8]| {
        s3.put_object()
            .bucket("hooks")
            .key("a/b.txt")
            .body(ByteStream::from_static(body))
            .send()
    };
    put(b"one").await.unwrap();
    let id_of = |page: &Value| s(&page["files"][0]["id"]).to_string();
    let (_, page) = srv
        .get_json(&srv.secret_key, "/v1/files?folder=hooks/a")
        .await;
    let first = id_of(&page);
    rx.wait_delivered(30, &[(CREATED, &first)]).await;
    put(b"two").await.unwrap();
    let (_, page) = srv
        .get_json(&srv.secret_key, "/v1/files?folder=hooks/a")
        .await;
    let second = id_of(&page);
    assert_ne!(first, second);
    rx.wait_delivered(30, &[(DELETED, &first), (CREATED, &second)])
        .await;
    s3.delete_object()
        .bucket("hooks")
        .key("a/b.txt")
        .send()
        .await
        .unwrap();
    rx.wait_delivered(30, &[(DELETED, &second)]).await;
    srv.stop().await;
}
