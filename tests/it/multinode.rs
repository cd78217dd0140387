//! Two real `filestore serve` processes on one PostgreSQL database and one
//! S3 bucket (SeaweedFS), with requests alternated between them: every rule
//! of CONTRACT §10 must hold across the nodes exactly as on one node —
//! quotas under concurrent uploads, monthly counts, the request rate window,
//! idempotency keys, expiry and blob deletion (run by both collectors at
//! once), signed URLs, and resumable uploads continued on the other node.
//!
//! Needs `FILESTORE_TEST_DATABASE_URL` (see `common::pg`; `contrib/pg-test.sh
//! multinode` starts a throwaway PostgreSQL) and an S3 store (`weed` on PATH,
//! see `common::s3`); each test skips, saying why, without them.

use crate::common::{pg, s3, sha256_hex};
use filestore::config::StorageConfig;
use filestore::domain::tus::encode_metadata;
use futures_util::future::join_all;
use reqwest::multipart::{Form, Part};
use reqwest::Response;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

const A: usize = 0;
const B: usize = 1;
/// The node that did not serve a request to `n`.
const fn other(n: usize) -> usize {
    1 - n
}
const TUS: (&str, &str) = ("tus-resumable", "1.0.0");
const OCTETS: (&str, &str) = ("content-type", "application/offset+octet-stream");

/// A plan `t` (every test's default plan) with room for everything but the
/// rule under test, which each test tightens.
const ROOMY: &str = "[plans.t]
max_file_size = 50_000_000
storage = 1_000_000_000
uploads = 100_000
rate_limit = 100_000
rate_window = \"1m\"
";

/// One `serve` child process; killed when dropped.
struct Node {
    name: &'static str,
    base: String,
    child: Child,
    /// Every line the node wrote to stderr (JSON log lines after start-up).
    log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a node printed before it was ready.
struct Started {
    node: Node,
    /// `(account id, sk_ key)` when this node bootstrapped the database.
    bootstrap: Option<(String, String)>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `filestore serve --config` on a free port and returns once it
/// prints its "serving" line (after migrations and its start-up pass).
fn spawn_node(name: &'static str, config: &Path, data: &Path) -> Started {
    for attempt in 0.. {
        let port = free_port();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_filestore"));
        cmd.arg("serve")
            .arg("--config")
            .arg(config)
            .arg("--data-dir")
            .arg(data)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(["--log-format", "json"])
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // Only the config file speaks (the CI job sets FILESTORE_* for others).
        for (k, _) in std::env::vars() {
            if k.starts_with("FILESTORE_") || k.starts_with("AWS_") {
                cmd.env_remove(k);
            }
        }
        let mut child = cmd.spawn().expect("spawn filestore serve");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let mut reader = BufReader::new(child.stderr.take().unwrap());
        let lines = log.clone();
        std::thread::spawn(move || {
            let mut bootstrap = (None, None);
            let mut tx = Some(tx);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let line = line.trim_end().to_string();
                if line.contains("first start: created account") {
                    bootstrap.0 = line
                        .split(['(', ')'])
                        .find(|w| w.starts_with("acc_"))
                        .map(str::to_string);
                }
                if let Some(k) = line.split_whitespace().find(|w| w.starts_with("sk_")) {
                    bootstrap.1 = Some(k.to_string());
                }
                let serving = line.starts_with("filestore: serving");
                lines.lock().unwrap().push(line);
                if serving {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(Some(bootstrap.clone()));
                    }
                }
            }
            if let Some(tx) = tx {
                let _ = tx.send(None);
            }
        });
        let node = Node {
            name,
            base: format!("http://127.0.0.1:{port}"),
            child,
            log,
        };
        match rx.recv_timeout(Duration::from_secs(90)) {
            Ok(Some((acc, key))) => {
                return Started {
                    node,
                    bootstrap: acc.zip(key),
                }
            }
            outcome => {
                let text = node.log.lock().unwrap().join("\n");
                drop(node);
                // A port picked free may have been taken by another test.
                if outcome.is_ok() && text.contains("in use") && attempt < 3 {
                    continue;
                }
                panic!("node {name} did not start ({outcome:?}):\n{text}");
            }
        }
    }
    unreachable!()
}

/// Two nodes on one database and one bucket prefix.
struct Cluster {
    // Dropped first: the children are killed before their dirs go.
    nodes: Vec<Node>,
    http: reqwest::Client,
    /// The bootstrap account (`default`, plan `t`) and its secret key.
    account: String,
    key: String,
    db: String,
    s3: StorageConfig,
    config: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // The nodes' last words, for the failure's report.
            let mut err = std::io::stderr().lock();
            for n in &self.nodes {
                let log = n.log.lock().unwrap();
                let from = log.len().saturating_sub(40);
                let _ = writeln!(err, "--- node {} ({}) log tail:", n.name, n.base);
                for l in &log[from..] {
                    let _ = writeln!(err, "{l}");
                }
            }
        }
    }
}

fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A `serve` config on database `db` and the store of `s3`: plan `t` (in
/// `plans`) by default, a collector pass every 200 ms.
pub fn config_toml(db: &str, s3: &StorageConfig, plans: &str) -> String {
    let opt = |v: &Option<String>| toml_str(v.as_deref().unwrap_or_default());
    let secret = |v: &Option<filestore::config::Secret>| {
        toml_str(v.as_ref().map(|s| s.expose()).unwrap_or_default())
    };
    format!(
        "[server]
default_plan = \"t\"
reap_interval = \"200ms\"

[database]
url = {db}

[storage]
backend = \"s3\"
bucket = {bucket}
endpoint = {endpoint}
region = {region}
prefix = {prefix}
force_path_style = {path_style}
access_key_id = {access}
secret_access_key = {secret}
inline_max = 0

{plans}",
        db = toml_str(db),
        bucket = opt(&s3.bucket),
        endpoint = opt(&s3.endpoint),
        region = opt(&s3.region),
        prefix = toml_str(&s3.prefix),
        path_style = s3.force_path_style,
        access = secret(&s3.access_key_id),
        secret = secret(&s3.secret_access_key),
    )
}

impl Cluster {
    /// Nodes A and B on a new database and a new S3 prefix, with `plans`
    /// (TOML `[plans.t]`, the default plan). With `together`, both start at
    /// the same moment on the empty database (migrations, bootstrap and
    /// the signing secret race); else A first. None (with the reason on
    /// stderr) without PostgreSQL or S3.
    async fn start(test: &str, plans: &str, together: bool) -> Option<Cluster> {
        if pg::admin_url().is_none() {
            let _ = writeln!(
                std::io::stderr(),
                "skipping multinode::{test}: FILESTORE_TEST_DATABASE_URL unset \
                 (contrib/pg-test.sh multinode runs it)"
            );
            return None;
        }
        // Starting the shared SeaweedFS blocks for a moment.
        let s3 = tokio::task::block_in_place(|| s3::s3_config(&format!("multinode-{test}")))?;
        let dir = tempfile::tempdir().unwrap();
        let db = pg::database_for(dir.path()).await.unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(&config, config_toml(&db, &s3, plans)).unwrap();
        let (da, db_dir) = (dir.path().join("node-a"), dir.path().join("node-b"));
        let started = tokio::task::block_in_place(|| {
            if together {
                std::thread::scope(|s| {
                    let a = s.spawn(|| spawn_node("A", &config, &da));
                    let b = s.spawn(|| spawn_node("B", &config, &db_dir));
                    let join = |h: std::thread::ScopedJoinHandle<'_, Started>| {
                        h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
                    };
                    vec![join(a), join(b)]
                })
            } else {
                let a = spawn_node("A", &config, &da);
                vec![a, spawn_node("B", &config, &db_dir)]
            }
        });
        let boots: Vec<(String, String)> =
            started.iter().filter_map(|s| s.bootstrap.clone()).collect();
        let nodes: Vec<Node> = started.into_iter().map(|s| s.node).collect();
        assert_eq!(
            boots.len(),
            1,
            "exactly one node bootstraps the empty database (prints a key): {boots:?}"
        );
        let (account, key) = boots.into_iter().next().unwrap();
        Some(Cluster {
            nodes,
            http: reqwest::Client::new(),
            account,
            key,
            db,
            s3,
            config,
            _dir: dir,
        })
    }

    fn url(&self, n: usize, path: &str) -> String {
        format!("{}{path}", self.nodes[n].base)
    }

    /// `url` (of any node: a File's url, a signed URL, a tus Location) on node `n`.
    fn at(&self, n: usize, url: &str) -> String {
        for node in &self.nodes {
            if let Some(rest) = url.strip_prefix(&node.base) {
                return format!("{}{rest}", self.nodes[n].base);
            }
        }
        panic!("{url} is on no node of this cluster");
    }

    /// `filestore admin ARGS --json` on this cluster's config: its JSON.
    fn admin(&self, args: &[&str]) -> Value {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_filestore"));
        cmd.arg("admin")
            .args(args)
            .arg("--json")
            .arg("--config")
            .arg(&self.config);
        for (k, _) in std::env::vars() {
            if k.starts_with("FILESTORE_") {
                cmd.env_remove(k);
            }
        }
        let out = cmd.output().expect("run filestore admin");
        assert!(
            out.status.success(),
            "admin {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("admin prints JSON")
    }

    /// A new account on `plan` and a secret key of it, made with `admin`.
    fn account_with_key(&self, name: &str, plan: &str) -> (String, String) {
        let acc = self.admin(&["account", "create", "--name", name, "--plan", plan]);
        assert_eq!(acc["plan"], plan);
        let id = acc["id"].as_str().unwrap().to_string();
        (id, self.new_key(name))
    }

    /// A new secret key of `account` (id or name).
    fn new_key(&self, account: &str) -> String {
        let key = self.admin(&["key", "create", "--account", account, "--kind", "secret"]);
        key["key"].as_str().unwrap().to_string()
    }

    async fn upload(
        &self,
        n: usize,
        key: &str,
        name: &str,
        bytes: Vec<u8>,
        fields: &[(&str, &str)],
        idempotency_key: Option<&str>,
    ) -> Response {
        let mut form = Form::new();
        for (k, v) in fields {
            form = form.text(k.to_string(), v.to_string());
        }
        let form = form.part("file", Part::bytes(bytes).file_name(name.to_string()));
        let mut req = self
            .http
            .post(self.url(n, "/v1/upload"))
            .bearer_auth(key)
            .multipart(form);
        if let Some(k) = idempotency_key {
            req = req.header("idempotency-key", k);
        }
        req.send().await.expect("upload request")
    }

    /// Uploads on node `n`, asserting 201; the File record.
    async fn upload_ok(
        &self,
        n: usize,
        name: &str,
        bytes: Vec<u8>,
        fields: &[(&str, &str)],
    ) -> Value {
        let r = self.upload(n, &self.key, name, bytes, fields, None).await;
        assert_eq!(r.status(), 201, "upload of {name} on node {n}");
        r.json().await.unwrap()
    }

    async fn get_json(&self, n: usize, key: &str, path: &str) -> (u16, Value) {
        let r = self
            .http
            .get(self.url(n, path))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn usage(&self, n: usize, key: &str) -> Value {
        let (status, body) = self.get_json(n, key, "/v1/usage").await;
        assert_eq!(status, 200, "usage on node {n}: {body}");
        body
    }

    /// The ids `GET /v1/files` lists on node `n` (all pages).
    async fn listed(&self, n: usize, key: &str) -> BTreeSet<String> {
        let mut ids = BTreeSet::new();
        let mut path = "/v1/files?limit=100".to_string();
        loop {
            let (status, page) = self.get_json(n, key, &path).await;
            assert_eq!(status, 200, "{page}");
            for f in page["files"].as_array().unwrap() {
                assert!(ids.insert(f["id"].as_str().unwrap().to_string()));
            }
            match page["next_cursor"].as_str() {
                Some(c) => path = format!("/v1/files?limit=100&cursor={c}"),
                None => return ids,
            }
        }
    }

    async fn fetch(&self, url: &str) -> (u16, Vec<u8>) {
        let r = self.http.get(url).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.bytes().await.unwrap().to_vec())
    }

    fn count(&self, sql: &str) -> i64 {
        pg::count(&self.db, sql)
    }

    async fn objects(&self) -> usize {
        s3::object_count(&self.s3).await
    }

    /// Per node, the sums of the `expired` and `deleted` fields of its
    /// collector's "collector pass" log lines.
    fn collector_totals(&self) -> Vec<(u64, u64)> {
        self.nodes
            .iter()
            .map(|n| {
                let log = n.log.lock().unwrap();
                log.iter()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .filter(|v| v["message"] == "collector pass")
                    .fold((0, 0), |(e, d), v| {
                        (
                            e + v["expired"].as_u64().unwrap_or(0),
                            d + v["deleted"].as_u64().unwrap_or(0),
                        )
                    })
            })
            .collect()
    }

    /// Polls `check` every 100 ms for up to `secs` seconds.
    async fn eventually<F, Fut>(&self, secs: u64, what: &str, mut check: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        while tokio::time::Instant::now() < deadline {
            if check().await {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("timed out after {secs}s waiting for: {what}");
    }

    // ---- tus

    /// `POST /v1/uploads` on node `n`; the upload's URL (on node `n`).
    async fn tus_create(&self, n: usize, length: u64, name: &str) -> String {
        let r = self
            .http
            .post(self.url(n, "/v1/uploads"))
            .bearer_auth(&self.key)
            .header(TUS.0, TUS.1)
            .header("upload-length", length)
            .header("upload-metadata", encode_metadata(&[("filename", name)]))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201, "{:?}", r.text().await);
        let location = r.headers()["location"].to_str().unwrap().to_string();
        assert!(
            location.starts_with(&self.url(n, "/v1/uploads/u_")),
            "{location}"
        );
        location
    }

    /// `PATCH` of `body` at `offset` to the upload `url`, sent to node `n`.
    async fn tus_patch(&self, n: usize, url: &str, offset: u64, body: Vec<u8>) -> Response {
        self.http
            .patch(self.at(n, url))
            .bearer_auth(&self.key)
            .header(TUS.0, TUS.1)
            .header(OCTETS.0, OCTETS.1)
            .header("upload-offset", offset)
            .body(body)
            .send()
            .await
            .unwrap()
    }

    /// `Upload-Offset` of `HEAD` on node `n` (None on 404).
    async fn tus_offset(&self, n: usize, url: &str) -> Option<u64> {
        let r = self
            .http
            .head(self.at(n, url))
            .bearer_auth(&self.key)
            .header(TUS.0, TUS.1)
            .send()
            .await
            .unwrap();
        if r.status() == 404 {
            return None;
        }
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["cache-control"], "no-store");
        Some(
            r.headers()["upload-offset"]
                .to_str()
                .unwrap()
                .parse()
                .unwrap(),
        )
    }

    /// The S3 store keeps no multipart upload open under this test's prefix.
    async fn no_multipart_left(&self) {
        for _ in 0..50 {
            if s3::pending_uploads(&self.s3).await.is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "multipart uploads left open: {:?}",
            s3::pending_uploads(&self.s3).await
        );
    }
}

fn header(r: &Response, name: &str) -> String {
    r.headers()
        .get(name)
        .unwrap_or_else(|| panic!("no {name} header ({})", r.status()))
        .to_str()
        .unwrap()
        .to_string()
}

fn header_num(r: &Response, name: &str) -> i64 {
    header(r, name).parse().unwrap()
}

async fn error_code(r: Response) -> (u16, String) {
    let status = r.status().as_u16();
    let body: Value = r.json().await.expect("error body is JSON");
    (
        status,
        body["error"]["code"].as_str().unwrap_or("").to_string(),
    )
}

/// `len` bytes that differ with `seed`.
fn data(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(31) ^ (i >> 8) ^ usize::from(seed).wrapping_mul(97)) as u8)
        .collect()
}

