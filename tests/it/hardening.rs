//! The server against slow and idle clients, a full disk, and for its file
//! modes (docs/decisions.md, "Serving limits"), with short configured timeouts.

use crate::common::get_bytes;
use crate::common::{error_code, TestOptions, TestServer};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const FAST: &str = "[server]
header_timeout = \"1s\"
body_timeout = \"1s\"
idle_timeout = \"2s\"
max_connections = 32
";

async fn fast_server() -> TestServer {
    TestServer::start_with(TestOptions {
        plans_toml: Some(FAST.into()),
        ..Default::default()
    })
    .await
}

async fn connect(srv: &TestServer) -> TcpStream {
    TcpStream::connect(srv.base_url.trim_start_matches("http://"))
        .await
        .unwrap()
}

/// Waits until the server closes `s` (EOF or reset); the time it took.
async fn closed_within(s: &mut TcpStream, limit: Duration) -> Duration {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        let Ok(read) =
            tokio::time::timeout(limit.saturating_sub(start.elapsed()), s.read(&mut buf)).await
        else {
            panic!("connection still open after {limit:?}");
        };
        if matches!(read, Ok(0) | Err(_)) {
            return start.elapsed();
        }
    }
}

async fn health_ok(srv: &TestServer) {
    let r = reqwest::Client::new()
        .get(srv.url("/v1/health"))
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .expect("health answers");
    assert_eq!(r.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_headers_are_closed_at_the_header_timeout() {
    let srv = fast_server().await;
    let mut slow = Vec::new();
    for _ in 0..20 {
        let mut s = connect(&srv).await;
        s.write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            .await
            .unwrap();
        slow.push(s);
    }
    health_ok(&srv).await;
    for s in &mut slow {
        let took = closed_within(s, Duration::from_secs(4)).await;
        assert!(took <= Duration::from_millis(2500), "closed after {took:?}");
    }
    health_ok(&srv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_at_the_idle_timeout_not_the_header_one() {
    let srv = fast_server().await;
    let start = Instant::now();
    let mut idle = connect(&srv).await;
    let took = closed_within(&mut idle, Duration::from_secs(5)).await;
    assert!(
        took >= Duration::from_millis(1800),
        "an idle connection is not a slow header: closed after {took:?}"
    );
    // A keep-alive connection after its answer: idle again, closed the same way.
    let mut kept = connect(&srv).await;
    kept.write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = vec![0u8; 4096];
    let n = kept.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    let took = closed_within(&mut kept, Duration::from_secs(5)).await;
    assert!(took >= Duration::from_millis(1800), "{took:?}");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_upload_gets_408_and_leaves_no_spool() {
    let srv = fast_server().await;
    let mut s = connect(&srv).await;
    let boundary = "XyZ";
    let head = format!(
        "POST /v1/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: 10000000\r\n\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n",
        srv.secret_key
    );
    s.write_all(head.as_bytes()).await.unwrap();
    // More than the inline limit, so that a spool file exists, then silence.
    s.write_all(&vec![7u8; 200_000]).await.unwrap();
    let start = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while !out.windows(4).any(|w| w == b"\r\n\r\n") || !out.ends_with(b"}}") {
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
            .await
            .expect("an answer within the body timeout")
            .unwrap();
        assert!(n > 0, "closed without an answer");
        out.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("\"code\":\"request_timeout\""), "{text}");
    assert!(start.elapsed() < Duration::from_secs(4));
    srv.eventually(3, "no spool, no row, no blob", || async {
        srv.leftovers() == (0, 0, 0) && srv.blob_count().await == 0
    })
    .await;
    assert_eq!(srv.usage().await["storage_bytes"], 0);
}

/// At `max_connections`, idle and slow connections make room for new ones
/// (oldest first), so that a health check is answered at once; requests in
/// flight are never cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_limit_idle_and_slow_clients_make_room() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some(
            "[server]\nheader_timeout = \"60s\"\nidle_timeout = \"60s\"\nbody_timeout = \"60s\"\nmax_connections = 4\n"
                .into(),
        ),
        ..Default::default()
    })
    .await;
    // One request in flight (a slow upload body), then idle and half-sent ones.
    let mut busy = connect(&srv).await;
    let head = format!(
        "POST /v1/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: multipart/form-data; boundary=B\r\nContent-Length: 1000\r\n\r\n--B\r\n",
        srv.secret_key
    );
    busy.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut hogs = Vec::new();
    for i in 0..10 {
        let mut s = connect(&srv).await;
        if i % 2 == 0 {
            s.write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                .await
                .unwrap();
        }
        hogs.push(s);
    }
    for _ in 0..3 {
        let start = Instant::now();
        health_ok(&srv).await;
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "health waited {:?} behind idle connections",
            start.elapsed()
        );
    }
    // The request in flight was not cut: it still gets its answer.
    busy.write_all(b"Content-Disposition: form-data; name=\"x\"\r\n\r\nv\r\n--B--\r\n")
        .await
        .unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), busy.read(&mut buf))
        .await
        .expect("an answer")
        .unwrap();
    assert!(n > 0, "the request in flight was closed");
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 400"));
}

