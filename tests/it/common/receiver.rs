//! The webhook receivers the tests deliver to.
//!
//! `Receiver`: `tests/webhooks/receiver.py`, a receiver nobody here wrote
//! the verification of: it checks every request with the `standardwebhooks`
//! package from PyPI and logs one JSON line per request; it can answer
//! slowly, fail its first attempts (500 or a redirect), or be down until
//! told. The helpers below read that log.
//!
//! `healthy`, `failing`, `hanging`: receivers in this process (axum, and a
//! bare TCP listener for the one that hangs, so that it sees each attempt's
//! connection close), for the fairness tests.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::AsyncReadExt;

const RECEIVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/webhooks/receiver.py");

/// True when the receiver can run; otherwise prints why the test is
/// skipped (or fails under FILESTORE_REQUIRE_TOOLS).
pub fn tools(test: &str) -> bool {
    let Some(why) = crate::common::python_module_missing("standardwebhooks") else {
        return true;
    };
    assert!(
        std::env::var_os("FILESTORE_REQUIRE_TOOLS").is_none(),
        "FILESTORE_REQUIRE_TOOLS=1 but python3 cannot import standardwebhooks: {why}"
    );
    // Straight to stderr: libtest captures `eprintln!` of passing tests.
    let _ = writeln!(
        std::io::stderr(),
        "skipped {test}: python3 cannot import standardwebhooks \
         (pip install standardwebhooks==1.1.0): {why}"
    );
    false
}

#[derive(Debug, Clone, Default)]
pub struct RxOptions {
    pub read_files: bool,
    pub fail_first: u32,
    /// The status of those failures (500 by default; a 3xx redirects to
    /// /elsewhere on the receiver).
    pub fail_status: Option<u16>,
    /// Answers 503 until `up()`.
    pub down: bool,
    pub delay_ms: u64,
    /// A fixed port (a receiver started again where the last one was).
    pub port: Option<u16>,
    /// The secret at once (else `set_secret` later).
    pub secret: Option<String>,
    /// Another receiver's log to append to.
    pub log: Option<PathBuf>,
}

pub struct Receiver {
    child: Child,
    dir: tempfile::TempDir,
    pub log: PathBuf,
    pub port: u16,
}

