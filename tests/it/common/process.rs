//! The real binary as a child process: the one way the tests run
//! `filestore serve` (to kill it, restart it, read its log or its metrics,
//! or start several on one database) and `filestore admin`.
//!
//! `Serve` says how (data dir, config file, database, ports, more args and
//! env), `start()` waits until the server prints its "serving" line and
//! answers HTTP, and gives a `ServeProcess`: its address, the bootstrap key
//! and account it printed on a first start, every stderr line it wrote, and
//! a graceful (`terminate`) or hard (`kill_9`) stop. Dropping it kills it.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// A port nothing listens on now, for a server that is restarted on it later.
///
/// It is taken below the kernel's ephemeral range (`ip_local_port_range`), so
/// no outgoing connection of another test can hold it as its source port when
/// the server comes back (a port from `bind(0)` could be, and the restart failed).
/// Each call in a process gives a different port, from a start picked per process.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    const FIRST: u32 = 10_000;
    let ephemeral_start = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32_768);
    if ephemeral_start > FIRST + 1_000 {
        let span = ephemeral_start - FIRST;
        let seed = std::process::id().wrapping_mul(7_919)
            ^ std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
        let _ = NEXT.compare_exchange(0, seed % span + 1, Ordering::Relaxed, Ordering::Relaxed);
        for _ in 0..span {
            let port = FIRST + NEXT.fetch_add(1, Ordering::Relaxed) % span;
            let port = u16::try_from(port).expect("below the ephemeral range");
            if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
                return port;
            }
        }
    }
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The `filestore` binary with nothing inherited that would speak for the
/// test: no FILESTORE_*, AWS_* or RUST_LOG from the environment (the CI job
/// sets some for other tests).
pub fn filestore() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_filestore"));
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("FILESTORE_") || k.starts_with("AWS_") || k == "RUST_LOG" {
            cmd.env_remove(&*k);
        }
    }
    cmd
}

/// `filestore admin ARGS --data-dir DATA` (on `database_url` when given).
pub fn admin(data: &Path, database_url: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut cmd = filestore();
    cmd.arg("admin").args(args).arg("--data-dir").arg(data);
    if let Some(url) = database_url {
        cmd.env("FILESTORE_DATABASE_URL", url);
    }
    cmd.output().expect("filestore admin runs")
}

/// How to start one `filestore serve`.
#[derive(Debug, Clone)]
pub struct Serve {
    name: String,
    data: PathBuf,
    config: Option<PathBuf>,
    database_url: Option<String>,
    port: Option<u16>,
    metrics: Option<u16>,
    s3: bool,
    args: Vec<std::ffi::OsString>,
    envs: Vec<(String, String)>,
    timeout: Duration,
}

impl Serve {
    /// `serve --data-dir data`, on a free port, with nothing else.
    pub fn new(data: &Path) -> Serve {
        Serve {
            name: "serve".into(),
            data: data.to_path_buf(),
            config: None,
            database_url: None,
            port: None,
            metrics: None,
            s3: false,
            args: Vec::new(),
            envs: Vec::new(),
            timeout: Duration::from_secs(90),
        }
    }

    /// The name failure messages give it (a cluster's "A", "B").
    pub fn name(mut self, name: &str) -> Serve {
        self.name = name.to_string();
        self
    }

    pub fn config(mut self, path: &Path) -> Serve {
        self.config = Some(path.to_path_buf());
        self
    }

    /// FILESTORE_DATABASE_URL (None: SQLite in the data dir).
    pub fn database_url(mut self, url: Option<&str>) -> Serve {
        self.database_url = url.map(String::from);
        self
    }

    /// A fixed port (a restart where the last run was); else a free one.
    pub fn port(mut self, port: u16) -> Serve {
        self.port = Some(port);
        self
    }

    /// `--metrics-listen 127.0.0.1:PORT`.
    pub fn metrics(mut self, port: u16) -> Serve {
        self.metrics = Some(port);
        self
    }

