//! The S3 door from the outside: the in-process test server with its S3
//! door open, a credential of its account, and the real clients (aws-cli,
//! rclone, boto3 scripts, curl) run against it in a clean environment.
//!
//! The clients get no environment of the machine's but `PATH`, `HOME`,
//! `PYENV_*` and `LANG`: an `AWS_CA_BUNDLE` set for other work breaks
//! rclone (`LoadCustomCABundleError`), and a user's `~/.aws` or rclone
//! config must not speak for the test (their config files point into the
//! test's own directory).
//!
//! The blob store behind the door is the local one, unless
//! `FILESTORE_TEST_BLOB_STORE=s3` (then the tests' shared S3 store:
//! SeaweedFS or `FILESTORE_TEST_S3_ENDPOINT`, see `common::s3`); the
//! metadata store is SQLite, or PostgreSQL with `FILESTORE_TEST_DATABASE_URL`.
//! A missing client skips the test with a printed reason, except with
//! `FILESTORE_REQUIRE_TOOLS=1` (CI), where it fails.

use crate::common::{Backend, TestOptions, TestServer};
use filestore::testing::domain::ids::KeyKind;
use filestore::testing::service::admin;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The account's plan: room for aws-cli's 20 MiB multipart upload and
/// for every request of a test within one rate window (S3 writes count
/// against the key's window).
const PLAN: &str = r#"
[server]
default_plan = "door"
[plans.door]
max_file_size = "1GiB"
storage = "unlimited"
uploads = "unlimited"
rate_limit = 10000
rate_window = "1m"
concurrent_uploads = 64
open_uploads = 64
"#;

/// A test server with its S3 door, and one S3 credential of its account.
pub struct Door {
    pub srv: TestServer,
    /// `http://127.0.0.1:PORT` of the door.
    pub endpoint: String,
    /// The access key id: the secret key's id (`key_…`).
    pub access_key: String,
    /// Its S3 secret access key.
    pub secret: String,
    /// The client's home for config files and the files it copies.
    pub work: tempfile::TempDir,
}

/// The outcome of one client run.
pub struct Out {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cut = |s: &str| s.chars().take(4000).collect::<String>();
        f.debug_struct("Out")
            .field("status", &self.status)
            .field("stdout", &cut(&self.stdout))
            .field("stderr", &cut(&self.stderr))
            .finish()
    }
}

impl Out {
    /// Asserts exit status 0, showing the output when not.
    #[track_caller]
    pub fn ok(&self) -> &Self {
        assert_eq!(self.status, 0, "the client failed: {self:#?}");
        self
    }

    /// stdout as one JSON document.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}: {self:#?}"))
    }
}

