//! Webhooks (CONTRACT §12), black-box: `filestore admin webhook …` as a
//! child process, the real server (in process, or a child `filestore serve`
//! where it is killed or its metrics read), and a receiver nobody here wrote
//! the verification of: `tests/webhooks/receiver.py`, which checks every
//! request with the `standardwebhooks` package from PyPI and logs one JSON
//! line per request.
//!
//! What is checked: every event type (multipart and tus `file.created`,
//! `file.deleted`, `file.expired`) delivered, signed, with `data` the File
//! record as GET returns it, and the file readable at its url when the
//! receiver hears of it; the `--event` filter, account scoping and a deleted
//! webhook; a receiver down then up (nothing lost, one webhook-id per event,
//! each attempt stamped with its own time); failed attempts retried under
//! the same id and delivered once; per-file order; `kill -9` with events
//! pending; a slow receiver not slowing uploads; the outbox gauge and the
//! delivery counters; health `ok` throughout; two nodes on one PostgreSQL
//! (each event once, never two deliveries of one id at the same time).
//!
//! Skipped, with the reason printed, when `python3` cannot import
//! `standardwebhooks`; FILESTORE_REQUIRE_TOOLS=1 (CI) turns that into a
//! failure.

use crate::common::{pg, sha256_hex, TestServer};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const RECEIVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/webhooks/receiver.py");

const CREATED: &str = "file.created";
const DELETED: &str = "file.deleted";
const EXPIRED: &str = "file.expired";

// ---------------------------------------------------------------------------
// Tools

/// True when the receiver can run; otherwise prints why the test is
/// skipped (or fails under FILESTORE_REQUIRE_TOOLS).
fn tools(test: &str) -> bool {
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

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

// ---------------------------------------------------------------------------
// The receiver

#[derive(Debug, Clone, Default)]
struct RxOptions {
    read_files: bool,
    fail_first: u32,
    /// The status of those failures (500 by default; a 3xx redirects to
    /// /elsewhere on the receiver).
    fail_status: Option<u16>,
    /// Answers 503 until `up()`.
    down: bool,
    delay_ms: u64,
    /// A fixed port (a receiver started again where the last one was).
    port: Option<u16>,
    /// The secret at once (else `set_secret` later).
    secret: Option<String>,
    /// Another receiver's log to append to.
    log: Option<PathBuf>,
}

struct Receiver {
    child: Child,
    dir: tempfile::TempDir,
    log: PathBuf,
    port: u16,
}

impl Receiver {
    fn start(opts: RxOptions) -> Receiver {
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

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    /// Gives the receiver its secret (read again on every request).
    fn set_secret(&self, secret: &str) {
        let tmp = self.dir.path().join("secret.tmp");
        std::fs::write(&tmp, secret).unwrap();
        std::fs::rename(&tmp, self.dir.path().join("secret")).unwrap();
    }

    /// A receiver started `down` answers 2xx from now on.
    fn up(&self) {
        std::fs::write(self.dir.path().join("up"), b"").unwrap();
    }

    /// Every request answered so far, in the order answered.
    fn requests(&self) -> Vec<Value> {
        read_lines(&self.log)
    }

    /// Requests that have arrived (answered or not).
    fn arrivals(&self) -> Vec<Value> {
        read_lines(&self.dir.path().join("arrivals.jsonl"))
    }

    /// Polls the log until `done` holds; the requests then.
    async fn wait(&self, secs: u64, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
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

    /// Waits until every (type, file id) of `events` has been answered 2xx.
    async fn wait_delivered(&self, secs: u64, events: &[(&str, &str)]) -> Vec<Value> {
        let want: BTreeSet<(String, String)> = events
            .iter()
            .map(|(t, id)| (t.to_string(), id.to_string()))
            .collect();
        self.wait(secs, &format!("deliveries of {want:?}"), |reqs| {
            want.is_subset(&delivered(reqs))
        })
        .await
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop();
    }
}

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        // A line being written is skipped until it is whole.
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// One line per request, for failure messages.
fn summary(reqs: &[Value]) -> String {
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

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn is_ok(r: &Value) -> bool {
    r["status"]
        .as_u64()
        .is_some_and(|s| (200..300).contains(&s))
}

/// The (type, file id) of every request answered 2xx.
fn delivered(reqs: &[Value]) -> BTreeSet<(String, String)> {
    reqs.iter()
        .filter(|r| is_ok(r))
        .map(|r| (s(&r["type"]).to_string(), s(&r["data_id"]).to_string()))
        .collect()
}

/// The requests of one event (type, file id), in the order received.
fn of_event<'a>(reqs: &'a [Value], ty: &str, id: &str) -> Vec<&'a Value> {
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
fn the_delivery<'a>(reqs: &'a [Value], ty: &str, id: &str) -> &'a Value {
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
fn one_id_per_event(reqs: &[Value]) {
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
// The admin CLI

/// Where `admin` finds a server's metadata: its data dir and, on
/// PostgreSQL, its database.
#[derive(Debug, Clone)]
struct Target {
    data_dir: PathBuf,
    database_url: Option<String>,
}

impl Target {
    fn of(srv: &TestServer) -> Target {
        Target {
            data_dir: srv.data_dir.clone(),
            database_url: srv.on_postgres().then(|| srv.database_url().to_string()),
        }
    }

    fn admin(&self, args: &[&str]) -> std::process::Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_filestore"));
        cmd.arg("admin")
            .args(args)
            .arg("--data-dir")
            .arg(&self.data_dir)
            .env_remove("FILESTORE_CONFIG")
            .env_remove("FILESTORE_DATA_DIR")
            .env_remove("FILESTORE_DATABASE_URL");
        if let Some(url) = &self.database_url {
            cmd.env("FILESTORE_DATABASE_URL", url);
        }
        cmd.output().expect("filestore admin runs")
    }

    /// `admin …` that must succeed; its stdout.
    #[track_caller]
    fn admin_ok(&self, args: &[&str]) -> String {
        let out = self.admin(args);
        assert!(
            out.status.success(),
            "filestore admin {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// `admin webhook create --json`: (webhook id, secret), the record checked.
    #[track_caller]
    fn create_webhook(&self, account: &str, url: &str, events: &[&str]) -> (String, String) {
        let mut args = vec![
            "webhook",
            "create",
            "--account",
            account,
            "--url",
            url,
            "--json",
        ];
        for e in events {
            args.extend(["--event", e]);
        }
        let out = self.admin_ok(&args);
        let wh: Value = serde_json::from_str(out.trim())
            .unwrap_or_else(|e| panic!("webhook create: not one JSON object: {e}: {out:?}"));
        let id = s(&wh["id"]).to_string();
        assert!(id.starts_with("wh_"), "{wh}");
        assert_eq!(wh["url"], url, "{wh}");
        let want: Vec<&str> = if events.is_empty() {
            vec![CREATED, DELETED, EXPIRED]
        } else {
            events.to_vec()
        };
        let got: BTreeSet<&str> = wh["events"]
            .as_array()
            .unwrap_or_else(|| panic!("events is an array: {wh}"))
            .iter()
            .map(s)
            .collect();
        assert_eq!(got, want.into_iter().collect(), "{wh}");
        let secret = s(&wh["secret"]).to_string();
        let b64 = secret
            .strip_prefix("whsec_")
            .unwrap_or_else(|| panic!("secret is whsec_<base64>: {wh}"));
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap_or_else(|e| panic!("secret is whsec_<base64>: {e}: {wh}"));
        assert!(bytes.len() >= 24, "a secret of {} bytes", bytes.len());
        assert!(s(&wh["account"]).starts_with("acc_"), "{wh}");
        (id, secret)
    }

    /// `admin webhook list [--account A] --json`: the records.
    fn list_webhooks(&self, account: Option<&str>) -> Vec<Value> {
        let mut args = vec!["webhook", "list", "--json"];
        if let Some(a) = account {
            args.extend(["--account", a]);
        }
        let out = self.admin_ok(&args);
        assert!(
            !out.contains("whsec_"),
            "webhook list shows a secret: {out}"
        );
        out.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let v: Value = serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("webhook list: not JSON Lines: {e}: {l:?}"));
                assert!(
                    v.get("secret").is_none(),
                    "webhook list shows a secret: {v}"
                );
                v
            })
            .collect()
    }
}

/// A webhook on the test server's default account for `rx` (its secret given
/// to the receiver); the webhook's id.
fn hook(srv: &TestServer, rx: &Receiver, events: &[&str]) -> String {
    let (id, secret) = Target::of(srv).create_webhook(&srv.account_id, &rx.url(), events);
    rx.set_secret(&secret);
    id
}

// ---------------------------------------------------------------------------
// Requests

fn bytes_for(name: &str, len: usize) -> Vec<u8> {
    let seed = name
        .bytes()
        .fold(7u32, |a, b| a.wrapping_mul(31).wrapping_add(b.into()));
    (0..len)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) ^ seed).to_le_bytes()[1])
        .collect()
}

