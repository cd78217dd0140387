//! The CLI of folder and bulk operations: `mv`, `delete --folder -r`,
//! `list --folder` with its subfolders first.

use crate::cli_common::Cli;
use crate::common::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mv_renames_and_moves_keeping_the_id() {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let f = srv
        .upload_ok("a.txt", b"abc".to_vec(), &[("folder", "x")])
        .await;
    let id = f["id"].as_str().unwrap();
    let r = cli
        .run(&["mv", id, "--folder", "y/z", "--name", "b.txt", "--json"])
        .await;
    r.expect(0);
    let moved = r.json();
    assert_eq!(
        (&moved["id"], &moved["folder"], &moved["name"]),
        (&f["id"], &"y/z".into(), &"b.txt".into())
    );
    let r = cli.run(&["mv", id, "--folder", ""]).await;
    r.expect(0);
    assert!(
        r.stdout.contains("folder") && r.stdout.contains("b.txt"),
        "{}",
        r.stdout
    );
    let (_, got) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
        .await;
    assert!(got["folder"].is_null());
    // Nothing to change is a usage error; an unknown file is not_found.
    assert_ne!(cli.run(&["mv", id]).await.status, 0);
    cli.run(&["mv", "f_missing", "--name", "c"])
        .await
        .expect_error(4, "not_found");
    cli.run(&["mv", id, "--name", "a/b"])
        .await
        .expect_error(1, "bad_request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_folder_recursive() {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    for folder in ["t", "t/u", "tt"] {
        srv.upload_ok("a.txt", b"abc".to_vec(), &[("folder", folder)])
            .await;
    }
    // A folder goes whole: without --recursive nothing is sent.
    let r = cli.run(&["delete", "--folder", "t"]).await;
    assert_ne!(r.status, 0);
    assert!(r.stderr.contains("--recursive"), "{}", r.stderr);
    assert_ne!(
        cli.run(&["delete", "f_1", "--folder", "t", "-r"])
            .await
            .status,
        0
    );
    // Not on a terminal: no question.
    let r = cli.run(&["delete", "--folder", "t", "--recursive"]).await;
    r.expect(0);
    assert_eq!(r.stdout, "deleted 2 files in t\n");
    let r = cli
        .run(&["delete", "--folder", "tt", "-r", "--yes", "--json"])
        .await;
    r.expect(0);
    assert_eq!(r.json(), serde_json::json!({"success": true, "deleted": 1}));
    cli.run(&["delete", "--folder", "", "-r", "--yes"])
        .await
        .expect_error(1, "bad_request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_shows_subfolders_first() {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    for (name, folder) in [
        ("a.bin", "releases/v1.2"),
        ("b.bin", "releases/v1.2/deep"),
        ("c.txt", "releases/alpha"),
        ("notes.txt", "releases"),
        ("x.txt", "releases-old"),
        ("d.bin", "dist/v1.2"),
    ] {
        srv.upload_ok(name, b"abc".to_vec(), &[("folder", folder)])
            .await;
    }
    srv.upload_ok("root.txt", b"abc".to_vec(), &[]).await;
    let lines = |out: &str| out.lines().map(str::to_string).collect::<Vec<_>>();

    // Subfolders by name, then the table of the folder's own files.
    let r = cli.run(&["list", "--folder", "releases"]).await;
    r.expect(0);
    let out = lines(&r.stdout);
    assert_eq!(out[..2], ["PRE alpha/", "PRE v1.2/"], "{}", r.stdout);
    assert!(out[2].starts_with("ID "), "{}", r.stdout);
    assert_eq!(out.len(), 4, "{}", r.stdout);
    assert!(out[3].ends_with("releases/notes.txt"), "{}", r.stdout);

    // A folder holding only deeper files is not "no files" (it was).
    let r = cli.run(&["list", "--folder", "dist"]).await;
    r.expect(0);
    assert_eq!(r.stdout, "PRE v1.2/\n");
    assert!(!r.stderr.contains("no files"), "{}", r.stderr);
    let r = cli.run(&["list", "--folder", "nothing/here"]).await;
    r.expect(0);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("no files"), "{}", r.stderr);

    // JSON Lines: the folders' paths as the API gives them, then the files.
    let r = cli.run(&["list", "--folder", "releases", "--json"]).await;
    r.expect(0);
    let recs = r.json_lines();
    assert_eq!(
        recs[..2],
        [
            serde_json::json!({"folder": "releases/alpha"}),
            serde_json::json!({"folder": "releases/v1.2"})
        ]
    );
    assert_eq!(recs.len(), 3, "{}", r.stdout);
    assert_eq!(recs[2]["name"], "notes.txt");

    // The root: its subfolders, then (the API has no root-only filter)
    // every file.
    let r = cli.run(&["list", "--folder", "", "--json"]).await;
    r.expect(0);
    let recs = r.json_lines();
    assert_eq!(
        recs[..3],
        [
            serde_json::json!({"folder": "dist"}),
            serde_json::json!({"folder": "releases"}),
            serde_json::json!({"folder": "releases-old"})
        ]
    );
    assert_eq!(recs.len(), 3 + 7, "{}", r.stdout);

    // Recursive, a metadata filter or a continued listing: files only.
    let r = cli
        .run(&["list", "--folder", "releases", "-r", "--json"])
        .await;
    r.expect(0);
    let recs = r.json_lines();
    assert_eq!(recs.len(), 4, "{}", r.stdout);
    assert!(recs.iter().all(|f| f.get("id").is_some()), "{}", r.stdout);
    let r = cli
        .run(&["list", "--folder", "releases", "--metadata", "k=v"])
        .await;
    r.expect(0);
    assert!(!r.stdout.contains("PRE"), "{}", r.stdout);

    // --limit counts files: every subfolder still shows, then the hint.
    let r = cli.run(&["list", "--folder", "", "--limit", "1"]).await;
    r.expect(0);
    let out = lines(&r.stdout);
    assert_eq!(
        out[..3],
        ["PRE dist/", "PRE releases/", "PRE releases-old/"],
        "{}",
        r.stdout
    );
    assert_eq!(out.len(), 5, "{}", r.stdout);
    assert!(r.stderr.contains("more files"), "{}", r.stderr);
    let cursor = r.stderr.rsplit("--cursor ").next().unwrap().trim();
    let r = cli
        .run(&["list", "--folder", "", "--cursor", cursor, "--json"])
        .await;
    r.expect(0);
    let recs = r.json_lines();
    assert_eq!(recs.len(), 6, "{}", r.stdout);
    assert!(recs.iter().all(|f| f.get("id").is_some()), "{}", r.stdout);
}
