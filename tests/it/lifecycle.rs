//! Expiry, the collector, restarts, dropped uploads and graceful shutdown.

use crate::common::{error_code, Backend, TestOptions, TestServer};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

both_stores!(
    expiry_end_to_end,
    expired_files_vanish_at_once_everywhere,
    files_that_expired_while_down_are_reaped_at_start,
    interrupted_upload_blobs_are_collected_at_start,
    dropped_upload_leaves_nothing,
    shutdown_finishes_requests_in_flight,
);

async fn expiry_end_to_end(b: Backend) {
    let srv = TestServer::on(b).await;
    let keep = srv.upload_ok("keep.txt", b"keep".to_vec(), &[]).await;
    let f = srv
        .upload_ok("short.txt", b"short-lived".to_vec(), &[("expires", "2s")])
        .await;
    let id = f["id"].as_str().unwrap().to_string();
    let url = f["url"].as_str().unwrap().to_string();
    assert_eq!(srv.http.get(&url).send().await.unwrap().status(), 200);
    assert_eq!(srv.usage().await["storage_bytes"], 15);
    // Within seconds of its time: 404 everywhere, bytes given back, blob gone.
    srv.eventually(8, "expired file removed", || async {
        srv.get_json(&srv.secret_key, &format!("/v1/files/{id}"))
            .await
            .0
            == 404
            && srv.leftovers() == (1, 0, 0)
            && srv.blob_count().await == 1
    })
    .await;
    assert_eq!(srv.http.get(&url).send().await.unwrap().status(), 404);
    assert_eq!(srv.usage().await["storage_bytes"], 4);
    let (_, list) = srv.get_json(&srv.secret_key, "/v1/files").await;
    assert_eq!(list["files"].as_array().unwrap().len(), 1);
    assert_eq!(list["files"][0]["id"], keep["id"]);
}

async fn expired_files_vanish_at_once_everywhere(b: Backend) {
    // A collector that will not run during the test: visibility alone hides the file.
    let srv = TestServer::start_with(TestOptions {
        backend: Some(b),
        reap_interval: Some(Duration::from_hours(1)),
        ..Default::default()
    })
    .await;
    let f = srv
        .upload_ok(
            "x.txt",
            b"x".to_vec(),
            &[("expires", "1h"), ("private", "true")],
        )
        .await;
    let id = f["id"].as_str().unwrap().to_string();
    let signed = srv.signed_url(&id, 604_800).await;
    srv.clock.advance(Duration::from_secs(3601));
    assert_eq!(
        srv.get_json(&srv.secret_key, &format!("/v1/files/{id}"))
            .await
            .0,
        404
    );
    let (_, list) = srv.get_json(&srv.secret_key, "/v1/files").await;
    assert_eq!(list["files"].as_array().unwrap().len(), 0);
    assert_eq!(srv.http.get(&signed).send().await.unwrap().status(), 404);
    let r = srv.delete_as(&srv.secret_key, &id).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    let r = srv
        .sign_as(&srv.secret_key, &id, serde_json::json!({"expires_in": 5}))
        .await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
}

async fn files_that_expired_while_down_are_reaped_at_start(b: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let opts = TestOptions {
        backend: Some(b),
        data_dir: Some(dir.path().to_path_buf()),
        reap_interval: Some(Duration::from_hours(1)),
        ..Default::default()
    };
    let srv = TestServer::start_with(opts.clone()).await;
    srv.upload_ok("soon.txt", b"soon".to_vec(), &[("expires", "1s")])
        .await;
    srv.upload_ok("later.txt", b"later".to_vec(), &[]).await;
    assert_eq!(srv.blob_count().await, 2);
    srv.stop().await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let srv = TestServer::start_with(opts).await;
    assert_eq!(
        srv.leftovers(),
        (1, 0, 0),
        "reaped at start, not at the first interval"
    );
    assert_eq!(srv.blob_count().await, 1);
    assert_eq!(srv.usage().await["storage_bytes"], 5);
}

