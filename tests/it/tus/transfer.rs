//! Chunks become a file with its SHA-256, creation-with-upload and per-chunk
//! checksums, concurrent PATCHes serialized, and a PATCH cut off midway.

use super::*;

both_stores!(
    chunks_become_a_file_with_its_sha256,
    creation_with_upload_and_chunk_checksums,
    concurrent_patches_are_serialized,
    a_patch_cut_off_keeps_what_arrived,
    metadata_arrives_on_the_completed_file,
);

async fn chunks_become_a_file_with_its_sha256(b: Backend) {
    let s3 = s3_of(&b);
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nmax_file_size = \"100MB\"\n".into()),
        backend: Some(b),
        ..Default::default()
    })
    .await;
    // Chunks across the S3 store's 8 MiB parts: a part is cut inside a
    // PATCH and a tail carried from one PATCH to the next.
    let bytes = data(19 * 1024 * 1024 + 123);
    let len = bytes.len() as u64;
    let url = created(
        &srv,
        len,
        &[
            ("filename", "big.bin"),
            ("folder", "tus/in"),
            ("expires", "7d"),
        ],
    )
    .await;
    assert_eq!(offset(&srv, &url).await, 0);
    let mut at = 0usize;
    let mut file_id = None;
    for size in [5 * 1024 * 1024, 7 * 1024 * 1024, 3, bytes.len()] {
        let end = (at + size).min(bytes.len());
        let r = patch(&srv, &url, at as u64, bytes[at..end].to_vec()).await;
        assert_eq!(r.status(), 204, "{:?}", r.text().await);
        assert_eq!(r.headers()["upload-offset"], end.to_string().as_str());
        at = end;
        if at < bytes.len() {
            assert!(r.headers().contains_key("upload-expires"));
            assert!(!r.headers().contains_key("x-file-id"));
            assert_eq!(offset(&srv, &url).await, at as u64);
        } else {
            file_id = Some(r.headers()["x-file-id"].to_str().unwrap().to_string());
        }
    }
    let file_id = file_id.unwrap();
    let (status, st) = srv
        .get_json(&srv.secret_key, &url.replace(&srv.base_url, ""))
        .await;
    assert_eq!(status, 200);
    assert_eq!(st["offset"], len);
    assert_eq!(st["length"], len);
    assert_eq!(st["expires_at"], serde_json::Value::Null);
    let f = &st["file"];
    assert_eq!(f["id"], file_id.as_str());
    assert_eq!(f["name"], "big.bin");
    assert_eq!(f["folder"], "tus/in");
    assert_eq!(f["size"], len);
    assert!(f["expires_at"].is_string());
    assert_eq!(
        stored_sha256(&srv, &file_id),
        hex::encode(Sha256::digest(&bytes))
    );
    let got = get_bytes(&srv.http, f["url"].as_str().unwrap()).await;
    assert!(got[..] == bytes[..], "the CDN serves the bytes sent");
    let usage = srv.usage().await;
    assert_eq!(
        (
            usage["storage_bytes"].as_u64(),
            usage["upload_count"].as_u64()
        ),
        (Some(len), Some(1))
    );
    // A retried last PATCH gets the file again; nothing more is taken, and
    // a PATCH at any other offset is a conflict, not the file.
    let r = patch(&srv, &url, len, Vec::new()).await;
    assert_eq!(r.status(), 204);
    assert_eq!(r.headers()["x-file-id"], file_id.as_str());
    let r = patch(&srv, &url, 3, vec![1]).await;
    assert_eq!(error_code(r).await, (409, "offset_mismatch".into()));
    assert_eq!(
        error_code(patch(&srv, &url, len, vec![1]).await).await.0,
        413
    );
    assert_eq!(partial_files(&srv), 0);
    no_multipart_left(s3).await;
    srv.stop().await;
}

