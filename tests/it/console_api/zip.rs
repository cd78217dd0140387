//! `POST /v1/files/zip`: chosen files as one streamed zip (read back with
//! Python's zipfile, which checks every CRC-32): paths relative to the
//! deepest folder holding them all, in the order asked, a repeated path
//! numbered, inline and blob files, the bytes counted as bandwidth; 400 for
//! no ids, too many or a bad body, 404 for an id that is no live file.

use super::*;
use crate::common::{read_zip, sha256_hex};
use futures_util::StreamExt;
use serde_json::json;
use std::path::{Path, PathBuf};
use tokio::io::AsyncWriteExt;

/// POST /v1/files/zip: status, headers, and the body in a file in `dir`.
async fn zip_of(
    srv: &TestServer,
    ids: &[&str],
    dir: &Path,
) -> (u16, reqwest::header::HeaderMap, PathBuf) {
    let r = send(
        srv,
        Method::POST,
        "/v1/files/zip",
        Some(&srv.secret_key),
        Some(json!({ "ids": ids })),
    )
    .await;
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let path = dir.join(format!("answer-{}.zip", ids.len()));
    let mut file = tokio::fs::File::create(&path).await.unwrap();
    let mut body = r.bytes_stream();
    while let Some(chunk) = body.next().await {
        file.write_all(&chunk.unwrap()).await.unwrap();
    }
    file.flush().await.unwrap();
    (status, headers, path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chosen_files_as_one_zip() {
    let srv = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    // A blob well past inline_max, and small inline files.
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let up = |name: &'static str, bytes: Vec<u8>, folder: &'static str| {
        let srv = &srv;
        async move {
            let fields: Vec<(&str, &str)> = if folder.is_empty() {
                vec![]
            } else {
                vec![("folder", folder)]
            };
            let f = srv.upload_ok(name, bytes, &fields).await;
            f["id"].as_str().unwrap().to_string()
        }
    };
    let a = up("a.txt", b"alpha".to_vec(), "docs/x").await;
    let b = up("big.bin", big.clone(), "docs/y").await;
    let c = up("a.txt", b"second a".to_vec(), "docs/x").await;
    let r = up("root.txt", b"at the root".to_vec(), "").await;

    let before = srv.usage().await["bandwidth_bytes"].as_u64().unwrap();
    let (status, headers, path) = zip_of(&srv, &[&a, &b, &c, &a], dir.path()).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/zip");
    let disposition = headers["content-disposition"].to_str().unwrap();
    assert!(disposition.contains("docs.zip"), "{disposition}");
    let entries = read_zip(&path);
    let want = [
        ("x/a.txt".to_string(), 5, sha256_hex(b"alpha")),
        ("y/big.bin".to_string(), big.len() as u64, sha256_hex(&big)),
        ("x/a (2).txt".to_string(), 8, sha256_hex(b"second a")),
    ];
    assert_eq!(entries, want, "in the order asked, a repeated id once");
    let size = std::fs::metadata(&path).unwrap().len();
    srv.eventually(5, "the archive counted as bandwidth", || async {
        srv.usage().await["bandwidth_bytes"].as_u64().unwrap() >= before + size
    })
    .await;

    // One folder: bare names, named after it; with the root: full paths.
    let (status, headers, path) = zip_of(&srv, &[&c], dir.path()).await;
    assert_eq!(status, 200);
    assert!(headers["content-disposition"]
        .to_str()
        .unwrap()
        .contains("x.zip"));
    assert_eq!(
        read_zip(&path),
        [("a.txt".into(), 8, sha256_hex(b"second a"))]
    );
    let (status, headers, path) = zip_of(&srv, &[&r, &a], dir.path()).await;
    assert_eq!(status, 200);
    assert!(headers["content-disposition"]
        .to_str()
        .unwrap()
        .contains("files.zip"));
    let names: Vec<String> = read_zip(&path).into_iter().map(|e| e.0).collect();
    assert_eq!(names, ["root.txt", "docs/x/a.txt"]);

    // An id that is no file (unknown, or deleted): 404, before any byte.
    assert_eq!(srv.delete_as(&srv.secret_key, &r).await.status(), 200);
    for ids in [vec![a.as_str(), "f_nope"], vec![r.as_str()]] {
        let body = Some(json!({ "ids": ids }));
        let got = refused(
            &srv,
            Method::POST,
            "/v1/files/zip",
            Some(&srv.secret_key),
            body,
        )
        .await;
        assert_eq!(got, (404, "not_found".into()), "{ids:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_selection_is_refused_and_only_secret_keys_zip() {
    let srv = TestServer::start().await;
    let sk = srv.secret_key.clone();
    let f = srv.upload_ok("a.txt", b"a".to_vec(), &[]).await;
    let id = f["id"].as_str().unwrap().to_string();
    let many: Vec<String> = (0..1001).map(|_| id.clone()).collect();
    for (body, why) in [
        (json!({"ids": []}), "no id"),
        (json!({"ids": many}), "1001 ids"),
        (json!({"ids": id}), "not a list"),
        (json!({"ids": [1]}), "not strings"),
        (json!({}), "no ids"),
        (json!({"ids": [id], "name": "x"}), "an unknown field"),
    ] {
        let got = refused(&srv, Method::POST, "/v1/files/zip", Some(&sk), Some(body)).await;
        assert_eq!(got, (400, "bad_request".into()), "{why}");
    }
    for raw in ["nope", "[]", ""] {
        let got = refused_raw(&srv, "/v1/files/zip", &sk, raw).await;
        assert_eq!(got, (400, "bad_request".into()), "{raw:?}");
    }
    // 1000 ids (one file, repeated) is within the limit.
    let thousand: Vec<String> = (0..1000).map(|_| id.clone()).collect();
    let body = Some(json!({ "ids": thousand }));
    let r = send(&srv, Method::POST, "/v1/files/zip", Some(&sk), body).await;
    assert_eq!(r.status(), 200);
    let _ = r.bytes().await.unwrap();
    only_secret_keys(
        &srv,
        Method::POST,
        "/v1/files/zip",
        Some(json!({ "ids": [id] })),
    )
    .await;
}
