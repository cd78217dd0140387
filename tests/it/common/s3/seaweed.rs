//! A SeaweedFS (`weed mini`) of a test's own: free ports, the `sh` wrapper
//! that cleans up after it, stop/restart/pause/resume.

use super::probe::{probe, Sentinel, SENTINEL_PREFIX};
use super::store::skip;
use super::{ACCESS_KEY, SECRET_KEY, STARTUP_LIMIT};
use crate::common::process::free_port;
use filestore::testing::config::{Secret, StorageConfig};
use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

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
    /// Ten distinct free ports outside the kernel's ephemeral range, so a
    /// restart finds them free again ([`free_port`]).
    fn pick() -> Ports {
        let p: Vec<u16> = (0..10).map(|_| free_port()).collect();
        Ports {
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
        }
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
    pub(super) bucket: String,
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
                ports: Ports::pick(),
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
            scrub_rate: None,
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
        // SIGSTOP is delivered asynchronously: wait until every thread of
        // the process has stopped (state T in /proc) before going on.
        let pid = std::fs::read_to_string(self.dir.path().join("weed.pid")).expect("weed.pid");
        let stat = format!("/proc/{}/stat", pid.trim());
        for _ in 0..200 {
            let state = std::fs::read_to_string(&stat).unwrap_or_default();
            // The state follows the command name's closing parenthesis.
            if state
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('T'))
            {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("weed did not stop after SIGSTOP: {stat}");
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
