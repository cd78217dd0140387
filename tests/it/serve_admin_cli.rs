//! The real binary: `filestore serve` on its embedded default (first start,
//! signals) and `filestore admin` with `--json`, while the server runs.

use crate::common::process::{self, filestore, free_port, raw_get, Serve, ServeProcess};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Starts `serve`; the process and the stderr lines printed until it served.
fn serve(data: &std::path::Path, port: u16) -> (ServeProcess, Vec<String>) {
    serve_with(data, port, &[])
}

/// `serve` with more arguments.
fn serve_with(
    data: &std::path::Path,
    port: u16,
    more: &[&std::ffi::OsStr],
) -> (ServeProcess, Vec<String>) {
    let child = Serve::new(data).port(port).args(more).start();
    let lines = child.lines();
    (child, lines)
}

fn http_get(port: u16, path: &str, key: Option<&str>) -> (u16, String) {
    raw_get(port, path, key).expect("serve answers")
}

fn admin(data: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = process::admin(data, None, args);
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn first_start_prints_one_key_and_the_login_line_then_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let (mut child, lines) = serve(dir.path(), port);
    let login = lines
        .iter()
        .find(|l| l.starts_with("filestore login "))
        .expect("login line")
        .clone();
    assert_eq!(
        login,
        format!(
            "filestore login --server http://127.0.0.1:{port} --api-key {}",
            login.rsplit(' ').next().unwrap()
        )
    );
    let key = login.rsplit(' ').next().unwrap().to_string();
    assert!(key.starts_with("sk_"));
    assert!(dir.path().join("filestore.db").exists());
    assert!(dir.path().join("blobs").is_dir());
    let (status, body) = http_get(port, "/v1/usage", Some(&key));
    assert_eq!(status, 200, "{body}");
    assert_eq!(http_get(port, "/v1/health", None).0, 200);
    assert!(child.terminate().success(), "exit 0 on SIGTERM");
    // A second start on the same data prints no new key; the old one still works.
    let (mut child, lines) = serve(dir.path(), port);
    assert!(!lines.iter().any(|l| l.contains("sk_")), "{lines:?}");
    assert_eq!(http_get(port, "/v1/usage", Some(&key)).0, 200);
    assert!(child.terminate().success());
}

/// The server answers a key it read in the last second from memory; a key
/// `admin` revokes (another process, on the same file) is still refused at
/// once: every request that starts after `admin` returned gets 401, while
/// the key was in use up to then.
#[test]
fn a_key_in_use_is_refused_at_once_after_admin_revokes_it() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let (_child, lines) = serve(dir.path(), port);
    let key = lines
        .iter()
        .find(|l| l.starts_with("filestore login "))
        .and_then(|l| l.rsplit(' ').next())
        .expect("login line")
        .to_string();
    let (ok, out, err) = admin(dir.path(), &["key", "list", "--json"]);
    assert!(ok, "{err}");
    let id = serde_json::from_str::<serde_json::Value>(out.lines().next().unwrap()).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Requests with the key all along, each with when it started.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = {
        let (stop, key) = (stop.clone(), key.clone());
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let started = Instant::now();
                seen.push((started, http_get(port, "/v1/usage", Some(&key)).0));
                std::thread::sleep(Duration::from_millis(5));
            }
            seen
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let (ok, _, err) = admin(dir.path(), &["key", "revoke", &id]);
    assert!(ok, "{err}");
    let revoked = Instant::now();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = load.join().unwrap();
    let before: Vec<u16> = seen
        .iter()
        .filter(|(t, _)| *t < revoked)
        .map(|s| s.1)
        .collect();
    let after: Vec<u16> = seen
        .iter()
        .filter(|(t, _)| *t > revoked)
        .map(|s| s.1)
        .collect();
    assert!(before.contains(&200), "the key was in use: {before:?}");
    assert!(
        !after.is_empty() && after.iter().all(|&s| s == 401),
        "{after:?}"
    );
}

