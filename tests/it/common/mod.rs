//! The in-process test server: the real router on `127.0.0.1:0` over a temp
//! data dir, talked to over HTTP. Test bodies take a [`Backend`] so the same
//! body runs on the local blob store and on S3 (see `both_stores!`).

pub mod cluster;
mod helpers;
pub mod meta;
pub mod pg;
pub mod process;
pub mod receiver;
pub mod s3;
pub mod s3door;
pub mod tmpfs;

pub use helpers::{
    error_code, eventually, get_bytes, python_module_missing, read_zip, sha256_hex, upload_form,
};

use filestore::testing::clock::Clock;
use filestore::testing::config::{BackendKind, Config, Env, FileConfig, Overrides, StorageConfig};
use filestore::testing::db::sqlite::Db;
use filestore::testing::domain::ids::KeyKind;
use filestore::testing::service::{admin, App};
use reqwest::multipart::Form;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Which blob store a test server uses.
#[derive(Debug, Clone)]
pub enum Backend {
    /// The default: small files inline in the database, the rest on disk.
    Local,
    /// Every file on disk (`inline_max = 0`).
    LocalBlobs,
    /// Every file in an S3 bucket (`inline_max = 0`).
    S3(Box<StorageConfig>),
}

impl Backend {
    /// An S3 backend with a fresh key prefix, or None (with the reason
    /// printed) when no S3 store is available outside CI.
    pub fn s3(test: &str) -> Option<Backend> {
        s3::s3_config(test).map(|c| Backend::S3(Box::new(c)))
    }
}

/// Runs each named `async fn(Backend)` as three tests: `local::NAME`,
/// `local_blobs::NAME` and `s3::NAME`.
#[macro_export]
macro_rules! both_stores {
    ($($name:ident),* $(,)?) => {
        mod local {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::common::Backend::Local).await
                }
            )*
        }
        mod local_blobs {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::common::Backend::LocalBlobs).await
                }
            )*
        }
        mod s3 {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(backend) = $crate::common::Backend::s3(stringify!($name)) else { return };
                    super::$name(backend).await
                }
            )*
        }
    };
}

#[derive(Debug, Clone, Default)]
pub struct TestOptions {
    /// TOML of `[plans.*]` tables (and anything else of the server config).
    pub plans_toml: Option<String>,
    pub backend: Option<Backend>,
    /// Collector interval (default 100 ms in tests).
    pub reap_interval: Option<Duration>,
    /// An existing data dir (to test restarts); a temp dir otherwise.
    pub data_dir: Option<PathBuf>,
    /// On PostgreSQL: the database to use (another node's), instead of one
    /// of its own.
    pub database_url: Option<String>,
    /// Changes the resolved config (what no config key sets, such as the
    /// `min_upload_rate` window).
    pub configure: Option<fn(&mut Config)>,
    /// Opens the S3 door too, on a port of its own (`--s3-listen
    /// 127.0.0.1:0`): its address is [`TestServer::s3_url`], which is also
    /// the endpoint `GET /v1/s3/credentials` names.
    pub s3: bool,
}

pub struct TestServer {
    pub base_url: String,
    /// The S3 door's `http://127.0.0.1:PORT` (`TestOptions::s3`), else None.
    pub s3_url: Option<String>,
    pub data_dir: PathBuf,
    pub secret_key: String,
    pub account_id: String,
    pub clock: Clock,
    pub app: Arc<App>,
    pub http: reqwest::Client,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    _dir: Option<tempfile::TempDir>,
}

impl TestServer {
    pub async fn start() -> TestServer {
        Self::start_with(TestOptions::default()).await
    }

    pub async fn on(backend: Backend) -> TestServer {
        Self::start_with(TestOptions {
            backend: Some(backend),
            ..Default::default()
        })
        .await
    }