async fn upload(
    srv: &TestServer,
    key: &str,
    name: &str,
    len: usize,
    fields: &[(&str, &str)],
) -> Value {
    let r = srv.upload_as(key, name, bytes_for(name, len), fields).await;
    assert_eq!(r.status(), 201, "upload of {name}: {:?}", r.text().await);
    r.json().await.unwrap()
}

async fn get_file(srv: &TestServer, key: &str, id: &str) -> Value {
    let (status, body) = srv.get_json(key, &format!("/v1/files/{id}")).await;
    assert_eq!(status, 200, "GET /v1/files/{id}: {body}");
    body
}

async fn delete(srv: &TestServer, key: &str, id: &str) {
    let r = srv.delete_as(key, id).await;
    assert_eq!(r.status(), 200, "DELETE {id}: {:?}", r.text().await);
}

/// A tus upload in one PATCH; the file id (X-File-Id).
async fn tus_upload(srv: &TestServer, name: &str, len: usize) -> String {
    let body = bytes_for(name, len);
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&srv.secret_key)
        .header("tus-resumable", "1.0.0")
        .header("upload-length", len)
        .header(
            "upload-metadata",
            filestore::domain::tus::encode_metadata(&[("filename", name)]),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "tus create: {:?}", r.text().await);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let r = srv
        .http
        .patch(&location)
        .bearer_auth(&srv.secret_key)
        .header("tus-resumable", "1.0.0")
        .header("content-type", "application/offset+octet-stream")
        .header("upload-offset", 0)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204, "tus PATCH: {:?}", r.text().await);
    r.headers()["x-file-id"].to_str().unwrap().to_string()
}

/// GET /v1/health at `base`: 200 and `ok`, every check `ok`.
async fn health_ok(http: &reqwest::Client, base: &str) {
    let r = http.get(format!("{base}/v1/health")).send().await.unwrap();
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    assert_eq!(status, 200, "health: {body}");
    assert_eq!(body["status"], "ok", "health: {body}");
    for (name, check) in body["checks"].as_object().expect("checks") {
        assert_eq!(check["status"], "ok", "health check {name}: {body}");
    }
}

/// RFC 3339 UTC with milliseconds (`2026-01-02T03:04:05.678Z`) as unix ms.
fn event_ms(timestamp: &Value) -> i64 {
    let t = s(timestamp);
    let re = regex::Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$").unwrap();
    assert!(
        re.is_match(t),
        "event timestamp {t:?} is not RFC 3339 UTC with milliseconds"
    );
    chrono::DateTime::parse_from_rfc3339(t)
        .unwrap()
        .timestamp_millis()
}

