//! `serve` on one thread (`TOKIO_WORKER_THREADS=1`, as a node held to a CPU
//! or less runs): the current-thread scheduler serves uploads and files as
//! the multi-thread one does, stays live and keeps an account's uploads to
//! its slots while they stall, and says
//! which it runs; a thread count that is not a whole number of at least 1
//! is refused as a usage error.

use crate::common::process::{filestore, free_port, raw_get, Serve, ServeProcess};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A multipart upload of `bytes` as `name` over a plain socket: the status
/// and the body.
fn upload(port: u16, key: &str, name: &str, bytes: &[u8]) -> (u16, String) {
    let mut body = format!(
        "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(b"\r\n--B--\r\n");
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST /v1/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: multipart/form-data; boundary=B\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(&body).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out[9..12].parse().unwrap();
    (
        status,
        out.split("\r\n\r\n").nth(1).unwrap_or("").to_string(),
    )
}

/// `serve` with `TOKIO_WORKER_THREADS=threads` and JSON logs: the process
/// and its serving line.
fn serve_on(data: &std::path::Path, threads: &str) -> (ServeProcess, serde_json::Value) {
    let child = Serve::new(data)
        .env("TOKIO_WORKER_THREADS", threads)
        .args(&["--log-format", "json"])
        .start();
    let serving = child
        .lines()
        .into_iter()
        .find(|l| l.contains("serving"))
        .expect("serving line");
    let line = serde_json::from_str(&serving).unwrap();
    (child, line)
}

#[test]
fn one_thread_serves_and_stays_live_while_uploads_stall() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, line) = serve_on(dir.path(), "1");
    let port = child.port;
    assert_eq!(line["threads"], 1, "{line}");
    assert_eq!(line["scheduler"], "current-thread", "{line}");
    let key = child.key();
    // On free's 8 uploads at once (the bootstrap account starts on `owner`).
    let set = crate::common::process::admin(
        dir.path(),
        None,
        &["account", "set", "default", "--plan", "free"],
    );
    assert!(set.status.success(), "{set:?}");

    let bytes: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let (status, body) = upload(port, &key, "one.bin", &bytes);
    assert_eq!(status, 201, "{body}");
    let file: serde_json::Value = serde_json::from_str(&body).unwrap();
    let url = file["url"].as_str().expect("public url");
    let path = &url[url.find("/live/").expect("cdn path")..];

    // Uploads that send their head and a little of their body, then stall:
    // more than the free plan's 8 at once (its rate limit, 100 a minute,
    // leaves room for the retries below).
    let mut stalled = Vec::new();
    for _ in 0..16 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            s,
            "POST /v1/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\
             Content-Type: multipart/form-data; boundary=B\r\nContent-Length: 1000000\r\n\r\n\
             --B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"s\"\r\n\r\nstall"
        )
        .unwrap();
        stalled.push(s);
    }
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..5 {
        let start = Instant::now();
        assert_eq!(raw_get(port, "/v1/health", None).map(|r| r.0), Some(200));
        let took = start.elapsed();
        assert!(took < Duration::from_secs(1), "health took {took:?}");
    }
    // The file made before, whole, while they still stall.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let head_end = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(out.starts_with(b"HTTP/1.1 200"), "{:?}", &out[..head_end]);
    assert_eq!(&out[head_end..], &bytes[..]);
    // The account's stalled uploads hold its slots (free plan: 8 at once).
    let (status, body) = upload(port, &key, "two.bin", b"two");
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("too many uploads at once"), "{body}");
    // Once they are gone, the account uploads again.
    drop(stalled);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = upload(port, &key, "two.bin", b"two");
        if status == 201 {
            break;
        }
        assert!(Instant::now() < deadline, "{status} {body}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SIGTERM: it drains and exits 0, its last line said.
    assert!(child.terminate().success(), "{}", child.log_tail(5));
    assert!(
        child.log_text().contains("stopped"),
        "{}",
        child.log_tail(5)
    );
}

#[test]
fn more_threads_run_the_multi_thread_scheduler() {
    let dir = tempfile::tempdir().unwrap();
    let (_child, line) = serve_on(dir.path(), "3");
    assert_eq!(line["threads"], 3, "{line}");
    assert_eq!(line["scheduler"], "multi-thread", "{line}");
    assert!(
        line["message"].as_str().unwrap().ends_with(", 3 threads)"),
        "{line}"
    );
}

/// `serve` with `TOKIO_WORKER_THREADS=threads` and `more` arguments, which
/// is to refuse to start: its exit status and its stderr.
fn serve_refused(data: &std::path::Path, threads: &str, more: &[&str]) -> (Option<i32>, String) {
    let out = filestore()
        .args(["serve", "--data-dir"])
        .arg(data)
        .args(["--listen", &format!("127.0.0.1:{}", free_port())])
        .args(more)
        .env("TOKIO_WORKER_THREADS", threads)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_thread_count_that_is_not_one_or_more_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["0", "many"] {
        let (status, stderr) = serve_refused(dir.path(), bad, &[]);
        assert_eq!(status, Some(2), "{bad}: {stderr}");
        assert!(
            stderr.starts_with("error: usage: TOKIO_WORKER_THREADS must be a whole number"),
            "{bad}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // In the form the logs were asked in.
    let (status, stderr) = serve_refused(dir.path(), "0", &["--log-format", "json"]);
    assert_eq!(status, Some(2), "{stderr}");
    let line: serde_json::Value = serde_json::from_str(stderr.trim()).expect("one JSON line");
    assert_eq!(line["level"], "ERROR", "{stderr}");
    assert_eq!(line["code"], "usage", "{stderr}");
    assert!(
        line["message"]
            .as_str()
            .unwrap()
            .contains("TOKIO_WORKER_THREADS must be a whole number"),
        "{stderr}"
    );
}