#[test]
fn admin_manages_accounts_and_keys_while_serve_runs() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let (mut child, _) = serve(dir.path(), port);
    let data = dir.path();

    let (ok, out, err) = admin(
        data,
        &[
            "account", "create", "--name", "acme", "--plan", "hobby", "--json",
        ],
    );
    assert!(ok, "{err}");
    let acc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(acc["id"].as_str().unwrap().starts_with("acc_"));
    assert_eq!(
        (
            acc["name"].as_str(),
            acc["plan"].as_str(),
            acc["grace_period"].as_bool()
        ),
        (Some("acme"), Some("hobby"), Some(false))
    );
    assert!(acc["created_at"].as_str().unwrap().ends_with('Z'));
    let (ok, _, err) = admin(data, &["account", "create", "--name", "acme"]);
    assert!(!ok && err.contains("already exists"), "{err}");
    let (ok, _, err) = admin(data, &["account", "create", "--plan", "platinum"]);
    assert!(!ok && err.contains("platinum"), "{err}");

    let (ok, out, _) = admin(data, &["account", "list", "--json"]);
    assert!(ok);
    let names: Vec<String> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["default", "acme"]);

    let (ok, out, err) = admin(
        data,
        &[
            "key",
            "create",
            "--account",
            "acme",
            "--kind",
            "secret",
            "--json",
        ],
    );
    assert!(ok, "{err}");
    let key: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let secret = key["key"].as_str().unwrap().to_string();
    assert!(secret.starts_with("sk_") && key["id"].as_str().unwrap().starts_with("key_"));
    assert_eq!(key["kind"], "secret");
    assert_eq!(key["account"], acc["id"]);
    assert_eq!(key["origins"], serde_json::json!([]));
    // Effective at once on the running server.
    assert_eq!(http_get(port, "/v1/usage", Some(&secret)).0, 200);

    let (ok, out, err) = admin(
        data,
        &[
            "key",
            "create",
            "--account",
            acc["id"].as_str().unwrap(),
            "--kind",
            "public",
            "--origin",
            "https://app.acme.test",
            "--origin",
            "https://*.acme.test",
            "--json",
        ],
    );
    assert!(ok, "{err}");
    let pk: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(pk["key"].as_str().unwrap().starts_with("pk_"));
    assert_eq!(
        pk["origins"],
        serde_json::json!(["https://app.acme.test", "https://*.acme.test"])
    );
    let (ok, _, err) = admin(
        data,
        &[
            "key",
            "create",
            "--account",
            "acme",
            "--kind",
            "public",
            "--origin",
            "not-an-origin",
        ],
    );
    assert!(!ok, "{err}");

    let (ok, out, _) = admin(data, &["key", "list", "--account", "acme", "--json"]);
    assert!(ok);
    assert_eq!(out.lines().count(), 2);
    assert!(!out.contains(&secret), "key list never shows a secret");

    let (ok, _, _) = admin(
        data,
        &["key", "revoke", key["id"].as_str().unwrap(), "--json"],
    );
    assert!(ok);
    assert_eq!(
        http_get(port, "/v1/usage", Some(&secret)).0,
        401,
        "revoked at once"
    );

    let (ok, out, _) = admin(
        data,
        &[
            "account",
            "set",
            "acme",
            "--grace-period",
            "on",
            "--plan",
            "pro",
            "--json",
        ],
    );
    assert!(ok);
    let set: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (set["plan"].as_str(), set["grace_period"].as_bool()),
        (Some("pro"), Some(true))
    );
    let (ok, _, err) = admin(data, &["account", "set", "nobody", "--plan", "pro"]);
    assert!(!ok && err.contains("nobody"), "{err}");
    // Exit codes of docs/decisions.md, "Command line": not found 4, a bad value is a usage error (2).
    let code = |args: &[&str]| {
        filestore()
            .arg("admin")
            .args(args)
            .arg("--data-dir")
            .arg(data)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(
        code(&["account", "set", "nobody", "--plan", "pro"]),
        Some(4)
    );
    assert_eq!(code(&["key", "revoke", "key_nothing"]), Some(4));
    assert_eq!(code(&["account", "create", "--plan", "gold"]), Some(2));
    assert!(child.terminate().success());
}

/// SIGTERM with a client that sent half an upload and stalled: the server
/// waits for it no longer than `shutdown_timeout`, then exits 0.
#[test]
fn sigterm_with_a_stalled_client_exits_within_the_shutdown_timeout() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[server]\nshutdown_timeout = \"2s\"\nbody_timeout = \"60s\"\n",
    )
    .unwrap();
    let port = free_port();
    let data = dir.path().join("data");
    let (mut child, _) = serve_with(&data, port, &["--config".as_ref(), config.as_os_str()]);
    let key = child.key();
    let mut stalled = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stalled,
        "POST /v1/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: multipart/form-data; boundary=B\r\nContent-Length: 1000000\r\n\r\n\
         --B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nhalf"
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    let status = child.terminate();
    let took = start.elapsed();
    assert!(status.success(), "exit 0 after the shutdown timeout");
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(5),
        "waited for the stalled request, then gave up: {took:?}"
    );
}

/// `admin ... | head -0`: a closed stdout is success, never a panic.
#[test]
fn admin_output_into_a_closed_pipe_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = admin(dir.path(), &["account", "create", "--name", "a"]);
    assert!(ok, "{err}");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = filestore()
        .args(["admin", "account", "list", "--data-dir"])
        .arg(dir.path())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `admin --data-dir <typo>` is refused, and creates nothing.
#[test]
fn admin_refuses_a_data_dir_that_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("filestor");
    let out = filestore()
        .args(["admin", "account", "list", "--data-dir"])
        .arg(&typo)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("error: config: data dir "), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert!(!typo.exists(), "the mistyped dir was created");
}

/// `serve --help` and `admin --help` show no client flag; the clients'
/// help shows them.
#[test]
fn server_help_shows_no_client_flags() {
    let help = |args: &[&str]| {
        let out = filestore().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for args in [
        &["serve", "--help"][..],
        &["admin", "--help"],
        &["admin", "account", "list", "--help"],
    ] {
        let h = help(args);
        for flag in ["--api-key", "--server", "--profile", "Client options"] {
            assert!(!h.contains(flag), "{flag} in {args:?} help:\n{h}");
        }
        assert!(h.contains("--data-dir"), "{args:?}");
    }
    let serve = help(&["serve", "--help"]);
    assert!(serve.contains("--metrics-listen") && serve.contains("--log-format"));
    assert!(help(&["list", "--help"]).contains("--api-key"));
}