async fn interrupted_upload_blobs_are_collected_at_start(b: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let opts = TestOptions {
        backend: Some(b),
        data_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let srv = TestServer::start_with(opts.clone()).await;
    // What a crash between "blob stored" and "row committed" leaves: a guard row and a blob.
    let key = format!("{}/f_crashed0000000000000000000000", srv.account_id);
    srv.app
        .meta
        .guard_upload(&key, srv.clock.now_ms())
        .await
        .unwrap();
    let spool = tempfile::Builder::new()
        .tempfile_in(srv.data_dir.join("tmp"))
        .unwrap();
    std::fs::write(spool.path(), b"orphan").unwrap();
    srv.app
        .store
        .put_file(&key, spool.into_temp_path(), 6)
        .await
        .unwrap();
    std::fs::write(srv.data_dir.join("tmp").join("upload-partial"), b"partial").unwrap();
    assert_eq!(srv.blob_count().await, 1);
    srv.stop().await;
    let srv = TestServer::start_with(opts).await;
    srv.eventually(5, "orphan collected", || async {
        srv.blob_count().await == 0 && srv.leftovers() == (0, 0, 0)
    })
    .await;
}

/// Sends the head of a multipart upload and part of its body over a raw socket.
async fn start_raw_upload(
    srv: &TestServer,
    total: usize,
    sent: usize,
) -> (tokio::net::TcpStream, Vec<u8>) {
    let boundary = "XBOUNDARYX";
    let head = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n");
    let tail = format!("\r\n--{boundary}--\r\n");
    let mut body = head.into_bytes();
    body.extend(std::iter::repeat_n(b'z', total));
    body.extend(tail.into_bytes());
    let addr = srv.base_url.trim_start_matches("http://");
    let mut sock = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "POST /v1/upload HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {}\r\n\r\n",
        srv.secret_key,
        body.len()
    );
    sock.write_all(req.as_bytes()).await.unwrap();
    sock.write_all(&body[..sent]).await.unwrap();
    sock.flush().await.unwrap();
    let rest = body[sent..].to_vec();
    (sock, rest)
}

async fn dropped_upload_leaves_nothing(b: Backend) {
    let srv = TestServer::on(b).await;
    let (sock, _rest) = start_raw_upload(&srv, 2_000_000, 1_000_000).await;
    srv.eventually(5, "upload being spooled", || async {
        srv.leftovers().2 == 1
    })
    .await;
    drop(sock);
    srv.eventually(5, "spool removed", || async {
        srv.leftovers() == (0, 0, 0)
    })
    .await;
    assert_eq!(srv.blob_count().await, 0);
    assert_eq!(srv.usage().await["upload_count"], 0);
    assert_eq!(srv.usage().await["storage_bytes"], 0);
}

async fn shutdown_finishes_requests_in_flight(b: Backend) {
    let srv = TestServer::on(b).await;
    let (mut sock, rest) = start_raw_upload(&srv, 500_000, 200_000).await;
    srv.eventually(5, "upload being spooled", || async {
        srv.leftovers().2 == 1
    })
    .await;
    let base = srv.base_url.clone();
    let stopping = tokio::spawn(srv.stop());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !stopping.is_finished(),
        "the server waits for the upload in flight"
    );
    sock.write_all(&rest).await.unwrap();
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = sock.read(&mut buf).await.unwrap();
        response.extend_from_slice(&buf[..n]);
        if n == 0 || String::from_utf8_lossy(&response).contains("\"created_at\"") {
            break;
        }
    }
    let text = String::from_utf8_lossy(&response);
    assert!(text.starts_with("HTTP/1.1 201"), "{text}");
    drop(sock);
    tokio::time::timeout(Duration::from_secs(10), stopping)
        .await
        .expect("server stops")
        .unwrap();
    assert!(
        reqwest::get(format!("{base}/v1/health")).await.is_err(),
        "no longer accepting"
    );
}