fn rfc3339_ms(v: &Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(s(v))
        .unwrap_or_else(|e| panic!("{v}: {e}"))
        .timestamp_millis()
}

// ---------------------------------------------------------------------------
// A child `filestore serve` (to kill it, or to read its metrics)

struct Node {
    child: Child,
    port: u16,
    data: PathBuf,
    database_url: Option<String>,
    metrics: Option<u16>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A first start of a child `serve` on `data` (on a PostgreSQL database of
/// its own when the suite runs there): the node, its bootstrap key and the
/// bootstrap account's id.
async fn first_node(data: &Path, port: u16, metrics: Option<u16>) -> (Node, String, String) {
    let db = pg::database_for(data).await;
    let (node, key) = Node::start(data, db.as_deref(), port, metrics);
    let key = key.expect("first start prints a key");
    let accounts = node.target().admin_ok(&["account", "list", "--json"]);
    let account: Value = serde_json::from_str(accounts.lines().next().unwrap()).unwrap();
    let account = s(&account["id"]).to_string();
    (node, key, account)
}

impl Node {
    /// Starts `serve` on `data` (on its PostgreSQL database when the suite
    /// runs there); the bootstrap key when this is the first start.
    fn start(
        data: &Path,
        database_url: Option<&str>,
        port: u16,
        metrics: Option<u16>,
    ) -> (Node, Option<String>) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_filestore"));
        cmd.env_remove("FILESTORE_CONFIG")
            .env_remove("FILESTORE_DATA_DIR")
            .env_remove("FILESTORE_LISTEN")
            .env_remove("FILESTORE_DATABASE_URL")
            .env("FILESTORE_DEFAULT_PLAN", "pro");
        if let Some(url) = database_url {
            cmd.env("FILESTORE_DATABASE_URL", url);
        }
        cmd.args(["serve", "--data-dir"])
            .arg(data)
            .args(["--listen", &format!("127.0.0.1:{port}")]);
        if let Some(m) = metrics {
            cmd.args(["--metrics-listen", &format!("127.0.0.1:{m}")]);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut reader = BufReader::new(child.stderr.take().unwrap());
        let mut key = None;
        let mut seen = Vec::new();
        loop {
            let mut line = String::new();
            assert!(
                reader.read_line(&mut line).unwrap() > 0,
                "serve exited early: {seen:?}"
            );
            if let Some(k) = line.split_whitespace().find(|w| w.starts_with("sk_")) {
                key = Some(k.to_string());
            }
            let serving = line.contains("serving");
            seen.push(line);
            if serving {
                break;
            }
        }
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        (
            Node {
                child,
                port,
                data: data.to_path_buf(),
                database_url: database_url.map(String::from),
                metrics,
            },
            key,
        )
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn target(&self) -> Target {
        Target {
            data_dir: self.data.clone(),
            database_url: self.database_url.clone(),
        }
    }

    fn kill_9(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }

    /// The value of one metric line (`name` or `name{labels}` containing
    /// `label`), if present.
    async fn metric(&self, http: &reqwest::Client, name: &str, label: &str) -> Option<f64> {
        let text = http
            .get(format!("http://127.0.0.1:{}/metrics", self.metrics?))
            .send()
            .await
            .ok()?
            .text()
            .await
            .ok()?;
        metric_value(&text, name, label)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn metric_value(text: &str, name: &str, label: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find(|l| {
            let head = l.split_whitespace().next().unwrap_or("");
            let (n, labels) = head.split_once('{').unwrap_or((head, ""));
            n == name && labels.contains(label)
        })
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

async fn node_upload(
    http: &reqwest::Client,
    node: &Node,
    key: &str,
    name: &str,
    len: usize,
) -> Value {
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(bytes_for(name, len)).file_name(name.to_string()),
    );
    let r = http
        .post(format!("{}/v1/upload", node.base()))
        .bearer_auth(key)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "upload of {name}: {:?}", r.text().await);
    r.json().await.unwrap()
}

async fn node_delete(http: &reqwest::Client, node: &Node, key: &str, id: &str) {
    let r = http
        .delete(format!("{}/v1/files/{id}", node.base()))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "DELETE {id}: {:?}", r.text().await);
}

// ---------------------------------------------------------------------------
// The tests

/// Every event type reaches the receiver, verified by standardwebhooks, with
/// `data` the File record exactly as GET /v1/files/{id} gave it, and the
/// bytes (size, sha256) at `data.url` when file.created arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_is_delivered_signed_with_the_file_record() {
    if !tools("every_event_is_delivered_signed_with_the_file_record") {
        return;
    }
    let started_ms = (now() * 1000.0) as i64;
    let srv = TestServer::start().await;
    let rx = Receiver::start(RxOptions {
        read_files: true,
        ..Default::default()
    });
    hook(&srv, &rx, &[]);
    let key = srv.secret_key.clone();

    // file.created: small (inline) and large (blob) multipart uploads, a
    // private one (no url to read), and a tus upload.
    // Each record as GET gives it, read at once (the expiring one is 404
    // from its expiry on).
    let expiring = upload(&srv, &key, "expiring.txt", 100, &[("expires", "2s")]).await;
    let expiring_record = get_file(&srv, &key, s(&expiring["id"])).await;
    let small = upload(&srv, &key, "small.txt", 5_000, &[("folder", "in/box")]).await;
    let big = upload(&srv, &key, "big.bin", 3_000_000, &[]).await;
    let private = upload(&srv, &key, "private.bin", 1_000, &[("private", "true")]).await;
    let tus_id = tus_upload(&srv, "resumable.bin", 200_000).await;
    let mut records = BTreeMap::new();
    records.insert(s(&expiring["id"]).to_string(), expiring_record);
    for id in [&small["id"], &big["id"], &private["id"]]
        .into_iter()
        .map(|v| s(v).to_string())
        .chain([tus_id.clone()])
    {
        let rec = get_file(&srv, &key, &id).await;
        records.insert(id, rec);
    }
    // file.deleted
    let small_id = s(&small["id"]).to_string();
    let before_delete_ms = (now() * 1000.0) as i64;
    delete(&srv, &key, &small_id).await;
    // file.expired: the collector (every 100 ms here) reaps it.
    let expiring_id = s(&expiring["id"]).to_string();

    let created: Vec<String> = records.keys().cloned().collect();
    let mut want: Vec<(&str, &str)> = created.iter().map(|id| (CREATED, id.as_str())).collect();
    want.push((DELETED, &small_id));
    want.push((EXPIRED, &expiring_id));
    let reqs = rx.wait_delivered(60, &want).await;
    health_ok(&srv.http, &srv.base_url).await;
    // Nothing more turns up.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let reqs_later = rx.requests();
    assert_eq!(
        reqs.len(),
        reqs_later.len(),
        "more requests came:\n{}",
        summary(&reqs_later)
    );
    let reqs = reqs_later;
    one_id_per_event(&reqs);
    let got = delivered(&reqs);
    let want_set: BTreeSet<(String, String)> = want
        .iter()
        .map(|(t, i)| (t.to_string(), i.to_string()))
        .collect();
    assert_eq!(got, want_set, "events delivered:\n{}", summary(&reqs));

    for (ty, id) in &want {
        let r = the_delivery(&reqs, ty, id);
        assert_eq!(r["method"], "POST");
        assert_eq!(r["path"], "/hook");
        assert!(
            s(&r["content_type"]).starts_with("application/json"),
            "content-type {}",
            r["content_type"]
        );
        assert_eq!(r["valid"], true, "{r}");
        assert_eq!(r["data"], records[*id], "{ty}: data is the File record");
        let ts = event_ms(&r["timestamp"]);
        let received_ms = (r["received_at"].as_f64().unwrap() * 1000.0) as i64;
        assert!(
            ts >= started_ms && ts <= received_ms + 5,
            "{ty} of {id}: timestamp {} not between the test start and its receipt",
            r["timestamp"]
        );
        // webhook-timestamp: unix seconds of the attempt.
        let header: i64 = s(&r["webhook_timestamp"]).parse().expect("unix seconds");
        assert!(
            (header - received_ms / 1000).abs() <= 5,
            "webhook-timestamp {header} far from the receipt {received_ms} ms"
        );
        match *ty {
            CREATED => {
                assert!(ts >= rfc3339_ms(&records[*id]["created_at"]) - 1000);
                if *id == s(&private["id"]) {
                    assert!(r["data"]["url"].is_null());
                    assert!(r["read"].is_null());
                } else {
                    let read = &r["read"];
                    assert_eq!(
                        read["ok"], true,
                        "file.created of {id}: the receiver read {read} at {}",
                        r["data"]["url"]
                    );
                    assert_eq!(read["sha256"], records[*id]["sha256"]);
                    assert_eq!(read["size"], records[*id]["size"]);
                }
            }
            DELETED => assert!(ts >= before_delete_ms, "deleted before the DELETE?"),
            EXPIRED => assert!(
                ts >= rfc3339_ms(&records[*id]["expires_at"]),
                "file.expired {} before expires_at {}",
                r["timestamp"],
                records[*id]["expires_at"]
            ),
            _ => unreachable!(),
        }
    }
    // The bytes the receiver read are the bytes uploaded.
    assert_eq!(
        s(&records[s(&big["id"])]["sha256"]),
        sha256_hex(&bytes_for("big.bin", 3_000_000))
    );
    assert_eq!(
        s(&records[&tus_id]["sha256"]),
        sha256_hex(&bytes_for("resumable.bin", 200_000))
    );
}

/// `--event` narrows what is sent; files of another account never reach
/// this account's webhooks (and its own webhook, named by the account's
/// name, gets them); a deleted webhook gets nothing more; list never shows
/// a secret; an unknown event is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_filter_accounts_and_deleted_webhooks() {
    if !tools("event_filter_accounts_and_deleted_webhooks") {
        return;
    }
    let srv = TestServer::start().await;
    let target = Target::of(&srv);
    let (other_acc, other_key) = srv.new_account("other", "free").await;
    let only_deleted = Receiver::start(RxOptions::default());
    let all = Receiver::start(RxOptions::default());
    let gone = Receiver::start(RxOptions::default());
    let other = Receiver::start(RxOptions::default());
    let only_deleted_id = hook(&srv, &only_deleted, &[DELETED]);
    let all_id = hook(&srv, &all, &[]);
    let gone_id = hook(&srv, &gone, &[CREATED, DELETED, EXPIRED]);
    // The account by its name.
    let (other_id, secret) = target.create_webhook("other", &other.url(), &[]);
    other.set_secret(&secret);

    let refused = target.admin(&[
        "webhook",
        "create",
        "--account",
        &srv.account_id,
        "--url",
        &all.url(),
        "--event",
        "file.updated",
        "--json",
    ]);
    assert!(!refused.status.success(), "an unknown event was accepted");
    let refused = target.admin(&[
        "webhook",
        "create",
        "--account",
        &srv.account_id,
        "--url",
        "ftp://x/",
        "--json",
    ]);
    assert!(!refused.status.success(), "an ftp:// url was accepted");

    let listed = target.list_webhooks(None);
    let ids: BTreeSet<&str> = listed.iter().map(|w| s(&w["id"])).collect();
    assert_eq!(
        ids,
        [&only_deleted_id, &all_id, &gone_id, &other_id]
            .into_iter()
            .map(String::as_str)
            .collect(),
        "{listed:?}"
    );
    let of_other = target.list_webhooks(Some(&other_acc));
    assert_eq!(of_other.len(), 1, "{of_other:?}");
    assert_eq!(of_other[0]["id"], other_id.as_str());
    assert_eq!(of_other[0]["account"], other_acc.as_str());
    assert_eq!(of_other[0]["url"], other.url());

    let key = srv.secret_key.clone();
    let f1 = s(&upload(&srv, &key, "f1.txt", 10, &[]).await["id"]).to_string();
    let f2 = s(&upload(&srv, &key, "f2.txt", 20, &[]).await["id"]).to_string();
    delete(&srv, &key, &f1).await;
    let g1 = s(&upload(&srv, &other_key, "g1.txt", 30, &[]).await["id"]).to_string();
    delete(&srv, &other_key, &g1).await;

    let mine = [(CREATED, f1.as_str()), (CREATED, &f2), (DELETED, &f1)];
    all.wait_delivered(60, &mine).await;
    gone.wait_delivered(60, &mine).await;
    only_deleted.wait_delivered(60, &[(DELETED, &f1)]).await;
    other
        .wait_delivered(60, &[(CREATED, g1.as_str()), (DELETED, &g1)])
        .await;

    // Phase 2: `gone` deleted, then more events.
    target.admin_ok(&["webhook", "delete", &gone_id]);
    let ids: BTreeSet<String> = target
        .list_webhooks(None)
        .iter()
        .map(|w| s(&w["id"]).to_string())
        .collect();
    assert!(!ids.contains(&gone_id) && ids.len() == 3, "{ids:?}");
    let f3 = s(&upload(&srv, &key, "f3.txt", 40, &[]).await["id"]).to_string();
    delete(&srv, &key, &f2).await;
    delete(&srv, &key, &f3).await;
    all.wait_delivered(
        60,
        &[(CREATED, f3.as_str()), (DELETED, &f2), (DELETED, &f3)],
    )
    .await;
    only_deleted
        .wait_delivered(60, &[(DELETED, f2.as_str()), (DELETED, &f3)])
        .await;
    // Give a wrongly kept webhook time to show (the sender polls every second).
    tokio::time::sleep(Duration::from_secs(3)).await;

    let expect = |rx: &Receiver, want: &[(&str, &str)]| {
        let reqs = rx.requests();
        one_id_per_event(&reqs);
        let want: BTreeSet<(String, String)> = want
            .iter()
            .map(|(t, i)| (t.to_string(), i.to_string()))
            .collect();
        let got: BTreeSet<(String, String)> = reqs
            .iter()
            .map(|r| (s(&r["type"]).to_string(), s(&r["data_id"]).to_string()))
            .collect();
        assert_eq!(got, want, "requests:\n{}", summary(&reqs));
        for r in &reqs {
            assert!(is_ok(r), "{r}");
        }
    };
    expect(
        &all,
        &[
            (CREATED, &f1),
            (CREATED, &f2),
            (DELETED, &f1),
            (CREATED, &f3),
            (DELETED, &f2),
            (DELETED, &f3),
        ],
    );
    expect(
        &only_deleted,
        &[(DELETED, &f1), (DELETED, &f2), (DELETED, &f3)],
    );
    expect(&gone, &mine);
    expect(&other, &[(CREATED, &g1), (DELETED, &g1)]);
}

/// A receiver answering 503 for a while, then 200: every event arrives, each
/// under one webhook-id on every attempt, the accepted attempt stamped with
/// its own time (Standard Webhooks: the attempt's timestamp, which verifiers
/// hold to 5 minutes); health stays ok meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receiver_down_then_up_loses_nothing_and_keeps_each_webhook_id() {
    if !tools("receiver_down_then_up_loses_nothing_and_keeps_each_webhook_id") {
        return;
    }
    let srv = TestServer::start().await;
    let rx = Receiver::start(RxOptions {
        down: true,
        ..Default::default()
    });
    hook(&srv, &rx, &[]);
    let key = srv.secret_key.clone();
    let mut ids = Vec::new();
    for i in 0..4 {
        let f = upload(&srv, &key, &format!("down-{i}.txt"), 100 + i, &[]).await;
        ids.push(s(&f["id"]).to_string());
    }
    delete(&srv, &key, &ids[0]).await;
    delete(&srv, &key, &ids[1]).await;
    // Each file.created tried three times, in vain (1 s, then 2 s between).
    rx.wait(60, "three failed attempts of each file.created", |reqs| {
        ids.iter().all(|id| of_event(reqs, CREATED, id).len() >= 3)
    })
    .await;
    health_ok(&srv.http, &srv.base_url).await;
    let before_up = rx.requests();
    assert!(
        before_up.iter().all(|r| r["status"] == 503),
        "{}",
        summary(&before_up)
    );
    rx.up();
    let mut want: Vec<(&str, &str)> = ids.iter().map(|id| (CREATED, id.as_str())).collect();
    want.push((DELETED, &ids[0]));
    want.push((DELETED, &ids[1]));
    let reqs = rx.wait_delivered(120, &want).await;
    health_ok(&srv.http, &srv.base_url).await;
    one_id_per_event(&reqs);
    for (ty, id) in &want {
        let d = the_delivery(&reqs, ty, id);
        let attempts = of_event(&reqs, ty, id);
        // The accepted attempt is the last; every earlier one was refused.
        assert!(
            std::ptr::eq(*attempts.last().unwrap(), d),
            "{}",
            summary(&reqs)
        );
        for a in &attempts[..attempts.len() - 1] {
            assert_eq!(a["status"], 503, "{}", summary(&reqs));
        }
        let header: f64 = s(&d["webhook_timestamp"]).parse().unwrap();
        let received = d["received_at"].as_f64().unwrap();
        if *ty == CREATED {
            assert!(attempts.len() >= 4, "{ty} {id}: {}", summary(&reqs));
            // Accepted at least 3 s after the first attempt: stamped anew.
            assert!(
                (header - received).abs() <= 3.0,
                "{ty} of {id}: a retry received at {received:.3} carries \
                 webhook-timestamp {header} (the first attempt's?); Standard \
                 Webhooks stamps each attempt, and verifiers refuse stamps \
                 older than 5 minutes"
            );
        }
    }
}