    /// `--s3-listen 127.0.0.1:0`: the S3 door on a port the kernel picks,
    /// whose address the start-up line names ([`ServeProcess::s3_url`]).
    pub fn s3(mut self) -> Serve {
        self.s3 = true;
        self
    }

    /// More arguments after `serve`.
    pub fn args<S: AsRef<std::ffi::OsStr>>(mut self, args: &[S]) -> Serve {
        self.args
            .extend(args.iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    pub fn env(mut self, key: &str, value: &str) -> Serve {
        self.envs.push((key.to_string(), value.to_string()));
        self
    }

    /// Starts it and waits until it serves. A port picked free that another
    /// test took meanwhile is picked again.
    pub fn start(&self) -> ServeProcess {
        for attempt in 0.. {
            match self.try_start() {
                Ok(p) => return p,
                Err(log) => {
                    if self.port.is_none() && log.contains("in use") && attempt < 3 {
                        continue;
                    }
                    panic!("{} did not start:\n{log}", self.name);
                }
            }
        }
        unreachable!()
    }

    fn try_start(&self) -> Result<ServeProcess, String> {
        let port = self.port.unwrap_or_else(free_port);
        let mut cmd = filestore();
        cmd.arg("serve").arg("--data-dir").arg(&self.data);
        if let Some(config) = &self.config {
            cmd.arg("--config").arg(config);
        }
        cmd.args(["--listen", &format!("127.0.0.1:{port}")]);
        if let Some(m) = self.metrics {
            cmd.args(["--metrics-listen", &format!("127.0.0.1:{m}")]);
        }
        if self.s3 {
            cmd.args(["--s3-listen", "127.0.0.1:0"]);
        }
        cmd.args(&self.args);
        if let Some(url) = &self.database_url {
            cmd.env("FILESTORE_DATABASE_URL", url);
        }
        for (k, v) in &self.envs {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn filestore serve");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let reader = BufReader::new(child.stderr.take().unwrap());
        let lines = log.clone();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in reader.lines() {
                let Ok(line) = line else { break };
                let serving = line.contains("serving");
                lines.lock().unwrap().push(line);
                if serving {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(true);
                    }
                }
            }
            if let Some(tx) = tx {
                let _ = tx.send(false);
            }
        });
        let mut process = ServeProcess {
            name: self.name.clone(),
            child,
            port,
            base: format!("http://127.0.0.1:{port}"),
            data: self.data.clone(),
            database_url: self.database_url.clone(),
            metrics: self.metrics,
            log,
            key: None,
            account: None,
            s3_url: None,
        };
        let served = rx.recv_timeout(self.timeout).unwrap_or(false);
        if !served || !process.answers(self.timeout) {
            process.kill_9();
            return Err(process.log_text());
        }
        let startup = process.lines();
        process.key = startup.iter().find_map(|l| startup_field(l, "key", "sk_"));
        process.account = startup
            .iter()
            .filter(|l| l.contains("first start: created account"))
            .find_map(|l| startup_field(l, "account", "acc_"));
        let s3_line = |l: &str| l.contains("S3 door at");
        process.s3_url = if self.s3 {
            // Written just after the serving line: maybe not read yet.
            startup_field(&process.wait_for(s3_line), "s3_url", "http")
        } else {
            startup
                .iter()
                .find(|l| s3_line(l))
                .and_then(|l| startup_field(l, "s3_url", "http"))
        };
        Ok(process)
    }
}

/// A value a start-up line carries: with `--log-format json` its `field`,
/// else the word of the text line that starts with `prefix`.
pub fn startup_field(line: &str, field: &str, prefix: &str) -> Option<String> {
    if let Ok(serde_json::Value::Object(obj)) = serde_json::from_str(line) {
        return obj
            .get(field)
            .and_then(serde_json::Value::as_str)
            .filter(|v| v.starts_with(prefix))
            .map(String::from);
    }
    line.split(['(', ')', ' ', '"'])
        .find(|w| w.starts_with(prefix))
        .map(String::from)
}

