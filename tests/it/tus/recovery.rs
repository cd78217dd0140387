//! A completion whose file commit never happened: the S3 multipart upload
//! gone from the store, the local partial blob already renamed into place.

use super::*;

/// The S3 store's multipart upload gone under an open upload: completed by
/// an attempt whose file commit never happened (its retried last PATCH
/// commits the file, its SHA-256 read back from the store), or aborted (the
/// upload is removed: 410, then 404, and its room is free).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_upload_gone_from_the_store_is_recovered_or_released() {
    use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
    let Some(b) = Backend::s3("tus_store_gone") else {
        return;
    };
    let cfg = s3_of(&b).unwrap();
    let srv = TestServer::on(b).await;
    let client = crate::common::s3::raw_client(&cfg).await;
    let bucket = cfg.bucket.clone().unwrap();
    let state_of = |url: &str| -> (String, String) {
        let id = url.rsplit('/').next().unwrap().to_string();
        (
            srv.text(&format!(
                "SELECT store_state FROM tus_uploads WHERE id = '{id}'"
            )),
            srv.text(&format!(
                "SELECT blob_key FROM tus_uploads WHERE id = '{id}'"
            )),
        )
    };
    // Completed in the store, never committed: all but the last byte sent,
    // then the store's upload completed with every byte behind our back.
    let bytes = data(100_000);
    let url = created(&srv, bytes.len() as u64, &[("filename", "late.bin")]).await;
    assert_eq!(
        patch(&srv, &url, 0, bytes[..99_999].to_vec())
            .await
            .status(),
        204
    );
    let (state, blob_key) = state_of(&url);
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    let upload_id = state["upload_id"].as_str().unwrap().to_string();
    let object = format!("{}{}", crate::common::s3::key_prefix(&cfg), blob_key);
    let part = client
        .upload_part()
        .bucket(&bucket)
        .key(&object)
        .upload_id(&upload_id)
        .part_number(1)
        .body(bytes.clone().into())
        .send()
        .await
        .unwrap();
    client
        .complete_multipart_upload()
        .bucket(&bucket)
        .key(&object)
        .upload_id(&upload_id)
        .multipart_upload(
            CompletedMultipartUpload::builder()
                .parts(
                    CompletedPart::builder()
                        .part_number(1)
                        .set_e_tag(part.e_tag().map(str::to_string))
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let r = patch(&srv, &url, 99_999, bytes[99_999..].to_vec()).await;
    assert_eq!(r.status(), 204, "{:?}", r.text().await);
    let id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    assert_eq!(
        stored_sha256(&srv, &id),
        hex::encode(Sha256::digest(&bytes))
    );
    // Aborted: the bytes are lost, the upload is removed, its room freed.
    let url = created(&srv, 50_000, &[("filename", "lost.bin")]).await;
    assert_eq!(patch(&srv, &url, 0, vec![1; 10_000]).await.status(), 204);
    let (state, blob_key) = state_of(&url);
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    client
        .abort_multipart_upload()
        .bucket(&bucket)
        .key(format!(
            "{}{}",
            crate::common::s3::key_prefix(&cfg),
            blob_key
        ))
        .upload_id(state["upload_id"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    let r = patch(&srv, &url, 10_000, vec![1; 40_000]).await;
    assert_eq!(error_code(r).await, (410, "upload_expired".into()));
    let (status, _) = srv
        .get_json(&srv.secret_key, &url.replace(&srv.base_url, ""))
        .await;
    assert_eq!(status, 404);
    assert_eq!(srv.usage().await["storage_bytes"], 100_000);
    srv.stop().await;
}

/// The local store: a partial blob already renamed into place by a
/// completion whose file commit never happened goes back to being partial,
/// and the retried PATCH completes the upload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_completion_without_commit_is_taken_back() {
    let srv = TestServer::on(Backend::LocalBlobs).await;
    let bytes = data(30_000);
    let url = created(&srv, 30_000, &[("filename", "back.bin")]).await;
    assert_eq!(
        patch(&srv, &url, 0, bytes[..20_000].to_vec())
            .await
            .status(),
        204
    );
    let id = url.rsplit('/').next().unwrap().to_string();
    let blob_key = srv.text(&format!(
        "SELECT blob_key FROM tus_uploads WHERE id = '{id}'"
    ));
    let blob = srv.data_dir.join("blobs").join(&blob_key);
    let partial = blob.with_file_name(format!(
        "{}.partial",
        blob.file_name().unwrap().to_string_lossy()
    ));
    std::fs::rename(&partial, &blob).unwrap();
    let r = patch(&srv, &url, 20_000, bytes[20_000..].to_vec()).await;
    assert_eq!(r.status(), 204);
    let file = r.headers()["x-file-id"].to_str().unwrap().to_string();
    assert_eq!(
        stored_sha256(&srv, &file),
        hex::encode(Sha256::digest(&bytes))
    );
    assert_eq!(std::fs::read(&blob).unwrap(), bytes);
    srv.stop().await;
}