/// `--fail-first 2`: the same webhook-id three times (500, 500, 200), the
/// waits growing (about 1 s, then 2 s), and never again once accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_attempts_are_retried_under_one_id_and_delivered_once() {
    if !tools("failed_attempts_are_retried_under_one_id_and_delivered_once") {
        return;
    }
    let srv = TestServer::start().await;
    let rx = Receiver::start(RxOptions {
        fail_first: 2,
        ..Default::default()
    });
    hook(&srv, &rx, &[CREATED]);
    let f = upload(&srv, &srv.secret_key.clone(), "retry.txt", 123, &[]).await;
    let id = s(&f["id"]).to_string();
    rx.wait_delivered(60, &[(CREATED, &id)]).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let reqs = rx.requests();
    one_id_per_event(&reqs);
    let attempts = of_event(&reqs, CREATED, &id);
    let statuses: Vec<u64> = attempts
        .iter()
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [500, 500, 200], "{}", summary(&reqs));
    assert_eq!(reqs.len(), 3, "{}", summary(&reqs));
    let at: Vec<f64> = attempts
        .iter()
        .map(|r| r["received_at"].as_f64().unwrap())
        .collect();
    // Lower bounds only: a busy machine makes waits longer, never shorter.
    assert!(
        at[1] - at[0] >= 0.5,
        "first retry after {:.3}s",
        at[1] - at[0]
    );
    assert!(
        at[2] - at[1] >= 1.0,
        "second retry after {:.3}s",
        at[2] - at[1]
    );
    assert_eq!(attempts[2]["data"], f);
}

