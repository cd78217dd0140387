//! Names and folders at every door: bidirectional formatting characters
//! refused (a name that shows otherwise than it is), and a name that is not
//! UTF-8 refused as such (CONTRACT §23).

use crate::common::{error_code, TestServer};
use base64::Engine as _;
use serde_json::json;

/// A name that reads as `invoiceexe.pdf` where it is rendered.
const SPOOF: &str = "invoice\u{202E}fdp.exe";

/// A tus creation (secret key) whose Upload-Metadata names the file `name`.
async fn tus_named(srv: &TestServer, name: &[u8]) -> reqwest::Response {
    let meta = format!(
        "filename {}",
        base64::engine::general_purpose::STANDARD.encode(name)
    );
    srv.http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&srv.secret_key)
        .header("tus-resumable", "1.0.0")
        .header("upload-length", "1")
        .header("upload-metadata", meta)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bidi_names_are_refused_at_every_door() {
    let srv = TestServer::start().await;
    let key = &srv.secret_key;
    // Multipart: every one of the twelve characters.
    for c in [
        '\u{200E}', '\u{200F}', '\u{061C}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}',
        '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
    ] {
        let r = srv.upload(&format!("a{c}b.txt"), b"x".to_vec(), &[]).await;
        assert_eq!(error_code(r).await, (400, "bad_request".into()), "{c:?}");
    }
    // tus: the name in Upload-Metadata.
    let r = tus_named(&srv, SPOOF.as_bytes()).await;
    let (status, code) = error_code(r).await;
    assert_eq!((status, code.as_str()), (400, "bad_request"));
    // A rename and a copy of a stored file.
    let f = srv.upload_ok("plain.txt", b"x".to_vec(), &[]).await;
    let id = f["id"].as_str().unwrap();
    let r = srv
        .http
        .patch(srv.url(&format!("/v1/files/{id}")))
        .bearer_auth(key)
        .json(&json!({ "name": SPOOF }))
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "bad_request", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("U+202E"), "{message}");
    let r = srv
        .http
        .post(srv.url(&format!("/v1/files/{id}/copy")))
        .bearer_auth(key)
        .json(&json!({ "name": SPOOF }))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (400, "bad_request".into()));
    // The stored file kept its name; nothing else was stored.
    let (_, listed) = srv.get_json(key, "/v1/files").await;
    let names: Vec<&str> = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["plain.txt"]);
    // Right-to-left letters themselves are a name like any other.
    let f = srv.upload_ok("שלום.txt", b"x".to_vec(), &[]).await;
    assert_eq!(f["name"], "שלום.txt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_that_is_not_utf8_is_refused_as_such() {
    let srv = TestServer::start().await;
    let mut body =
        b"--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"caf".to_vec();
    body.extend_from_slice(&[0xE9]); // Latin-1 é
    body.extend_from_slice(b".txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XYZ--\r\n");
    let r = srv
        .http
        .post(srv.url("/v1/upload"))
        .bearer_auth(&srv.secret_key)
        .header("content-type", "multipart/form-data; boundary=XYZ")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "bad_request");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("not valid UTF-8"), "{message}");
    // tus: a name whose bytes are not UTF-8.
    let r = tus_named(&srv, &[b'c', b'a', b'f', 0xE9]).await;
    assert_eq!(r.status(), 400);
    let body: serde_json::Value = r.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("not UTF-8"), "{message}");
}