async fn creation_with_upload_and_chunk_checksums(b: Backend) {
    let srv = TestServer::on(b).await;
    let bytes = data(3000);
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&srv.secret_key)
        .header(TUS.0, TUS.1)
        .header(OCTETS.0, OCTETS.1)
        .header("upload-length", 3000)
        .header("upload-metadata", encode_metadata(&[("filename", "c.bin")]))
        .body(bytes[..1000].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["upload-offset"], "1000");
    let url = r.headers()["location"].to_str().unwrap().to_string();
    let with_checksum = |offset: u64, body: Vec<u8>, checksum: String| {
        patch_request(&srv, &url, offset)
            .header("upload-checksum", checksum)
            .body(body)
            .send()
    };
    // A tampered chunk: 460, discarded.
    let wrong = format!("sha256 {}", b64(&Sha256::digest(b"something else")));
    let r = with_checksum(1000, bytes[1000..2000].to_vec(), wrong)
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (460, "checksum_mismatch".into()));
    assert_eq!(offset(&srv, &url).await, 1000);
    // An unknown algorithm, or a digest of the wrong size: 400.
    let md5 = format!("md5 {}", b64(&[0; 16]));
    let r = with_checksum(1000, bytes[1000..2000].to_vec(), md5)
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (400, "bad_request".into()));
    // Right, in sha1 and in sha256.
    let sha1 = format!("sha1 {}", b64(&sha1::Sha1::digest(&bytes[1000..2000])));
    let r = with_checksum(1000, bytes[1000..2000].to_vec(), sha1)
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let sha256 = format!("sha256 {}", b64(&Sha256::digest(&bytes[2000..])));
    let r = with_checksum(2000, bytes[2000..].to_vec(), sha256)
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    assert_eq!(
        stored_sha256(&srv, &id),
        hex::encode(Sha256::digest(&bytes))
    );
    // A retried creation with the same Idempotency-Key gets the same upload.
    let with_key = || {
        srv.http
            .post(srv.url("/v1/uploads"))
            .bearer_auth(&srv.secret_key)
            .header(TUS.0, TUS.1)
            .header("upload-length", 50)
            .header("idempotency-key", "creation-1")
            .send()
    };
    let first = with_key().await.unwrap();
    assert_eq!(first.status(), 201);
    let again = with_key().await.unwrap();
    assert_eq!(again.status(), 201);
    assert_eq!(first.headers()["location"], again.headers()["location"]);
    let key_url = first.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(patch(&srv, &key_url, 0, vec![7; 20]).await.status(), 204);
    let again = with_key().await.unwrap();
    assert_eq!(
        again.headers()["upload-offset"],
        "20",
        "the replay says where it stands"
    );
    let bad = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&srv.secret_key)
        .header(TUS.0, TUS.1)
        .header("upload-length", 50)
        .header("idempotency-key", "has space")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(bad).await, (400, "bad_request".into()));
    // A one-request upload: created and completed at once.
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&srv.secret_key)
        .header(TUS.0, TUS.1)
        .header(OCTETS.0, OCTETS.1)
        .header("upload-length", 5)
        .body("hello")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["upload-offset"], "5");
    assert!(r.headers().contains_key("x-file-id"));
    srv.stop().await;
}

async fn concurrent_patches_are_serialized(b: Backend) {
    let srv = TestServer::on(b).await;
    let url = created(&srv, 200_000, &[("filename", "race.bin")]).await;
    let body = data(100_000);
    let (a, c) = tokio::join!(
        patch(&srv, &url, 0, body.clone()),
        patch(&srv, &url, 0, body.clone())
    );
    let mut statuses = [a.status().as_u16(), c.status().as_u16()];
    statuses.sort_unstable();
    // One goes first; the other is told to come back while it runs (423),
    // or finds the offset moved once it has ended (409).
    assert!(
        statuses == [204, 409] || statuses == [204, 423],
        "{statuses:?}"
    );
    assert_eq!(offset(&srv, &url).await, 100_000);
    let r = patch(&srv, &url, 100_000, body.clone()).await;
    let id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    let whole: Vec<u8> = body.iter().chain(body.iter()).copied().collect();
    assert_eq!(
        stored_sha256(&srv, &id),
        hex::encode(Sha256::digest(&whole))
    );
    srv.stop().await;
}

