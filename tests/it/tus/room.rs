//! Room: the declared length reserved until completion or termination,
//! expired uploads giving it back, the local disk's room.

use super::*;

both_stores!(
    the_declared_length_is_reserved_until_completion_or_termination,
    expired_uploads_are_gone_and_give_their_room_back,
    the_local_disk_must_have_room_for_the_declared_length,
);

async fn the_declared_length_is_reserved_until_completion_or_termination(b: Backend) {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some(
            "[plans.free]\nmax_file_size = 3000\nstorage = 3000\nuploads = 3\n".into(),
        ),
        backend: Some(b),
        ..Default::default()
    })
    .await;
    let big = created(&srv, 2000, &[("filename", "big.bin")]).await;
    // 2000 of 3000 bytes are held: neither a multipart upload nor another
    // resumable one may take more than the 1000 left.
    let r = srv.upload("m.bin", vec![1; 1500], &[]).await;
    assert_eq!(error_code(r).await, (413, "storage_limit_exceeded".into()));
    let r = create(&srv, &srv.secret_key, 1500, &[]).await;
    assert_eq!(error_code(r).await, (413, "storage_limit_exceeded".into()));
    assert_eq!(srv.upload("s.bin", vec![1; 1000], &[]).await.status(), 201);
    // An empty upload is a file at once (tus clients send no PATCH for it).
    let r = create(&srv, &srv.secret_key, 0, &[("filename", "empty.txt")]).await;
    assert_eq!(r.status(), 201);
    assert!(r.headers().contains_key("x-file-id"));
    let small = r.headers()["location"].to_str().unwrap().to_string();
    // The month's uploads: 2 stored + 1 held, so the next one is refused.
    let r = create(&srv, &srv.secret_key, 0, &[]).await;
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    let r = srv.upload("t.bin", vec![1; 1], &[]).await;
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    // A PATCH to it at its length answers the file again.
    let r = patch(&srv, &small, 0, Vec::new()).await;
    assert_eq!(r.status(), 204);
    assert!(r.headers().contains_key("x-file-id"));
    // Terminated, the big one gives its room back (but the month is spent).
    let r = srv
        .http
        .delete(&big)
        .bearer_auth(&srv.secret_key)
        .header(TUS.0, TUS.1)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let usage = srv.usage().await;
    assert_eq!(
        (
            usage["storage_bytes"].as_u64(),
            usage["upload_count"].as_u64()
        ),
        (Some(1000), Some(2))
    );
    assert_eq!(srv.upload("u.bin", vec![1; 1500], &[]).await.status(), 201);
    srv.stop().await;
}

async fn expired_uploads_are_gone_and_give_their_room_back(b: Backend) {
    let s3 = s3_of(&b);
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nmax_file_size = 3000\nstorage = 3000\n".into()),
        backend: Some(b),
        reap_interval: Some(Duration::from_millis(200)),
        ..Default::default()
    })
    .await;
    let url = created(&srv, 3000, &[("filename", "slow.bin")]).await;
    assert_eq!(patch(&srv, &url, 0, vec![1; 100]).await.status(), 204);
    assert_eq!(
        partial_files(&srv),
        usize::from(!srv.app.store.kind().eq("s3"))
    );
    // 24 h after its last PATCH: 410 until the collector removes it, then 404.
    srv.clock.advance(Duration::from_secs(24 * 3600 + 1));
    let mut codes = Vec::new();
    for _ in 0..50 {
        let (status, _) = srv
            .get_json(&srv.secret_key, &url.replace(&srv.base_url, ""))
            .await;
        codes.push(status);
        if status == 404 {
            break;
        }
        assert_eq!(status, 410);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(codes.last(), Some(&404), "{codes:?}");
    assert_eq!(partial_files(&srv), 0);
    // Its room is free again.
    assert_eq!(
        srv.upload("after.bin", vec![1; 3000], &[]).await.status(),
        201
    );
    no_multipart_left(s3).await;
    srv.stop().await;
}

async fn the_local_disk_must_have_room_for_the_declared_length(b: Backend) {
    let on_s3 = matches!(b, Backend::S3(_));
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some(
            "[storage]\nmin_free_space = 0\n[plans.free]\nmax_file_size = \"2000TB\"\nstorage = \"5000TB\"\n"
                .into(),
        ),
        backend: Some(b),
        ..Default::default()
    })
    .await;
    // 1,000 TB: more than this volume has. The local store would write it
    // here (507); S3 would not (its parts never touch this disk), but 10,000
    // of its parts cannot hold it (413).
    let r = create(&srv, &srv.secret_key, 1_000_000_000_000_000, &[]).await;
    if on_s3 {
        assert_eq!(error_code(r).await, (413, "file_too_large".into()));
    } else {
        assert_eq!(error_code(r).await, (507, "insufficient_storage".into()));
    }
    srv.stop().await;
}
