//! Several real `filestore serve` processes on one PostgreSQL database and
//! one S3 bucket prefix (SeaweedFS): the multinode tests' cluster, its
//! requests by node, and the checks they share. Needs
//! `FILESTORE_TEST_DATABASE_URL` and `weed`; `Cluster::start` says why it
//! skips without them.

use crate::common::process::{filestore, Serve, ServeProcess};
use crate::common::{eventually, pg, s3, upload_form, TestOptions, TestServer};
use filestore::testing::config::StorageConfig;
use filestore::testing::domain::tus::encode_metadata;
use reqwest::Response;
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const A: usize = 0;
pub const B: usize = 1;
/// The node that did not serve a request to `n`.
pub const fn other(n: usize) -> usize {
    1 - n
}
pub const TUS: (&str, &str) = ("tus-resumable", "1.0.0");
pub const OCTETS: (&str, &str) = ("content-type", "application/offset+octet-stream");

/// A plan `t` (every test's default plan) with room for everything but the
/// rule under test, which each test tightens.
pub const ROOMY: &str = "[plans.t]
max_file_size = 50_000_000
storage = 1_000_000_000
uploads = 100_000
rate_limit = 100_000
rate_window = \"1m\"
";

/// Starts node `name` of a cluster: `serve --config` with JSON logs.
fn spawn_node(name: &str, config: &Path, data: &Path) -> ServeProcess {
    Serve::new(data)
        .name(name)
        .config(config)
        .args(&["--log-format", "json"])
        .env("RUST_LOG", "info")
        .start()
}

