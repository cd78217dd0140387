//! A file whose stored bytes are not its own is never served whole by the
//! CDN or the S3 door: a flipped byte not yet known cuts the body before
//! its last byte and marks the file; a marked file, or one whose blob is
//! gone, is a 500 `damaged` naming `admin verify --repair-from` (S3:
//! `InternalError` with that message), never a 404 while `get` shows it.

use super::{blob_path, flip_byte, run_admin, safety_server, DATA};
use crate::common::s3door;
use crate::common::{error_code, TestServer};
use aws_sdk_s3::error::ProvideErrorMetadata as _;

/// Uploads `name` (300 KiB of [`DATA`], public) into bucket `bkt` through the S3 door:
/// (its file id, its CDN URL).
async fn put(srv: &TestServer, s3: &aws_sdk_s3::Client, name: &str) -> (String, String) {
    s3.put_object()
        .bucket("bkt")
        .key(name)
        .acl(aws_sdk_s3::types::ObjectCannedAcl::PublicRead)
        .body(DATA().into())
        .send()
        .await
        .unwrap();
    let id = srv.text(&format!(
        "SELECT id FROM files WHERE name = '{name}' AND folder = 'bkt'"
    ));
    let url = srv.url(&format!("/live/{}/{id}/{name}", srv.account_id));
    (id, url)
}

fn marked(srv: &TestServer, id: &str) -> bool {
    srv.count(&format!(
        "SELECT COUNT(*) FROM files WHERE id = '{id}' AND damaged_at IS NOT NULL"
    )) == 1
}

/// A whole download of file `id` at `url`: its head says 200, but its body
/// is cut before the end, and the file is marked damaged.
async fn assert_cut_and_marked(srv: &TestServer, url: &str, id: &str) {
    let r = srv.http.get(url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let body = r.bytes().await;
    assert!(
        body.as_ref().map_or(true, |b| b.len() < DATA().len()),
        "a damaged file was sent whole"
    );
    srv.eventually(10, "the file is marked damaged", || async {
        marked(srv, id)
    })
    .await;
}

/// The 500 `damaged` of the CDN, naming the repair.
async fn assert_cdn_damaged(srv: &TestServer, url: &str) {
    let r = srv.http.get(url).send().await.unwrap();
    let (status, code) = error_code(r).await;
    assert_eq!((status, code.as_str()), (500, "damaged"));
    let r = srv.http.get(url).send().await.unwrap();
    let body: serde_json::Value = r.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("filestore admin verify --repair-from"),
        "{message}"
    );
}

