//! `min_upload_rate`: a body under the floor gets 408 and stores nothing; a
//! steady one over it passes.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_under_the_rate_floor_gets_408_and_stores_nothing() {
    let srv = floor_server().await;
    let mut s = start_multipart(&srv, &srv.secret_key, None).await;
    let started = Instant::now();
    // 500 bytes every 200 ms: 2.5 KiB/s, under the floor once the window
    // holds no more of the head.
    let (answer, _) = send_until_answered(&mut s, 500, Duration::from_millis(200)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("request_timeout"), "{answer}");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "not judged before a whole window"
    );
    srv.eventually(10, "nothing stored", || async {
        srv.leftovers() == (0, 0, 0)
    })
    .await;

    // A PATCH as slow: 408 too, and what arrived is kept.
    let path = create_tus(&srv, &srv.secret_key, None).await;
    let mut s = start_patch(&srv, &srv.secret_key, &path, None).await;
    let (answer, sent) = send_until_answered(&mut s, 500, Duration::from_millis(200)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    let r = srv
        .http
        .head(srv.url(&path))
        .bearer_auth(&srv.secret_key)
        .header("Tus-Resumable", "1.0.0")
        .send()
        .await
        .unwrap();
    let offset: usize = r.headers()["upload-offset"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (HEAD_BYTES..=HEAD_BYTES + sent).contains(&offset),
        "{offset}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_steady_body_over_the_rate_floor_passes() {
    let srv = floor_server().await;
    let mut s = TcpStream::connect(host(&srv)).await.unwrap();
    let prefix =
        "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"steady.bin\"\r\n\r\n";
    let suffix = "\r\n--XyZ--\r\n";
    // 10 KiB every 100 ms for 3.5 s: ten times the floor, judged at least once.
    let (piece, pieces) = (10 * 1024, 35);
    let length = prefix.len() + piece * pieces + suffix.len();
    let head = format!(
        "POST /v1/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: {length}\r\n\r\n{prefix}",
        srv.secret_key
    );
    s.write_all(head.as_bytes()).await.unwrap();
    for _ in 0..pieces {
        s.write_all(&vec![b'd'; piece]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    s.write_all(suffix.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while !(out.windows(4).any(|w| w == b"\r\n\r\n") && out.ends_with(b"}")) {
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
            .await
            .expect("an answer")
            .unwrap();
        assert!(n > 0, "closed without an answer");
        out.extend_from_slice(&buf[..n]);
    }
    let answer = String::from_utf8_lossy(&out);
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert!(
        answer.contains(&format!("\"size\":{}", piece * pieces)),
        "{answer}"
    );
}
