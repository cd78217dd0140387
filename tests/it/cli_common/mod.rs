//! Running the real `filestore` binary against an in-process server, with an
//! isolated environment (no real config file, no inherited FILESTORE_* vars),
//! and a tiny programmable proxy for failure injection.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The outcome of one run of the binary.
pub struct Run {
    pub status: i32,
    /// stdout as raw bytes (downloads to `-o -`).
    pub bytes: Vec<u8>,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cut = |s: &str| s.chars().take(2000).collect::<String>();
        f.debug_struct("Run")
            .field("status", &self.status)
            .field("bytes", &self.bytes.len())
            .field("stdout", &cut(&self.stdout))
            .field("stderr", &cut(&self.stderr))
            .finish()
    }
}

impl Run {
    /// The stdout lines parsed as JSON.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
            .collect()
    }

    /// stdout as one JSON document.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON record: {e}: {:?}", self.stdout))
    }

    /// Asserts the exit status, showing the output when it differs.
    #[track_caller]
    pub fn expect(&self, status: i32) -> &Self {
        assert_eq!(self.status, status, "unexpected exit status: {self:#?}");
        self
    }

    /// Asserts the CLI's error line (docs/decisions.md, "Command line"): `error: <code>: …`.
    #[track_caller]
    pub fn expect_error(&self, status: i32, code: &str) -> &Self {
        self.expect(status);
        let prefix = format!("error: {code}: ");
        assert!(
            self.stderr.lines().any(|l| l.starts_with(&prefix)),
            "no line starting {prefix:?} in stderr: {self:#?}"
        );
        self
    }
}

/// A client environment: server URL, key, a private config file and cwd.
pub struct Cli {
    pub server: String,
    pub key: String,
    pub home: tempfile::TempDir,
    pub envs: Vec<(String, String)>,
}

impl Cli {
    /// A client talking to `server` with `key` through FILESTORE_URL / FILESTORE_API_KEY.
    pub fn new(server: &str, key: &str) -> Cli {
        Cli {
            server: server.to_string(),
            key: key.to_string(),
            home: tempfile::tempdir().unwrap(),
            envs: Vec::new(),
        }
    }

    /// The client config file of this environment.
    pub fn config_file(&self) -> PathBuf {
        self.home.path().join("config/filestore/config.toml")
    }