/// A running `filestore serve`; killed (-9) when dropped.
pub struct ServeProcess {
    pub name: String,
    child: Child,
    pub port: u16,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    pub data: PathBuf,
    pub database_url: Option<String>,
    pub metrics: Option<u16>,
    /// Every line it wrote to stderr (JSON log lines with `--log-format json`).
    pub log: Arc<Mutex<Vec<String>>>,
    /// The secret key a first start prints.
    pub key: Option<String>,
    /// The account a first start creates.
    pub account: Option<String>,
    /// The S3 door's address its start-up line names (`Serve::s3`, or
    /// `--s3-listen` among the args).
    pub s3_url: Option<String>,
}

impl ServeProcess {
    /// Its process id (for its `/proc/PID/status`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The bootstrap key, which only a first start prints.
    #[track_caller]
    pub fn key(&self) -> String {
        self.key.clone().unwrap_or_else(|| {
            panic!(
                "{} printed no key (not a first start?):\n{}",
                self.name,
                self.log_text()
            )
        })
    }

    /// Every stderr line so far.
    pub fn lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    pub fn log_text(&self) -> String {
        self.lines().join("\n")
    }

    /// The last `n` stderr lines, for a failure's report.
    pub fn log_tail(&self, n: usize) -> String {
        let log = self.log.lock().unwrap();
        log[log.len().saturating_sub(n)..].join("\n")
    }

    /// Waits (15 s at most) until a stderr line matches; that line.
    #[track_caller]
    pub fn wait_for(&self, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(l) = self.log.lock().unwrap().iter().find(|l| pred(l)) {
                return l.clone();
            }
            assert!(
                Instant::now() < deadline,
                "no such line from {}:\n{}",
                self.name,
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// True once `GET /v1/health` gets an HTTP answer (any status).
    fn answers(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if let Some((status, _)) = raw_get(self.port, "/v1/health", None) {
                if status > 0 {
                    return true;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// SIGTERM, then its exit (10 s at most, else a panic).
    pub fn terminate(&mut self) -> ExitStatus {
        self.terminate_within(Duration::from_secs(10))
    }

    pub fn terminate_within(&mut self, timeout: Duration) -> ExitStatus {
        signal(self.child.id(), "-TERM");
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not stop on SIGTERM within {timeout:?}",
                self.name
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGTERM, and asserts it exits successfully (its log in the panic
    /// if not).
    pub fn stop_cleanly(&mut self) {
        let status = self.terminate();
        let log = self.log.lock().unwrap().join("\n");
        assert!(
            status.success(),
            "{} exited {status}; its log:\n{log}",
            self.name
        );
    }

    /// kill -9, and reaped.
    pub fn kill_9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The value of one metric line (`name` or `name{labels}` containing
    /// `label`) on its metrics listener, if present.
    pub async fn metric(&self, http: &reqwest::Client, name: &str, label: &str) -> Option<f64> {
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

impl Drop for ServeProcess {
    fn drop(&mut self) {
        self.kill_9();
    }
}

/// `kill SIGNAL pid` (the `kill` of the system: no libc here).
pub fn signal(pid: u32, sig: &str) -> bool {
    Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success())
}

/// One blocking `GET path` over a plain socket (Connection: close): the
/// status and the body; None when nothing answers.
pub fn raw_get(port: u16, path: &str, key: Option<&str>) -> Option<(u16, String)> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let auth = key
        .map(|k| format!("Authorization: Bearer {k}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let status = out.get(9..12)?.parse().ok()?;
    let body = out.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    Some((status, body))
}

/// The value of metric `name` (with `label` among its labels) in a
/// Prometheus text page.
pub fn metric_value(text: &str, name: &str, label: &str) -> Option<f64> {
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