/// Spool bytes of an upload in flight count against the account's quota: a
/// stalled upload cannot hold more disk than the plan allows, and a second
/// upload that would pass the quota together with it is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_in_flight_count_against_the_quota() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some(format!(
            "{}\n[plans.free]\nstorage = 1000000\nmax_file_size = 1000000\n",
            FAST.replace("body_timeout = \"1s\"", "body_timeout = \"10s\"")
        )),
        ..Default::default()
    })
    .await;
    let mut s = connect(&srv).await;
    let head = format!(
        "POST /v1/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: multipart/form-data; boundary=B\r\nTransfer-Encoding: chunked\r\n\r\n",
        srv.secret_key
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let part = b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n";
    let mut chunk = format!("{:x}\r\n", part.len() + 700_000).into_bytes();
    chunk.extend_from_slice(part);
    chunk.extend_from_slice(&vec![1u8; 700_000]);
    chunk.extend_from_slice(b"\r\n");
    s.write_all(&chunk).await.unwrap();
    srv.eventually(5, "700 KB in flight", || async {
        srv.app.in_flight.of(&srv.account_id) >= 700_000
    })
    .await;
    let r = srv
        .upload_as(&srv.secret_key, "b.bin", vec![2u8; 400_000], &[])
        .await;
    assert_eq!(
        error_code(r).await,
        (413, "storage_limit_exceeded".into()),
        "700 KB in flight + 400 KB > 1 MB"
    );
    drop(s);
    srv.eventually(5, "nothing in flight", || async {
        srv.app.in_flight.of(&srv.account_id) == 0
    })
    .await;
    srv.upload_ok("b.bin", vec![2u8; 400_000], &[]).await;
}

