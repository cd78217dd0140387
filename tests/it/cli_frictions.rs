//! The newcomer's frictions of the command line (issue 24, CONTRACT §17), one
//! test each, from the real binary: usage errors that say what is missing or
//! allowed, one duration syntax, clean network and key errors, sizes in the
//! limits' messages as `usage` shows them, complete JSON listings, and flags
//! refused where they mean nothing.

use crate::cli_common::{write_file, Cli};
use crate::common::process::{self, filestore};
use crate::common::{TestOptions, TestServer};

/// A plan with room for the tests (the default test plans rate-limit).
const ROOMY: &str = r#"
[plans.free]
max_file_size = 1000
storage = 1000000
uploads = 100000
rate_limit = 100000
rate_window = "1m"
"#;

async fn roomy() -> TestServer {
    TestServer::start_with(TestOptions {
        plans_toml: Some(ROOMY.into()),
        ..Default::default()
    })
    .await
}

/// A client of no server (usage errors come before any request).
fn offline() -> Cli {
    Cli::new("http://127.0.0.1:9", "sk_unused")
}

/// The one `error: …` line of a run's stderr.
fn error_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "one error line: {stderr}");
    lines[0]
}

#[tokio::test(flavor = "multi_thread")]
async fn upload_without_a_path_names_the_missing_argument() {
    let r = offline().run(&["upload"]).await;
    r.expect_error(2, "usage");
    assert!(
        error_line(&r.stderr).starts_with(
            "error: usage: the following required arguments were not provided: <PATH>..."
        ),
        "{r:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_value_lists_the_allowed_ones() {
    let cli = offline();
    let r = cli.run(&["sign", "f_x", "--fit", "bogus"]).await;
    r.expect_error(2, "usage");
    assert!(
        error_line(&r.stderr).contains("possible values: cover, contain, inside, fill"),
        "{r:?}"
    );
    let r = cli.run(&["completions", "tcsh"]).await;
    r.expect_error(2, "usage");
    assert!(
        error_line(&r.stderr).contains("possible values: bash, "),
        "{r:?}"
    );
    // A fixed set that was free text before: the webhook events.
    let r = cli
        .run(&[
            "admin",
            "webhook",
            "create",
            "--account",
            "a",
            "--url",
            "https://h",
            "--event",
            "file.moved",
        ])
        .await;
    r.expect_error(2, "usage");
    assert!(
        error_line(&r.stderr)
            .contains("possible values: file.created, file.deleted, file.expired, file.updated"),
        "{r:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_duration_flag_takes_the_same_syntax() {
    let srv = roomy().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let file = write_file(&cli.cwd(), "a.txt", b"hello");
    let file = file.to_str().unwrap();
    let lifetime = |r: &serde_json::Value| {
        let at = |k: &str| {
            chrono::DateTime::parse_from_rfc3339(r[k].as_str().unwrap())
                .unwrap()
                .timestamp()
        };
        at("expires_at") - at("created_at")
    };
    for (given, secs) in [("1m30s", 90), ("1.5h", 5400), ("90", 90), ("7d", 604_800)] {
        let r = cli
            .run(&["upload", file, "--expires", given, "--json"])
            .await;
        r.expect(0);
        assert!((lifetime(&r.json()) - secs).abs() <= 1, "{given}: {r:?}");
    }
    let id = cli.run(&["upload", file, "--json"]).await.json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    cli.run(&["sign", &id, "--expires", "1m30s"])
        .await
        .expect(0);
    cli.run(&["sign", &id, "--expires", "1.5h"]).await.expect(0);
    let r = cli
        .run(&[
            "token",
            "create",
            "--expires",
            "1m30s",
            "--file-expires",
            "1.5h",
            "--json",
        ])
        .await;
    r.expect(0);
    assert_eq!(r.json()["policy"]["file_expires"], 5400, "{r:?}");
    cli.run(&["health", "--wait", "--timeout", "1m30s"])
        .await
        .expect(0);

    // Each flag keeps its bounds; a fraction of a second is refused everywhere.
    for args in [
        &["upload", file, "--expires", "366d"][..],
        &["upload", file, "--expires", "1.5s"],
        &["sign", &id, "--expires", "8d"],
        &["sign", &id, "--expires", "1.5s"],
        &["token", "create", "--expires", "1d1s"],
        &["token", "create", "--file-expires", "0s"],
        &["health", "--timeout", "366d"],
    ] {
        cli.run(args).await.expect_error(2, "usage");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn download_into_a_missing_directory_names_it() {
    let srv = roomy().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let file = write_file(&cli.cwd(), "a.txt", b"hello");
    let r = cli.run(&["upload", file.to_str().unwrap(), "--json"]).await;
    let id = r.json()["id"].as_str().unwrap().to_string();
    let r = cli.run(&["download", &id, "-o", "missing/dir/f"]).await;
    r.expect_error(2, "usage");
    let line = error_line(&r.stderr);
    assert!(
        line.ends_with("cannot write missing/dir/f: directory missing/dir does not exist"),
        "{r:?}"
    );
    assert!(!line.contains(".part"), "{r:?}");
    assert!(!cli.cwd().join("missing").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_server_is_one_clean_line() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let cli = Cli::new(&format!("http://127.0.0.1:{port}"), "sk_x");
    let r = cli.run(&["list", "--retries", "0"]).await;
    r.expect_error(6, "network");
    assert_eq!(
        r.stderr.trim_end(),
        format!("error: network: cannot connect to http://127.0.0.1:{port}/v1/files: connection refused"),
    );
    let r = cli.run(&["health"]).await;
    r.expect_error(6, "network");
    assert_eq!(
        r.stderr.trim_end(),
        format!("error: network: cannot connect to http://127.0.0.1:{port}/v1/health: connection refused"),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_names_where_it_came_from() {
    let srv = roomy().await;
    let env = Cli::new(&srv.base_url, "sk_bad");
    let r = env.run(&["list"]).await;
    r.expect_error(3, "unauthorized");
    assert!(
        error_line(&r.stderr).ends_with("invalid API key (the key from FILESTORE_API_KEY)"),
        "{r:?}"
    );

    let bare = Cli::new("", "");
    let r = bare
        .run_bare(
            &["list", "--server", &srv.base_url, "--api-key", "sk_bad"],
            None,
        )
        .await;
    r.expect_error(3, "unauthorized");
    assert!(
        error_line(&r.stderr).ends_with("invalid API key (the key from the --api-key flag)"),
        "{r:?}"
    );

    bare.run_bare(
        &[
            "login",
            "--server",
            &srv.base_url,
            "--api-key",
            "sk_bad",
            "--profile",
            "ci",
            "--no-verify",
        ],
        None,
    )
    .await
    .expect(0);
    let r = bare.run_bare(&["list", "--profile", "ci"], None).await;
    r.expect_error(3, "unauthorized");
    let config = bare.config_file();
    assert!(
        error_line(&r.stderr).ends_with(&format!(
            "invalid API key (the key from profile \"ci\" in {})",
            config.display()
        )),
        "{r:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn limit_errors_show_sizes_as_usage_does() {
    const PLAN: &str = r#"
[plans.free]
max_file_size = 1000000
storage = 1000000
uploads = 1000
rate_limit = 1000
rate_window = "1m"
"#;
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some(PLAN.into()),
        ..Default::default()
    })
    .await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let big = write_file(&cli.cwd(), "big.bin", &vec![1; 800_002]);
    let more = write_file(&cli.cwd(), "more.bin", &vec![2; 300_000]);
    cli.run(&["upload", big.to_str().unwrap()]).await.expect(0);
    let usage = cli.run(&["usage"]).await;
    usage.expect(0);
    assert!(usage.stdout.contains("800.00 kB of 1.00 MB"), "{usage:?}");
    let r = cli.run(&["upload", more.to_str().unwrap()]).await;
    r.expect_error(5, "storage_limit_exceeded");
    let line = error_line(&r.stderr);
    assert!(
        line.ends_with("upload would exceed the storage quota (800.00 kB of 1.00 MB used)"),
        "{r:?}"
    );
    assert!(!line.contains("bytes"), "{r:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn list_json_without_a_limit_lists_every_file() {
    let srv = roomy().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let dir = cli.cwd().join("many");
    for i in 0..105 {
        write_file(&dir, &format!("f{i:03}.txt"), b"x");
    }
    cli.run(&["upload", "-r", dir.to_str().unwrap(), "-j", "8", "-q"])
        .await
        .expect(0);
    // More than a page of the API (100) and the human default (50).
    let r = cli.run(&["list", "--json"]).await;
    r.expect(0);
    assert_eq!(r.json_lines().len(), 105, "{r:?}");
    assert!(!r.stderr.contains("more files"), "{r:?}");
    // --limit still cuts, and says so on stderr; the table stops at 50.
    let r = cli.run(&["list", "--json", "--limit", "7"]).await;
    assert_eq!(r.json_lines().len(), 7);
    assert!(r.stderr.contains("more files"), "{r:?}");
    let r = cli.run(&["list"]).await;
    assert_eq!(r.stdout.lines().count(), 51, "a header and 50 rows: {r:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn delete_json_names_each_file() {
    let srv = roomy().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let mut ids = Vec::new();
    for name in ["a.txt", "b.txt"] {
        let f = write_file(&cli.cwd(), name, b"x");
        let r = cli.run(&["upload", f.to_str().unwrap(), "--json"]).await;
        ids.push(r.json()["id"].as_str().unwrap().to_string());
    }
    let r = cli.run(&["delete", &ids[0], &ids[1], "--json"]).await;
    r.expect(0);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 2, "{r:?}");
    for (line, id) in lines.iter().zip(&ids) {
        assert_eq!(line["id"], id.as_str(), "{r:?}");
        assert_eq!(line["success"], true, "{r:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_over_the_plan_maximum_says_how_to_raise_it() {
    let srv = roomy().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let big = write_file(&cli.cwd(), "big.bin", &[7; 1500]);
    for args in [
        &["upload", big.to_str().unwrap()][..],
        &["upload", big.to_str().unwrap(), "--chunk-size", "1000"],
    ] {
        let r = cli.run(args).await;
        r.expect_error(5, "file_too_large");
        let line = error_line(&r.stderr);
        assert!(
            line.contains(
                "file exceeds the plan's maximum file size of 1.00 kB; an operator raises it"
            ),
            "{args:?}: {r:?}"
        );
        assert!(
            line.ends_with("`filestore admin account set ACCOUNT --plan PLAN`"),
            "{args:?}: {r:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_public_key_without_an_origin_is_refused() {
    let srv = roomy().await;
    let args = [
        "key",
        "create",
        "--account",
        srv.account_id.as_str(),
        "--kind",
        "public",
    ];
    let out = process::admin(&srv.data_dir, None, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--origin is required for public keys"),
        "{err}"
    );
    let out = process::admin(&srv.data_dir, None, &["key", "list", "--json"]);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(!listed.contains("\"public\""), "no key was made: {listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn login_refuses_a_public_key() {
    let srv = roomy().await;
    let pk = srv.new_key("public", &["https://x.example"]).await;
    let cli = Cli::new("", "");
    for extra in [&[][..], &["--no-verify"]] {
        let mut args = vec!["login", "--server", &srv.base_url, "--api-key", &pk];
        args.extend_from_slice(extra);
        let r = cli.run_bare(&args, None).await;
        r.expect_error(2, "usage");
        let line = error_line(&r.stderr);
        assert!(
            line.contains("only uploads from browser pages of its origins"),
            "{r:?}"
        );
        assert!(line.contains("log in with a secret key"), "{r:?}");
        assert!(!cli.config_file().exists(), "nothing saved");
    }
}

#[test]
fn serve_neither_shows_nor_takes_json_or_quiet() {
    let out = filestore().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for flag in ["--json ", "--json\n", "-q,", "--quiet"] {
        assert!(!help.contains(flag), "{flag:?} in serve --help:\n{help}");
    }
    // A config that does not exist: were the flag taken, serve would fail
    // on it (error: config), not start.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.toml");
    let missing = missing.to_str().unwrap();
    for args in [
        &["serve", "--json", "--config", missing][..],
        &["serve", "-q", "--config", missing],
        &["--json", "serve", "--config", missing],
        &["-q", "serve", "--config", missing],
    ] {
        let out = filestore().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: usage: --"), "{args:?}: {err}");
        assert!(
            err.contains("`filestore serve` prints no results"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn admin_refuses_a_server_before_or_after_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    for args in [
        &[
            "--server",
            "http://h:1",
            "admin",
            "account",
            "list",
            "--data-dir",
            data,
        ][..],
        &[
            "admin",
            "--server",
            "http://h:1",
            "account",
            "list",
            "--data-dir",
            data,
        ],
        &[
            "admin",
            "account",
            "list",
            "--server",
            "http://h:1",
            "--data-dir",
            data,
        ],
        &[
            "admin",
            "account",
            "list",
            "--api-key",
            "sk_x",
            "--data-dir",
            data,
        ],
        &[
            "--profile",
            "p",
            "admin",
            "account",
            "list",
            "--data-dir",
            data,
        ],
    ] {
        let out = filestore().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: usage: --"), "{args:?}: {err}");
        assert!(
            err.contains("works on the data dir or the database directly"),
            "{args:?}: {err}"
        );
        assert!(err.contains("not through a server"), "{args:?}: {err}");
    }
    // Without them, the same command runs.
    let out = filestore()
        .args(["admin", "account", "list", "--data-dir", data])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}