/// Any answer but 2xx is a failure to retry, a 4xx like 410 too, and a
/// redirect is not followed (the event goes to the webhook's url only).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_answer_but_2xx_is_retried_and_redirects_are_not_followed() {
    if !tools("any_answer_but_2xx_is_retried_and_redirects_are_not_followed") {
        return;
    }
    let srv = TestServer::start().await;
    let receivers: Vec<(u16, Receiver)> = [307u16, 410, 404]
        .into_iter()
        .map(|status| {
            let rx = Receiver::start(RxOptions {
                fail_first: 1,
                fail_status: Some(status),
                ..Default::default()
            });
            (status, rx)
        })
        .collect();
    for (_, rx) in &receivers {
        hook(&srv, rx, &[CREATED]);
    }
    let f = upload(&srv, &srv.secret_key.clone(), "statuses.txt", 77, &[]).await;
    let id = s(&f["id"]).to_string();
    for (_, rx) in &receivers {
        rx.wait_delivered(60, &[(CREATED, &id)]).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    for (status, rx) in &receivers {
        let reqs = rx.requests();
        for r in &reqs {
            assert_eq!(
                (s(&r["method"]), s(&r["path"])),
                ("POST", "/hook"),
                "answered {status}, the receiver then got a request elsewhere:\n{}",
                summary(&reqs)
            );
        }
        one_id_per_event(&reqs);
        let statuses: Vec<u64> = reqs.iter().map(|r| r["status"].as_u64().unwrap()).collect();
        assert_eq!(statuses, [u64::from(*status), 200], "{}", summary(&reqs));
    }
}