impl Receiver {
    pub fn start(opts: &RxOptions) -> Receiver {
        let dir = tempfile::tempdir().unwrap();
        let log = opts.log.clone().unwrap_or(dir.path().join("log.jsonl"));
        if let Some(secret) = &opts.secret {
            std::fs::write(dir.path().join("secret"), secret).unwrap();
        }
        let port_file = dir.path().join("port");
        let mut cmd = Command::new("python3");
        cmd.arg("-u")
            .arg(RECEIVER)
            .arg("--port-file")
            .arg(&port_file)
            .arg("--log")
            .arg(&log)
            .arg("--secret-file")
            .arg(dir.path().join("secret"))
            .arg("--arrivals")
            .arg(dir.path().join("arrivals.jsonl"))
            .args(["--fail-first", &opts.fail_first.to_string()])
            .args(["--delay-ms", &opts.delay_ms.to_string()]);
        if opts.read_files {
            cmd.arg("--read-files");
        }
        if let Some(status) = opts.fail_status {
            cmd.args(["--fail-status", &status.to_string()]);
        }
        if opts.down {
            cmd.arg("--down-until-file").arg(dir.path().join("up"));
        }
        if let Some(port) = opts.port {
            cmd.args(["--port", &port.to_string()]);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("stderr")).unwrap())
            .spawn()
            .expect("python3 runs");
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = loop {
            if let Ok(s) = std::fs::read_to_string(&port_file) {
                if let Ok(p) = s.trim().parse::<u16>() {
                    break p;
                }
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "receiver.py exited ({status}): {}",
                    std::fs::read_to_string(dir.path().join("stderr")).unwrap_or_default()
                );
            }
            assert!(Instant::now() < deadline, "receiver.py never listened");
            std::thread::sleep(Duration::from_millis(20));
        };
        Receiver {
            child,
            dir,
            log,
            port,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    /// Gives the receiver its secret (read again on every request).
    pub fn set_secret(&self, secret: &str) {
        let tmp = self.dir.path().join("secret.tmp");
        std::fs::write(&tmp, secret).unwrap();
        std::fs::rename(&tmp, self.dir.path().join("secret")).unwrap();
    }

    /// A receiver started `down` answers 2xx from now on.
    pub fn up(&self) {
        std::fs::write(self.dir.path().join("up"), b"").unwrap();
    }

    /// Every request answered so far, in the order answered.
    pub fn requests(&self) -> Vec<Value> {
        read_lines(&self.log)
    }

    /// Requests that have arrived (answered or not).
    pub fn arrivals(&self) -> Vec<Value> {
        read_lines(&self.dir.path().join("arrivals.jsonl"))
    }

    /// Polls the log until `done` holds; the requests then.
    pub async fn wait(&self, secs: u64, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let reqs = self.requests();
            if done(&reqs) {
                return reqs;
            }
            assert!(
                Instant::now() < deadline,
                "timed out after {secs}s waiting for {what}; the receiver got:\n{}",
                summary(&reqs)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Polls until `n` requests have arrived (answered or not); those.
    pub async fn wait_arrivals(&self, secs: u64, n: usize, what: &str) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let a = self.arrivals();
            if a.len() >= n {
                return a;
            }
            assert!(
                Instant::now() < deadline,
                "timed out after {secs}s waiting for {what}: {a:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until every (type, file id) of `events` has been answered 2xx.
    pub async fn wait_delivered(&self, secs: u64, events: &[(&str, &str)]) -> Vec<Value> {
        let want: BTreeSet<(String, String)> = events
            .iter()
            .map(|(t, id)| (t.to_string(), id.to_string()))
            .collect();
        self.wait(secs, &format!("deliveries of {want:?}"), |reqs| {
            want.is_subset(&delivered(reqs))
        })
        .await
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop();
    }
}

pub fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        // A line being written is skipped until it is whole.
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// One line per request, for failure messages.
pub fn summary(reqs: &[Value]) -> String {
    reqs.iter()
        .map(|r| {
            format!(
                "  {} {} {} attempt {} -> {} valid={} at {:.3}",
                r["webhook_id"].as_str().unwrap_or("-"),
                r["type"].as_str().unwrap_or("-"),
                r["data_id"].as_str().unwrap_or("-"),
                r["attempt"],
                r["status"],
                r["valid"],
                r["received_at"].as_f64().unwrap_or(0.0),
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

pub fn is_ok(r: &Value) -> bool {
    r["status"]
        .as_u64()
        .is_some_and(|s| (200..300).contains(&s))
}

/// The (type, file id) of every request answered 2xx.
pub fn delivered(reqs: &[Value]) -> BTreeSet<(String, String)> {
    reqs.iter()
        .filter(|r| is_ok(r))
        .map(|r| (s(&r["type"]).to_string(), s(&r["data_id"]).to_string()))
        .collect()
}

/// The requests of one event (type, file id), in the order received.
pub fn of_event<'a>(reqs: &'a [Value], ty: &str, id: &str) -> Vec<&'a Value> {
    let mut v: Vec<&Value> = reqs
        .iter()
        .filter(|r| r["type"] == ty && r["data_id"] == id)
        .collect();
    v.sort_by(|a, b| {
        a["received_at"]
            .as_f64()
            .unwrap()
            .total_cmp(&b["received_at"].as_f64().unwrap())
    });
    v
}

/// The one 2xx answer of an event (asserting there is exactly one).
pub fn the_delivery<'a>(reqs: &'a [Value], ty: &str, id: &str) -> &'a Value {
    let oks: Vec<&Value> = of_event(reqs, ty, id)
        .into_iter()
        .filter(|r| is_ok(r))
        .collect();
    assert_eq!(
        oks.len(),
        1,
        "{ty} of {id} delivered {} times:\n{}",
        oks.len(),
        summary(reqs)
    );
    oks[0]
}

/// Every request of an event carries one webhook-id, no other event has it,
/// and every request verified.
pub fn one_id_per_event(reqs: &[Value]) {
    let mut ids: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let mut events_of_id: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for r in reqs {
        let event = (s(&r["type"]).to_string(), s(&r["data_id"]).to_string());
        let id = s(&r["webhook_id"]).to_string();
        assert!(id.starts_with("msg_"), "webhook-id {id:?}");
        ids.entry(event.clone()).or_default().insert(id.clone());
        events_of_id.entry(id).or_default().insert(event);
        assert_eq!(
            r["valid"], true,
            "a request that standardwebhooks did not verify: {r}"
        );
    }
    for (event, set) in &ids {
        assert_eq!(
            set.len(),
            1,
            "{event:?} came with several webhook-ids {set:?}:\n{}",
            summary(reqs)
        );
    }
    for (id, events) in &events_of_id {
        assert_eq!(events.len(), 1, "webhook-id {id} used for {events:?}");
    }
}

// ---------------------------------------------------------------------------
// In process

/// Unix time, seconds (as receiver.py stamps requests).
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// Unix time, milliseconds.
pub fn now_ms() -> f64 {
    now() * 1000.0
}

/// Listens on 127.0.0.1; its base URL.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/hook")
}

/// A receiver that answers 204 to every delivery signed with its
/// subscription's secret, and notes when each arrived.
#[derive(Default)]
pub struct Healthy {
    pub secret: Mutex<String>,
    /// File id → (arrived at, committed at), unix ms; the first delivery.
    pub got: Mutex<BTreeMap<String, (f64, f64)>>,
    pub deliveries: AtomicUsize,
}

pub async fn healthy() -> (Arc<Healthy>, String) {
    let rx = Arc::new(Healthy::default());
    let state = rx.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| async move {
                let arrived = now_ms();
                let h = |n: &str| headers[n].to_str().unwrap().to_string();
                let sent_at: i64 = h("webhook-timestamp").parse().unwrap();
                let secret = state.secret.lock().unwrap().clone();
                let want = filestore::testing::domain::webhooks::signature(
                    &secret,
                    &h("webhook-id"),
                    sent_at,
                    &body,
                )
                .unwrap();
                if h("webhook-signature") != want {
                    return axum::http::StatusCode::UNAUTHORIZED;
                }
                let v: Value = serde_json::from_slice(&body).unwrap();
                let committed =
                    chrono::DateTime::parse_from_rfc3339(v["timestamp"].as_str().unwrap())
                        .unwrap()
                        .timestamp_millis() as f64;
                let id = v["data"]["id"].as_str().unwrap().to_string();
                state.deliveries.fetch_add(1, Ordering::SeqCst);
                state
                    .got
                    .lock()
                    .unwrap()
                    .entry(id)
                    .or_insert((arrived, committed));
                axum::http::StatusCode::NO_CONTENT
            },
        ),
    );
    let url = serve(app).await;
    (rx, url)
}

