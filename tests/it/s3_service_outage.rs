//! The whole service over an S3 store that goes down and comes back: health
//! turns `degraded`/503 and back, metadata keeps being served, uploads fail
//! with a retryable 503, and a deletion made during the outage removes its
//! object once the store is back. Runs on a SeaweedFS of its own.

use crate::common::get_bytes;
use crate::common::{error_code, Backend, TestServer};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_degrades_with_the_store_and_recovers() {
    let Some(mut weed) =
        tokio::task::block_in_place(|| crate::common::s3::Seaweed::start("outage-http"))
    else {
        return;
    };
    let cfg = weed.config("svc");
    let srv = TestServer::on(Backend::S3(Box::new(cfg.clone()))).await;
    let kept = srv.upload_ok("kept.txt", b"kept".to_vec(), &[]).await;
    let doomed = srv.upload_ok("doomed.txt", b"doomed".to_vec(), &[]).await;
    let health = |srv: &TestServer| {
        let url = srv.url("/v1/health");
        let http = srv.http.clone();
        async move {
            let r = http.get(url).send().await.unwrap();
            let status = r.status().as_u16();
            (status, r.json::<serde_json::Value>().await.unwrap())
        }
    };
    assert_eq!(health(&srv).await.0, 200);
    assert_eq!(srv.blob_count().await, 2);

    tokio::task::block_in_place(|| weed.stop());
    let (status, h) = health(&srv).await;
    assert_eq!(status, 503, "{h}");
    assert_eq!(h["status"], "degraded");
    assert_eq!(h["checks"]["storage"]["status"], "error");
    assert_eq!(h["checks"]["database"]["status"], "ok");
    assert!(h["checks"]["storage"]["latency_ms"].is_u64());
    // Metadata is still served; uploads and downloads fail with a retryable 503.
    let id = kept["id"].as_str().unwrap();
    assert_eq!(
        srv.get_json(&srv.secret_key, &format!("/v1/files/{id}"))
            .await
            .0,
        200
    );
    assert_eq!(srv.get_json(&srv.secret_key, "/v1/files").await.0, 200);
    let r = srv.upload("during.txt", b"during".to_vec(), &[]).await;
    assert_eq!(error_code(r).await, (503, "unavailable".into()));
    let r = srv
        .http
        .get(kept["url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (503, "unavailable".into()));
    // A deletion during the outage: the file is gone at once, its object queued.
    let r = srv
        .delete_as(&srv.secret_key, doomed["id"].as_str().unwrap())
        .await;
    assert_eq!(r.status(), 200);
    // Queued: the deleted file's object, and the key the refused upload was writing.
    assert_eq!(
        srv.leftovers(),
        (1, 2, 0),
        "one file left, two blobs queued, no spool"
    );
    assert_eq!(srv.usage().await["storage_bytes"], 4);

    tokio::task::block_in_place(|| weed.restart());
    srv.eventually(30, "health ok again", || async {
        health(&srv).await.0 == 200
    })
    .await;
    let body = get_bytes(&srv.http, kept["url"].as_str().unwrap()).await;
    assert_eq!(&body[..], b"kept");
    srv.upload_ok("after.txt", b"after".to_vec(), &[]).await;
    // The collector retries the queued deletion (backoff grows from 1 s).
    srv.app.clock.advance(Duration::from_mins(2));
    srv.eventually(30, "queued object deleted", || async {
        srv.leftovers().1 == 0 && srv.blob_count().await == 2
    })
    .await;
}