/// The S3 door's 500 `InternalError` for `key`, naming the repair.
async fn assert_s3_damaged(s3: &aws_sdk_s3::Client, key: &str) {
    let e = s3
        .get_object()
        .bucket("bkt")
        .key(key)
        .send()
        .await
        .expect_err("a damaged object is not served");
    assert_eq!(
        s3door::failure(&e),
        (Some(500), Some("InternalError".into()))
    );
    let message = e.message().unwrap_or_default().to_string();
    assert!(message.contains("admin verify --repair-from"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_byte_is_never_served_whole_by_the_cdn() {
    let srv = safety_server(None).await;
    let s3 = s3door::client(&s3door::credentials(&srv.http, &srv.base_url, &srv.secret_key).await);
    s3.create_bucket().bucket("bkt").send().await.unwrap();
    let (id, url) = put(&srv, &s3, "rot.bin").await;
    flip_byte(&blob_path(&srv, &id), 150_000);
    // A range of it is served as before (not checked: not the whole).
    let r = srv
        .http
        .get(&url)
        .header("range", "bytes=0-99")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 206);
    assert_eq!(&r.bytes().await.unwrap()[..], &DATA()[..100]);
    // The whole: cut before the end, and the file marked.
    assert_cut_and_marked(&srv, &url, &id).await;
    // Marked: a 500 `damaged` on the CDN (a range too) and the S3 door.
    assert_cdn_damaged(&srv, &url).await;
    let r = srv
        .http
        .get(&url)
        .header("range", "bytes=0-99")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (500, "damaged".into()));
    assert_s3_damaged(&s3, "rot.bin").await;
    // The file is still listed.
    let (status, _) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
        .await;
    assert_eq!(status, 200);
}

/// Whether file `id` has `crc32` recorded.
fn crc_recorded(srv: &TestServer, id: &str, crc32: u32) -> bool {
    srv.count(&format!(
        "SELECT COUNT(*) FROM files WHERE id = '{id}' AND crc32 = {crc32}"
    )) == 1
}

/// The first whole download checks a file by its SHA-256 and records its
/// CRC-32; the next ones check that (a flipped byte is still never served
/// whole). `admin verify` records the CRC-32 of what it finds sound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_records_the_crc32_the_next_downloads_check() {
    let srv = safety_server(None).await;
    let s3 = s3door::client(&s3door::credentials(&srv.http, &srv.base_url, &srv.secret_key).await);
    s3.create_bucket().bucket("bkt").send().await.unwrap();
    let (id, url) = put(&srv, &s3, "crc.bin").await;
    let (verified, _) = put(&srv, &s3, "verified.bin").await;
    let crc32 = crc32fast::hash(&DATA());
    assert_eq!(
        srv.count("SELECT COUNT(*) FROM files WHERE crc32 IS NOT NULL"),
        0
    );
    let r = srv.http.get(&url).send().await.unwrap();
    assert_eq!(&r.bytes().await.unwrap()[..], &DATA()[..]);
    srv.eventually(10, "the CRC-32 is recorded", || async {
        crc_recorded(&srv, &id, crc32)
    })
    .await;
    // Whole again while the CRC-32 is checked (twice: the node's cache of
    // the row is forgotten once it is recorded).
    for _ in 0..2 {
        let r = srv.http.get(&url).send().await.unwrap();
        assert_eq!(&r.bytes().await.unwrap()[..], &DATA()[..]);
    }
    flip_byte(&blob_path(&srv, &id), 299 * 1024);
    assert_cut_and_marked(&srv, &url, &id).await;
    assert_cdn_damaged(&srv, &url).await;
    // `admin verify` finds the one damaged, records the other's CRC-32.
    let (code, out, err) = run_admin(&srv, &["verify", "--json"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(crc_recorded(&srv, &verified, crc32));
    assert!(!marked(&srv, &verified));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_byte_is_never_served_whole_by_the_s3_door() {
    let srv = safety_server(None).await;
    let s3 = s3door::client(&s3door::credentials(&srv.http, &srv.base_url, &srv.secret_key).await);
    s3.create_bucket().bucket("bkt").send().await.unwrap();
    let (id, url) = put(&srv, &s3, "rot.bin").await;
    flip_byte(&blob_path(&srv, &id), DATA().len() - 1);
    let got = s3.get_object().bucket("bkt").key("rot.bin").send().await;
    let whole = match got {
        Ok(out) => out
            .body
            .collect()
            .await
            .is_ok_and(|b| b.into_bytes().len() == DATA().len()),
        Err(_) => false,
    };
    assert!(!whole, "a damaged object was sent whole");
    srv.eventually(10, "the file is marked damaged", || async {
        marked(&srv, &id)
    })
    .await;
    assert_s3_damaged(&s3, "rot.bin").await;
    assert_cdn_damaged(&srv, &url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_blob_is_a_500_damaged_not_a_404() {
    let srv = safety_server(None).await;
    let s3 = s3door::client(&s3door::credentials(&srv.http, &srv.base_url, &srv.secret_key).await);
    s3.create_bucket().bucket("bkt").send().await.unwrap();
    let (id, url) = put(&srv, &s3, "gone.bin").await;
    let (other, other_url) = put(&srv, &s3, "gone2.bin").await;
    std::fs::remove_file(blob_path(&srv, &id)).unwrap();
    std::fs::remove_file(blob_path(&srv, &other)).unwrap();
    // Not yet marked: the CDN finds it missing, marks it, says so.
    assert!(!marked(&srv, &id));
    assert_cdn_damaged(&srv, &url).await;
    assert!(marked(&srv, &id));
    assert_s3_damaged(&s3, "gone.bin").await;
    // The S3 door finds one missing first the same way.
    assert_s3_damaged(&s3, "gone2.bin").await;
    assert!(marked(&srv, &other));
    assert_cdn_damaged(&srv, &other_url).await;
    // `get` still shows the file.
    let (status, _) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
        .await;
    assert_eq!(status, 200);
}