/// True when every one of `tools` runs here; else prints why the test
/// skips (or panics with `FILESTORE_REQUIRE_TOOLS=1`). A tool is a command
/// line that must exit 0: `["aws", "--version"]`, `["python3", "-c", "import boto3"]`.
pub fn tools(test: &str, tools: &[&[&str]]) -> bool {
    for t in tools {
        let ran = clean(Command::new(t[0]))
            .args(&t[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if !ran.is_ok_and(|s| s.success()) {
            let why = format!("`{}` does not run here", t.join(" "));
            assert!(
                std::env::var_os("FILESTORE_REQUIRE_TOOLS").is_none(),
                "FILESTORE_REQUIRE_TOOLS=1 but {why}"
            );
            let _ = writeln!(std::io::stderr(), "skipping {test}: {why}");
            return false;
        }
    }
    true
}

/// `cmd` with the machine's environment taken away but what finds and runs
/// the programs.
fn clean(mut cmd: Command) -> Command {
    cmd.env_clear();
    for (k, v) in std::env::vars_os() {
        let name = k.to_string_lossy();
        if matches!(&*name, "PATH" | "HOME" | "LANG" | "TMPDIR") || name.starts_with("PYENV") {
            cmd.env(&k, v);
        }
    }
    cmd
}

/// The blob store the door's tests run on (`FILESTORE_TEST_BLOB_STORE`).
fn backend(test: &str) -> Backend {
    match std::env::var("FILESTORE_TEST_BLOB_STORE").as_deref() {
        Ok("s3") => tokio::task::block_in_place(|| Backend::s3(test))
            .expect("FILESTORE_TEST_BLOB_STORE=s3 but no S3 store"),
        _ => Backend::Local,
    }
}

impl Door {
    /// A server with its door, on the store `FILESTORE_TEST_BLOB_STORE` names.
    pub async fn start(test: &str) -> Door {
        Self::start_on(backend(test)).await
    }

    /// A server with its door, on `backend`.
    pub async fn start_on(backend: Backend) -> Door {
        let srv = TestServer::start_with(TestOptions {
            plans_toml: Some(PLAN.into()),
            backend: Some(backend),
            s3: true,
            ..Default::default()
        })
        .await;
        let endpoint = srv.s3_url.clone().expect("the S3 door is open");
        let (access_key, secret) = Self::credential(&srv, &srv.account_id).await;
        Door {
            srv,
            endpoint,
            access_key,
            secret,
            work: tempfile::tempdir().unwrap(),
        }
    }

    /// A new secret key of `account` as an S3 credential: (access key id,
    /// secret access key).
    pub async fn credential(srv: &TestServer, account: &str) -> (String, String) {
        let key = admin::create_key(
            &*srv.app.meta,
            account,
            KeyKind::Secret,
            &[],
            None,
            srv.clock.now_ms(),
        )
        .await
        .unwrap();
        let secret = srv.app.signer.s3_secret(&key.id);
        (key.id, secret)
    }

    /// The id of a new public key of the account (no S3 access).
    pub async fn public_key_id(&self) -> String {
        admin::create_key(
            &*self.srv.app.meta,
            &self.srv.account_id,
            KeyKind::Public,
            &["https://example.com".to_string()],
            None,
            self.srv.clock.now_ms(),
        )
        .await
        .unwrap()
        .id
    }

    /// A path in the client's work dir.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.work.path().join(rel)
    }

    /// Writes `bytes` at `rel` in the work dir (parents made); its path.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        p
    }

    /// `program` in the clean environment, with this door's credential as
    /// `AWS_*` and config files in the work dir.
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = clean(Command::new(program));
        let cfg = self.path("client-config");
        cmd.current_dir(self.work.path())
            .env("AWS_ACCESS_KEY_ID", &self.access_key)
            .env("AWS_SECRET_ACCESS_KEY", &self.secret)
            .env("AWS_DEFAULT_REGION", "us-east-1")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_CONFIG_FILE", cfg.join("aws-config"))
            .env("AWS_SHARED_CREDENTIALS_FILE", cfg.join("aws-credentials"))
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("RCLONE_CONFIG", cfg.join("rclone.conf"))
            .env("S3_ENDPOINT", &self.endpoint);
        cmd
    }

    /// Runs `cmd` to its end (off the async workers).
    pub fn run(cmd: &mut Command) -> Out {
        let out = tokio::task::block_in_place(|| {
            cmd.stdin(Stdio::null())
                .output()
                .unwrap_or_else(|e| panic!("{cmd:?} does not start: {e}"))
        });
        Out {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `aws --endpoint-url DOOR ARGS`, checksums as aws-cli does by default.
    pub fn aws(&self, args: &[&str]) -> Out {
        let mut cmd = self.command("aws");
        cmd.args(["--endpoint-url", &self.endpoint]).args(args);
        Self::run(&mut cmd)
    }

    /// `rclone ARGS` with the remote `door:` (provider `Other`).
    pub fn rclone(&self, args: &[&str]) -> Out {
        let mut cmd = self.command("rclone");
        cmd.env("RCLONE_CONFIG_DOOR_TYPE", "s3")
            .env("RCLONE_CONFIG_DOOR_PROVIDER", "Other")
            .env("RCLONE_CONFIG_DOOR_ENDPOINT", &self.endpoint)
            .env("RCLONE_CONFIG_DOOR_ACCESS_KEY_ID", &self.access_key)
            .env("RCLONE_CONFIG_DOOR_SECRET_ACCESS_KEY", &self.secret)
            .env("RCLONE_CONFIG_DOOR_REGION", "us-east-1")
            .env("RCLONE_CONFIG_DOOR_FORCE_PATH_STYLE", "true")
            .args(args);
        Self::run(&mut cmd)
    }

    /// `python3 tests/it/s3/clients.py CASE ARGS` (boto3): it exits non-zero
    /// with the failed expectation on stderr.
    pub fn python(&self, case: &str, args: &[&str]) -> Out {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/s3/clients.py");
        let mut cmd = self.command("python3");
        cmd.arg(script).arg(case).args(args);
        Self::run(&mut cmd)
    }

    /// Makes bucket `name` with `aws s3 mb`.
    pub fn bucket(&self, name: &str) {
        self.aws(&["s3", "mb", &format!("s3://{name}")]).ok();
    }

    /// `GET /v1/files?folder=FOLDER` with the account's /v1 key: its files
    /// (`folder` as it goes in a query: letters, digits, `/`, `-`, `_`).
    pub async fn v1_files(&self, folder: &str) -> Vec<serde_json::Value> {
        let r = self
            .srv
            .http
            .get(self.srv.url(&format!("/v1/files?folder={folder}")))
            .bearer_auth(&self.srv.secret_key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body: serde_json::Value = r.json().await.unwrap();
        body["files"].as_array().unwrap().clone()
    }
}

/// `n` bytes that differ from test to test and from file to file.
pub fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}