    pub async fn start_with(opts: TestOptions) -> TestServer {
        // AVIF sources are decoded by the binary, in a child process.
        filestore::testing::images::use_program(env!("CARGO_BIN_EXE_filestore").into());
        let (dir, data_dir) = if let Some(d) = opts.data_dir.clone() {
            (None, d)
        } else {
            let d = tempfile::tempdir().expect("temp dir");
            let p = d.path().to_path_buf();
            (Some(d), p)
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().unwrap();
        let mut file: FileConfig =
            toml::from_str(opts.plans_toml.as_deref().unwrap_or("")).expect("test config");
        let interval = opts.reap_interval.unwrap_or(Duration::from_millis(100));
        file.server.reap_interval = Some(interval);
        // The background scrub reads every blob again: off unless a test
        // sets `[storage] scrub_rate` (the binary's default is on).
        let scrub_rate = file.storage.scrub_rate.or(Some(0));
        match &opts.backend {
            Some(Backend::S3(cfg)) => file.storage = (**cfg).clone(),
            Some(Backend::LocalBlobs) => file.storage.inline_max = Some(0),
            _ => {}
        }
        file.storage.scrub_rate = scrub_rate;
        let config = Config::resolve(
            file,
            &Env::empty(),
            &Overrides {
                listen: Some(addr.to_string()),
                data_dir: Some(data_dir.clone()),
                ..Default::default()
            },
        )
        .expect("valid test config");
        let mut config = config;
        if let Some(configure) = opts.configure {
            configure(&mut config);
        }
        let s3 = if opts.s3 {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind the S3 door");
            let addr = l.local_addr().unwrap().to_string();
            config.s3.listen = Some(addr.clone());
            config.s3.url = format!("http://{addr}");
            Some(l)
        } else {
            None
        };
        let s3_url = s3.as_ref().map(|_| config.s3.url.clone());
        let url = match opts.database_url.clone() {
            Some(url) => Some(url),
            None => pg::database_for(&data_dir).await,
        };
        if let Some(url) = url {
            config.database_url = Some(filestore::testing::config::Secret::new(url));
        }
        let clock = Clock::new();
        let app = App::open(config, clock.clone()).await.expect("app opens");
        let (account_id, secret_key) = if let Some(b) = app.bootstrap().await.expect("bootstrap") {
            // The bootstrap account is on the built-in plan `owner` (no
            // storage or monthly limits); the tests' account is on the
            // config's default plan, whose limits they provoke.
            let plan = app.config.default_plan.clone();
            admin::set_account(&*app.meta, &app.config, &b.account.id, Some(&plan), None)
                .await
                .expect("the default plan exists");
            (b.account.id, b.secret_key)
        } else {
            let meta = &*app.meta;
            let acc = admin::find_account(meta, "default").await.unwrap();
            let key = admin::create_key(meta, &acc.id, KeyKind::Secret, &[], None, clock.now_ms())
                .await
                .unwrap();
            (acc.id, key.secret)
        };
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let app_for_task = app.clone();
        let task = tokio::spawn(async move {
            use filestore::testing::server::{Door, Listener};
            let mut doors = vec![Listener {
                door: Door::Api,
                listener,
            }];
            if let Some(listener) = s3 {
                doors.push(Listener {
                    door: Door::S3,
                    listener,
                });
            }
            filestore::testing::server::run(app_for_task, doors, async move {
                let _ = rx.await;
            })
            .await
            .expect("server runs");
        });
        // Ready when health answers: the server accepts connections only after
        // its start-up pass (crash recovery, expired files) is done.
        let http = reqwest::Client::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while http
            .get(format!("http://{addr}/v1/health"))
            .send()
            .await
            .is_err()
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "test server never answered"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        TestServer {
            base_url: format!("http://{addr}"),
            s3_url,
            data_dir,
            secret_key: secret_key.expose().to_string(),
            account_id,
            clock,
            app,
            http,
            shutdown: Some(tx),
            task: Some(task),
            _dir: dir,
        }
    }

    /// Stops the server and waits for it (requests in flight finish).
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task");
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// True when this server's metadata is on PostgreSQL
    /// (`FILESTORE_TEST_DATABASE_URL`).
    pub fn on_postgres(&self) -> bool {
        self.app.config.database_url.is_some()
    }

    /// A connection of the test's own to the server's SQLite database (None
    /// on PostgreSQL): the file itself, beside the server's (WAL; a write
    /// waits for the server's writer).
    pub fn sqlite(&self) -> Option<rusqlite::Connection> {
        if self.on_postgres() {
            return None;
        }
        let conn = rusqlite::Connection::open(self.data_dir.join("filestore.db")).unwrap();
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .unwrap();
        Some(conn)
    }

    /// Runs a statement on whichever store the server runs on (SQL that
    /// both dialects read alike).
    pub fn exec(&self, sql: &str) {
        match self.sqlite() {
            Some(db) => {
                db.execute(sql, []).unwrap();
            }
            None => pg::execute(self.database_url(), sql),
        }
    }

    /// The first column of the first row of `sql` as text, whichever store
    /// the server runs on (SQL that both dialects read alike).
    pub fn text(&self, sql: &str) -> String {
        match self.sqlite() {
            Some(db) => db.query_row(sql, [], |r| r.get(0)).unwrap(),
            None => pg::text(self.database_url(), sql),
        }
    }

    /// The PostgreSQL database's URL (panics on SQLite).
    pub fn database_url(&self) -> &str {
        self.app
            .config
            .database_url
            .as_ref()
            .expect("a PostgreSQL server has a database url")
            .expose()
    }

    /// A new key of the default account.
    pub async fn new_key(&self, kind: &str, origins: &[&str]) -> String {
        self.key_for(&self.account_id, kind, origins).await
    }

    pub async fn key_for(&self, account: &str, kind: &str, origins: &[&str]) -> String {
        let origins: Vec<String> = origins.iter().map(ToString::to_string).collect();
        admin::create_key(
            &*self.app.meta,
            account,
            KeyKind::parse(kind).expect("secret or public"),
            &origins,
            None,
            self.clock.now_ms(),
        )
        .await
        .unwrap()
        .secret
        .expose()
        .to_string()
    }

    /// A new account on `plan` and a secret key of it: (account id, key).
    pub async fn new_account(&self, name: &str, plan: &str) -> (String, String) {
        let acc = admin::create_account(
            &*self.app.meta,
            &self.app.config,
            Some(name),
            Some(plan),
            self.clock.now_ms(),
        )
        .await
        .unwrap();
        let key = self.key_for(&acc.id, "secret", &[]).await;
        (acc.id, key)
    }

    pub async fn set_account(&self, account: &str, plan: Option<&str>, grace: Option<bool>) {
        admin::set_account(&*self.app.meta, &self.app.config, account, plan, grace)
            .await
            .unwrap();
    }

    pub fn form(name: &str, bytes: Vec<u8>, fields: &[(&str, &str)]) -> Form {
        upload_form(name, bytes, fields)
    }

    /// POST /v1/upload with `key`, one file and extra text fields.
    pub async fn upload_as(
        &self,
        key: &str,
        name: &str,
        bytes: Vec<u8>,
        fields: &[(&str, &str)],
    ) -> reqwest::Response {
        self.post_form(key, Self::form(name, bytes, fields)).await
    }

    pub async fn upload(
        &self,
        name: &str,
        bytes: Vec<u8>,
        fields: &[(&str, &str)],
    ) -> reqwest::Response {
        self.upload_as(&self.secret_key, name, bytes, fields).await
    }

    /// POST /v1/upload with `key` from a browser page on `origin`.
    pub async fn upload_with_origin(
        &self,
        key: &str,
        origin: &str,
        name: &str,
        bytes: Vec<u8>,
    ) -> reqwest::Response {
        self.http
            .post(self.url("/v1/upload"))
            .bearer_auth(key)
            .header("origin", origin)
            .multipart(Self::form(name, bytes, &[]))
            .send()
            .await
            .expect("upload request")
    }

    /// POST /v1/upload with `key` and a ready form.
    pub async fn post_form(&self, key: &str, form: Form) -> reqwest::Response {
        self.http
            .post(self.url("/v1/upload"))
            .bearer_auth(key)
            .multipart(form)
            .send()
            .await
            .expect("upload request")
    }

    /// POST /v1/files/{id}/signed-url with `key` and a JSON body.
    pub async fn sign_as(&self, key: &str, id: &str, body: serde_json::Value) -> reqwest::Response {
        self.http
            .post(self.url(&format!("/v1/files/{id}/signed-url")))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .expect("signed-url request")
    }

    /// A signed URL of `id` valid for `expires_in` seconds (asserting 200).
    pub async fn signed_url(&self, id: &str, expires_in: u64) -> String {
        let r = self
            .sign_as(
                &self.secret_key,
                id,
                serde_json::json!({ "expires_in": expires_in }),
            )
            .await;
        assert_eq!(r.status(), 200);
        let body: serde_json::Value = r.json().await.unwrap();
        body["url"].as_str().unwrap().to_string()
    }

    /// DELETE /v1/files/{id} with `key`.
    pub async fn delete_as(&self, key: &str, id: &str) -> reqwest::Response {
        self.http
            .delete(self.url(&format!("/v1/files/{id}")))
            .bearer_auth(key)
            .send()
            .await
            .expect("delete request")
    }

    /// Uploads and returns the File record (asserting 201).
    pub async fn upload_ok(
        &self,
        name: &str,
        bytes: Vec<u8>,
        fields: &[(&str, &str)],
    ) -> serde_json::Value {
        let r = self.upload(name, bytes, fields).await;
        assert_eq!(
            r.status(),
            201,
            "upload of {name}: {}",
            r.text().await.unwrap_or_default()
        );
        r.json().await.unwrap()
    }

    pub async fn get_json(&self, key: &str, path: &str) -> (u16, serde_json::Value) {
        let r = self
            .http
            .get(self.url(path))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(serde_json::Value::Null))
    }

