//! Webhooks (docs/decisions.md, "Webhooks"), black-box: `filestore admin webhook …` as a
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

use crate::common::process::{self, Serve, ServeProcess};
use crate::common::receiver::{s, Receiver};
use crate::common::{pg, upload_form, TestServer};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

mod crashes;
mod delivery;
mod fairness;
mod metrics;
mod retries;
mod s3_door;
mod subscriptions;
mod two_nodes;

const CREATED: &str = "file.created";
const DELETED: &str = "file.deleted";
const EXPIRED: &str = "file.expired";
const UPDATED: &str = "file.updated";

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
        process::admin(&self.data_dir, self.database_url.as_deref(), args)
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
        use base64::Engine;
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
            vec![CREATED, DELETED, EXPIRED, UPDATED]
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
            filestore::testing::domain::tus::encode_metadata(&[("filename", name)]),
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

/// Where `admin` finds a child server's metadata.
fn target_of(node: &ServeProcess) -> Target {
    Target {
        data_dir: node.data.clone(),
        database_url: node.database_url.clone(),
    }
}

/// `serve` on `data` (on its PostgreSQL database when the suite runs
/// there), on `port`, plan `pro` by default.
fn start_node(
    data: &Path,
    database_url: Option<&str>,
    port: u16,
    metrics: Option<u16>,
) -> ServeProcess {
    let mut serve = Serve::new(data)
        .database_url(database_url)
        .port(port)
        .env("FILESTORE_DEFAULT_PLAN", "pro");
    if let Some(m) = metrics {
        serve = serve.metrics(m);
    }
    serve.start()
}

/// A first start of a child `serve` on `data` (on a PostgreSQL database of
/// its own when the suite runs there): the node, its bootstrap key and the
/// bootstrap account's id.
async fn first_node(
    data: &Path,
    port: u16,
    metrics: Option<u16>,
) -> (ServeProcess, String, String) {
    let db = pg::database_for(data).await;
    let node = start_node(data, db.as_deref(), port, metrics);
    let key = node.key();
    let accounts = target_of(&node).admin_ok(&["account", "list", "--json"]);
    let account: Value = serde_json::from_str(accounts.lines().next().unwrap()).unwrap();
    let account = s(&account["id"]).to_string();
    (node, key, account)
}

async fn node_upload(
    http: &reqwest::Client,
    node: &ServeProcess,
    key: &str,
    name: &str,
    len: usize,
) -> Value {
    let form = upload_form(name, bytes_for(name, len), &[]);
    let r = http
        .post(format!("{}/v1/upload", node.base))
        .bearer_auth(key)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "upload of {name}: {:?}", r.text().await);
    r.json().await.unwrap()
}

async fn node_delete(http: &reqwest::Client, node: &ServeProcess, key: &str, id: &str) {
    let r = http
        .delete(format!("{}/v1/files/{id}", node.base))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "DELETE {id}: {:?}", r.text().await);
}