    /// The working directory of runs.
    pub fn cwd(&self) -> PathBuf {
        let d = self.home.path().join("work");
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A run with FILESTORE_URL / FILESTORE_API_KEY set.
    pub async fn run(&self, args: &[&str]) -> Run {
        self.exec(args, None, true).await
    }

    /// A run with `stdin` as standard input.
    pub async fn run_stdin(&self, args: &[&str], stdin: Vec<u8>) -> Run {
        self.exec(args, Some(stdin), true).await
    }

    /// A run without FILESTORE_URL / FILESTORE_API_KEY (flags or profile only).
    pub async fn run_bare(&self, args: &[&str], stdin: Option<Vec<u8>>) -> Run {
        self.exec(args, stdin, false).await
    }

    /// The command of a run, in this isolated environment: no inherited
    /// FILESTORE_*, CI or RUST_LOG, HOME and the config dir in `home`, and
    /// (`with_env`) FILESTORE_URL / FILESTORE_API_KEY set.
    pub fn command(&self, args: &[&str], with_env: bool) -> Command {
        let mut cmd = crate::common::process::filestore();
        cmd.args(args).current_dir(self.cwd()).env_remove("CI");
        cmd.env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env("TERM", "xterm-256color");
        if with_env {
            cmd.env("FILESTORE_URL", &self.server)
                .env("FILESTORE_API_KEY", &self.key);
        }
        for (k, v) in &self.envs {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs the CLI with stdout and stderr on a pseudo-terminal (util-linux
    /// `script`), as a user at a terminal sees it; None where `script` is
    /// missing. Gives everything the terminal showed.
    pub fn run_on_a_terminal(&self, args: &[&str]) -> Option<String> {
        let inner = self.command(args, true);
        let quote =
            |s: &std::ffi::OsStr| format!("'{}'", s.to_string_lossy().replace('\'', r"'\''"));
        let line = std::iter::once(quote(inner.get_program()))
            .chain(inner.get_args().map(quote))
            .collect::<Vec<_>>()
            .join(" ");
        let mut cmd = Command::new("script");
        cmd.args(["-qec", &line, "/dev/null"])
            .current_dir(self.cwd());
        for (k, v) in inner.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let out = cmd.stdin(Stdio::null()).output().ok()?;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    async fn exec(&self, args: &[&str], stdin: Option<Vec<u8>>, with_env: bool) -> Run {
        let mut cmd = self.command(args, with_env);
        cmd.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        tokio::task::spawn_blocking(move || {
            let mut child = cmd.spawn().expect("spawn filestore");
            if let Some(bytes) = stdin {
                use std::io::Write;
                let mut pipe = child.stdin.take().unwrap();
                let writer = std::thread::spawn(move || {
                    let _ = pipe.write_all(&bytes);
                });
                let out = child.wait_with_output().unwrap();
                writer.join().unwrap();
                return out;
            }
            child.wait_with_output().unwrap()
        })
        .await
        .map(|out| Run {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            bytes: out.stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
        .unwrap()
    }
}

/// The file names in `dir`, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Writes `content` at `root/rel`, creating directories.
pub fn write_file(root: &Path, rel: &str, content: &[u8]) -> PathBuf {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, content).unwrap();
    p
}

/// Bytes that are not all the same (to catch reordering).
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// What the proxy does with one request.
pub enum Action {
    /// Forward to the upstream server.
    Forward,
    /// Forward, then answer this status instead of the upstream answer (a
    /// reply lost on the way back).
    ForwardThenFail(u16),
    /// Answer this status with these headers, without forwarding.
    Fail(u16, Vec<(&'static str, String)>),
    /// Forward with the first occurrence of the first bytes in the request
    /// body replaced by the second (bytes damaged on the way).
    ForwardReplacing(&'static [u8], &'static [u8]),
}

/// Decides per request: (method, path, number of earlier requests to this path).
pub type Rule = Arc<dyn Fn(&str, &str, usize) -> Action + Send + Sync>;

/// One request the proxy saw.
#[derive(Debug, Clone)]
pub struct Hit {
    pub path: String,
    pub idempotency_key: Option<String>,
    /// When it arrived (its body read).
    pub at: std::time::Instant,
}

/// Requests the proxy saw, in order.
pub type Hits = Arc<std::sync::Mutex<Vec<Hit>>>;

/// Requests seen so far, per path.
type Counts = Arc<std::sync::Mutex<std::collections::HashMap<String, Arc<AtomicUsize>>>>;

/// A proxy in front of a server that can fail chosen requests.
pub struct Proxy {
    pub url: String,
    pub hits: Hits,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `body` with the first `from` replaced by `to`.
fn replace_first(body: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    match body.windows(from.len()).position(|w| w == from) {
        Some(at) => [&body[..at], to, &body[at + from.len()..]].concat(),
        None => body.to_vec(),
    }
}

/// An answer made up by the proxy, in the API's error envelope.
fn injected(status: u16, headers: Vec<(&'static str, String)>) -> axum::response::Response {
    let mut b = axum::http::Response::builder()
        .status(status)
        .header("content-type", "application/json");
    for (k, v) in headers {
        b = b.header(k, v);
    }
    b.body(axum::body::Body::from(
        r#"{"error":{"code":"unavailable","message":"injected failure"}}"#,
    ))
    .unwrap()
}

impl Proxy {
    /// Starts a proxy to `upstream` applying `rule`.
    pub async fn start(upstream: &str, rule: Rule) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let hits = Hits::default();
        let counts = Counts::default();
        let upstream = upstream.to_string();
        let http = reqwest::Client::new();
        let seen = hits.clone();
        let own = url.clone();
        let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
            let (rule, upstream, http, seen, counts, me) = (
                rule.clone(),
                upstream.clone(),
                http.clone(),
                seen.clone(),
                counts.clone(),
                own.clone(),
            );
            async move {
                let (parts, body) = req.into_parts();
                // Read the whole body first, like a real server would.
                let body = axum::body::to_bytes(body, usize::MAX)
                    .await
                    .unwrap_or_default();
                let path = parts.uri.path().to_string();
                let idem = parts
                    .headers
                    .get("idempotency-key")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                seen.lock().unwrap().push(Hit {
                    path: path.clone(),
                    idempotency_key: idem,
                    at: std::time::Instant::now(),
                });
                let n = counts
                    .lock()
                    .unwrap()
                    .entry(path.clone())
                    .or_default()
                    .fetch_add(1, Ordering::SeqCst);
                let action = rule(parts.method.as_str(), &path, n);
                if let Action::Fail(status, headers) = action {
                    return injected(status, headers);
                }
                let pq = parts
                    .uri
                    .path_and_query()
                    .map_or("/", axum::http::uri::PathAndQuery::as_str);
                let mut fwd = http.request(parts.method.clone(), format!("{upstream}{pq}"));
                for (k, v) in &parts.headers {
                    if k != "host" && k != "content-length" {
                        fwd = fwd.header(k, v);
                    }
                }
                let body = match &action {
                    Action::ForwardReplacing(from, to) => replace_first(&body, from, to),
                    _ => body.to_vec(),
                };
                let resp = fwd.body(body).send().await.unwrap();
                if let Action::ForwardThenFail(status) = action {
                    return injected(status, vec![]);
                }
                let mut b = axum::http::Response::builder().status(resp.status().as_u16());
                for (k, v) in resp.headers() {
                    if k == "location" {
                        // As a reverse proxy does: the client comes back here.
                        let at = v.to_str().unwrap_or("").replace(&upstream, &me);
                        b = b.header(k, at);
                    } else if k != "content-length" && k != "transfer-encoding" {
                        b = b.header(k, v);
                    }
                }
                b.body(axum::body::Body::from(resp.bytes().await.unwrap()))
                    .unwrap()
            }
        });
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Proxy { url, hits, task }
    }

    /// Requests seen for `path`.
    pub fn hits_for(&self, path: &str) -> Vec<Hit> {
        self.hits
            .lock()
            .unwrap()
            .iter()
            .filter(|h| h.path == path)
            .cloned()
            .collect()
    }

    /// Requests seen for `path`: their idempotency keys.
    pub fn keys_for(&self, path: &str) -> Vec<Option<String>> {
        self.hits_for(path)
            .into_iter()
            .map(|h| h.idempotency_key)
            .collect()
    }
}
