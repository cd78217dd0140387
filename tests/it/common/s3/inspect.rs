//! Assertions the `BlobStore` trait cannot make: the objects and the open
//! multipart uploads under a config's prefix, and the raw SDK client.

use filestore::testing::config::StorageConfig;

/// The SDK client of the store of `cfg`, built by the product's own
/// `S3Store` setup, for assertions the `BlobStore` trait does not offer
/// (ListObjectsV2, ListMultipartUploads...).
pub async fn raw_client(cfg: &StorageConfig) -> aws_sdk_s3::Client {
    filestore::testing::storage::s3::S3Store::connect(cfg)
        .await
        .expect("S3 config")
        .sdk_client()
        .clone()
}

/// Keys of the objects under `cfg`'s prefix (all pages).
pub async fn object_keys(cfg: &StorageConfig) -> Vec<String> {
    let client = raw_client(cfg).await;
    let mut keys = Vec::new();
    let mut token = None;
    loop {
        let page = client
            .list_objects_v2()
            .bucket(cfg.bucket.as_deref().unwrap_or_default())
            .prefix(key_prefix(cfg))
            .set_continuation_token(token)
            .send()
            .await
            .expect("ListObjectsV2");
        keys.extend(
            page.contents()
                .iter()
                .filter_map(|o| o.key().map(str::to_string)),
        );
        token = page.next_continuation_token().map(str::to_string);
        if token.is_none() {
            return keys;
        }
    }
}

/// Number of objects under `cfg`'s prefix.
pub async fn object_count(cfg: &StorageConfig) -> usize {
    object_keys(cfg).await.len()
}

/// No multipart upload is left open under `cfg`'s prefix (an abort may
/// take a moment to show: 5 s at most).
pub async fn no_multipart_left(cfg: &StorageConfig) {
    let mut left = Vec::new();
    for _ in 0..50 {
        left = pending_uploads(cfg).await;
        if left.is_empty() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("multipart uploads left open: {left:?}");
}

/// Incomplete multipart uploads under `cfg`'s prefix, as `key (upload id,
/// initiated)` (SeaweedFS supports ListMultipartUploads with a prefix).
pub async fn pending_uploads(cfg: &StorageConfig) -> Vec<String> {
    raw_client(cfg)
        .await
        .list_multipart_uploads()
        .bucket(cfg.bucket.as_deref().unwrap_or_default())
        .prefix(key_prefix(cfg))
        .send()
        .await
        .expect("ListMultipartUploads")
        .uploads()
        .iter()
        .map(|u| {
            format!(
                "{} ({}, {:?})",
                u.key().unwrap_or_default(),
                u.upload_id().unwrap_or_default(),
                u.initiated()
            )
        })
        .collect()
}

/// The object-key prefix `S3Store` uses for `cfg` (`<prefix>/`, or empty).
pub fn key_prefix(cfg: &StorageConfig) -> String {
    let p = cfg.prefix.trim_matches('/');
    if p.is_empty() {
        String::new()
    } else {
        format!("{p}/")
    }
}
