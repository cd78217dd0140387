//! Every stored file's MD5 beside its SHA-256 (computed while its bytes
//! arrive, never read again): a multipart upload kept inline and one
//! streamed to the spool, a resumable upload over several PATCHes (the MD5
//! state saved between them), a copy (the source's MD5), an upload token's
//! multipart and resumable uploads. Read back from the database, on SQLite
//! or PostgreSQL; the /v1 File record does not carry it.

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

/// Bytes no chunk boundary hides.
fn data(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i / 251) as u8)
        .collect()
}

fn md5_hex(bytes: &[u8]) -> String {
    hex::encode(md5::Md5::digest(bytes))
}

/// The file's stored (md5, sha256).
fn stored(srv: &TestServer, id: &str) -> (String, String) {
    (
        srv.text(&format!("SELECT md5 FROM files WHERE id = '{id}'")),
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
        assert_eq!(
            stored(&srv, &id_of(&record)),
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
    assert_eq!(stored(&srv, &id), (md5_hex(&bytes), sha256_hex(&bytes)));
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
        assert_eq!(stored(&srv, &copy), (md5_hex(&bytes), sha256_hex(&bytes)));
    }
}

async fn an_upload_tokens_uploads_store_their_md5(b: Backend) {
    let srv = crate::tokens::server(b).await;
    let t = token(&srv, json!({ "max_uploads": 3 })).await;
    let bytes = data(150_000, 5);
    let record = upload_ok_with(&srv, &t.token, Via::Bearer, "t.bin", bytes.clone(), &[]).await;
    assert_eq!(
        stored(&srv, &id_of(&record)),
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
    assert_eq!(stored(&srv, &id), (md5_hex(&bytes), sha256_hex(&bytes)));
}
