//! Isolation: uploads that trickle, many at once, cannot starve health,
//! list, usage or the CDN (no thread waits on a client's network); an
//! account's concurrent uploads are capped (`concurrent_uploads`); a body
//! slower than `min_upload_rate` is cut with 408.

use crate::common::{error_code, TestOptions, TestServer};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod budget;
mod downloads;
mod rate_floor;
mod trickling;

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
const HEAD_BYTES: usize = 140 * 1024;

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
/// answer 200 in under two seconds (they take milliseconds; a second was
/// once passed by 43 ms in CI, whose PostgreSQL run shares the two cores
/// with other tests), over about `rounds` seconds. Each on a new
/// connection, as a new client's would be.
async fn others_answer(srv: &TestServer, key: &str, cdn_url: &str, rounds: u32) -> [Duration; 4] {
    others_answer_at(&srv.base_url, key, cdn_url, rounds).await
}

/// [`others_answer`] of the server at `base` (`http://HOST:PORT`).
async fn others_answer_at(base: &str, key: &str, cdn_url: &str, rounds: u32) -> [Duration; 4] {
    let url = |path: &str| format!("{base}{path}");
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut worst = [Duration::ZERO; 4];
    for _ in 0..rounds {
        let requests = [
            http.get(url("/v1/health")),
            http.get(url("/v1/files")).bearer_auth(key),
            http.get(url("/v1/usage")).bearer_auth(key),
            http.get(cdn_url),
        ];
        for (i, req) in requests.into_iter().enumerate() {
            let started = Instant::now();
            let r = req.send().await.expect("answers");
            let status = r.status();
            r.bytes().await.unwrap();
            let took = started.elapsed();
            assert_eq!(status, 200, "request {i}");
            assert!(took < Duration::from_secs(2), "request {i} took {took:?}");
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

const PAIR: &str = r#"
[plans.pair]
max_file_size = "100MiB"
storage = "1GiB"
rate_limit = 100000
rate_window = "1m"
concurrent_uploads = 2
"#;

/// A PATCH of 10 bytes to the upload at `path` (from a page at `origin`).
async fn patch_small(
    srv: &TestServer,
    key: &str,
    path: &str,
    origin: Option<&str>,
) -> reqwest::Response {
    let mut req = srv.http.patch(srv.url(path));
    if let Some(o) = origin {
        req = req.header("Origin", o);
    }
    req.bearer_auth(key)
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
    stalled_download_at(host(srv), path).await
}

/// [`stalled_download`] from the server at `addr` (`HOST:PORT`).
async fn stalled_download_at(addr: &str, path: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut s = socket.connect(addr.parse().unwrap()).await.unwrap();
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