/// A volume with less free space than the reserve: uploads get 507, deletes
/// still succeed, health says so, nothing stored is lost, and uploads work
/// again once there is room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn below_the_free_space_reserve_uploads_get_507_and_deletes_work() {
    let dir = tempfile::tempdir().unwrap();
    let with_reserve = |reserve: &str| TestOptions {
        plans_toml: Some(format!("[storage]\nmin_free_space = {reserve}\n")),
        data_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let srv = TestServer::start_with(with_reserve("0")).await;
    let kept = srv.upload_ok("kept.txt", b"kept".to_vec(), &[]).await;
    let gone = srv.upload_ok("gone.txt", vec![9u8; 140_000], &[]).await;
    let png = crate::images::png(64, 48);
    let png_len = png.len();
    let photo = srv.upload_ok("photo.png", png, &[]).await;
    let photo = photo["url"].as_str().unwrap();
    let photo = photo[photo.find("/live/").unwrap()..].to_string();
    let r = srv
        .http
        .get(srv.url(&format!("{photo}?w=16")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    srv.stop().await;

    // More than any volume here has free.
    let srv = TestServer::start_with(with_reserve("\"1000TB\"")).await;
    for body in [b"x".to_vec(), vec![5u8; 140_000]] {
        let r = srv.upload_as(&srv.secret_key, "new.bin", body, &[]).await;
        assert_eq!(error_code(r).await, (507, "insufficient_storage".into()));
    }
    let r = srv.http.get(srv.url("/v1/health")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    let health: serde_json::Value = r.json().await.unwrap();
    assert_eq!(health["checks"]["storage"]["status"], "error");
    assert_eq!(health["checks"]["database"]["status"], "ok");
    let r = srv
        .delete_as(&srv.secret_key, gone["id"].as_str().unwrap())
        .await;
    assert_eq!(
        r.status(),
        200,
        "deletes free space: they always go through"
    );
    // The URL of the first server; the same path on this one.
    let url = kept["url"].as_str().unwrap();
    let path = &url[url.find("/live/").unwrap()..];
    let body = get_bytes(&srv.http, srv.url(path)).await;
    assert_eq!(&body[..], b"kept");
    assert_eq!(srv.usage().await["storage_bytes"], 4 + png_len);
    // A variant stored before is served; a new one is not written into
    // the reserve (anyone may ask for variants of a public image).
    let variant = |q: &str| srv.http.get(srv.url(&format!("{photo}?{q}"))).send();
    assert_eq!(variant("w=16").await.unwrap().status(), 200);
    let r = variant("w=20").await.unwrap();
    assert_eq!(error_code(r).await, (507, "insufficient_storage".into()));
    srv.stop().await;

    let srv = TestServer::start_with(with_reserve("0")).await;
    srv.upload_ok("again.txt", b"again".to_vec(), &[]).await;
    health_ok(&srv).await;
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_data_dir_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let srv = TestServer::start_with(TestOptions {
        backend: Some(crate::common::Backend::LocalBlobs),
        ..Default::default()
    })
    .await;
    srv.upload_ok("a.txt", b"secret".to_vec(), &[]).await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let d = &srv.data_dir;
    for dir in [
        d.clone(),
        d.join("tmp"),
        d.join("blobs"),
        d.join("blobs").join(&srv.account_id),
    ] {
        assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    }
    // (On PostgreSQL there is no database file in the data dir.)
    let db_files = if srv.on_postgres() {
        &[][..]
    } else {
        &[
            "filestore.db",
            "filestore.db-wal",
            "filestore.db-shm",
            "filestore.db-keys",
        ][..]
    };
    for f in db_files {
        assert_eq!(mode(&d.join(f)), 0o600, "{f}");
    }
    let blob = std::fs::read_dir(d.join("blobs").join(&srv.account_id))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(mode(&blob), 0o600);
}

/// A volume that really fills up (a small tmpfs, `common::tmpfs`): uploads get 507, never 500, deletes still go through, and uploads
/// work again once there is room.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_really_full_disk_gives_507_and_deletes_still_work() {
    let Some(volume) = crate::common::tmpfs::Volume::mount(24) else {
        return;
    };
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[storage]\nmin_free_space = 0\n[plans.free]\nstorage = \"1GB\"\n".into()),
        data_dir: Some(volume.path().join("data")),
        ..Default::default()
    })
    .await;
    let mut stored = Vec::new();
    let mut refused = None;
    for i in 0..40 {
        let r = srv
            .upload_as(
                &srv.secret_key,
                &format!("f{i}.bin"),
                vec![i as u8; 1_000_000],
                &[],
            )
            .await;
        if r.status() == 201 {
            let rec: serde_json::Value = r.json().await.unwrap();
            stored.push(rec["id"].as_str().unwrap().to_string());
        } else {
            refused = Some(error_code(r).await);
            break;
        }
    }
    assert_eq!(
        refused,
        Some((507, "insufficient_storage".into())),
        "a full disk is 507 ({} files fit)",
        stored.len()
    );
    assert!(
        stored.len() >= 5,
        "only {} files fit in 24 MB",
        stored.len()
    );
    eprintln!(
        "full tmpfs: {} files of 1 MB stored, then 507",
        stored.len()
    );
    for id in stored.drain(..3) {
        let r = srv.delete_as(&srv.secret_key, &id).await;
        assert_eq!(r.status(), 200, "deletes go through on a full disk");
    }
    srv.eventually(5, "the deleted blobs are gone", || async {
        srv.leftovers().1 == 0
    })
    .await;
    srv.upload_ok("again.bin", vec![1u8; 1_000_000], &[]).await;
    assert_eq!(srv.leftovers().2, 0, "no spool left");
    srv.stop().await;
}
