//! Upload tokens, upload policies and file metadata (docs/api.md, "Upload tokens"),
//! black-box over HTTP: the token routes and their refusals, multipart and
//! tus uploads with a token, the policy's every rule (each refusal stores
//! nothing and spends no use), public keys with a policy (made with
//! `filestore admin key create`), the `metadata.KEY=VALUE` list filter, and
//! `max_uploads` held exactly under concurrent uploads (one node, and two
//! `serve` nodes on one PostgreSQL database).
//!
//! Every test runs on the local store (inline and on disk) and on S3 where
//! the suite does (`both_stores!`), and on SQLite or PostgreSQL, whichever
//! the suite runs on (`contrib/pg-test.sh`).

use crate::common::cluster::{OCTETS, TUS};
use crate::common::{Backend, TestOptions, TestServer};
use base64::Engine;
use filestore::testing::config::StorageConfig;
use filestore::testing::domain::tus::encode_metadata;
use reqwest::multipart::{Form, Part};
use reqwest::Response;
use serde_json::{json, Value};

mod exact;
mod exposure;
mod metadata;
mod multipart;
mod policy;
mod routes;
mod streaming;
mod tus;

/// The default plan (`free`) with room for every request a test makes at
/// once: only the rule under test refuses. `max_file_size` stays the
/// built-in 10 MB.
pub const ROOMY: &str = "[plans.free]
rate_limit = 100_000
concurrent_uploads = 200
open_uploads = 200
";

/// The plan's max_file_size (the built-in free plan's).
pub const PLAN_MAX: u64 = 10_000_000;

pub const ORIGIN: &str = "https://app.example.com";

/// A test server on `b` with the roomy plan.
pub async fn server(b: Backend) -> TestServer {
    TestServer::start_with(TestOptions {
        plans_toml: Some(ROOMY.into()),
        backend: Some(b),
        ..Default::default()
    })
    .await
}

/// The S3 store's config, when `b` is one.
pub fn s3_of(b: &Backend) -> Option<StorageConfig> {
    match b {
        Backend::S3(cfg) => Some((**cfg).clone()),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Bytes whose type the server sniffs

/// A real 1×1 PNG (67 bytes).
pub fn png() -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        )
        .unwrap()
}

/// A PNG of exactly `len` bytes (the real one, then a trailer: still PNG by
/// its magic number).
pub fn png_of(len: usize) -> Vec<u8> {
    let mut b = png();
    assert!(len >= b.len());
    b.resize(len, 0);
    b
}

/// A 64-bit ELF header and some code bytes (128 bytes).
pub fn elf() -> Vec<u8> {
    let mut b = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0];
    b.resize(64, 0);
    b[16] = 2; // ET_EXEC
    b[18] = 0x3e; // x86-64
    b[20] = 1;
    b.extend((0..64u8).map(|i| i.wrapping_mul(13)));
    b
}

/// A Windows executable's start (`MZ`, 128 bytes).
pub fn mz() -> Vec<u8> {
    let mut b = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00".to_vec();
    b.resize(128, 0);
    b
}

/// An HTML page with a script.
pub fn html() -> Vec<u8> {
    b"<!DOCTYPE html>\n<html><head><title>cat</title></head>\
      <body><script>alert(document.cookie)</script></body></html>\n"
        .to_vec()
}

/// A JPEG's start (SOI, APP0 JFIF) and some bytes.
pub fn jpeg() -> Vec<u8> {
    let mut b = vec![
        0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, b'J', b'F', b'I', b'F', 0x00, 0x01, 0x01, 0x00, 0x00,
        0x01, 0x00, 0x01, 0x00, 0x00,
    ];
    b.resize(200, 0x11);
    b.extend([0xff, 0xd9]);
    b
}

/// A GIF's start.
pub fn gif() -> Vec<u8> {
    let mut b = b"GIF89a\x01\x00\x01\x00\x80\x00\x00".to_vec();
    b.resize(60, 0);
    b.push(0x3b);
    b
}

/// An SVG image (which can carry script).
pub fn svg() -> Vec<u8> {
    br#"<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><rect width="1" height="1"/></svg>
"#
    .to_vec()
}

/// `len` bytes nothing recognizes (not text, no magic number).
pub fn binary(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i * 7 + i / 251) as u8 ^ seed) | 0x80)
        .collect()
}

// ---------------------------------------------------------------------------
// Tokens