/// A receiver that holds the request longer than the delivery timeout
/// (10 s): the sender gives up on that attempt and tries again (same id)
/// before the receiver ever answers; uploads and health carry on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attempt_that_outlasts_the_delivery_timeout_is_retried() {
    if !tools("an_attempt_that_outlasts_the_delivery_timeout_is_retried") {
        return;
    }
    let srv = TestServer::start().await;
    let rx = Receiver::start(RxOptions {
        delay_ms: 25_000,
        ..Default::default()
    });
    hook(&srv, &rx, &[CREATED]);
    let key = srv.secret_key.clone();
    upload(&srv, &key, "hang.txt", 5, &[]).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let arrivals = loop {
        let a = rx.arrivals();
        if a.len() >= 2 {
            break a;
        }
        assert!(
            Instant::now() < deadline,
            "no second attempt within 60 s of a request held 25 s: {a:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(arrivals[0]["webhook_id"], arrivals[1]["webhook_id"]);
    let (first, second) = (
        arrivals[0]["received_at"].as_f64().unwrap(),
        arrivals[1]["received_at"].as_f64().unwrap(),
    );
    assert!(
        second - first >= 9.0,
        "retried {:.3}s after an attempt still unanswered (timeout 10 s)",
        second - first
    );
    assert!(
        second < first + 25.0,
        "the second attempt came only once the first was answered"
    );
    upload(&srv, &key, "meanwhile.txt", 6, &[]).await;
    health_ok(&srv.http, &srv.base_url).await;
}

/// In order per file: a file's file.deleted is not sent before its
/// file.created has been accepted, even when file.created's first attempts
/// fail and the delete was committed long before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_file_order_holds_when_the_first_attempts_fail() {
    if !tools("per_file_order_holds_when_the_first_attempts_fail") {
        return;
    }
    let srv = TestServer::start().await;
    let rx = Receiver::start(RxOptions {
        fail_first: 2,
        ..Default::default()
    });
    hook(&srv, &rx, &[]);
    let key = srv.secret_key.clone();
    let mut ids = Vec::new();
    for i in 0..5 {
        let f = upload(&srv, &key, &format!("order-{i}.txt"), 50 + i, &[]).await;
        let id = s(&f["id"]).to_string();
        delete(&srv, &key, &id).await;
        ids.push(id);
    }
    let want: Vec<(&str, &str)> = ids
        .iter()
        .flat_map(|id| [(CREATED, id.as_str()), (DELETED, id.as_str())])
        .collect();
    let reqs = rx.wait_delivered(120, &want).await;
    one_id_per_event(&reqs);
    for id in &ids {
        let created = the_delivery(&reqs, CREATED, id);
        the_delivery(&reqs, DELETED, id);
        let accepted_at = created["received_at"].as_f64().unwrap();
        for d in of_event(&reqs, DELETED, id) {
            assert!(
                d["received_at"].as_f64().unwrap() > accepted_at,
                "file.deleted of {id} sent before its file.created was accepted:\n{}",
                summary(&reqs)
            );
        }
    }
}