fn millis(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .unwrap()
        .timestamp_millis()
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

// ------------------------------------------------------------------ quotas

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_quota_race_across_nodes_admits_exactly_what_fits() {
    let plans = format!(
        "{ROOMY}\n[plans.small]\nmax_file_size = 5000\nstorage = 10_000\nuploads = 1000\n\
         rate_limit = 100_000\nrate_window = \"1m\"\n"
    );
    let Some(c) = Cluster::start("quota", &plans, false).await else {
        return;
    };
    let (_acc, key) = c.account_with_key("quota", "small");
    // 30 uploads of 1000 bytes at once, half to each node, with room for 10.
    let outcomes = join_all((0..30).map(|i| {
        let (c, key) = (&c, &key);
        async move {
            let r = c
                .upload(
                    i % 2,
                    key,
                    &format!("q{i}.bin"),
                    data(1000, i as u8),
                    &[],
                    None,
                )
                .await;
            match r.status().as_u16() {
                201 => {
                    let rec: Value = r.json().await.unwrap();
                    Ok((i, rec["id"].as_str().unwrap().to_string()))
                }
                _ => Err(error_code(r).await),
            }
        }
    }))
    .await;
    let mut created = BTreeMap::new();
    let mut refused = Vec::new();
    for o in outcomes {
        match o {
            Ok((i, id)) => {
                created.insert(id, i);
            }
            Err(e) => refused.push(e),
        }
    }
    let per_node = |n: usize| created.values().filter(|i| *i % 2 == n).count();
    let _ = writeln!(
        std::io::stderr(),
        "quota race: {} on A, {} on B",
        per_node(A),
        per_node(B)
    );
    assert_eq!(created.len(), 10, "exactly the 10 that fit: {refused:?}");
    assert!(
        refused
            .iter()
            .all(|e| *e == (413, "storage_limit_exceeded".into())),
        "{refused:?}"
    );
    // Both nodes list exactly those files and count their bytes.
    let ids: BTreeSet<String> = created.keys().cloned().collect();
    for n in [A, B] {
        assert_eq!(c.listed(n, &key).await, ids, "files listed on node {n}");
        let u = c.usage(n, &key).await;
        assert_eq!(
            (&u["storage_bytes"], &u["upload_count"]),
            (&10_000.into(), &10.into())
        );
    }
    // Each file is whole, served by the node that did not take it.
    for (id, i) in &created {
        let (status, rec) = c
            .get_json(other(i % 2), &key, &format!("/v1/files/{id}"))
            .await;
        assert_eq!(status, 200);
        let (status, bytes) = c
            .fetch(&c.at(other(i % 2), rec["url"].as_str().unwrap()))
            .await;
        assert_eq!((status, bytes), (200, data(1000, *i as u8)));
    }
    // Full on both nodes; the refused uploads leave no object behind.
    for n in [A, B] {
        let r = c.upload(n, &key, "more.bin", vec![1], &[], None).await;
        assert_eq!(error_code(r).await, (413, "storage_limit_exceeded".into()));
    }
    c.eventually(15, "only the 10 files' objects left in S3", || async {
        c.objects().await == 10 && c.count("SELECT COUNT(*) FROM blob_deletions") == 0
    })
    .await;
    // Room freed on one node is room on the other.
    let (id, _) = created.iter().next().unwrap();
    let r = c
        .http
        .delete(c.url(B, &format!("/v1/files/{id}")))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(c.usage(A, &key).await["storage_bytes"], 9000);
    let r = c
        .upload(A, &key, "again.bin", data(1000, 99), &[], None)
        .await;
    assert_eq!(r.status(), 201);
    let r = c.upload(B, &key, "over.bin", vec![1], &[], None).await;
    assert_eq!(error_code(r).await, (413, "storage_limit_exceeded".into()));
    assert_eq!(c.count("SELECT COUNT(*) FROM files"), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn monthly_upload_count_is_shared_across_nodes() {
    let plans = ROOMY.replace("uploads = 100_000", "uploads = 5");
    let Some(c) = Cluster::start("monthly", &plans, false).await else {
        return;
    };
    // 12 uploads at once, 6 to each node, against 5 a month.
    let statuses = join_all((0..12).map(|i| {
        let c = &c;
        async move {
            let r = c
                .upload(
                    i % 2,
                    &c.key,
                    &format!("m{i}"),
                    data(100, i as u8),
                    &[],
                    None,
                )
                .await;
            let status = r.status().as_u16();
            let reset = r
                .headers()
                .get("x-ratelimit-reset")
                .map(|v| v.to_str().unwrap().to_string());
            let code = if status == 201 {
                String::new()
            } else {
                error_code(r).await.1
            };
            (status, code, reset)
        }
    }))
    .await;
    let ok = statuses.iter().filter(|s| s.0 == 201).count();
    assert_eq!(ok, 5, "exactly the month's 5: {statuses:?}");
    let next = filestore::clock::period_of(chrono::Utc::now())
        .next_start
        .timestamp();
    for (status, code, reset) in statuses.iter().filter(|s| s.0 != 201) {
        assert_eq!((*status, code.as_str()), (429, "rate_limit_exceeded"));
        assert_eq!(
            reset.as_deref(),
            Some(next.to_string().as_str()),
            "reset at the next month"
        );
    }
    for n in [A, B] {
        let r = c.upload(n, &c.key, "late", vec![1], &[], None).await;
        assert_eq!(header_num(&r, "x-ratelimit-reset"), next);
        assert!(header_num(&r, "retry-after") >= 1);
        assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
        let u = c.usage(n, &c.key).await;
        assert_eq!(
            (&u["upload_count"], &u["storage_bytes"]),
            (&5.into(), &500.into())
        );
        assert_eq!(c.listed(n, &c.key).await.len(), 5);
    }
    // Deleting a file on one node gives no upload back on the other.
    let id = c.listed(A, &c.key).await.into_iter().next().unwrap();
    let r = c
        .http
        .delete(c.url(A, &format!("/v1/files/{id}")))
        .bearer_auth(&c.key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = c.upload(B, &c.key, "still", vec![1], &[], None).await;
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    assert_eq!(c.usage(B, &c.key).await["upload_count"], 5);
}

// ------------------------------------------------------------------ rate limit

/// Asserts the rate headers of a response of a key's window.
fn rate_headers(r: &Response) -> (i64, i64, i64) {
    (
        header_num(r, "x-ratelimit-limit"),
        header_num(r, "x-ratelimit-remaining"),
        header_num(r, "x-ratelimit-reset"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_window_is_shared_across_nodes() {
    let plans = ROOMY
        .replace("rate_limit = 100_000", "rate_limit = 6")
        .replace("rate_window = \"1m\"", "rate_window = \"1h\"");
    let Some(c) = Cluster::start("rate", &plans, false).await else {
        return;
    };
    // A, B, A, B, A, B: the key's 6 requests, counted down in one window.
    let mut resets = BTreeSet::new();
    for i in 0..6 {
        let r = c
            .http
            .get(c.url(i % 2, "/v1/usage"))
            .bearer_auth(&c.key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "request {i} on node {}", i % 2);
        let (limit, remaining, reset) = rate_headers(&r);
        assert_eq!(
            (limit, remaining),
            (6, 5 - i as i64),
            "request {i} on node {}",
            i % 2
        );
        resets.insert(reset);
    }
    assert_eq!(resets.len(), 1, "one window, one reset time: {resets:?}");
    let reset = *resets.iter().next().unwrap();
    let now = chrono::Utc::now().timestamp();
    assert!(
        reset > now + 3500 && reset <= now + 3601,
        "{reset} vs now {now}"
    );
    // The 7th is refused on either node, with the same window's headers;
    // uploads and signed URLs draw on the same budget.
    for n in [A, B] {
        let r = c
            .http
            .get(c.url(n, "/v1/usage"))
            .bearer_auth(&c.key)
            .send()
            .await
            .unwrap();
        assert_eq!(rate_headers(&r), (6, 0, reset), "node {n}");
        let retry = header_num(&r, "retry-after");
        assert!(retry >= 1 && retry <= reset - now + 1, "{retry}");
        assert_eq!(
            error_code(r).await,
            (429, "rate_limit_exceeded".into()),
            "node {n}"
        );
        let r = c.upload(n, &c.key, "x", vec![1], &[], None).await;
        assert_eq!(rate_headers(&r), (6, 0, reset), "node {n}");
        assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    }
    // New keys, each opening its window with 20 requests at once, 10 to
    // each node: exactly 6 pass, each seeing a different remaining count,
    // all in one window.
    for round in 0..4 {
        let key = c.new_key("default");
        let answers = join_all((0..20).map(|i| {
            let (c, key) = (&c, &key);
            async move {
                let r = c
                    .http
                    .get(c.url(i % 2, "/v1/usage"))
                    .bearer_auth(key)
                    .send()
                    .await
                    .unwrap();
                (r.status().as_u16(), rate_headers(&r))
            }
        }))
        .await;
        let passed: Vec<i64> = answers
            .iter()
            .filter(|a| a.0 == 200)
            .map(|a| a.1 .1)
            .collect();
        assert_eq!(
            passed.len(),
            6,
            "round {round}: exactly the window's 6 across both nodes: {answers:?}"
        );
        assert_eq!(
            passed.iter().copied().collect::<BTreeSet<_>>(),
            (0..6).collect::<BTreeSet<_>>(),
            "round {round}: each remaining count handed out once: {answers:?}"
        );
        assert!(
            answers.iter().all(|a| a.0 == 200 || a.0 == 429),
            "{answers:?}"
        );
        let resets: BTreeSet<i64> = answers.iter().map(|a| a.1 .2).collect();
        assert_eq!(resets.len(), 1, "round {round}: one window: {answers:?}");
    }
}

// ------------------------------------------------------------------ idempotency

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_keys_hold_across_nodes() {
    let Some(c) = Cluster::start("idempotency", ROOMY, false).await else {
        return;
    };
    let body = data(2000, 1);
    // On A, then the retry on B: the same file, stored once.
    let r = c
        .upload(A, &c.key, "once.bin", body.clone(), &[], Some("retry-1"))
        .await;
    assert_eq!(r.status(), 201);
    let first: Value = r.json().await.unwrap();
    let r = c
        .upload(B, &c.key, "once.bin", body.clone(), &[], Some("retry-1"))
        .await;
    assert_eq!(r.status(), 201);
    assert_eq!(
        header(&r, "location"),
        format!("/v1/files/{}", first["id"].as_str().unwrap())
    );
    let mut again: Value = r.json().await.unwrap();
    again["url"] = c.at(A, again["url"].as_str().unwrap()).into();
    assert_eq!(again, first, "B answers A's file (its url on B)");
    // A key names its first file, even with other bytes, on either node.
    let r = c
        .upload(B, &c.key, "other.bin", data(10, 2), &[], Some("retry-1"))
        .await;
    assert_eq!(r.status(), 201);
    assert_eq!(r.json::<Value>().await.unwrap()["id"], first["id"]);
    // The same key on both nodes at the same moment, five times over.
    let mut ids = BTreeSet::from([first["id"].as_str().unwrap().to_string()]);
    for k in 0..5u8 {
        let key = format!("race-{k}");
        let bytes = data(3000, 10 + k);
        let (ra, rb) = tokio::join!(
            c.upload(A, &c.key, "race.bin", bytes.clone(), &[], Some(&key)),
            c.upload(B, &c.key, "race.bin", bytes.clone(), &[], Some(&key)),
        );
        assert_eq!(
            (ra.status().as_u16(), rb.status().as_u16()),
            (201, 201),
            "{key}"
        );
        let (ra, rb): (Value, Value) = (ra.json().await.unwrap(), rb.json().await.unwrap());
        assert_eq!(ra["id"], rb["id"], "{key}: one file for both nodes");
        assert_eq!(ra["sha256"], sha256_hex(&bytes).as_str());
        ids.insert(ra["id"].as_str().unwrap().to_string());
    }
    // Six files, counted once each, one object each.
    for n in [A, B] {
        assert_eq!(c.listed(n, &c.key).await, ids, "node {n}");
        let u = c.usage(n, &c.key).await;
        assert_eq!(
            (&u["upload_count"], &u["storage_bytes"]),
            (&6.into(), &(2000 + 5 * 3000).into())
        );
    }
    c.eventually(
        15,
        "one object per file (the race's loser removed)",
        || async { c.objects().await == 6 && c.count("SELECT COUNT(*) FROM blob_deletions") == 0 },
    )
    .await;
    assert_eq!(c.count("SELECT COUNT(*) FROM files"), 6);
}

// ------------------------------------------------------------------ expiry

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expiry_and_blob_deletion_run_once_on_both_nodes() {
    let Some(c) = Cluster::start("expiry", ROOMY, false).await else {
        return;
    };
    // 16 files expiring in 2 s and 6 permanent ones, uploaded half on each
    // node, while both nodes' collectors run every 200 ms.
    let records = join_all((0..22).map(|i| {
        let c = &c;
        async move {
            let fields: &[(&str, &str)] = if i < 16 { &[("expires", "2s")] } else { &[] };
            (
                i,
                c.upload_ok(i % 2, &format!("e{i}.bin"), data(500 + i, i as u8), fields)
                    .await,
            )
        }
    }))
    .await;
    let (expiring, permanent): (Vec<_>, Vec<_>) = records.into_iter().partition(|(i, _)| *i < 16);
    let last = expiring
        .iter()
        .map(|(_, r)| millis(r["expires_at"].as_str().unwrap()))
        .max()
        .unwrap();
    for (i, r) in &expiring {
        let id = r["id"].as_str().unwrap();
        let (status, _) = c
            .get_json(other(i % 2), &c.key, &format!("/v1/files/{id}"))
            .await;
        if now_ms() + 300 < millis(r["expires_at"].as_str().unwrap()) {
            assert_eq!(status, 200, "{id} before its expiry, on the other node");
        }
    }
    assert_eq!(c.objects().await, 22);
    // Past the expiry: 404 on both nodes at once (reaped or not yet).
    tokio::time::sleep(Duration::from_millis((last - now_ms() + 100).max(0) as u64)).await;
    for (_, r) in &expiring {
        let id = r["id"].as_str().unwrap();
        for n in [A, B] {
            let (status, _) = c.get_json(n, &c.key, &format!("/v1/files/{id}")).await;
            assert_eq!(status, 404, "{id} expired, on node {n}");
            let (status, _) = c.fetch(&c.at(n, r["url"].as_str().unwrap())).await;
            assert_eq!(status, 404, "{id}'s CDN URL, on node {n}");
        }
    }
    let kept: BTreeSet<String> = permanent
        .iter()
        .map(|(_, r)| r["id"].as_str().unwrap().to_string())
        .collect();
    let kept_bytes: u64 = permanent
        .iter()
        .map(|(_, r)| r["size"].as_u64().unwrap())
        .sum();
    c.eventually(
        20,
        "expired files reaped: rows, queue and objects",
        || async {
            c.count("SELECT COUNT(*) FROM files") == 6
                && c.count("SELECT COUNT(*) FROM blob_deletions") == 0
                && c.objects().await == 6
        },
    )
    .await;
    for n in [A, B] {
        assert_eq!(
            c.listed(n, &c.key).await,
            kept,
            "node {n} lists the permanent files only"
        );
        assert_eq!(c.usage(n, &c.key).await["storage_bytes"], kept_bytes);
    }
    // Each expired file was reaped by one node, and its blob deleted once.
    c.eventually(5, "collector log lines of the 16 files", || async {
        c.collector_totals().iter().map(|t| t.1).sum::<u64>() >= 16
    })
    .await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let totals = c.collector_totals();
    let _ = writeln!(
        std::io::stderr(),
        "collector (expired, deleted) per node: {totals:?}"
    );
    let sum = totals.iter().fold((0, 0), |s, t| (s.0 + t.0, s.1 + t.1));
    assert_eq!(
        sum,
        (16, 16),
        "each file expired once, each blob deleted once: {totals:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_on_both_nodes_remove_each_blob_once() {
    let Some(c) = Cluster::start("deletes", ROOMY, false).await else {
        return;
    };
    let records = join_all((0..40).map(|i| {
        let c = &c;
        async move {
            c.upload_ok(i % 2, &format!("d{i}.bin"), data(700, i as u8), &[])
                .await
        }
    }))
    .await;
    let ids: Vec<String> = records
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(c.objects().await, 40);
    // Deleted in 4 streams, alternating nodes, while both collectors run
    // every 200 ms: each file gone everywhere, each object removed.
    let streams = join_all((0..4).map(|s| {
        let (c, ids) = (&c, &ids);
        async move {
            let mut statuses = Vec::new();
            for (i, id) in ids.iter().enumerate().filter(|(i, _)| i % 4 == s) {
                let r = c
                    .http
                    .delete(c.url(i % 2, &format!("/v1/files/{id}")))
                    .bearer_auth(&c.key)
                    .send()
                    .await
                    .unwrap();
                statuses.push(r.status().as_u16());
            }
            statuses
        }
    }))
    .await;
    assert!(streams.iter().flatten().all(|s| *s == 200), "{streams:?}");
    for (i, id) in ids.iter().enumerate().take(6) {
        let r = c
            .http
            .delete(c.url(other(i % 2), &format!("/v1/files/{id}")))
            .bearer_auth(&c.key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "{id} deleted on the other node already");
        let (status, _) = c
            .get_json(other(i % 2), &c.key, &format!("/v1/files/{id}"))
            .await;
        assert_eq!(status, 404);
    }
    c.eventually(15, "deleted files' objects removed", || async {
        c.objects().await == 0 && c.count("SELECT COUNT(*) FROM blob_deletions") == 0
    })
    .await;
    for n in [A, B] {
        assert!(c.listed(n, &c.key).await.is_empty());
        let u = c.usage(n, &c.key).await;
        assert_eq!(
            (&u["storage_bytes"], &u["upload_count"]),
            (&0.into(), &40.into())
        );
    }
    assert_eq!(c.count("SELECT COUNT(*) FROM files"), 0);
    // Each DELETE removed its object itself: no collector, on either node,
    // deleted one of them a second time.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let totals = c.collector_totals();
    assert!(
        totals.iter().all(|t| *t == (0, 0)),
        "blobs of DELETEd files deleted again by a collector (expired, deleted per node): {totals:?}"
    );
}

// ------------------------------------------------------------------ signed URLs

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_urls_are_valid_on_every_node() {
    let Some(c) = Cluster::start("signed", ROOMY, false).await else {
        return;
    };
    let body = data(4096, 7);
    let rec = c
        .upload_ok(A, "secret.bin", body.clone(), &[("private", "true")])
        .await;
    assert_eq!(rec["url"], Value::Null);
    let id = rec["id"].as_str().unwrap();
    let sign = |n: usize, expires_in: u64| {
        let c = &c;
        async move {
            let r = c
                .http
                .post(c.url(n, &format!("/v1/files/{id}/signed-url")))
                .bearer_auth(&c.key)
                .json(&serde_json::json!({ "expires_in": expires_in }))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            let v: Value = r.json().await.unwrap();
            v["url"].as_str().unwrap().to_string()
        }
    };
    // Made on one node, served by both.
    for made_on in [A, B] {
        let url = sign(made_on, 3600).await;
        assert!(
            url.starts_with(&c.url(made_on, &format!("/live/{}/{id}/", c.account))),
            "{url}"
        );
        for n in [A, B] {
            let (status, bytes) = c.fetch(&c.at(n, &url)).await;
            assert_eq!(status, 200, "signed on node {made_on}, served by node {n}");
            assert_eq!(bytes, body);
        }
    }
    // Tampered or unsigned: refused by both.
    let url = sign(A, 3600).await;
    let (path, query) = url.split_once('?').unwrap();
    let params: BTreeMap<&str, &str> = query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .collect();
    let (expires, signature) = (params["expires"], params["signature"]);
    let flipped: String = {
        let mut s = signature.to_string();
        let last = if s.ends_with('0') { "1" } else { "0" };
        s.replace_range(s.len() - 1.., last);
        s
    };
    let later: i64 = expires.parse::<i64>().unwrap() + 60;
    for n in [A, B] {
        for bad in [
            format!("{path}?expires={expires}&signature={flipped}"),
            format!("{path}?expires={later}&signature={signature}"),
            path.to_string(),
        ] {
            let (status, _) = c.fetch(&c.at(n, &bad)).await;
            assert_eq!(status, 403, "{bad} on node {n}");
        }
    }
    // Expired: refused by both (made on B, 1 s).
    let short = sign(B, 1).await;
    let (status, _) = c.fetch(&c.at(A, &short)).await;
    assert_eq!(status, 200, "valid before it expires");
    let expires: i64 = short
        .split("expires=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(
        ((expires + 1) * 1000 - now_ms()).max(0) as u64 + 100,
    ))
    .await;
    for n in [A, B] {
        let (status, _) = c.fetch(&c.at(n, &short)).await;
        assert_eq!(status, 403, "expired signed URL on node {n}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_starting_together_on_an_empty_database_both_serve() {
    // Both nodes start at the same moment on an empty database (migrations,
    // the bootstrap account and the signing secret race), on a fresh
    // database each round: both serve, one of them printed the one key,
    // and a URL signed on either is good on the other.
    for round in 0..6 {
        let Some(c) = Cluster::start(&format!("together-{round}"), ROOMY, true).await else {
            return;
        };
        assert_eq!(c.count("SELECT COUNT(*) FROM accounts"), 1, "round {round}");
        let body = data(100, round);
        let rec = c
            .upload_ok(B, "p.bin", body.clone(), &[("private", "true")])
            .await;
        let id = rec["id"].as_str().unwrap();
        for n in [A, B] {
            let r = c
                .http
                .post(c.url(n, &format!("/v1/files/{id}/signed-url")))
                .bearer_auth(&c.key)
                .json(&serde_json::json!({ "expires_in": 60 }))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            let url = r.json::<Value>().await.unwrap()["url"]
                .as_str()
                .unwrap()
                .to_string();
            let (status, got) = c.fetch(&c.at(other(n), &url)).await;
            assert_eq!(
                (status, got),
                (200, body.clone()),
                "round {round}: signed on node {n}"
            );
        }
    }
}

// ------------------------------------------------------------------ tus

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumable_upload_continues_on_the_other_node() {
    let Some(c) = Cluster::start("tus", ROOMY, false).await else {
        return;
    };
    // Past one 8 MiB S3 part: node B writes a part and leaves a tail that
    // node A carries on from.
    let bytes = data(9 * 1024 * 1024 + 12_345, 3);
    let len = bytes.len() as u64;
    let url = c.tus_create(A, len, "moved.bin").await;
    let cut1 = 8 * 1024 * 1024 + 100;
    let cut2 = cut1 + 700_000;
    let r = c.tus_patch(B, &url, 0, bytes[..cut1].to_vec()).await;
    assert_eq!(r.status(), 204, "{:?}", r.text().await);
    assert_eq!(header_num(&r, "upload-offset"), cut1 as i64);
    assert_eq!(c.tus_offset(A, &url).await, Some(cut1 as u64));
    let r = c
        .tus_patch(A, &url, cut1 as u64, bytes[cut1..cut2].to_vec())
        .await;
    assert_eq!(r.status(), 204);
    assert!(r.headers().get("x-file-id").is_none());
    assert_eq!(c.tus_offset(B, &url).await, Some(cut2 as u64));
    // A stale offset is refused on either node.
    let r = c.tus_patch(B, &url, cut1 as u64, vec![0; 10]).await;
    assert_eq!(r.status(), 409);
    let r = c
        .tus_patch(A, &url, cut2 as u64, bytes[cut2..].to_vec())
        .await;
    assert_eq!(r.status(), 204);
    let file_id = header(&r, "x-file-id");
    // The file, readable on B, with its SHA-256.
    let path = url.strip_prefix(&c.nodes[A].base).unwrap();
    let (status, st) = c.get_json(B, &c.key, path).await;
    assert_eq!(status, 200);
    assert_eq!((&st["offset"], &st["length"]), (&len.into(), &len.into()));
    assert_eq!(st["file"]["id"], file_id.as_str());
    let (status, rec) = c.get_json(B, &c.key, &format!("/v1/files/{file_id}")).await;
    assert_eq!(status, 200);
    assert_eq!(rec["sha256"], sha256_hex(&bytes).as_str());
    assert_eq!(rec["size"], len);
    let (status, got) = c.fetch(&c.at(B, rec["url"].as_str().unwrap())).await;
    assert_eq!(status, 200);
    assert!(
        got == bytes,
        "the bytes read on B are the bytes sent to A and B"
    );
    let u = c.usage(B, &c.key).await;
    assert_eq!(
        (&u["storage_bytes"], &u["upload_count"]),
        (&len.into(), &1.into())
    );
    c.no_multipart_left().await;
    assert_eq!(c.objects().await, 1);

    // Terminated on the other node: gone everywhere, its room given back.
    let url = c.tus_create(B, 1000, "dropped.bin").await;
    assert_eq!(c.tus_patch(A, &url, 0, vec![5; 400]).await.status(), 204);
    let r = c
        .http
        .delete(c.at(A, &url))
        .bearer_auth(&c.key)
        .header(TUS.0, TUS.1)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    for n in [A, B] {
        assert_eq!(c.tus_offset(n, &url).await, None, "terminated, on node {n}");
    }
    assert_eq!(c.count("SELECT COUNT(*) FROM files"), 1);
    c.no_multipart_left().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_patches_on_two_nodes_one_wins_and_the_data_is_intact() {
    let Some(c) = Cluster::start("tus-race", ROOMY, false).await else {
        return;
    };
    // A chunk kept in the database (under one S3 part), then one that
    // writes a part; each PATCH pair carries different bytes, so a loser
    // that wrote anyway would show in the file.
    for (round, chunk) in [(0u8, 100_000usize), (1, 8 * 1024 * 1024 + 1000)] {
        let rest = data(5000, 40 + round);
        let len = (chunk + rest.len()) as u64;
        let url = c.tus_create(A, len, &format!("race{round}.bin")).await;
        let bodies = [data(chunk, 20 + round), data(chunk, 30 + round)];
        let (ra, rb) = tokio::join!(
            c.tus_patch(A, &url, 0, bodies[A].clone()),
            c.tus_patch(B, &url, 0, bodies[B].clone()),
        );
        let statuses = [ra.status().as_u16(), rb.status().as_u16()];
        let mut sorted = statuses;
        sorted.sort_unstable();
        assert!(
            sorted == [204, 409] || sorted == [204, 423],
            "round {round}: one PATCH wins, the other finds the offset moved or the \
             upload leased: {sorted:?}"
        );
        let winner = if statuses[A] == 204 { A } else { B };
        for n in [A, B] {
            assert_eq!(
                c.tus_offset(n, &url).await,
                Some(chunk as u64),
                "round {round}, node {n}"
            );
        }
        let r = c
            .tus_patch(other(winner), &url, chunk as u64, rest.clone())
            .await;
        assert_eq!(r.status(), 204, "round {round}");
        let file_id = header(&r, "x-file-id");
        let whole: Vec<u8> = bodies[winner].iter().chain(&rest).copied().collect();
        for n in [A, B] {
            let (status, rec) = c.get_json(n, &c.key, &format!("/v1/files/{file_id}")).await;
            assert_eq!(status, 200);
            assert_eq!(
                rec["sha256"],
                sha256_hex(&whole).as_str(),
                "round {round}: the winner's bytes"
            );
            let (status, got) = c.fetch(&c.at(n, rec["url"].as_str().unwrap())).await;
            assert_eq!(status, 200);
            assert!(got == whole, "round {round}: bytes served by node {n}");
        }
    }
    c.no_multipart_left().await;
    let u = c.usage(A, &c.key).await;
    assert_eq!(u["upload_count"], 2);
}