    pub async fn usage(&self) -> serde_json::Value {
        let (status, body) = self.get_json(&self.secret_key, "/v1/usage").await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// One number from the server's database (`SELECT COUNT(*) …`), on
    /// SQLite or PostgreSQL.
    pub fn count(&self, sql: &str) -> i64 {
        match self.sqlite() {
            Some(db) => db.query_row(sql, [], |r| r.get(0)).unwrap(),
            None => pg::count(self.database_url(), sql),
        }
    }

    /// Counts of (file rows, queued blob deletions, spool files).
    pub fn leftovers(&self) -> (u64, u64, usize) {
        let files = self.count("SELECT COUNT(*) FROM files");
        let queued = self.count("SELECT COUNT(*) FROM blob_deletions");
        let spool = std::fs::read_dir(self.data_dir.join("tmp")).map_or(0, Iterator::count);
        (files as u64, queued as u64, spool)
    }

    /// Number of blobs: in the store (files under `blobs/`, or objects under
    /// the S3 prefix) and inline in the database.
    pub async fn blob_count(&self) -> usize {
        let stored = match self.app.config.storage.backend {
            BackendKind::S3 => s3::object_count(&self.app.config.storage).await,
            BackendKind::Local => count_files(&self.data_dir.join("blobs")),
        };
        stored + self.count("SELECT COUNT(*) FROM inline_blobs") as usize
    }

    /// Polls `check` every 50 ms for up to `secs` seconds.
    pub async fn eventually<F, Fut>(&self, secs: u64, what: &str, check: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        eventually(secs, Duration::from_millis(50), what, check).await;
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// One number from a database.
pub fn count(db: &Db, sql: &str) -> i64 {
    db.conn().unwrap().query_row(sql, [], |r| r.get(0)).unwrap()
}

fn count_files(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                count_files(&p)
            } else {
                usize::from(!e.file_name().to_string_lossy().starts_with(".health-"))
            }
        })
        .sum()
}
