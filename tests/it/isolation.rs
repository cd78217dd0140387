//! Isolation: uploads that trickle, many at once, cannot starve health,
//! list, usage or the CDN (no thread waits on a client's network); an
//! account's concurrent uploads are capped (`concurrent_uploads`); a body
//! slower than `min_upload_rate` is cut with 408.

use crate::common::{error_code, TestOptions, TestServer};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Plans and limits of the trickle tests: every trickle admitted, none cut
/// by the rate floor (the point is the threads), none refused for its count.
const WIDE: &str = r#"
[server]
min_upload_rate = 0
[plans.wide]
max_file_size = "100MiB"
storage = "10GiB"
uploads = 100000
rate_limit = 100000
rate_window = "1m"
concurrent_uploads = 1000
open_uploads = 1000
"#;

const ORIGIN: &str = "https://app.example";

/// Bytes sent at once before the trickle: past the inline limit, so that
/// each multipart upload has its spool file (and each PATCH its partial blob
/// being written).
const HEAD_BYTES: usize = 70 * 1024;

fn host(srv: &TestServer) -> &str {
    srv.base_url.trim_start_matches("http://")
}

/// Opens a multipart upload of `key` that sends its head and [`HEAD_BYTES`]
/// of its file part, and no more for now.
async fn start_multipart(srv: &TestServer, key: &str, origin: Option<&str>) -> TcpStream {
    let mut s = TcpStream::connect(host(srv)).await.unwrap();
    let origin = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
    let head = format!(
        "POST /v1/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n{origin}\
         Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 10000000\r\n\r\n\
         --XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"t.bin\"\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(&vec![b'h'; HEAD_BYTES]).await.unwrap();
    s
}

/// Creates a resumable upload of 10 MB with `key` (from a page on `origin`);
/// its path.
async fn create_tus(srv: &TestServer, key: &str, origin: Option<&str>) -> String {
    let mut req = srv.http.post(srv.url("/v1/uploads"));
    if let Some(o) = origin {
        req = req.header("Origin", o);
    }
    let r = req
        .bearer_auth(key)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", "10000000")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let location = r.headers()["location"].to_str().unwrap();
    location[location.find("/v1/uploads/").unwrap()..].to_string()
}

/// Opens a PATCH of the upload at `path` from offset 0 that sends its head
/// and [`HEAD_BYTES`] of its body, and no more for now.
async fn start_patch(srv: &TestServer, key: &str, path: &str, origin: Option<&str>) -> TcpStream {
    let mut s = TcpStream::connect(host(srv)).await.unwrap();
    let origin = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
    let head = format!(
        "PATCH {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n{origin}\
         Tus-Resumable: 1.0.0\r\nContent-Type: application/offset+octet-stream\r\n\
         Upload-Offset: 0\r\nContent-Length: 10000000\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(&vec![b'h'; HEAD_BYTES]).await.unwrap();
    s
}

/// Sends one byte on every socket each `every` until stopped; then closes
/// them all and gives the bytes each one sent after its head.
struct Trickle {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Vec<usize>>,
}

impl Trickle {
    fn start(mut socks: Vec<TcpStream>, every: Duration) -> Trickle {
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut sent = vec![0; socks.len()];
            loop {
                for (s, n) in socks.iter_mut().zip(sent.iter_mut()) {
                    if s.write_all(b"t").await.is_ok() {
                        *n += 1;
                    }
                }
                tokio::select! {
                    _ = &mut stopped => break,
                    () = tokio::time::sleep(every) => {}
                }
            }
            drop(socks);
            sent
        });
        Trickle { stop, task }
    }

    async fn close(self) -> Vec<usize> {
        let _ = self.stop.send(());
        self.task.await.unwrap()
    }
}

