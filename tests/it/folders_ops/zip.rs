//! `GET /v1/folders/zip?folder=F`: F and below as a streamed zip64 archive,
//! read back with Python's `zipfile` (which checks every entry's CRC-32):
//! names relative to F, inline and blob files, nested folders, a repeated
//! path numbered ` (2)`, a 64 MiB entry streamed; the bytes sent counted as
//! bandwidth; 400 for no folder or the root, 404 for an empty folder, 403
//! for a public key; a folder over the cap of 100,000 files refused with
//! 400 before any byte, one at the cap (100,000 copies of one path) whole;
//! names unsafe on some disk (a file named as a folder, names alike but for
//! case, `C:evil.bat`, `CON`, a trailing dot) made safe, so the archive
//! extracts whole with `zipfile.extractall`.

use crate::common::{read_zip, Backend, TestServer};
use futures_util::StreamExt;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tokio::io::AsyncWriteExt;

both_stores!(
    folder_zip_holds_the_tree,
    folder_zip_streams_a_large_entry,
    folder_zip_extracts_whole
);

/// GET /v1/folders/zip with `query` by `key`: the status, the headers, and
/// the body written to a file in `dir` (never held in memory).
async fn get_zip(
    srv: &TestServer,
    key: &str,
    query: &str,
    dir: &Path,
) -> (u16, reqwest::header::HeaderMap, PathBuf) {
    let r = srv
        .http
        .get(srv.url(&format!("/v1/folders/zip{query}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let path = dir.join("answer.zip");
    let mut file = tokio::fs::File::create(&path).await.unwrap();
    let mut body = r.bytes_stream();
    while let Some(chunk) = body.next().await {
        file.write_all(&chunk.unwrap()).await.unwrap();
    }
    file.flush().await.unwrap();
    (status, headers, path)
}

/// The entry names of the archive at `path` (Python's zipfile, central
/// directory only).
fn zip_names(path: &Path) -> Vec<String> {
    const SCRIPT: &str = r"
import json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    print(json.dumps(z.namelist()))
";
    let out = std::process::Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(path)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "zipfile: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Extracts the archive at `path` into a new directory with Python's
/// `zipfile.extractall`: each file extracted (its path relative to that
/// directory, `/`-separated), its size and SHA-256, sorted.
fn extract_all(path: &Path) -> Vec<(String, u64, String)> {
    const SCRIPT: &str = r"
import hashlib, json, os, sys, tempfile, zipfile
out = []
with tempfile.TemporaryDirectory() as d:
    with zipfile.ZipFile(sys.argv[1]) as z:
        z.extractall(d)
    for root, _, files in os.walk(d):
        for name in files:
            full = os.path.join(root, name)
            with open(full, 'rb') as f:
                b = f.read()
            rel = os.path.relpath(full, d).replace(os.sep, '/')
            out.append([rel, len(b), hashlib.sha256(b).hexdigest()])
print(json.dumps(sorted(out)))
";
    let out = std::process::Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(path)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "extractall: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn hex_sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

async fn folder_zip_holds_the_tree(b: Backend) {
    let srv = TestServer::on(b).await;
    let dir = tempfile::tempdir().unwrap();
    let big = vec![9u8; 140_000];
    // Oldest first: the newest of a repeated path keeps its name.
    let files: [(&str, &str, Vec<u8>); 6] = [
        ("rel", "a.txt", b"first a".to_vec()),
        ("rel", "a.txt", b"second a".to_vec()),
        ("rel", "big.bin", big.clone()),
        ("rel/v1", "notes", b"nested".to_vec()),
        ("rel/v1/deep", "z.tar.gz", b"deeper".to_vec()),
        ("rel/v1/deep", "empty.txt", Vec::new()),
    ];
    for (folder, name, bytes) in &files {
        srv.upload_ok(name, bytes.clone(), &[("folder", folder)])
            .await;
    }
    // Outside: a sibling with the same prefix, the root, another account.
    srv.upload_ok("x.txt", b"no".to_vec(), &[("folder", "rel-old")])
        .await;
    srv.upload_ok("x.txt", b"no".to_vec(), &[]).await;
    let (_, other) = srv.new_account("mallory", "free").await;
    let r = srv
        .upload_as(&other, "m.txt", b"m".to_vec(), &[("folder", "rel")])
        .await;
    assert_eq!(r.status(), 201);

    for query in ["", "?folder=", "?folder=/", "?folder=a/../b"] {
        let (status, body) = srv
            .get_json(&srv.secret_key, &format!("/v1/folders/zip{query}"))
            .await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &json!("bad_request")),
            "{query}"
        );
    }
    let (status, body) = srv
        .get_json(&srv.secret_key, "/v1/folders/zip?folder=nothing-here")
        .await;
    assert_eq!((status, &body["error"]["code"]), (404, &json!("not_found")));
    let public = srv.new_key("public", &["https://a.example"]).await;
    let (status, body) = srv.get_json(&public, "/v1/folders/zip?folder=rel").await;
    assert_eq!((status, &body["error"]["code"]), (403, &json!("forbidden")));
    assert_eq!(srv.usage().await["bandwidth_bytes"], 0);

    let (status, headers, path) = get_zip(&srv, &srv.secret_key, "?folder=/rel/", dir.path()).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/zip");
    assert_eq!(
        headers["content-disposition"],
        "attachment; filename=\"rel.zip\"; filename*=UTF-8''rel.zip"
    );
    let mut got = read_zip(&path);
    got.sort();
    let mut want: Vec<(String, u64, String)> = [
        ("a (2).txt", b"first a".to_vec()),
        ("a.txt", b"second a".to_vec()),
        ("big.bin", big.clone()),
        ("v1/notes", b"nested".to_vec()),
        ("v1/deep/z.tar.gz", b"deeper".to_vec()),
        ("v1/deep/empty.txt", Vec::new()),
    ]
    .into_iter()
    .map(|(n, b)| (n.to_string(), b.len() as u64, hex_sha256(&b)))
    .collect();
    want.sort();
    assert_eq!(got, want);

    // Every byte sent is bandwidth.
    let sent = std::fs::metadata(&path).unwrap().len();
    srv.eventually(5, "bandwidth of the zip", || async {
        srv.usage().await["bandwidth_bytes"] == json!(sent)
    })
    .await;

    // A deeper folder: names relative to it, the archive named after its last segment.
    let (status, headers, path) =
        get_zip(&srv, &srv.secret_key, "?folder=rel/v1", dir.path()).await;
    assert_eq!(status, 200);
    assert_eq!(
        headers["content-disposition"],
        "attachment; filename=\"v1.zip\"; filename*=UTF-8''v1.zip"
    );
    let mut names: Vec<String> = read_zip(&path).into_iter().map(|e| e.0).collect();
    names.sort();
    assert_eq!(names, ["deep/empty.txt", "deep/z.tar.gz", "notes"]);

    // A blob gone from the store (the file deleted while the archive is
    // made): its entry is left out, the rest is whole.
    let (_, list) = srv
        .get_json(&srv.secret_key, "/v1/files?folder=rel&recursive=true")
        .await;
    let big_id = list["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "big.bin")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let row = srv
        .app
        .meta
        .file(&srv.account_id, &big_id, 0)
        .await
        .unwrap()
        .unwrap();
    if !row.inline {
        srv.app.store.delete(&row.blob_key).await.unwrap();
        let (status, _, path) = get_zip(&srv, &srv.secret_key, "?folder=rel", dir.path()).await;
        assert_eq!(status, 200);
        let names: Vec<String> = read_zip(&path).into_iter().map(|e| e.0).collect();
        assert_eq!(names.len(), 5, "{names:?}");
        assert!(!names.contains(&"big.bin".to_string()), "{names:?}");
    }
}

/// Names that would lose files on extraction, or land outside the target
/// on Windows: each entry is named safely and the archive extracts whole,
/// every file with its bytes.
async fn folder_zip_extracts_whole(b: Backend) {
    let srv = TestServer::on(b).await;
    let dir = tempfile::tempdir().unwrap();
    let big = vec![7u8; 140_000];
    // Oldest first; the archive takes them newest first, and `want` is the
    // entry each gets.
    let files: [(&str, &str, Vec<u8>, &str); 10] = [
        // A folder named as a file listed before it: the file is numbered.
        ("z", "sub", b"file sub".to_vec(), "sub (2)"),
        ("z/sub", "x.txt", b"in sub".to_vec(), "sub/x.txt"),
        // A file named as a folder listed after it: the folder is renamed,
        // all its files together.
        ("z/t/deep", "y.bin", big.clone(), "t (2)/deep/y.bin"),
        ("z/t", "x.txt", b"in t".to_vec(), "t (2)/x.txt"),
        ("z", "t", b"file t".to_vec(), "t"),
        // Alike but for case.
        ("z", "a.txt", b"lower".to_vec(), "a (2).txt"),
        ("z", "A.txt", b"upper".to_vec(), "A.txt"),
        // A drive-relative path, a device name, a trailing dot on Windows.
        ("z", "C:evil.bat", b"evil".to_vec(), "C_evil.bat"),
        ("z", "CON", b"con".to_vec(), "_CON"),
        ("z", "trail.", b"dot".to_vec(), "trail_"),
    ];
    for (folder, name, bytes, _) in &files {
        srv.upload_ok(name, bytes.clone(), &[("folder", folder)])
            .await;
    }
    let (status, _, path) = get_zip(&srv, &srv.secret_key, "?folder=z", dir.path()).await;
    assert_eq!(status, 200);
    let mut want: Vec<(String, u64, String)> = files
        .iter()
        .map(|(_, _, b, entry)| (entry.to_string(), b.len() as u64, hex_sha256(b)))
        .collect();
    want.sort();
    let mut entries = read_zip(&path);
    entries.sort();
    assert_eq!(entries, want);
    assert_eq!(extract_all(&path), want);
}

async fn folder_zip_streams_a_large_entry(b: Backend) {
    const MIB: usize = 1 << 20;
    const CHUNKS: usize = 64;
    let srv = TestServer::on(b).await;
    srv.set_account(&srv.account_id, Some("pro"), None).await;
    let dir = tempfile::tempdir().unwrap();
    // 64 MiB made chunk by chunk as it is sent, never whole in memory.
    let chunk = |i: usize| vec![u8::try_from(i % 251).unwrap(); MIB];
    let mut want = Sha256::new();
    for i in 0..CHUNKS {
        want.update(chunk(i));
    }
    let want = hex::encode(want.finalize());
    let body =
        futures_util::stream::iter(0..CHUNKS).map(move |i| Ok::<_, std::io::Error>(chunk(i)));
    let part =
        reqwest::multipart::Part::stream(reqwest::Body::wrap_stream(body)).file_name("large.bin");
    let form = reqwest::multipart::Form::new()
        .text("folder", "media/raw")
        .part("file", part);
    let r = srv.post_form(&srv.secret_key, form).await;
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
    srv.upload_ok("small.txt", b"small".to_vec(), &[("folder", "media")])
        .await;

    let (status, _, path) = get_zip(&srv, &srv.secret_key, "?folder=media", dir.path()).await;
    assert_eq!(status, 200);
    let got = read_zip(&path);
    assert_eq!(
        got,
        [
            ("small.txt".to_string(), 5, hex_sha256(b"small")),
            ("raw/large.bin".to_string(), (CHUNKS * MIB) as u64, want),
        ]
    );
    let size = std::fs::metadata(&path).unwrap().len();
    srv.eventually(5, "bandwidth of the zip", || async {
        srv.usage().await["bandwidth_bytes"] == json!(size)
    })
    .await;

    // A client that goes away after 1 MiB: the archive stops there, and
    // what it was sent (far less than the whole) is counted.
    let r = srv
        .http
        .get(srv.url("/v1/folders/zip?folder=media"))
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let mut body = r.bytes_stream();
    let mut read = 0;
    while read < MIB {
        read += body.next().await.unwrap().unwrap().len();
    }
    drop(body);
    srv.eventually(5, "bandwidth of the cut zip", || async {
        srv.usage().await["bandwidth_bytes"].as_u64().unwrap() > size
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let counted = srv.usage().await["bandwidth_bytes"].as_u64().unwrap() - size;
    assert!(
        counted >= read as u64 && counted < size / 2,
        "{counted} counted for a client that read {read} of {size}"
    );
}

/// The cap (`service::zip::MAX_ENTRIES`, docs/api.md "Folder zip").
const MAX_ENTRIES: usize = 100_000;

/// 100,000 empty files named `latest.log` in `huge/a` and one in `huge/b`,
/// inserted directly (empty files need no blob): `huge` (100,001 files) is
/// refused with 400 and the error envelope before any byte of an archive,
/// nothing counted as bandwidth; `huge/a` (exactly the cap) is zipped
/// whole, its 100,000 names made unique (`latest (100000).log`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folder_zip_over_the_cap_is_refused_up_front() {
    let srv = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let acc = &srv.account_id;
    let columns = "id, account_id, name, folder, size, content_type, private, sha256, blob_key, created_at, expires_at, inline, metadata";
    let last = MAX_ENTRIES;
    if srv.on_postgres() {
        crate::common::pg::execute(
            srv.database_url(),
            &format!(
                "INSERT INTO files ({columns}) SELECT 'f_' || lpad(to_hex(i), 44, '0'), '{acc}',
                 'latest.log', CASE WHEN i = {last} THEN 'huge/b' ELSE 'huge/a' END, 0,
                 'text/plain', false, '00', 'bk' || i, 1000 + i, NULL, false, '{{}}'
                 FROM generate_series(0, {last}) i"
            ),
        );
    } else {
        srv.sqlite()
            .unwrap()
            .execute_batch(&format!(
                "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})
                 INSERT INTO files ({columns}) SELECT printf('f_%044x', i), '{acc}', 'latest.log',
                 CASE WHEN i = {last} THEN 'huge/b' ELSE 'huge/a' END, 0, 'text/plain', 0, '00',
                 'bk' || i, 1000 + i, NULL, 0, '{{}}' FROM n"
            ))
            .unwrap();
    }
    assert_eq!(
        srv.count("SELECT COUNT(*) FROM files"),
        i64::try_from(MAX_ENTRIES + 1).unwrap()
    );

    let r = srv
        .http
        .get(srv.url("/v1/folders/zip?folder=huge"))
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "bad_request", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    for part in ["100000", "subfolder", "filestore download --folder"] {
        assert!(message.contains(part), "{message}");
    }
    assert_eq!(srv.usage().await["bandwidth_bytes"], 0);

    let (status, _, path) = get_zip(&srv, &srv.secret_key, "?folder=huge/a", dir.path()).await;
    assert_eq!(status, 200);
    let names = zip_names(&path);
    assert_eq!(names.len(), MAX_ENTRIES);
    assert_eq!(
        names.iter().collect::<std::collections::HashSet<_>>().len(),
        MAX_ENTRIES
    );
    // Newest first: the newest keeps the plain name, the oldest is last.
    assert_eq!(names[0], "latest.log");
    assert_eq!(names[1], "latest (2).log");
    assert_eq!(names[MAX_ENTRIES - 1], "latest (100000).log");
}
