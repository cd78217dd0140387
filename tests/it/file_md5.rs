//! Every stored file's MD5 beside its SHA-256: computed while the bytes
//! arrive for a file kept in memory, and filled in at idle priority after
//! the commit for one spooled to disk or uploaded resumably
//! (`service::md5_fill`): a multipart upload kept inline and one streamed to
//! the spool, a resumable upload over several PATCHes, a copy (the source's
//! MD5), an upload token's multipart and resumable uploads; bytes that no
//! longer match their SHA-256 get no MD5. Read back from the database, on
//! SQLite or PostgreSQL; the /v1 File record does not carry it.

use crate::common::cluster::{OCTETS, TUS};
use crate::common::{sha256_hex, Backend, TestServer};
use crate::tokens::{token, tus_created, tus_patch, upload_ok_with, Via};
use filestore::testing::domain::tus::encode_metadata;
use md5::Digest;
use serde_json::json;

both_stores!(
    multipart_uploads_store_the_md5_of_their_bytes,
    a_resumable_upload_stores_the_md5_of_all_its_patches,
    a_copy_keeps_its_sources_md5,
    an_upload_tokens_uploads_store_their_md5,
);

mod local_only {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bytes_that_no_longer_match_their_sha256_get_no_md5() {
        super::bytes_that_no_longer_match_their_sha256_get_no_md5().await;
    }
}

/// Bytes no chunk boundary hides.
fn data(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i / 251) as u8)
        .collect()
}

fn md5_hex(bytes: &[u8]) -> String {
    hex::encode(md5::Md5::digest(bytes))
}

/// The file's stored MD5 ("" while unknown).
fn md5_of(srv: &TestServer, id: &str) -> String {
    srv.text(&format!(
        "SELECT COALESCE(md5, '') FROM files WHERE id = '{id}'"
    ))
}