async fn a_patch_cut_off_keeps_what_arrived(b: Backend) {
    let srv = TestServer::on(b).await;
    let bytes = data(300_000);
    let url = created(&srv, bytes.len() as u64, &[("filename", "cut.bin")]).await;
    // 200,000 bytes, then the client's body fails: the connection breaks.
    let sent = bytes[..200_000].to_vec();
    let chunks = futures_util::stream::iter(vec![
        Ok(bytes::Bytes::from(sent[..100_000].to_vec())),
        Ok(bytes::Bytes::from(sent[100_000..].to_vec())),
        Err(std::io::Error::other("cable pulled")),
    ])
    .then(|item| async {
        // Paced, so that the bytes are on the wire before the break.
        tokio::time::sleep(Duration::from_millis(200)).await;
        item
    });
    let r = patch_request(&srv, &url, 0)
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await;
    assert!(r.is_err(), "the request broke off");
    // The server keeps what it received (once it has seen the break).
    let mut at = 0;
    for _ in 0..50 {
        at = offset(&srv, &url).await;
        if at > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(at > 0 && at <= 200_000, "{at}");
    // The broken PATCH may still hold the upload's lease for a moment after
    // its offset is saved (on S3 it is still storing the part): a client is
    // told 423 and comes back, as tus clients do.
    let mut r = patch(&srv, &url, at, bytes[at as usize..].to_vec()).await;
    for _ in 0..50 {
        if r.status() != 423 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        at = offset(&srv, &url).await;
        r = patch(&srv, &url, at, bytes[at as usize..].to_vec()).await;
    }
    assert_eq!(r.status(), 204);
    let id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    assert_eq!(
        stored_sha256(&srv, &id),
        hex::encode(Sha256::digest(&bytes))
    );
    srv.stop().await;
}

async fn metadata_arrives_on_the_completed_file(b: Backend) {
    let srv = TestServer::on(b).await;
    let key = &srv.secret_key;
    let meta = r#"{"project":"apollo","stage":"2"}"#;
    let want = serde_json::json!({"project": "apollo", "stage": "2"});
    let bytes = data(1000);
    let url = created(
        &srv,
        bytes.len() as u64,
        &[("filename", "m.bin"), ("metadata", meta)],
    )
    .await;
    assert_eq!(
        patch(&srv, &url, 0, bytes[..400].to_vec()).await.status(),
        204
    );
    let r = patch(&srv, &url, 400, bytes[400..].to_vec()).await;
    assert_eq!(r.status(), 204);
    let file_id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    let (status, st) = srv.get_json(key, &url.replace(&srv.base_url, "")).await;
    assert_eq!(status, 200);
    assert_eq!(st["file"]["metadata"], want);
    let (status, f) = srv.get_json(key, &format!("/v1/files/{file_id}")).await;
    assert_eq!((status, &f["metadata"]), (200, &want));
    let (_, list) = srv.get_json(key, "/v1/files").await;
    assert_eq!(list["files"][0]["metadata"], want);
    // An empty upload is complete at creation, with its metadata; none is {}.
    let url = created(&srv, 0, &[("filename", "e.bin"), ("metadata", meta)]).await;
    let (_, st) = srv.get_json(key, &url.replace(&srv.base_url, "")).await;
    assert_eq!(st["file"]["metadata"], want);
    let url = created(&srv, 0, &[("filename", "n.bin")]).await;
    let (_, st) = srv.get_json(key, &url.replace(&srv.base_url, "")).await;
    assert_eq!(st["file"]["metadata"], serde_json::json!({}));
    // The largest metadata fits in the header (base64 of 4096 bytes).
    let full = serde_json::json!({ "a": "x".repeat(4096 - 8) }).to_string();
    let url = created(&srv, 0, &[("filename", "f.bin"), ("metadata", &full)]).await;
    let (_, st) = srv.get_json(key, &url.replace(&srv.base_url, "")).await;
    assert_eq!(
        st["file"]["metadata"]["a"].as_str().map(str::len),
        Some(4096 - 8)
    );
    // Bad metadata refuses the creation.
    let over = serde_json::json!({ "a": "x".repeat(4096 - 7) }).to_string();
    let seventeen: serde_json::Map<String, serde_json::Value> =
        (0..17).map(|i| (format!("k{i:02}"), "v".into())).collect();
    let seventeen = serde_json::Value::Object(seventeen).to_string();
    let refused = [
        r#"{"A":"x"}"#,
        r#"{"a":1}"#,
        "[]",
        "nope",
        &over,
        &seventeen,
    ];
    for bad in refused {
        let r = create(&srv, key, 10, &[("metadata", bad)]).await;
        assert_eq!(error_code(r).await, (400, "bad_request".into()), "{bad}");
    }
}
