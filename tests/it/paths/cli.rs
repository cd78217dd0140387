//! The CLI into folders of any characters: `upload --folder 'my docs'`,
//! `sync` into `my docs/ünï+%` (then nothing to do), and a local directory
//! whose name the server would refuse reported, never planned, by a dry
//! run.

use super::api::with_query;
use crate::cli_common::{write_file, Cli};
use crate::common::TestServer;
use serde_json::Value;

async fn folder_of(srv: &TestServer, folder: &str) -> Vec<String> {
    let r = srv
        .http
        .get(with_query(srv, "/v1/files", &[("folder", folder)]))
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let list: Value = r.json().await.unwrap();
    let mut names: Vec<String> = list["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn upload_and_sync_into_folders_with_spaces_and_symbols() {
    let srv = TestServer::start().await;
    let mut cli = Cli::new(&srv.base_url, &srv.secret_key);
    let cache = cli.home.path().join("cache");
    cli.envs.push((
        "XDG_CACHE_HOME".into(),
        cache.to_string_lossy().into_owned(),
    ));
    let file = write_file(&cli.cwd(), "report 1.txt", b"r");
    cli.run(&["upload", file.to_str().unwrap(), "--folder", "my docs"])
        .await
        .expect(0);
    assert_eq!(folder_of(&srv, "my docs").await, ["report 1.txt"]);

    let root = cli.cwd().join("site");
    write_file(&root, "ünï+%/a b.txt", b"a");
    write_file(&root, "x*y/z\\w.txt", b"z");
    write_file(&root, "top.txt", b"t");
    let args = ["sync", root.to_str().unwrap(), "--folder", "my docs/ünï+%"];
    let dry = cli.run(&[&args[..], &["--dry-run"]].concat()).await;
    // What the server would refuse fails a dry run (exit 1).
    assert_eq!(dry.status, 1, "{dry:?}");
    assert!(
        dry.stdout.contains("would upload\tünï+%/a b.txt"),
        "{dry:?}"
    );
    assert!(dry.stdout.contains("dry run: would upload 2"), "{dry:?}");
    // `\` in a local name cannot be published (the server reads it as a
    // separator); the rest goes, and a second run has nothing to do.
    let run = cli.run(&args).await;
    assert_eq!(run.status, 2, "{run:?}");
    assert!(run.stdout.contains("uploaded 2, skipped 0"), "{run:?}");
    assert_eq!(folder_of(&srv, "my docs/ünï+%").await, ["top.txt"]);
    assert_eq!(folder_of(&srv, "my docs/ünï+%/ünï+%").await, ["a b.txt"]);
    let again = cli.run(&args).await;
    assert!(again.stdout.contains("uploaded 0, skipped 2"), "{again:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_does_not_plan_what_the_server_would_refuse() {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let root = cli.cwd().join("site");
    write_file(&root, "ok dir/a.txt", b"a");
    write_file(&root, "bad\u{1}dir/b.txt", b"b");
    write_file(&root, &format!("{}/c.txt", "d".repeat(250)), b"c");
    let deep = vec!["e".repeat(250); 5].join("/");
    write_file(&root, &format!("{deep}/d.txt"), b"d");
    let args = [
        "sync",
        root.to_str().unwrap(),
        "--folder",
        "site",
        "--dry-run",
    ];
    let dry = cli.run(&args).await;
    // What the server would refuse fails a dry run (exit 1).
    assert_eq!(dry.status, 1, "{dry:?}");
    assert!(dry.stdout.contains("would upload\tok dir/a.txt"), "{dry:?}");
    assert!(dry
        .stdout
        .contains(&format!("would upload\t{}/c.txt", "d".repeat(250))));
    assert!(!dry.stdout.contains("b.txt"), "{dry:?}");
    assert!(!dry.stdout.contains("d.txt"), "{dry:?}");
    assert!(dry.stdout.contains("would upload 2"), "{dry:?}");
    assert!(dry.stderr.contains("control character"), "{dry:?}");
    assert!(dry.stderr.contains("longer than 1024 bytes"), "{dry:?}");
    // A --folder the server refuses is refused before anything is read.
    let r = cli
        .run(&["sync", root.to_str().unwrap(), "--folder", "a/../b"])
        .await;
    r.expect_error(2, "usage");
    // The real run stores exactly what the dry run said.
    let run = cli.run(&args[..4]).await;
    assert_eq!(run.status, 2, "{run:?}");
    assert!(run.stdout.contains("uploaded 2, skipped 0"), "{run:?}");
    assert_eq!(folder_of(&srv, "site/ok dir").await, ["a.txt"]);
}