/// A token as `POST /v1/upload-tokens` returned it.
#[derive(Debug, Clone)]
#[allow(clippy::struct_field_names)]
pub struct Token {
    pub id: String,
    pub token: String,
    pub url: String,
    pub record: Value,
}

/// `POST /v1/upload-tokens` with `key` and `body`.
pub async fn create_token_as(srv: &TestServer, key: &str, body: &Value) -> Response {
    srv.http
        .post(srv.url("/v1/upload-tokens"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap()
}

/// A new token of the default account (asserting 201).
pub async fn token(srv: &TestServer, body: Value) -> Token {
    let r = create_token_as(srv, &srv.secret_key, &body).await;
    assert_eq!(r.status(), 201, "create token {body}: {:?}", r.text().await);
    let record: Value = r.json().await.unwrap();
    Token {
        id: record["id"].as_str().expect("id").to_string(),
        token: record["token"].as_str().expect("token").to_string(),
        url: record["url"].as_str().expect("url").to_string(),
        record,
    }
}

/// `GET /v1/upload-tokens/{id}` with the secret key (asserting 200).
pub async fn token_record(srv: &TestServer, id: &str) -> Value {
    let (status, body) = srv
        .get_json(&srv.secret_key, &format!("/v1/upload-tokens/{id}"))
        .await;
    assert_eq!(status, 200, "GET token {id}: {body}");
    body
}

/// The token's `uploads_left`, as GET says.
pub async fn uploads_left(srv: &TestServer, id: &str) -> u64 {
    token_record(srv, id).await["uploads_left"]
        .as_u64()
        .expect("uploads_left")
}

/// `DELETE /v1/upload-tokens/{id}` with `key`.
pub async fn delete_token_as(srv: &TestServer, key: &str, id: &str) -> Response {
    srv.http
        .delete(srv.url(&format!("/v1/upload-tokens/{id}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
}

/// How a multipart upload carries the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `POST /v1/upload?token=upt_…`, no Authorization header.
    Query,
    /// `Authorization: Bearer upt_…`.
    Bearer,
}

pub const BOTH_WAYS: [Via; 2] = [Via::Query, Via::Bearer];

/// `POST /v1/upload` of `form` with token `t`, carried `via`.
pub async fn post_with(srv: &TestServer, t: &str, via: Via, form: Form) -> Response {
    let req = match via {
        Via::Query => srv
            .http
            .post(format!("{}?token={t}", srv.url("/v1/upload"))),
        Via::Bearer => srv.http.post(srv.url("/v1/upload")).bearer_auth(t),
    };
    req.multipart(form).send().await.unwrap()
}

/// A multipart upload of `name` with `bytes` and `fields` with token `t`.
pub async fn upload_with(
    srv: &TestServer,
    t: &str,
    via: Via,
    name: &str,
    bytes: Vec<u8>,
    fields: &[(&str, &str)],
) -> Response {
    post_with(srv, t, via, TestServer::form(name, bytes, fields)).await
}

/// A form whose file part declares `mime` as its Content-Type.
pub fn form_declaring(name: &str, bytes: Vec<u8>, mime: &str) -> Form {
    Form::new().part(
        "file",
        Part::bytes(bytes)
            .file_name(name.to_string())
            .mime_str(mime)
            .unwrap(),
    )
}

/// A token upload that must succeed: the File record.
pub async fn upload_ok_with(
    srv: &TestServer,
    t: &str,
    via: Via,
    name: &str,
    bytes: Vec<u8>,
    fields: &[(&str, &str)],
) -> Value {
    let r = upload_with(srv, t, via, name, bytes, fields).await;
    assert_eq!(
        r.status(),
        201,
        "token upload of {name} ({via:?}, {fields:?}): {:?}",
        r.text().await
    );
    r.json().await.unwrap()
}

/// Asserts the error envelope of `r`.
#[track_caller]
pub fn refused(
    r: Response,
    status: u16,
    code: &'static str,
) -> impl std::future::Future<Output = ()> {
    let caller = std::panic::Location::caller();
    async move {
        let got = code_of(r).await;
        assert_eq!(got, (status, code.to_string()), "at {caller}");
    }
}

/// A response's status and error code; the raw body in place of the code
/// when it is not the error envelope (so a failure shows what came back).
pub async fn code_of(r: Response) -> (u16, String) {
    let status = r.status().as_u16();
    let text = r.text().await.unwrap_or_default();
    let code = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v["error"]["code"].as_str().map(String::from))
        .unwrap_or_else(|| format!("<not an error envelope: {text:?}>"));
    (status, code)
}

// ---------------------------------------------------------------------------
// What is stored

/// What the account holds, to compare before and after a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub files: usize,
    pub storage_bytes: u64,
    pub upload_count: u64,
}

/// What the account holds now: files listed (all pages), usage.
pub async fn held(srv: &TestServer) -> Held {
    let usage = srv.usage().await;
    Held {
        files: listed(srv, "").await.len(),
        storage_bytes: usage["storage_bytes"].as_u64().unwrap(),
        upload_count: usage["upload_count"].as_u64().unwrap(),
    }
}

/// The File records `GET /v1/files?{query}` lists (every page),
/// with the secret key.
pub async fn listed(srv: &TestServer, query: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/files?limit=100&{query}&cursor={c}"),
            None => format!("/v1/files?limit=100&{query}"),
        };
        let (status, page) = srv.get_json(&srv.secret_key, &path).await;
        assert_eq!(status, 200, "{path}: {page}");
        out.extend(page["files"].as_array().unwrap().iter().cloned());
        match page["cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return out,
        }
    }
}

