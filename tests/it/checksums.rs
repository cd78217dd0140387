//! docs/decisions.md, "Checksums" on the API: the record's `sha256`, the upload's `sha256`
//! field and `Content-Digest` header (a mismatch stores nothing), and the
//! CDN's `Content-Digest`.

use crate::common::{error_code, sha256_hex, Backend, TestServer};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use reqwest::multipart::{Form, Part};

both_stores!(
    records_carry_the_sha256_of_their_bytes,
    the_cdn_sends_content_digest_on_whole_file_answers_only,
    a_right_digest_is_accepted_as_field_or_header,
    a_wrong_digest_is_checksum_mismatch_and_stores_nothing,
    malformed_or_disagreeing_digests_are_bad_requests,
    a_replay_with_a_wrong_digest_is_refused,
);

/// One upload to try: what it is, its form, its extra headers.
type Case<'a> = (&'a str, Form, Vec<(&'a str, &'a str)>);

/// Bytes that are not all the same, `len` long.
fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// `sha-256=:<base64>:` of `bytes`.
fn content_digest(bytes: &[u8]) -> String {
    let raw = hex::decode(sha256_hex(bytes)).unwrap();
    format!("sha-256=:{}:", STANDARD.encode(raw))
}

/// A form: `before` fields, the file part, then `after` fields.
fn form(content: &[u8], before: &[(&str, &str)], after: &[(&str, &str)]) -> Form {
    let mut f = Form::new();
    for (k, v) in before {
        f = f.text(k.to_string(), v.to_string());
    }
    f = f.part("file", Part::bytes(content.to_vec()).file_name("data.bin"));
    for (k, v) in after {
        f = f.text(k.to_string(), v.to_string());
    }
    f
}

/// POST /v1/upload with a form and extra headers.
async fn post(srv: &TestServer, form: Form, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut req = srv
        .http
        .post(srv.url("/v1/upload"))
        .bearer_auth(&srv.secret_key)
        .multipart(form);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.unwrap()
}

/// Usage, files listed and blobs stored are what they were: nothing stored.
async fn nothing_stored(srv: &TestServer, usage: &serde_json::Value, blobs: usize, what: &str) {
    let now = srv.usage().await;
    assert_eq!(now["storage_bytes"], usage["storage_bytes"], "{what}");
    assert_eq!(now["upload_count"], usage["upload_count"], "{what}");
    let (_, list) = srv.get_json(&srv.secret_key, "/v1/files").await;
    let listed = list["files"].as_array().unwrap().len();
    assert_eq!(listed, blobs, "{what}: files listed");
    assert_eq!(srv.blob_count().await, blobs, "{what}: blobs stored");
    let (rows, queued, spool) = srv.leftovers();
    assert_eq!((rows, queued, spool), (blobs as u64, 0, 0), "{what}");
}

async fn records_carry_the_sha256_of_their_bytes(b: Backend) {
    let srv = TestServer::on(b).await;
    for (i, len) in [0usize, 10, 300_000].into_iter().enumerate() {
        let content = bytes(len, i as u8);
        let f = srv.upload_ok("data.bin", content.clone(), &[]).await;
        let want = sha256_hex(&content);
        assert_eq!(f["sha256"], want.as_str(), "upload of {len} bytes");
        let id = f["id"].as_str().unwrap();
        let (status, got) = srv
            .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
            .await;
        assert_eq!((status, &got["sha256"]), (200, &f["sha256"]));
        let (_, list) = srv.get_json(&srv.secret_key, "/v1/files").await;
        assert_eq!(list["files"][0]["sha256"], want.as_str());
    }
}

