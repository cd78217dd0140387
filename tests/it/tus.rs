//! `/v1/uploads`: tus 1.0.0 resumable uploads, on every store — chunks,
//! checksums, every refusal, reservations, expiry, CORS, concurrency, and
//! a PATCH cut off midway.

use crate::common::get_bytes;
use crate::common::{error_code, Backend, TestOptions, TestServer};
use base64::Engine;
use filestore::testing::domain::tus::encode_metadata;
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use std::time::Duration;

both_stores!(
    chunks_become_a_file_with_its_sha256,
    creation_with_upload_and_chunk_checksums,
    every_refusal_has_its_status_and_stores_nothing,
    the_declared_length_is_reserved_until_completion_or_termination,
    expired_uploads_are_gone_and_give_their_room_back,
    public_keys_use_it_from_their_origins,
    grace_period_and_rate_limits_apply,
    the_local_disk_must_have_room_for_the_declared_length,
    concurrent_patches_are_serialized,
    a_patch_cut_off_keeps_what_arrived,
);

const TUS: (&str, &str) = ("tus-resumable", "1.0.0");
const OCTETS: (&str, &str) = ("content-type", "application/offset+octet-stream");

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

async fn public_keys_use_it_from_their_origins(b: Backend) {
    let srv = TestServer::on(b).await;
    let pk = srv.new_key("public", &["https://app.example.com"]).await;
    let origin = "https://app.example.com";
    // The preflight allows tus's headers and methods.
    let r = srv
        .http
        .request(reqwest::Method::OPTIONS, srv.url("/v1/uploads/u_x"))
        .header("origin", origin)
        .header("access-control-request-method", "PATCH")
        .header(
            "access-control-request-headers",
            "tus-resumable, upload-offset",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let allowed = r.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap();
    for h in [
        "tus-resumable",
        "upload-offset",
        "upload-length",
        "upload-metadata",
        "upload-checksum",
    ] {
        assert!(allowed.contains(h), "{allowed}");
    }
    assert!(r.headers()["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .contains("PATCH"));
    let start = |origin: &str, meta: &[(&str, &str)]| {
        srv.http
            .post(srv.url("/v1/uploads"))
            .bearer_auth(&pk)
            .header("origin", origin)
            .header(TUS.0, TUS.1)
            .header("upload-length", 3)
            .header("upload-metadata", encode_metadata(meta))
            .send()
    };
    let r = start(origin, &[("filename", "p.txt")]).await.unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["access-control-allow-origin"], origin);
    let exposed = r.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap();
    for h in [
        "location",
        "upload-offset",
        "upload-length",
        "upload-expires",
        "x-file-id",
    ] {
        assert!(exposed.contains(h), "{exposed}");
    }
    let url = r.headers()["location"].to_str().unwrap().to_string();
    let r = srv
        .http
        .patch(&url)
        .bearer_auth(&pk)
        .header("origin", origin)
        .header(TUS.0, TUS.1)
        .header(OCTETS.0, OCTETS.1)
        .header("upload-offset", 0)
        .body("abc")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert!(r.headers().contains_key("x-file-id"));
    let r = start("https://evil.example.com", &[]).await.unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    let r = start(origin, &[("private", "true")]).await.unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
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
    let r = patch(&srv, &url, at, bytes[at as usize..].to_vec()).await;
    assert_eq!(r.status(), 204);
    let id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    assert_eq!(
        stored_sha256(&srv, &id),
        hex::encode(Sha256::digest(&bytes))
    );
    srv.stop().await;
}

async fn grace_period_and_rate_limits_apply(b: Backend) {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nrate_limit = 2\nrate_window = \"1h\"\n".into()),
        backend: Some(b),
        ..Default::default()
    })
    .await;
    let url = created(&srv, 10, &[("filename", "g.txt")]).await;
    // An account in its grace period may not start an upload; one the plan
    // admitted before goes on.
    srv.set_account(&srv.account_id, None, Some(true)).await;
    let r = create(&srv, &srv.secret_key, 10, &[]).await;
    assert_eq!(error_code(r).await, (403, "grace_period".into()));
    assert_eq!(patch(&srv, &url, 0, vec![1; 5]).await.status(), 204);
    srv.set_account(&srv.account_id, None, Some(false)).await;
    // The key's window counts creations (refusals before it do not); the
    // PATCHes of an admitted upload never meet a 429 (tus clients give up on one).
    let r = create(&srv, &srv.secret_key, 10, &[]).await;
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["x-ratelimit-remaining"], "0");
    let r = create(&srv, &srv.secret_key, 10, &[]).await;
    assert!(r.headers().contains_key("retry-after"));
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    let r = patch(&srv, &url, 5, vec![1; 5]).await;
    assert_eq!(r.status(), 204);
    assert!(r.headers().contains_key("x-file-id"));
    srv.stop().await;
}

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