/// The file's stored (md5, sha256), once the MD5 is known: at once for
/// bytes kept in memory, within a minute (a liveness bound, at idle
/// priority on a busy test machine) for the rest.
async fn stored(srv: &TestServer, id: &str) -> (String, String) {
    let until = std::time::Instant::now() + std::time::Duration::from_mins(1);
    let md5 = loop {
        let md5 = md5_of(srv, id);
        if !md5.is_empty() || std::time::Instant::now() > until {
            break md5;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    (
        md5,
        srv.text(&format!("SELECT sha256 FROM files WHERE id = '{id}'")),
    )
}

fn id_of(record: &serde_json::Value) -> String {
    record["id"].as_str().expect("id").to_string()
}

async fn multipart_uploads_store_the_md5_of_their_bytes(b: Backend) {
    let srv = TestServer::on(b).await;
    // Small (inline, unless the store keeps none) and spooled to a file.
    for len in [0, 100, 300_000] {
        let bytes = data(len, 7);
        let record = srv.upload_ok("m.bin", bytes.clone(), &[]).await;
        assert!(record.get("md5").is_none(), "not a /v1 field: {record}");
        let id = id_of(&record);
        let inline = srv.text(&format!(
            "SELECT CASE WHEN inline THEN 'y' ELSE 'n' END FROM files WHERE id = '{id}'"
        ));
        if inline == "y" {
            // Kept in memory: hashed as it arrived, known at the commit.
            assert_eq!(md5_of(&srv, &id), md5_hex(&bytes), "{len} bytes");
        }
        assert_eq!(
            stored(&srv, &id_of(&record)).await,
            (md5_hex(&bytes), sha256_hex(&bytes)),
            "{len} bytes"
        );
    }
}

async fn a_resumable_upload_stores_the_md5_of_all_its_patches(b: Backend) {
    let srv = TestServer::on(b).await;
    let bytes = data(200_003, 3);
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&srv.secret_key)
        .header(TUS.0, TUS.1)
        .header("upload-length", bytes.len())
        .header("upload-metadata", encode_metadata(&[("filename", "r.bin")]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let url = r.headers()["location"].to_str().unwrap().to_string();
    // Cut at odd places: inside a block, past one, near the end.
    let mut file_id = None;
    let mut at = 0;
    for cut in [1, 64 * 1000 + 57, 131_071, bytes.len()] {
        let r = srv
            .http
            .patch(&url)
            .bearer_auth(&srv.secret_key)
            .header(TUS.0, TUS.1)
            .header(OCTETS.0, OCTETS.1)
            .header("upload-offset", at)
            .body(bytes[at..cut].to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 204, "PATCH at {at}");
        if cut == bytes.len() {
            file_id = Some(r.headers()["x-file-id"].to_str().unwrap().to_string());
        }
        at = cut;
    }
    let id = file_id.unwrap();
    assert_eq!(
        stored(&srv, &id).await,
        (md5_hex(&bytes), sha256_hex(&bytes))
    );
}

async fn a_copy_keeps_its_sources_md5(b: Backend) {
    let srv = TestServer::on(b).await;
    for len in [10, 200_000] {
        let bytes = data(len, 11);
        let source = id_of(&srv.upload_ok("c.bin", bytes.clone(), &[]).await);
        let r = srv
            .http
            .post(srv.url(&format!("/v1/files/{source}/copy")))
            .bearer_auth(&srv.secret_key)
            .json(&json!({ "name": "copy.bin" }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201, "{:?}", r.text().await);
        let copy = id_of(&r.json().await.unwrap());
        assert_ne!(copy, source);
        assert_eq!(
            stored(&srv, &copy).await,
            (md5_hex(&bytes), sha256_hex(&bytes))
        );
    }
}

async fn an_upload_tokens_uploads_store_their_md5(b: Backend) {
    let srv = crate::tokens::server(b).await;
    let t = token(&srv, json!({ "max_uploads": 3 })).await;
    let bytes = data(150_000, 5);
    let record = upload_ok_with(&srv, &t.token, Via::Bearer, "t.bin", bytes.clone(), &[]).await;
    assert_eq!(
        stored(&srv, &id_of(&record)).await,
        (md5_hex(&bytes), sha256_hex(&bytes))
    );
    // Its resumable upload, in two PATCHes.
    let bytes = data(70_001, 9);
    let url = tus_created(
        &srv,
        &t.token,
        bytes.len() as u64,
        &[("filename", "t2.bin")],
    )
    .await;
    let r = tus_patch(&srv, &url, &t.token, 0, bytes[..33_333].to_vec()).await;
    assert_eq!(r.status(), 204);
    let r = tus_patch(&srv, &url, &t.token, 33_333, bytes[33_333..].to_vec()).await;
    assert_eq!(r.status(), 204);
    let id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    assert_eq!(
        stored(&srv, &id).await,
        (md5_hex(&bytes), sha256_hex(&bytes))
    );
}

/// A spooled file's MD5 once filled; then its MD5 forgotten and a byte of
/// its blob flipped: a pass of the fill refuses it (no MD5); the byte put
/// back, the next pass fills it again.
async fn bytes_that_no_longer_match_their_sha256_get_no_md5() {
    use filestore::testing::service::md5_fill::pass_once;
    let srv = TestServer::on(Backend::LocalBlobs).await;
    let bytes = data(100_000, 1);
    let id = id_of(&srv.upload_ok("rot.bin", bytes.clone(), &[]).await);
    assert_eq!(stored(&srv, &id).await.0, md5_hex(&bytes));
    let key = srv.text(&format!("SELECT blob_key FROM files WHERE id = '{id}'"));
    let path = srv.app.store.local_file(&key).expect("a local blob");
    let mut rotten = bytes.clone();
    rotten[50_000] ^= 0x20;
    std::fs::write(&path, &rotten).unwrap();
    srv.exec(&format!("UPDATE files SET md5 = NULL WHERE id = '{id}'"));
    assert_eq!(pass_once(&srv.app).await.unwrap(), (0, 1));
    assert_eq!(md5_of(&srv, &id), "", "no MD5 for bytes that changed");
    std::fs::write(&path, &bytes).unwrap();
    let (filled, refused) = pass_once(&srv.app).await.unwrap();
    assert_eq!(refused, 0);
    // This pass or the server's own fill, woken by nothing, sets it.
    assert!(filled <= 1);
    assert_eq!(stored(&srv, &id).await.0, md5_hex(&bytes));
}