/// After refusals: the account holds what it held (`before`), and no blob,
/// spool file, queued deletion, partial blob or S3 multipart upload is left
/// beyond the files' own blobs (one each).
pub async fn nothing_stored(srv: &TestServer, before: &Held, s3: Option<&StorageConfig>) {
    let now = held(srv).await;
    assert_eq!(&now, before, "a refusal stored something");
    let files = before.files;
    assert_eq!(srv.count("SELECT COUNT(*) FROM files") as usize, files);
    let mut last = (0, (0, 0, 0), 0);
    for _ in 0..100 {
        let blobs = srv.blob_count().await;
        let left = srv.leftovers();
        let partial = partial_files(srv);
        last = (blobs, left, partial);
        if blobs == files && left == (files as u64, 0, 0) && partial == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        last,
        (files, (files as u64, 0, 0), 0),
        "(blobs, (file rows, queued deletions, spool files), partial blobs) \
         left after refusals; {files} file(s) expected"
    );
    if let Some(cfg) = s3 {
        crate::common::s3::no_multipart_left(cfg).await;
    }
}

/// Partial blobs (`*.partial`) the local store holds (none on S3).
pub fn partial_files(srv: &TestServer) -> usize {
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

// ---------------------------------------------------------------------------
// tus

/// `POST /v1/uploads` with `key` (a token, or a secret key), `length`
/// bytes, tus metadata `meta`; a public key sends `origin`.
pub async fn tus_create(
    srv: &TestServer,
    key: &str,
    origin: Option<&str>,
    length: u64,
    meta: &[(&str, &str)],
) -> Response {
    let mut req = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(key)
        .header(TUS.0, TUS.1)
        .header("upload-length", length)
        .header("upload-metadata", encode_metadata(meta));
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    req.send().await.unwrap()
}

/// A tus creation that must succeed: the upload's URL.
pub async fn tus_created(
    srv: &TestServer,
    key: &str,
    length: u64,
    meta: &[(&str, &str)],
) -> String {
    let r = tus_create(srv, key, None, length, meta).await;
    assert_eq!(r.status(), 201, "tus creation: {:?}", r.text().await);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    assert!(
        location.starts_with(&format!("{}/v1/uploads/u_", srv.base_url)),
        "{location}"
    );
    location
}

/// A tus request (`method` on `url`) with `key` and the version header.
pub fn tus_request(
    srv: &TestServer,
    method: reqwest::Method,
    url: &str,
    key: &str,
) -> reqwest::RequestBuilder {
    srv.http
        .request(method, url)
        .bearer_auth(key)
        .header(TUS.0, TUS.1)
}

/// PATCH `body` at `offset` of `url` with `key`.
pub async fn tus_patch(
    srv: &TestServer,
    url: &str,
    key: &str,
    offset: u64,
    body: Vec<u8>,
) -> Response {
    tus_request(srv, reqwest::Method::PATCH, url, key)
        .header(OCTETS.0, OCTETS.1)
        .header("upload-offset", offset)
        .body(body)
        .send()
        .await
        .unwrap()
}

/// The status of HEAD `url` with `key`.
pub async fn tus_head(srv: &TestServer, url: &str, key: &str) -> Response {
    tus_request(srv, reqwest::Method::HEAD, url, key)
        .send()
        .await
        .unwrap()
}

/// `{"metadata": …}` as the tus `metadata` key carries it (the JSON, which
/// `encode_metadata` base64s).
pub fn meta_json(v: &Value) -> String {
    v.to_string()
}
