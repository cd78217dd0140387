//! What a multipart upload holds of the account's plan: its parts' bytes
//! in the storage quota as they arrive, one of the open uploads; aborted,
//! or reaped after a day without a part, it gives them back.

use super::*;
use crate::common::error_code;
use std::time::Duration;

both_stores!(
    parts_count_against_the_storage_quota_while_open,
    an_open_upload_is_one_of_the_open_uploads,
    abort_gives_back_the_bytes_and_removes_the_blobs,
    an_upload_idle_for_a_day_is_reaped,
);

/// 12 MB of storage: two 5 MiB parts fit, a third does not.
const SMALL: &str = r#"
[plans.free]
max_file_size = 30_000_000
storage = 12_000_000
uploads = 1000
open_uploads = 3
rate_limit = 100_000
rate_window = "1m"
"#;

async fn parts_count_against_the_storage_quota_while_open(backend: Backend) {
    let srv = TestServer::start_with(TestOptions {
        backend: Some(backend),
        plans_toml: Some(SMALL.into()),
        ..Default::default()
    })
    .await;
    let s = session(&srv).await;
    s.create_bucket("b").await.unwrap();
    let id = s.create_multipart("b", "x.bin", template()).await.unwrap();
    s.upload_part(&id, 1, vec![data(5 * MIB, 1)]).await.unwrap();
    s.upload_part(&id, 2, vec![data(5 * MIB, 2)]).await.unwrap();
    assert_eq!(stored(&srv).await, 10 * MIB as u64);
    // A /v1 upload that fits only without the parts is refused.
    let r = srv.upload("f.bin", data(2_000_000, 3), &[]).await;
    let (status, code) = error_code(r).await;
    assert_eq!((status, code.as_str()), (413, "storage_limit_exceeded"));
    // So is a third part, as its bytes arrive (no Content-Length known
    // beforehand would have let it through).
    let e = s
        .upload_part(
            &id,
            3,
            data(5 * MIB, 4).chunks(MIB).map(<[u8]>::to_vec).collect(),
        )
        .await
        .unwrap_err();
    assert_eq!(kind(&e), "storage_limit_exceeded");
    // A part larger than the plan's largest file is refused before its
    // body is read; one shorter than it said is refused too.
    let e = s
        .upload_part_declared(&id, 4, 30_000_001, vec![])
        .await
        .unwrap_err();
    assert_eq!(kind(&e), "file_too_large");
    let e = s
        .upload_part_declared(&id, 4, 100, vec![data(10, 1)])
        .await
        .unwrap_err();
    assert_eq!(kind(&e), "bad_request");
    // Sending part 2 again of the same size fits (it replaces the first).
    s.upload_part(&id, 2, vec![data(5 * MIB, 5)]).await.unwrap();
    assert_eq!(stored(&srv).await, 10 * MIB as u64);
    s.abort(&id).await.unwrap();
    assert_eq!(stored(&srv).await, 0);
    let r = srv.upload("f.bin", data(2_000_000, 3), &[]).await;
    assert_eq!(r.status(), 201);
}

async fn an_open_upload_is_one_of_the_open_uploads(backend: Backend) {
    let srv = server(backend).await;
    let s = session(&srv).await;
    s.create_bucket("b").await.unwrap();
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(
            s.create_multipart("b", &format!("{i}"), template())
                .await
                .unwrap(),
        );
    }
    let e = s.create_multipart("b", "4", template()).await.unwrap_err();
    assert_eq!(kind(&e), "rate_limit_exceeded", "{e}");
    // A resumable upload counts among them too.
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&srv.secret_key)
        .header("tus-resumable", "1.0.0")
        .header("upload-length", "10")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    s.abort(&ids[0]).await.unwrap();
    s.create_multipart("b", "4", template()).await.unwrap();
    // The grace period refuses a new one, as it does an upload.
    srv.set_account(&srv.account_id, None, Some(true)).await;
    let graced = session(&srv).await;
    let e = graced
        .create_multipart("b", "5", template())
        .await
        .unwrap_err();
    assert_eq!(kind(&e), "grace_period");
}

async fn abort_gives_back_the_bytes_and_removes_the_blobs(backend: Backend) {
    let srv = server(backend).await;
    let s = session(&srv).await;
    s.create_bucket("b").await.unwrap();
    let id = s.create_multipart("b", "x.bin", template()).await.unwrap();
    for n in 1..=3 {
        s.upload_part(&id, n, vec![data(100_000, n as u8)])
            .await
            .unwrap();
    }
    assert_eq!(srv.blob_count().await, 3);
    assert_eq!(stored(&srv).await, 300_000);
    s.abort(&id).await.unwrap();
    assert_eq!(stored(&srv).await, 0);
    srv.eventually(10, "the parts' blobs collected", || async {
        srv.blob_count().await == 0
    })
    .await;
    assert_eq!(kind(&s.abort(&id).await.unwrap_err()), "NoSuchUpload");
    let e = s.upload_part(&id, 4, vec![data(10, 1)]).await.unwrap_err();
    assert_eq!(kind(&e), "NoSuchUpload");
    assert_eq!(srv.count("SELECT COUNT(*) FROM s3_uploads"), 0);
}

async fn an_upload_idle_for_a_day_is_reaped(backend: Backend) {
    let srv = server(backend).await;
    let s = session(&srv).await;
    s.create_bucket("b").await.unwrap();
    let idle = s
        .create_multipart("b", "idle.bin", template())
        .await
        .unwrap();
    s.upload_part(&idle, 1, vec![data(1000, 1)]).await.unwrap();
    let busy = s
        .create_multipart("b", "busy.bin", template())
        .await
        .unwrap();
    srv.clock.advance(Duration::from_hours(23));
    s.upload_part(&busy, 1, vec![data(500, 2)]).await.unwrap();
    srv.clock.advance(Duration::from_secs(3600 + 1));
    // The collector (every 100 ms in the tests) aborts the idle one only.
    filestore::testing::s3::reap(&srv.app).await;
    srv.eventually(10, "the idle upload reaped", || async {
        s.list_parts(&idle, 0, 10).await.is_err()
    })
    .await;
    assert_eq!(
        kind(&s.list_parts(&idle, 0, 10).await.unwrap_err()),
        "NoSuchUpload"
    );
    assert_eq!(s.list_parts(&busy, 0, 10).await.unwrap().1.items.len(), 1);
    assert_eq!(stored(&srv).await, 500);
    srv.eventually(10, "the idle part's blob collected", || async {
        srv.blob_count().await == 1
    })
    .await;
}
