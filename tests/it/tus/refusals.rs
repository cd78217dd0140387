//! Every refusal has its status and stores nothing.

use super::*;

both_stores!(every_refusal_has_its_status_and_stores_nothing);

async fn every_refusal_has_its_status_and_stores_nothing(b: Backend) {
    let s3 = s3_of(&b);
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nmax_file_size = 10000\n".into()),
        backend: Some(b),
        ..Default::default()
    })
    .await;
    // Capabilities, without a key.
    let r = srv
        .http
        .request(reqwest::Method::OPTIONS, srv.url("/v1/uploads"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(r.headers()["tus-version"], "1.0.0");
    assert_eq!(
        r.headers()["tus-extension"],
        "creation,creation-with-upload,termination,expiration,checksum"
    );
    assert_eq!(r.headers()["tus-checksum-algorithm"], "sha1,sha256");
    // No version, or another: 412.
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&srv.secret_key)
        .header("upload-length", 10)
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["tus-version"], "1.0.0");
    assert_eq!(error_code(r).await, (412, "unsupported_version".into()));
    // No key: 401 (before anything else).
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .header(TUS.0, TUS.1)
        .header("upload-length", 10)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
    // Creation: no or bad length, bad metadata, deferred length: 400.
    for (length, meta) in [
        (None, String::new()),
        (Some("-1"), String::new()),
        (Some("ten"), String::new()),
        (Some("10"), "folder !!".to_string()),
        (Some("10"), encode_metadata(&[("expires", "forever")])),
    ] {
        let mut req = srv
            .http
            .post(srv.url("/v1/uploads"))
            .bearer_auth(&srv.secret_key)
            .header(TUS.0, TUS.1)
            .header("upload-metadata", meta);
        if let Some(l) = length {
            req = req.header("upload-length", l);
        }
        let r = req.send().await.unwrap();
        assert_eq!(
            error_code(r).await,
            (400, "bad_request".into()),
            "{length:?}"
        );
    }
    // Longer than the plan allows: 413 at creation.
    let r = create(&srv, &srv.secret_key, 10_001, &[]).await;
    assert_eq!(error_code(r).await, (413, "file_too_large".into()));
    let url = created(&srv, 100, &[("filename", "x.bin")]).await;
    // Wrong content type: 415.
    let r = srv
        .http
        .patch(&url)
        .bearer_auth(&srv.secret_key)
        .header(TUS.0, TUS.1)
        .header("content-type", "application/octet-stream")
        .header("upload-offset", 0)
        .body(vec![1; 10])
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (415, "unsupported_media_type".into()));
    // Missing offset: 400; wrong offset: 409.
    let r = srv
        .http
        .patch(&url)
        .bearer_auth(&srv.secret_key)
        .header(TUS.0, TUS.1)
        .header(OCTETS.0, OCTETS.1)
        .body(vec![1; 10])
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (400, "bad_request".into()));
    let r = patch(&srv, &url, 5, vec![1; 10]).await;
    assert_eq!(error_code(r).await, (409, "offset_mismatch".into()));
    // Past the declared length, by Content-Length or as it streams: 413.
    let r = patch(&srv, &url, 0, vec![1; 101]).await;
    assert_eq!(error_code(r).await, (413, "upload_length_exceeded".into()));
    let chunks = futures_util::stream::iter(
        (0..3).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![2u8; 50]))),
    );
    let r = patch_request(&srv, &url, 0)
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (413, "upload_length_exceeded".into()));
    assert_eq!(offset(&srv, &url).await, 0, "a refused chunk is not kept");
    // Unknown upload, or another account's: 404.
    let missing = format!("{}/v1/uploads/u_{}", srv.base_url, "0".repeat(32));
    let r = patch(&srv, &missing, 0, vec![1]).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    let (_, other) = srv.new_account("other", "free").await;
    let r = srv.http.get(&url).bearer_auth(&other).send().await.unwrap();
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    let r = srv
        .http
        .delete(&url)
        .bearer_auth(&other)
        .header(TUS.0, TUS.1)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    // Termination: 204, then 404.
    let del = || {
        srv.http
            .delete(&url)
            .bearer_auth(&srv.secret_key)
            .header(TUS.0, TUS.1)
            .send()
    };
    assert_eq!(del().await.unwrap().status(), 204);
    assert_eq!(
        error_code(del().await.unwrap()).await,
        (404, "not_found".into())
    );
    // Nothing was stored by any of it.
    let usage = srv.usage().await;
    assert_eq!(
        (
            usage["storage_bytes"].as_u64(),
            usage["upload_count"].as_u64()
        ),
        (Some(0), Some(0))
    );
    let (_, list) = srv.get_json(&srv.secret_key, "/v1/files").await;
    assert_eq!(list["files"].as_array().unwrap().len(), 0);
    assert_eq!(partial_files(&srv), 0);
    no_multipart_left(s3).await;
    srv.stop().await;
}
