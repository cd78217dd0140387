//! A variant is kept and served like a file (ETag, 304, Range, HEAD),
//! counted as bandwidth and not as storage, rendered once for identical
//! requests in flight, and gone with its file however the file goes.

use super::{get, png, with};
use crate::common::{Backend, TestServer};
use serde_json::json;

both_stores!(
    a_variant_is_kept_and_served_like_a_file,
    identical_requests_share_one_render,
    variants_go_with_their_file
);

async fn a_variant_is_kept_and_served_like_a_file(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv.upload_ok("p.png", png(300, 200), &[]).await;
    let storage = srv.usage().await["storage_bytes"].clone();
    let url = with(f["url"].as_str().unwrap(), "w=90&format=webp");
    let (status, headers, body) = get(&srv, &url, None).await;
    assert_eq!(status, 200);
    let etag = headers["etag"].to_str().unwrap().to_string();
    assert_ne!(etag, format!("\"{}\"", f["sha256"].as_str().unwrap()));
    assert_eq!(srv.count("SELECT COUNT(*) FROM image_variants"), 1);
    // Served again from the store: the same bytes, no second row.
    let (_, again, body2) = get(&srv, &url, None).await;
    assert_eq!(
        (again["etag"].to_str().unwrap(), &body2),
        (etag.as_str(), &body)
    );
    assert_eq!(srv.count("SELECT COUNT(*) FROM image_variants"), 1);
    // The same parameters spelled otherwise are the same variant.
    let (_, same, _) = get(
        &srv,
        &with(
            f["url"].as_str().unwrap(),
            "format=webp&q=80&fit=inside&w=90&x=1",
        ),
        None,
    )
    .await;
    assert_eq!(same["etag"].to_str().unwrap(), etag);
    assert_eq!(srv.count("SELECT COUNT(*) FROM image_variants"), 1);
    // 304, Range and HEAD.
    let r = srv
        .http
        .get(&url)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);
    let r = srv
        .http
        .get(&url)
        .header("range", "bytes=0-9")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 206);
    assert_eq!(
        r.headers()["content-range"],
        format!("bytes 0-9/{}", body.len()).as_str()
    );
    assert_eq!(&r.bytes().await.unwrap()[..], &body[..10]);
    let r = srv.http.head(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["content-length"],
        body.len().to_string().as_str()
    );
    // Bandwidth counts what was sent (two whole bodies and ten bytes); the
    // variant takes no storage.
    let sent = 3 * body.len() as u64 + 10;
    srv.eventually(5, "the variant's bytes counted", || async {
        srv.usage().await["bandwidth_bytes"] == sent
    })
    .await;
    assert_eq!(srv.usage().await["storage_bytes"], storage);
}

async fn identical_requests_share_one_render(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv.upload_ok("p.png", png(600, 400), &[]).await;
    let blobs = srv.blob_count().await;
    let url = with(f["url"].as_str().unwrap(), "w=200&format=png");
    let all = futures_util::future::join_all((0..8).map(|_| get(&srv, &url, None))).await;
    let first = &all[0];
    for (status, headers, body) in &all {
        assert_eq!(*status, 200);
        assert_eq!(headers["etag"], first.1["etag"]);
        assert_eq!(body, &first.2);
    }
    // One render: one variant row and one new blob, and no loser's blob.
    assert_eq!(srv.count("SELECT COUNT(*) FROM image_variants"), 1);
    assert_eq!(srv.blob_count().await, blobs + 1);
    assert_eq!(srv.count("SELECT COUNT(*) FROM blob_deletions"), 0);
}

async fn variants_go_with_their_file(b: Backend) {
    let srv = TestServer::on(b).await;
    let one = srv.upload_ok("one.png", png(200, 100), &[]).await;
    let two = srv
        .upload_ok("two.png", png(200, 100), &[("folder", "pics/a")])
        .await;
    let three = srv.upload_ok("three.png", png(200, 100), &[]).await;
    let four = srv
        .upload_ok("four.png", png(200, 100), &[("expires", "1h")])
        .await;
    let base = srv.blob_count().await;
    for f in [&one, &two, &three, &four] {
        for q in ["w=10", "w=20&format=webp"] {
            let (status, _, _) = get(&srv, &with(f["url"].as_str().unwrap(), q), None).await;
            assert_eq!(status, 200);
        }
    }
    assert_eq!(srv.count("SELECT COUNT(*) FROM image_variants"), 8);
    assert_eq!(srv.blob_count().await, base + 8);
    // A delete, a folder delete, a bulk delete and expiry each take the variants.
    let r = srv
        .delete_as(&srv.secret_key, one["id"].as_str().unwrap())
        .await;
    assert_eq!(r.status(), 200);
    let r = srv
        .http
        .delete(srv.url("/v1/folders?folder=pics"))
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = srv
        .http
        .post(srv.url("/v1/files/delete"))
        .bearer_auth(&srv.secret_key)
        .json(&json!({"ids": [three["id"]]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(srv.count("SELECT COUNT(*) FROM image_variants"), 2);
    srv.clock.advance(std::time::Duration::from_secs(3601));
    srv.eventually(30, "the expired file's variants gone", || async {
        srv.count("SELECT COUNT(*) FROM image_variants") == 0
    })
    .await;
    srv.eventually(30, "every blob collected", || async {
        srv.count("SELECT COUNT(*) FROM blob_deletions") == 0 && srv.blob_count().await == 0
    })
    .await;
    // A variant of a file gone is 404, however it went (each was served
    // before, so the node keeps its bytes in memory: the file decides).
    for f in [&one, &two, &three, &four] {
        for q in ["w=10", "w=20&format=webp"] {
            let (status, _, _) = get(&srv, &with(f["url"].as_str().unwrap(), q), None).await;
            assert_eq!(status, 404, "{q} of {}", f["name"]);
        }
    }
}