/// A receiver that answers 500 to everything; counts the attempts.
pub async fn failing() -> (Arc<AtomicUsize>, String) {
    let attempts = Arc::new(AtomicUsize::new(0));
    let counter = attempts.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || async move {
            counter.fetch_add(1, Ordering::SeqCst);
            axum::http::StatusCode::INTERNAL_SERVER_ERROR
        }),
    );
    (attempts, serve(app).await)
}

/// A receiver that accepts each connection, reads the request and never
/// answers; counts the requests open at once (until the sender closes the
/// connection) and the most ever open.
#[derive(Default)]
pub struct Hanging {
    pub open: AtomicUsize,
    pub most: AtomicUsize,
    pub requests: AtomicUsize,
}

pub async fn hanging() -> (Arc<Hanging>, String) {
    let rx = Arc::new(Hanging::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = rx.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let rx = state.clone();
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                let mut counted = false;
                // Until the sender gives up and closes the connection.
                while let Ok(n @ 1..) = conn.read(&mut buf).await {
                    seen.extend_from_slice(&buf[..n]);
                    if !counted && seen.windows(4).any(|w| w == b"\r\n\r\n") {
                        // Counted open once it has stayed so a moment (an
                        // attempt here lasts 10 s): the connection of an
                        // attempt that just timed out may be seen closing a
                        // little after the next attempt's request arrives.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        counted = true;
                        rx.requests.fetch_add(1, Ordering::SeqCst);
                        let open = rx.open.fetch_add(1, Ordering::SeqCst) + 1;
                        rx.most.fetch_max(open, Ordering::SeqCst);
                    }
                }
                if counted {
                    rx.open.fetch_sub(1, Ordering::SeqCst);
                }
            });
        }
    });
    (rx, format!("http://{addr}/hook"))
}