/// The longest of several rounds of health, list, usage and a CDN
/// download (of `cdn_url`, another account's file), each of which must
/// answer 200 in under a second, over about `rounds` seconds. Each on a new
/// connection, as a new client's would be.
async fn others_answer(srv: &TestServer, key: &str, cdn_url: &str, rounds: u32) -> [Duration; 4] {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut worst = [Duration::ZERO; 4];
    for _ in 0..rounds {
        let requests = [
            http.get(srv.url("/v1/health")),
            http.get(srv.url("/v1/files")).bearer_auth(key),
            http.get(srv.url("/v1/usage")).bearer_auth(key),
            http.get(cdn_url),
        ];
        for (i, req) in requests.into_iter().enumerate() {
            let started = Instant::now();
            let r = req.send().await.expect("answers");
            let status = r.status();
            r.bytes().await.unwrap();
            let took = started.elapsed();
            assert_eq!(status, 200, "request {i}");
            assert!(took < Duration::from_secs(1), "request {i} took {took:?}");
            worst[i] = worst[i].max(took);
        }
        tokio::time::sleep(Duration::from_millis(800)).await;
    }
    worst
}

async fn wide_server() -> TestServer {
    TestServer::start_with(TestOptions {
        plans_toml: Some(WIDE.into()),
        ..Default::default()
    })
    .await
}

/// Accounts on the wide plan: (id, secret key).
async fn accounts(srv: &TestServer, n: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(srv.new_account(&format!("tenant{i}"), "wide").await);
    }
    out
}

/// Waits until `n` upload bodies are arriving on `accounts` together.
async fn arriving(srv: &TestServer, accounts: &[(String, String)], n: u64) {
    let what = format!("{n} uploads arriving");
    srv.eventually(30, &what, || async {
        let now: u64 = accounts
            .iter()
            .map(|(id, _)| srv.app.in_flight.uploads_of(id))
            .sum();
        now == n
    })
    .await;
}

