//! `if_absent=true` (docs/api.md, "Paths and stable links"): an upload to a
//! path that holds a file is 409 `conflict` and stores nothing, decided in
//! the committing transaction, so two racing uploads to an empty path give
//! one 201 and one 409; tus says so at the creation already.

use crate::common::{error_code, TestServer};
use base64::Engine as _;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_if_absent_to_a_taken_path_is_a_conflict() {
    let srv = TestServer::start().await;
    let absent = [("folder", "a b"), ("if_absent", "true")];
    let r = srv.upload("x.txt", b"first".to_vec(), &absent).await;
    assert_eq!(r.status(), 201);
    let before = (
        srv.blob_count().await,
        srv.usage().await["storage_bytes"].clone(),
    );
    let r = srv.upload("x.txt", b"second".to_vec(), &absent).await;
    let (status, code) = error_code(r).await;
    assert_eq!((status, code.as_str()), (409, "conflict"));
    assert_eq!(srv.count("SELECT COUNT(*) FROM files"), 1);
    let after = (
        srv.blob_count().await,
        srv.usage().await["storage_bytes"].clone(),
    );
    assert_eq!(before, after, "nothing stored");
    // Another path, or the same one without the field, stores.
    let r = srv.upload("y.txt", b"y".to_vec(), &absent).await;
    assert_eq!(r.status(), 201);
    let r = srv
        .upload("x.txt", b"z".to_vec(), &[("folder", "a b")])
        .await;
    assert_eq!(r.status(), 201);
    // tus: refused at the creation, before a byte is sent.
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&srv.secret_key)
        .header("tus-resumable", "1.0.0")
        .header("upload-length", "1")
        .header(
            "upload-metadata",
            format!(
                "filename {},folder {},if_absent {}",
                b64("x.txt"),
                b64("a b"),
                b64("true")
            ),
        )
        .send()
        .await
        .unwrap();
    let (status, code) = error_code(r).await;
    assert_eq!((status, code.as_str()), (409, "conflict"));
    assert_eq!(srv.count("SELECT COUNT(*) FROM tus_uploads"), 0);
}

/// A tus upload whose path was taken after its creation is refused at its
/// completion: its commit decides.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumable_upload_if_absent_is_refused_at_its_completion() {
    let srv = TestServer::start().await;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&srv.secret_key)
        .header("tus-resumable", "1.0.0")
        .header("upload-length", "2")
        .header(
            "upload-metadata",
            format!("filename {},if_absent {}", b64("late.txt"), b64("true")),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    srv.upload_ok("late.txt", b"won".to_vec(), &[]).await;
    let r = srv
        .http
        .patch(&location)
        .bearer_auth(&srv.secret_key)
        .header("tus-resumable", "1.0.0")
        .header("upload-offset", "0")
        .header("content-type", "application/offset+octet-stream")
        .body(b"22".to_vec())
        .send()
        .await
        .unwrap();
    let (status, code) = error_code(r).await;
    assert_eq!((status, code.as_str()), (409, "conflict"));
    assert_eq!(srv.count("SELECT COUNT(*) FROM files"), 1);
    assert_eq!(srv.usage().await["storage_bytes"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_racing_uploads_if_absent_give_one_file() {
    let srv = TestServer::start().await;
    for round in 0..6 {
        let name = format!("race-{round}.txt");
        let fields = [("if_absent", "true")];
        let (a, b) = tokio::join!(
            srv.upload(&name, vec![b'a'; 3000], &fields),
            srv.upload(&name, vec![b'b'; 3000], &fields)
        );
        let mut statuses = [a.status().as_u16(), b.status().as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [201, 409], "round {round}");
    }
    assert_eq!(srv.count("SELECT COUNT(*) FROM files"), 6);
    assert_eq!(srv.usage().await["storage_bytes"], 6 * 3000);
}