/// `serve` killed with `kill -9` while events wait for a receiver that is
/// down (503, then not even listening): after a restart and the receiver
/// back, every event arrives, under the webhook-id its first attempts had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_with_events_pending_then_restart_delivers_everything() {
    if !tools("kill_9_with_events_pending_then_restart_delivers_everything") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let (mut node, key, account) = first_node(&data, port, None).await;
    let db = node.database_url.clone();
    let target = node.target();
    let mut rx = Receiver::start(RxOptions {
        down: true,
        ..Default::default()
    });
    let (_, secret) = target.create_webhook(&account, &rx.url(), &[]);
    rx.set_secret(&secret);
    let http = reqwest::Client::new();
    let mut ids = Vec::new();
    for i in 0..10 {
        let f = node_upload(&http, &node, &key, &format!("crash-{i}.bin"), 1000 + i).await;
        ids.push(s(&f["id"]).to_string());
    }
    for id in &ids[..3] {
        node_delete(&http, &node, &key, id).await;
    }
    // Tried (and refused) before the crash.
    rx.wait(60, "a failed attempt of each file.created", |reqs| {
        ids.iter().all(|id| !of_event(reqs, CREATED, id).is_empty())
    })
    .await;
    let log = rx.log.clone();
    let rx_port = rx.port;
    let first_ids: BTreeMap<(String, String), String> = rx
        .requests()
        .iter()
        .map(|r| {
            let event = (s(&r["type"]).to_string(), s(&r["data_id"]).to_string());
            (event, s(&r["webhook_id"]).to_string())
        })
        .collect();
    // The receiver gone altogether (connection refused), the server killed.
    rx.stop();
    node.kill_9();
    let (node, _) = Node::start(&data, db.as_deref(), port, None);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rx2 = Receiver::start(RxOptions {
        port: Some(rx_port),
        secret: Some(secret),
        log: Some(log),
        ..Default::default()
    });
    let mut want: Vec<(&str, &str)> = ids.iter().map(|id| (CREATED, id.as_str())).collect();
    want.extend(ids[..3].iter().map(|id| (DELETED, id.as_str())));
    let reqs = rx2.wait_delivered(120, &want).await;
    health_ok(&http, &node.base()).await;
    one_id_per_event(&reqs);
    for (ty, id) in &want {
        let d = the_delivery(&reqs, ty, id);
        if *ty == CREATED {
            assert_eq!(
                s(&d["webhook_id"]),
                first_ids[&(ty.to_string(), id.to_string())],
                "{id}: another webhook-id after the restart"
            );
        }
    }
    drop(node);
}