async fn the_cdn_sends_content_digest_on_whole_file_answers_only(b: Backend) {
    let srv = TestServer::on(b).await;
    let content = bytes(140_000, 3);
    let f = srv.upload_ok("data.bin", content.clone(), &[]).await;
    let url = f["url"].as_str().unwrap();
    let want = content_digest(&content);
    let digest_of = |r: &reqwest::Response| {
        r.headers()
            .get("content-digest")
            .map(|v| v.to_str().unwrap().to_string())
    };

    let r = srv.http.get(url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(digest_of(&r), Some(want.clone()));
    let exposed = r.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(exposed.contains("content-digest"), "{exposed}");
    assert!(r.bytes().await.unwrap() == content);
    let r = srv.http.head(url).send().await.unwrap();
    assert_eq!((r.status().as_u16(), digest_of(&r)), (200, Some(want)));

    // A part, a 304 and a 416 carry none.
    let r = srv
        .http
        .get(url)
        .header("range", "bytes=10-99")
        .send()
        .await
        .unwrap();
    assert_eq!((r.status().as_u16(), digest_of(&r)), (206, None));
    let r = srv
        .http
        .head(url)
        .header("range", "bytes=-5")
        .send()
        .await
        .unwrap();
    assert_eq!((r.status().as_u16(), digest_of(&r)), (206, None));
    let etag = format!("\"{}\"", sha256_hex(&content));
    let r = srv
        .http
        .get(url)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!((r.status().as_u16(), digest_of(&r)), (304, None));
    let r = srv
        .http
        .get(url)
        .header("range", "bytes=900000-")
        .send()
        .await
        .unwrap();
    assert_eq!((r.status().as_u16(), digest_of(&r)), (416, None));
    // An If-Range that no longer matches: the whole file, with its digest.
    let r = srv
        .http
        .get(url)
        .header("range", "bytes=10-99")
        .header("if-range", "\"other\"")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(digest_of(&r).is_some());

    // Browsers may send it with a public key.
    let r = srv
        .http
        .request(reqwest::Method::OPTIONS, srv.url("/v1/upload"))
        .header("origin", "https://app.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-digest")
        .send()
        .await
        .unwrap();
    let allowed = r.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap();
    assert!(allowed.contains("content-digest"), "{allowed}");
}

async fn a_right_digest_is_accepted_as_field_or_header(b: Backend) {
    let srv = TestServer::on(b).await;
    let content = bytes(200_000, 5);
    let hex = sha256_hex(&content);
    let upper = hex.to_uppercase();
    let header = content_digest(&content);
    let sha512 = format!("sha-512=:{}:", STANDARD.encode([9u8; 64]));
    let several = format!("{sha512}, {header};q=1, unixsum=12");
    let cases: Vec<Case> = vec![
        (
            "field before",
            form(&content, &[("sha256", &hex)], &[]),
            vec![],
        ),
        (
            "field after",
            form(&content, &[], &[("sha256", &hex)]),
            vec![],
        ),
        (
            "upper case",
            form(&content, &[], &[("sha256", &upper)]),
            vec![],
        ),
        (
            "header",
            form(&content, &[], &[]),
            vec![("content-digest", &header)],
        ),
        (
            "header with others",
            form(&content, &[], &[]),
            vec![("content-digest", &several)],
        ),
        (
            "header without sha-256",
            form(&content, &[], &[]),
            vec![("content-digest", &sha512)],
        ),
        (
            "both",
            form(&content, &[], &[("sha256", &upper)]),
            vec![("content-digest", &header)],
        ),
    ];
    for (what, form, headers) in cases {
        let r = post(&srv, form, &headers).await;
        assert_eq!(r.status(), 201, "{what}: {}", r.text().await.unwrap());
        let f: serde_json::Value = r.json().await.unwrap();
        assert_eq!(f["sha256"], hex.as_str(), "{what}");
    }
    assert_eq!(srv.usage().await["upload_count"], 7);
}

async fn a_wrong_digest_is_checksum_mismatch_and_stores_nothing(b: Backend) {
    let srv = TestServer::on(b).await;
    let usage = srv.usage().await;
    // Small (inline on the default store) and spooled to a file.
    for len in [100usize, 300_000] {
        let content = bytes(len, 7);
        let other = bytes(len, 8);
        let wrong = sha256_hex(&other);
        let wrong_header = content_digest(&other);
        let cases: Vec<Case> = vec![
            (
                "field before",
                form(&content, &[("sha256", &wrong)], &[]),
                vec![],
            ),
            (
                "field after",
                form(&content, &[("folder", "a")], &[("sha256", &wrong)]),
                vec![],
            ),
            (
                "header",
                form(&content, &[], &[]),
                vec![("content-digest", &wrong_header)],
            ),
            (
                "both, agreeing with each other",
                form(&content, &[], &[("sha256", &wrong)]),
                vec![("content-digest", &wrong_header)],
            ),
        ];
        for (what, form, headers) in cases {
            let what = format!("{len} bytes, {what}");
            let r = post(&srv, form, &headers).await;
            assert_eq!(
                error_code(r).await,
                (400, "checksum_mismatch".into()),
                "{what}"
            );
            nothing_stored(&srv, &usage, 0, &what).await;
        }
    }
}

async fn malformed_or_disagreeing_digests_are_bad_requests(b: Backend) {
    let srv = TestServer::on(b).await;
    let usage = srv.usage().await;
    let content = bytes(150_000, 11);
    let hex = sha256_hex(&content);
    let right = content_digest(&content);
    let other = content_digest(b"other");
    let short = format!("sha-256=:{}:", STANDARD.encode([1u8; 31]));
    let no_hex = "z".repeat(64);
    let spaced = format!(" {hex}");
    let upper_key = right.replace("sha-256", "SHA-256");
    let cases: Vec<Case> = vec![
        (
            "field: 63 digits",
            form(&content, &[], &[("sha256", &hex[1..])]),
            vec![],
        ),
        (
            "field: not hex",
            form(&content, &[("sha256", &no_hex)], &[]),
            vec![],
        ),
        (
            "field: spaces",
            form(&content, &[], &[("sha256", &spaced)]),
            vec![],
        ),
        (
            "header: not a dictionary",
            form(&content, &[], &[]),
            vec![("content-digest", "sha-256=abc")],
        ),
        (
            "header: unterminated",
            form(&content, &[], &[]),
            vec![("content-digest", &right[..right.len() - 1])],
        ),
        (
            "header: 31 bytes",
            form(&content, &[], &[]),
            vec![("content-digest", &short)],
        ),
        (
            "header: upper-case key",
            form(&content, &[], &[]),
            vec![("content-digest", &upper_key)],
        ),
        (
            "field and header disagree, field first",
            form(&content, &[("sha256", &hex)], &[]),
            vec![("content-digest", &other)],
        ),
        (
            "field and header disagree, field last",
            form(&content, &[], &[("sha256", &hex)]),
            vec![("content-digest", &other)],
        ),
    ];
    for (what, form, headers) in cases {
        let r = post(&srv, form, &headers).await;
        assert_eq!(error_code(r).await, (400, "bad_request".into()), "{what}");
        nothing_stored(&srv, &usage, 0, what).await;
    }
}

async fn a_replay_with_a_wrong_digest_is_refused(b: Backend) {
    let srv = TestServer::on(b).await;
    let content = bytes(120_000, 13);
    let hex = sha256_hex(&content);
    let wrong = sha256_hex(b"else");
    let key = [("idempotency-key", "replay-1")];
    let r = post(&srv, form(&content, &[], &[("sha256", &hex)]), &key).await;
    assert_eq!(r.status(), 201);
    let first: serde_json::Value = r.json().await.unwrap();
    let usage = srv.usage().await;

    // The same key with a digest that is not the stored file's: refused,
    // whether the bytes sent match it or not; the stored file stays.
    for (what, body) in [
        ("same bytes", content.clone()),
        ("other bytes", b"else".to_vec()),
    ] {
        let r = post(&srv, form(&body, &[], &[("sha256", &wrong)]), &key).await;
        assert_eq!(
            error_code(r).await,
            (400, "checksum_mismatch".into()),
            "{what}"
        );
    }
    let header = content_digest(b"else");
    let r = post(
        &srv,
        form(&content, &[], &[]),
        &[key[0], ("content-digest", &header)],
    )
    .await;
    assert_eq!(error_code(r).await, (400, "checksum_mismatch".into()));
    nothing_stored(&srv, &usage, 1, "after refused replays").await;

    // With the right digest (or none), the replay answers the stored file.
    for extra in [vec![("sha256", hex.as_str())], vec![]] {
        let r = post(&srv, form(&content, &[], &extra), &key).await;
        assert_eq!(r.status(), 201);
        let again: serde_json::Value = r.json().await.unwrap();
        assert_eq!(again, first);
    }
    nothing_stored(&srv, &usage, 1, "after replays").await;
}
