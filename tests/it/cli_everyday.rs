//! The everyday frictions of the command line (issue 45, CONTRACT §22), one
//! test each, from the real binary: upload tokens listed and revoked, the
//! root as a folder, folders that are not there, `--dry-run` that fails on
//! what the server would refuse, 80-column output, and help that ends with
//! examples and shows only the client's flags.

use crate::cli_common::{pattern, write_file, Cli};
use crate::common::TestServer;

async fn setup() -> (TestServer, Cli) {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    (srv, cli)
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_are_listed_without_secrets_and_revoked() {
    let (srv, cli) = setup().await;
    let made = cli
        .run(&[
            "token",
            "create",
            "--folder",
            "avatars",
            "--max-uploads",
            "3",
            "--json",
        ])
        .await;
    made.expect(0);
    let made = made.json();
    let secret = made["token"].as_str().unwrap().to_string();
    let id = made["id"].as_str().unwrap().to_string();
    let other = cli.run(&["token", "create", "--json"]).await.json();

    // The API: the active ones, newest first, no secrets.
    let (status, body) = srv.get_json(&srv.secret_key, "/v1/upload-tokens").await;
    assert_eq!(status, 200, "{body}");
    let tokens = body["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[0]["id"], other["id"], "newest first");
    assert_eq!(tokens[1]["policy"]["folder"], "avatars");
    assert!(!body.to_string().contains("upt_"), "no secret: {body}");
    assert!(tokens[0].get("url").is_none());

    let list = cli.run(&["token", "list"]).await;
    list.expect(0);
    assert_eq!(list.stdout.lines().count(), 2, "{list:?}");
    assert!(
        list.stdout.contains(&id) && list.stdout.contains("3/3 left"),
        "{list:?}"
    );
    assert!(!list.stdout.contains(&secret));
    assert_eq!(
        cli.run(&["token", "list", "--json"])
            .await
            .json_lines()
            .len(),
        2
    );

    let r = cli.run(&["token", "revoke", &id]).await;
    r.expect(0);
    assert_eq!(r.stdout.trim(), format!("revoked {id}"));
    let list = cli.run(&["token", "list", "--json"]).await.json_lines();
    assert_eq!(list.len(), 1, "a revoked token is not listed");
    assert_eq!(list[0]["id"], other["id"]);
    cli.run(&["token", "revoke", &id])
        .await
        .expect_error(4, "not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_root_is_a_folder_and_a_bad_folder_a_usage_error() {
    let (srv, cli) = setup().await;
    let top = srv.upload_ok("top.txt", b"t".to_vec(), &[]).await;
    srv.upload_ok("deep.txt", b"d".to_vec(), &[("folder", "docs/q1")])
        .await;
    srv.upload_ok("img.png", b"i".to_vec(), &[("folder", "media")])
        .await;
    for root in ["", "/"] {
        let r = cli.run(&["list", "--folder", root, "--json"]).await;
        r.expect(0);
        let lines = r.json_lines();
        assert_eq!(
            lines,
            [
                serde_json::json!({"folder": "docs"}),
                serde_json::json!({"folder": "media"}),
                lines[2].clone(),
            ],
            "the root's folders, then its files only ({root:?}): {r:?}"
        );
        assert_eq!(lines[2]["id"], top["id"]);
        let human = cli.run(&["list", "--folder", root]).await;
        assert!(
            human.stdout.starts_with("PRE docs/\nPRE media/\nNAME"),
            "{human:?}"
        );
    }
    // The API: `folder=/` is the root's own files; absent or empty, every file.
    let (status, body) = srv.get_json(&srv.secret_key, "/v1/files?folder=/").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["files"].as_array().unwrap().len(), 1, "{body}");
    let (_, body) = srv.get_json(&srv.secret_key, "/v1/files?folder=").await;
    assert_eq!(body["files"].as_array().unwrap().len(), 3, "{body}");
    for bad in ["a//b", "docs/../etc", "x/./y"] {
        let r = cli.run(&["list", "--folder", bad]).await;
        r.expect_error(2, "usage");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_folder_is_not_found_and_deleting_one_off_a_terminal_needs_yes() {
    let (srv, cli) = setup().await;
    srv.upload_ok("a.txt", b"a".to_vec(), &[("folder", "keep")])
        .await;
    let out = cli.cwd().join("out");
    let r = cli
        .run(&["download", "--folder", "nope", "-o", out.to_str().unwrap()])
        .await;
    r.expect_error(4, "not_found");
    assert!(r.stderr.contains("no folder \"nope\""), "{r:?}");
    let r = cli
        .run(&["delete", "--folder", "nope", "--recursive", "--yes"])
        .await;
    r.expect_error(4, "not_found");
    assert!(r.stderr.contains("no folder \"nope\""), "{r:?}");

    // Off a terminal (stdin is not one here), no question can be asked.
    let r = cli
        .run(&["delete", "--folder", "keep", "--recursive"])
        .await;
    r.expect_error(2, "usage");
    assert!(r.stderr.contains("needs --yes"), "{r:?}");
    cli.run(&["get", "keep/a.txt"]).await.expect(0);
    let r = cli
        .run(&["delete", "--folder", "keep", "--recursive", "--yes"])
        .await;
    r.expect(0);
    assert_eq!(r.stdout.trim(), "deleted 1 files in keep");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_names_what_would_be_refused_and_exits_1() {
    let (srv, cli) = setup().await;
    let dir = cli.cwd().join("in");
    write_file(&dir, "ok.txt", b"1");
    write_file(&dir, "sub/fine.txt", b"2");
    let ok = dir.join("ok.txt");
    let r = cli
        .run(&[
            "upload",
            ok.to_str().unwrap(),
            "--folder",
            "a/b",
            "--dry-run",
        ])
        .await;
    r.expect(0);
    assert_eq!(
        r.stdout.trim(),
        format!("would upload {} (1 B) to a/b/ok.txt", ok.display())
    );
    // A control character in the name: the server would refuse it.
    let r = cli
        .run(&[
            "upload",
            ok.to_str().unwrap(),
            "--name",
            "bad\u{7}.txt",
            "--dry-run",
        ])
        .await;
    r.expect(1);
    assert!(
        r.stdout.contains("would refuse") && r.stdout.contains("control"),
        "{r:?}"
    );
    let r = cli
        .run(&[
            "upload",
            "-r",
            dir.to_str().unwrap(),
            "--folder",
            "x/../y",
            "--dry-run",
            "--json",
        ])
        .await;
    r.expect(1);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| l["refused"].is_string()), "{r:?}");
    assert_eq!(srv.usage().await["upload_count"], 0, "nothing sent");

    // sync --dry-run: the same rule, exit 1.
    #[cfg(unix)]
    {
        write_file(&dir, "odd\\name.txt", b"3");
        let r = cli
            .run(&[
                "sync",
                dir.to_str().unwrap(),
                "--folder",
                "site",
                "--dry-run",
            ])
            .await;
        r.expect(1);
        assert!(r.stderr.contains("odd\\name.txt"), "{r:?}");
        assert!(r.stdout.contains("would upload"), "{r:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn lists_and_uploads_fit_80_columns() {
    let (_srv, cli) = setup().await;
    let long_name = format!("{}.tar.gz", "quarterly-report-".repeat(4));
    let f = write_file(&cli.cwd(), &long_name, &pattern(1500, 1));
    let up = cli
        .run(&["upload", f.to_str().unwrap(), "--folder", "releases/2026"])
        .await;
    up.expect(0);
    assert_eq!(up.stdout.lines().count(), 1, "one line a file: {up:?}");
    assert!(up.stdout.starts_with("uploaded releases/2026/"), "{up:?}");
    let id = cli.run(&["list", "--json"]).await.json_lines()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();

    let list = cli.run(&["list"]).await;
    list.expect(0);
    for line in list.stdout.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    let row = list.stdout.lines().nth(1).unwrap();
    assert!(
        row.starts_with("releases/2026/quarter"),
        "name first: {row}"
    );
    assert!(row.contains("1.50 kB"), "then the size: {row}");
    assert!(
        !row.contains(&id) && row.ends_with('…'),
        "a shortened id last: {row}"
    );
    assert!(row.contains(".tar.gz"), "the name's end stays: {row}");
    let long = cli.run(&["list", "--long"]).await;
    let row = long.stdout.lines().nth(1).unwrap();
    assert!(row.ends_with(&id) && row.contains(&long_name), "{row}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_help_ends_with_examples_and_client_help_has_no_server_flags() {
    let cli = Cli::new("http://127.0.0.1:9", "sk_unused");
    for cmd in [
        vec!["upload"],
        vec!["list"],
        vec!["token", "list"],
        vec!["whoami"],
        vec!["serve"],
        vec!["admin", "key", "create"],
    ] {
        let mut args = cmd.clone();
        args.push("--help");
        let r = cli.run(&args).await;
        r.expect(0);
        let examples = r
            .stdout
            .rfind("Examples:")
            .unwrap_or_else(|| panic!("{r:?}"));
        let after = &r.stdout[examples..];
        assert!(
            after.lines().skip(1).all(|l| l.starts_with("  ")),
            "the help ends with its examples: {r:?}"
        );
        assert!(after.contains("filestore "), "{r:?}");
        let server_side = cmd[0] == "serve" || cmd[0] == "admin";
        for flag in [
            "--data-dir",
            "--config",
            "--listen",
            "--s3-listen",
            "--metrics-listen",
            "--migrate",
        ] {
            if !server_side {
                assert!(!r.stdout.contains(flag), "{cmd:?} help shows {flag}: {r:?}");
            }
        }
        if server_side {
            assert!(r.stdout.contains("--data-dir"), "{r:?}");
        }
    }
    // `filestore --data-dir X serve` still parses (the flag is hidden, not gone).
    let r = cli
        .run(&["--data-dir", "/nonexistent/x", "serve", "--help"])
        .await;
    r.expect(0);
}

/// Several files at once on an 80-column terminal: no line of the progress
/// (the total bar and each file's) is wider than the terminal.
#[tokio::test(flavor = "multi_thread")]
async fn progress_bars_fit_the_terminal() {
    let (_srv, cli) = setup().await;
    let dir = cli.cwd().join("many");
    for i in 0..3 {
        write_file(&dir, &format!("file-{i}.bin"), &pattern(2_000_000, i));
    }
    let inner = cli.command(&["upload", "-r", dir.to_str().unwrap()], true);
    let quote = |s: &std::ffi::OsStr| format!("'{}'", s.to_string_lossy().replace('\'', r"'\''"));
    let line = std::iter::once(quote(inner.get_program()))
        .chain(inner.get_args().map(quote))
        .collect::<Vec<_>>()
        .join(" ");
    let mut cmd = std::process::Command::new("script");
    cmd.args([
        "-qec",
        &format!("stty cols 80 rows 24; {line}"),
        "/dev/null",
    ])
    .current_dir(cli.cwd());
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let Ok(out) = cmd.stdin(std::process::Stdio::null()).output() else {
        eprintln!("skipped: no `script` (util-linux) to give the CLI a terminal");
        return;
    };
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("files"),
        "the total bar was drawn: {screen:?}"
    );
    let plain = strip_ansi(&screen);
    for l in plain.split(['\r', '\n']) {
        // A bar exactly as wide as the terminal is followed by the next
        // without a newline (the terminal wraps there): each 80 columns
        // must then start a bar (the total's spinner, or a file's indent).
        let chars: Vec<char> = l.chars().collect();
        for piece in chars.chunks(80).skip(1) {
            let piece: String = piece.iter().collect();
            assert!(
                piece.starts_with("  ") || piece.starts_with(|c: char| !c.is_ascii()),
                "a line wider than 80 columns: {l:?}"
            );
        }
    }
}

/// Text without its ANSI escape sequences (CSI ... letter); one that moves
/// the cursor or erases starts a new line, a colour does not.
fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        if d != 'm' {
                            out.push('\n');
                        }
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}