/// `serve` killed with `kill -9` in the middle of an attempt (the receiver
/// holding the request): after a restart the event is sent again, under
/// the same webhook-id (at least once: the answer was never seen).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_attempt_the_event_is_sent_again_under_its_id() {
    if !tools("kill_9_mid_attempt_the_event_is_sent_again_under_its_id") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let (mut node, key, account) = first_node(&data, port, None).await;
    let db = node.database_url.clone();
    let target = node.target();
    let rx = Receiver::start(RxOptions {
        delay_ms: 3000,
        ..Default::default()
    });
    let (_, secret) = target.create_webhook(&account, &rx.url(), &[CREATED]);
    rx.set_secret(&secret);
    let http = reqwest::Client::new();
    let f = node_upload(&http, &node, &key, "mid-attempt.bin", 321).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while rx.arrivals().is_empty() {
        assert!(Instant::now() < deadline, "no attempt arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    node.kill_9();
    let killed_at = now();
    let (node, _) = Node::start(&data, db.as_deref(), port, None);
    // The claim of a node that is gone may wait out a lease (a minute or so).
    let deadline = Instant::now() + Duration::from_secs(150);
    let arrivals = loop {
        let a = rx.arrivals();
        if a.len() >= 2 {
            break a;
        }
        assert!(
            Instant::now() < deadline,
            "the event was not sent again after the restart: {a:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        arrivals[0]["webhook_id"], arrivals[1]["webhook_id"],
        "another webhook-id after the restart"
    );
    assert!(arrivals[1]["received_at"].as_f64().unwrap() > killed_at);
    let reqs = rx
        .wait(30, "the second attempt answered", |reqs| reqs.len() >= 2)
        .await;
    one_id_per_event(&reqs);
    assert!(reqs.iter().all(|r| r["data"] == f), "{}", summary(&reqs));
    health_ok(&http, &node.base()).await;
}

/// A receiver that takes 3 s to answer: uploads are answered while a
/// delivery hangs, health answers ok, and every event still arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_receiver_does_not_slow_uploads() {
    if !tools("a_slow_receiver_does_not_slow_uploads") {
        return;
    }
    let srv = TestServer::start().await;
    let rx = Receiver::start(RxOptions {
        delay_ms: 3000,
        ..Default::default()
    });
    hook(&srv, &rx, &[CREATED]);
    let key = srv.secret_key.clone();
    let first = upload(&srv, &key, "slow-0.txt", 10, &[]).await;
    let mut ids = vec![s(&first["id"]).to_string()];
    // A delivery has arrived and is being held.
    let deadline = Instant::now() + Duration::from_secs(30);
    while rx.arrivals().is_empty() {
        assert!(Instant::now() < deadline, "no delivery arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for i in 1..6 {
        let f = upload(&srv, &key, &format!("slow-{i}.txt"), 10 + i, &[]).await;
        ids.push(s(&f["id"]).to_string());
    }
    health_ok(&srv.http, &srv.base_url).await;
    let answered_all = now();
    let want: Vec<(&str, &str)> = ids.iter().map(|id| (CREATED, id.as_str())).collect();
    let reqs = rx.wait_delivered(120, &want).await;
    one_id_per_event(&reqs);
    let first_answer = reqs
        .iter()
        .map(|r| r["answered_at"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(
        answered_all < first_answer,
        "the uploads were answered only after the receiver answered a delivery \
         (uploads done at {answered_all:.3}, first delivery answered at {first_answer:.3})"
    );
    for id in &ids {
        the_delivery(&reqs, CREATED, id);
    }
}

/// The outbox gauge counts the events waiting while the receiver is down and
/// falls to 0 once they are delivered; the delivery counters count failures
/// and successes; health stays 200 `ok`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_show_the_outbox_and_health_stays_ok() {
    if !tools("metrics_show_the_outbox_and_health_stays_ok") {
        return;
    }
    const GAUGE: &str = "filestore_webhook_outbox_events";
    const COUNTER: &str = "filestore_webhook_deliveries_total";
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (node, key, account) = first_node(&data, free_port(), Some(free_port())).await;
    let target = node.target();
    let rx = Receiver::start(RxOptions {
        down: true,
        ..Default::default()
    });
    let (_, secret) = target.create_webhook(&account, &rx.url(), &[CREATED]);
    rx.set_secret(&secret);
    let http = reqwest::Client::new();
    let mut ids = Vec::new();
    for i in 0..5 {
        let f = node_upload(&http, &node, &key, &format!("m-{i}.txt"), 10 + i).await;
        ids.push(s(&f["id"]).to_string());
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let pending = node.metric(&http, GAUGE, "").await;
        let failed = node.metric(&http, COUNTER, "result=\"failed\"").await;
        if pending == Some(5.0) && failed.is_some_and(|f| f >= 5.0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "while the receiver is down: {GAUGE} = {pending:?} (want 5), \
             {COUNTER}{{result=\"failed\"}} = {failed:?} (want >= 5)"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    health_ok(&http, &node.base()).await;
    rx.up();
    let want: Vec<(&str, &str)> = ids.iter().map(|id| (CREATED, id.as_str())).collect();
    rx.wait_delivered(120, &want).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pending = node.metric(&http, GAUGE, "").await;
        let ok = node.metric(&http, COUNTER, "result=\"ok\"").await;
        if pending == Some(0.0) && ok == Some(5.0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "after delivery: {GAUGE} = {pending:?} (want 0), \
             {COUNTER}{{result=\"ok\"}} = {ok:?} (want 5)"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    health_ok(&http, &node.base()).await;
}

/// Two nodes on one PostgreSQL database, 40 uploads alternating between
/// them, a receiver failing each first attempt: every event delivered once,
/// each webhook-id's attempts one after another, never two at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_send_each_event_once_never_two_attempts_at_once() {
    if pg::admin_url().is_none() {
        let _ = writeln!(
            std::io::stderr(),
            "skipped two_nodes_send_each_event_once_never_two_attempts_at_once: \
             set FILESTORE_TEST_DATABASE_URL (two nodes need PostgreSQL)"
        );
        return;
    }
    if !tools("two_nodes_send_each_event_once_never_two_attempts_at_once") {
        return;
    }
    let a = TestServer::start().await;
    let b = TestServer::start_with(crate::common::TestOptions {
        database_url: Some(a.database_url().to_string()),
        ..Default::default()
    })
    .await;
    let rx = Receiver::start(RxOptions {
        fail_first: 1,
        delay_ms: 100,
        ..Default::default()
    });
    hook(&a, &rx, &[CREATED]);
    let mut ids = Vec::new();
    for i in 0..40 {
        let node = if i % 2 == 0 { &a } else { &b };
        let f = upload(node, &a.secret_key, &format!("two-{i}.txt"), 10 + i, &[]).await;
        ids.push(s(&f["id"]).to_string());
    }
    let want: Vec<(&str, &str)> = ids.iter().map(|id| (CREATED, id.as_str())).collect();
    rx.wait_delivered(180, &want).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let reqs = rx.requests();
    one_id_per_event(&reqs);
    for id in &ids {
        the_delivery(&reqs, CREATED, id);
        let attempts = of_event(&reqs, CREATED, id);
        assert_eq!(attempts.len(), 2, "{id}: {}", summary(&reqs));
        for pair in attempts.windows(2) {
            let (first, next) = (pair[0], pair[1]);
            assert!(
                next["received_at"].as_f64().unwrap() >= first["answered_at"].as_f64().unwrap(),
                "two attempts of {} at once:\n{}",
                s(&first["webhook_id"]),
                summary(&reqs)
            );
        }
    }
    health_ok(&a.http, &a.base_url).await;
    health_ok(&b.http, &b.base_url).await;
}