/// A file of the default account, and its CDN URL.
async fn cdn_file(srv: &TestServer) -> String {
    let f = srv.upload_ok("page.txt", b"served".to_vec(), &[]).await;
    f["url"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_hundred_trickling_uploads_leave_the_others_answering() {
    let srv = wide_server().await;
    let url = cdn_file(&srv).await;
    let tenants = accounts(&srv, 6).await;
    let public = srv.key_for(&tenants[0].0, "public", &[ORIGIN]).await;
    let mut socks = Vec::new();
    for i in 0..600 {
        let (_, key) = &tenants[i % tenants.len()];
        let from_page = i % 300 == 0;
        let (key, origin) = if from_page {
            (&public, Some(ORIGIN))
        } else {
            (key, None)
        };
        socks.push(start_multipart(&srv, key, origin).await);
    }
    arriving(&srv, &tenants, 600).await;
    let trickle = Trickle::start(socks, Duration::from_secs(3));
    let worst = others_answer(&srv, &srv.secret_key, &url, 10).await;
    println!(
        "600 trickling uploads: worst health {:?}, list {:?}, usage {:?}, CDN {:?}",
        worst[0], worst[1], worst[2], worst[3]
    );
    assert!(
        trickle.close().await.iter().all(|n| *n >= 2),
        "all trickled"
    );
    arriving(&srv, &tenants, 0).await;
    for (_, key) in &tenants {
        let (status, list) = srv.get_json(key, "/v1/files").await;
        assert_eq!(status, 200);
        assert_eq!(list["files"].as_array().unwrap().len(), 0, "nothing stored");
    }
    srv.eventually(10, "no spool left", || async {
        srv.leftovers() == (1, 0, 0)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_trickling_patches_leave_the_others_answering() {
    let srv = wide_server().await;
    let url = cdn_file(&srv).await;
    let tenants = accounts(&srv, 6).await;
    let public = srv.key_for(&tenants[0].0, "public", &[ORIGIN]).await;
    let mut uploads = Vec::new();
    for i in 0..300 {
        let (_, key) = &tenants[i % tenants.len()];
        let (key, origin) = if i % 150 == 0 {
            (&public, Some(ORIGIN))
        } else {
            (key, None)
        };
        uploads.push((key.clone(), origin, create_tus(&srv, key, origin).await));
    }
    let mut socks = Vec::new();
    for (key, origin, path) in &uploads {
        socks.push(start_patch(&srv, key, path, *origin).await);
    }
    arriving(&srv, &tenants, 300).await;
    let trickle = Trickle::start(socks, Duration::from_secs(3));
    let worst = others_answer(&srv, &srv.secret_key, &url, 10).await;
    println!(
        "300 trickling PATCHes: worst health {:?}, list {:?}, usage {:?}, CDN {:?}",
        worst[0], worst[1], worst[2], worst[3]
    );
    let sent = trickle.close().await;
    arriving(&srv, &tenants, 0).await;
    // What arrived is kept: each upload is at the bytes its PATCH sent.
    for ((key, origin, path), trickled) in uploads.iter().zip(sent).step_by(25) {
        let mut req = srv.http.head(srv.url(path));
        if let Some(o) = origin {
            req = req.header("Origin", *o);
        }
        let r = req
            .bearer_auth(key)
            .header("Tus-Resumable", "1.0.0")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        let offset: usize = r.headers()["upload-offset"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(offset, HEAD_BYTES + trickled, "{path}");
    }
}

const PAIR: &str = r#"
[plans.pair]
max_file_size = "100MiB"
storage = "1GiB"
rate_limit = 100000
rate_window = "1m"
concurrent_uploads = 2
"#;

/// A PATCH of 10 bytes to the upload at `path`.
async fn patch_small(srv: &TestServer, key: &str, path: &str) -> reqwest::Response {
    srv.http
        .patch(srv.url(path))
        .bearer_auth(key)
        .header("Tus-Resumable", "1.0.0")
        .header("Content-Type", "application/offset+octet-stream")
        .header("Upload-Offset", "0")
        .body(vec![1u8; 10])
        .send()
        .await
        .unwrap()
}

/// Asserts a 429 `rate_limit_exceeded` with a `Retry-After` of a second or more.
async fn assert_too_many(r: reqwest::Response) {
    let retry: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry >= 1, "Retry-After {retry}");
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_has_at_most_its_concurrent_uploads_arriving() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some(PAIR.into()),
        ..Default::default()
    })
    .await;
    let (a, key_a) = srv.new_account("a", "pair").await;
    let (_, key_b) = srv.new_account("b", "pair").await;
    let one = start_multipart(&srv, &key_a, None).await;
    let path = create_tus(&srv, &key_a, None).await;
    let two = start_patch(&srv, &key_a, &path, None).await;
    srv.eventually(10, "two arriving", || async {
        srv.app.in_flight.uploads_of(&a) == 2
    })
    .await;
    // A third, multipart or PATCH, is refused before its body is read.
    assert_too_many(srv.upload_as(&key_a, "third.txt", b"x".to_vec(), &[]).await).await;
    let other = create_tus(&srv, &key_a, None).await;
    assert_too_many(patch_small(&srv, &key_a, &other).await).await;
    // Another account is not affected.
    let r = srv.upload_as(&key_b, "b.txt", b"b".to_vec(), &[]).await;
    assert_eq!(r.status(), 201);
    // Once the two end, a new one is admitted.
    drop((one, two));
    srv.eventually(10, "none arriving", || async {
        srv.app.in_flight.uploads_of(&a) == 0
    })
    .await;
    let r = srv.upload_as(&key_a, "later.txt", b"l".to_vec(), &[]).await;
    assert_eq!(r.status(), 201);
    assert_eq!(patch_small(&srv, &key_a, &other).await.status(), 204);
}

/// A server whose bodies must average 10 KiB/s over 2 s.
async fn floor_server() -> TestServer {
    TestServer::start_with(TestOptions {
        plans_toml: Some("[server]\nmin_upload_rate = \"10KiB/s\"\n".into()),
        configure: Some(|c| c.limits.min_upload_window = Duration::from_secs(2)),
        ..Default::default()
    })
    .await
}

/// Sends `piece` bytes on `s` every `every` until the server answers;
/// the answer, and the bytes sent.
async fn send_until_answered(s: &mut TcpStream, piece: usize, every: Duration) -> (String, usize) {
    let started = Instant::now();
    let mut sent = 0;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        assert!(started.elapsed() < Duration::from_secs(20), "no answer");
        if out.is_empty() && s.write_all(&vec![b's'; piece]).await.is_ok() {
            sent += piece;
        }
        match tokio::time::timeout(every, s.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
        if out.windows(4).any(|w| w == b"\r\n\r\n") && out.ends_with(b"}}") {
            break;
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), sent)
}

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

/// Bytes of the large public file the download tests fetch.
const BIG: usize = 8_000_000;

/// A large public file of the default account; its CDN path.
async fn big_file(srv: &TestServer) -> String {
    let data: Vec<u8> = (0..BIG).map(|i| (i % 251) as u8).collect();
    let f = srv.upload_ok("big.bin", data, &[]).await;
    let url = f["url"].as_str().unwrap();
    url[url.find("/live/").unwrap()..].to_string()
}

/// Opens a download of `path` with a tiny receive buffer, and reads
/// nothing: the server's writes stall at once.
async fn stalled_download(srv: &TestServer, path: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut s = socket.connect(host(srv).parse().unwrap()).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    s
}

/// Whether the server closed a download's socket before all of its file
/// was out (what it had sent is read first); false when the download goes
/// on for `within`.
async fn cut_short(mut s: TcpStream, within: Duration) -> bool {
    let mut got = 0;
    let mut buf = vec![0; 64 * 1024];
    let closed = tokio::time::timeout(within, async {
        while let Ok(n @ 1..) = s.read(&mut buf).await {
            got += n;
        }
    })
    .await;
    closed.is_ok() && got < BIG
}

/// Downloads that stopped being read are closed to make room at
/// `max_connections` (the longest stalled first), so that more of them than
/// the limit cannot keep health, list and usage of another account waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_downloads_make_room_at_the_connection_limit() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some(WIDE.replace(
            "min_upload_rate = 0\n",
            "min_upload_rate = 0\nmax_connections = 40\n",
        )),
        ..Default::default()
    })
    .await;
    let url = cdn_file(&srv).await;
    let path = big_file(&srv).await;
    let (_, key) = srv.new_account("victim", "wide").await;
    let mut stalled = Vec::new();
    for _ in 0..60 {
        stalled.push(stalled_download(&srv, &path).await);
    }
    // Past the stall that makes a download one to close when room is needed.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let worst = others_answer(&srv, &key, &url, 5).await;
    println!(
        "60 stalled downloads at max_connections 40: worst health {:?}, list {:?}, usage {:?}, CDN {:?}",
        worst[0], worst[1], worst[2], worst[3]
    );
    // The 20 over the limit got in, each in the place of a stalled one,
    // which was closed before its 8 MB were out.
    let reads: Vec<_> = stalled
        .into_iter()
        .map(|s| tokio::spawn(cut_short(s, Duration::from_secs(5))))
        .collect();
    let mut cut = 0;
    for r in reads {
        cut += usize::from(r.await.unwrap());
    }
    assert!(cut >= 20, "only {cut} stalled downloads were closed");
}

/// A burst of downloads of a large file cannot take the blocking threads
/// that health, list and usage need: they answer within a second while it
/// runs, and every download completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_downloads_leaves_the_others_answering() {
    let srv = wide_server().await;
    let url = cdn_file(&srv).await;
    let path = big_file(&srv).await;
    let (_, key) = srv.new_account("victim", "wide").await;
    let burst: Vec<_> = (0..100)
        .map(|_| {
            let http = srv.http.clone();
            let url = srv.url(&path);
            tokio::spawn(async move {
                let r = http.get(url).send().await.unwrap();
                assert_eq!(r.status(), 200);
                r.bytes().await.unwrap().len()
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let worst = others_answer(&srv, &key, &url, 3).await;
    println!(
        "100 downloads of 8 MB: worst health {:?}, list {:?}, usage {:?}, CDN {:?}",
        worst[0], worst[1], worst[2], worst[3]
    );
    for d in burst {
        assert_eq!(d.await.unwrap(), BIG, "a download was cut");
    }
}
