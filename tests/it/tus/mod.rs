//! `/v1/uploads`: tus 1.0.0 resumable uploads, on every store — chunks,
//! checksums, every refusal, reservations, expiry, CORS, concurrency, and
//! a PATCH cut off midway.

use crate::common::cluster::{OCTETS, TUS};
use crate::common::get_bytes;
use crate::common::{error_code, Backend, TestOptions, TestServer};
use base64::Engine;
use filestore::testing::domain::tus::encode_metadata;
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use std::time::Duration;

mod access;
mod recovery;
mod refusals;
mod room;
mod transfer;

/// Bytes no two tests share, that no chunk boundary hides.
fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

async fn create(
    srv: &TestServer,
    key: &str,
    length: u64,
    meta: &[(&str, &str)],
) -> reqwest::Response {
    srv.http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(key)
        .header(TUS.0, TUS.1)
        .header("upload-length", length)
        .header("upload-metadata", encode_metadata(meta))
        .send()
        .await
        .unwrap()
}

/// Creates an upload with the secret key; its URL.
async fn created(srv: &TestServer, length: u64, meta: &[(&str, &str)]) -> String {
    let r = create(srv, &srv.secret_key, length, meta).await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    assert!(location.starts_with(&format!("{}/v1/uploads/u_", srv.base_url)));
    location
}

/// A PATCH at `offset` with the secret key, its body still to give.
fn patch_request(srv: &TestServer, url: &str, offset: u64) -> reqwest::RequestBuilder {
    srv.http
        .patch(url)
        .bearer_auth(&srv.secret_key)
        .header(TUS.0, TUS.1)
        .header(OCTETS.0, OCTETS.1)
        .header("upload-offset", offset)
}

async fn patch(srv: &TestServer, url: &str, offset: u64, body: Vec<u8>) -> reqwest::Response {
    patch_request(srv, url, offset)
        .body(body)
        .send()
        .await
        .unwrap()
}

async fn offset(srv: &TestServer, url: &str) -> u64 {
    let r = srv
        .http
        .head(url)
        .bearer_auth(&srv.secret_key)
        .header(TUS.0, TUS.1)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "no-store");
    assert_eq!(r.headers()["tus-resumable"], "1.0.0");
    r.headers()["upload-offset"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// The stored file's sha256, as the database has it.
fn stored_sha256(srv: &TestServer, file_id: &str) -> String {
    srv.text(&format!("SELECT sha256 FROM files WHERE id = '{file_id}'"))
}

/// The S3 store's config, when `b` is one.
fn s3_of(b: &Backend) -> Option<filestore::testing::config::StorageConfig> {
    match b {
        Backend::S3(cfg) => Some((**cfg).clone()),
        _ => None,
    }
}

/// On S3: no multipart upload is left open under the test's prefix.
async fn no_multipart_left(s3: Option<filestore::testing::config::StorageConfig>) {
    if let Some(cfg) = s3 {
        crate::common::s3::no_multipart_left(&cfg).await;
    }
}

/// Partial blobs the local store holds (none on S3).
fn partial_files(srv: &TestServer) -> usize {
    let blobs = srv.data_dir.join("blobs");
    let Ok(accounts) = std::fs::read_dir(&blobs) else {
        return 0;
    };
    accounts
        .flatten()
        .flat_map(|a| std::fs::read_dir(a.path()).into_iter().flatten().flatten())
        .filter(|f| f.file_name().to_string_lossy().ends_with(".partial"))
        .count()
}