/// Two nodes on one database and one bucket prefix.
pub struct Cluster {
    // Dropped first: the children are killed before their dirs go.
    pub nodes: Vec<ServeProcess>,
    pub http: reqwest::Client,
    /// The bootstrap account (`default`, plan `t`) and its secret key.
    pub account: String,
    pub key: String,
    pub db: String,
    pub s3: StorageConfig,
    pub config: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // The nodes' last words, for the failure's report.
            let mut err = std::io::stderr().lock();
            for n in &self.nodes {
                let _ = writeln!(err, "--- node {} ({}) log tail:", n.name, n.base);
                let _ = writeln!(err, "{}", n.log_tail(40));
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
    let secret = |v: &Option<filestore::testing::config::Secret>| match v {
        Some(s) => toml_str(s.expose()),
        None => toml_str(""),
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
    pub async fn start(test: &str, plans: &str, together: bool) -> Option<Cluster> {
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
        let nodes = tokio::task::block_in_place(|| {
            if together {
                std::thread::scope(|s| {
                    let a = s.spawn(|| spawn_node("A", &config, &da));
                    let b = s.spawn(|| spawn_node("B", &config, &db_dir));
                    let join = |h: std::thread::ScopedJoinHandle<'_, ServeProcess>| {
                        h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
                    };
                    vec![join(a), join(b)]
                })
            } else {
                let a = spawn_node("A", &config, &da);
                vec![a, spawn_node("B", &config, &db_dir)]
            }
        });
        let boots: Vec<(String, String)> = nodes
            .iter()
            .filter_map(|n| n.account.clone().zip(n.key.clone()))
            .collect();
        assert_eq!(
            boots.len(),
            1,
            "exactly one node bootstraps the empty database (prints a key): {boots:?}"
        );
        let (account, key) = boots.into_iter().next().unwrap();
        let cluster = Cluster {
            nodes,
            http: reqwest::Client::new(),
            account,
            key,
            db,
            s3,
            config,
            _dir: dir,
        };
        // The bootstrap account starts on the built-in plan `owner`; the
        // tests' is on `t`.
        let set = cluster.admin(&["account", "set", &cluster.account, "--plan", "t"]);
        assert_eq!(set["plan"], "t");
        Some(cluster)
    }

    pub fn url(&self, n: usize, path: &str) -> String {
        format!("{}{path}", self.nodes[n].base)
    }

    /// `url` (of any node: a File's url, a signed URL, a tus Location) on node `n`.
    pub fn at(&self, n: usize, url: &str) -> String {
        for node in &self.nodes {
            if let Some(rest) = url.strip_prefix(&node.base) {
                return format!("{}{rest}", self.nodes[n].base);
            }
        }
        panic!("{url} is on no node of this cluster");
    }

    /// `filestore admin ARGS --json` on this cluster's config: its JSON.
    pub fn admin(&self, args: &[&str]) -> Value {
        let mut cmd = filestore();
        cmd.arg("admin")
            .args(args)
            .arg("--json")
            .arg("--config")
            .arg(&self.config);
        let out = cmd.output().expect("run filestore admin");
        assert!(
            out.status.success(),
            "admin {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("admin prints JSON")
    }

    /// A new account on `plan` and a secret key of it, made with `admin`.
    pub fn account_with_key(&self, name: &str, plan: &str) -> (String, String) {
        let acc = self.admin(&["account", "create", "--name", name, "--plan", plan]);
        assert_eq!(acc["plan"], plan);
        let id = acc["id"].as_str().unwrap().to_string();
        (id, self.new_key(name))
    }

    /// A new secret key of `account` (id or name).
    pub fn new_key(&self, account: &str) -> String {
        let key = self.admin(&["key", "create", "--account", account, "--kind", "secret"]);
        key["key"].as_str().unwrap().to_string()
    }

    pub async fn upload(
        &self,
        n: usize,
        key: &str,
        name: &str,
        bytes: Vec<u8>,
        fields: &[(&str, &str)],
        idempotency_key: Option<&str>,
    ) -> Response {
        let form = upload_form(name, bytes, fields);
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
    pub async fn upload_ok(
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

    pub async fn get_json(&self, n: usize, key: &str, path: &str) -> (u16, Value) {
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

    pub async fn usage(&self, n: usize, key: &str) -> Value {
        let (status, body) = self.get_json(n, key, "/v1/usage").await;
        assert_eq!(status, 200, "usage on node {n}: {body}");
        body
    }

    /// The ids `GET /v1/files` lists on node `n` (all pages).
    pub async fn listed(&self, n: usize, key: &str) -> BTreeSet<String> {
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

    pub async fn fetch(&self, url: &str) -> (u16, Vec<u8>) {
        let r = self.http.get(url).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.bytes().await.unwrap().to_vec())
    }

    pub fn count(&self, sql: &str) -> i64 {
        pg::count(&self.db, sql)
    }

    pub async fn objects(&self) -> usize {
        s3::object_count(&self.s3).await
    }

    /// Per node, the sums of the `expired` and `deleted` fields of its
    /// collector's "collector pass" log lines.
    pub fn collector_totals(&self) -> Vec<(u64, u64)> {
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
    pub async fn eventually<F, Fut>(&self, secs: u64, what: &str, check: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        eventually(secs, Duration::from_millis(100), what, check).await;
    }

    // ---- tus

    /// `POST /v1/uploads` on node `n`; the upload's URL (on node `n`).
    pub async fn tus_create(&self, n: usize, length: u64, name: &str) -> String {
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
    pub async fn tus_patch(&self, n: usize, url: &str, offset: u64, body: Vec<u8>) -> Response {
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
    pub async fn tus_offset(&self, n: usize, url: &str) -> Option<u64> {
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
    pub async fn no_multipart_left(&self) {
        s3::no_multipart_left(&self.s3).await;
    }
}

pub fn header(r: &Response, name: &str) -> String {
    r.headers()
        .get(name)
        .unwrap_or_else(|| panic!("no {name} header ({})", r.status()))
        .to_str()
        .unwrap()
        .to_string()
}

pub fn header_num(r: &Response, name: &str) -> i64 {
    header(r, name).parse().unwrap()
}

/// `len` bytes that differ with `seed`.
pub fn data(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(31) ^ (i >> 8) ^ usize::from(seed).wrapping_mul(97)) as u8)
        .collect()
}

pub fn millis(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .unwrap()
        .timestamp_millis()
}

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Another in-process node on `a`'s database (PostgreSQL: on SQLite each
/// node has its own), with `opts` besides.
pub async fn second_node(a: &TestServer, opts: TestOptions) -> TestServer {
    TestServer::start_with(TestOptions {
        database_url: Some(a.database_url().to_string()),
        ..opts
    })
    .await
}
