//! The CLI of folder and bulk operations: `mv`, `cp`, `delete --folder -r`,
//! `download --folder`, `list --folder` with its subfolders first.

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
async fn cp_copies_to_a_new_id() {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let f = srv
        .upload_ok("a.txt", b"abc".to_vec(), &[("folder", "x")])
        .await;
    let id = f["id"].as_str().unwrap();
    let r = cli
        .run(&["cp", id, "--folder", "y/z", "--name", "b.txt", "--json"])
        .await;
    r.expect(0);
    let copy = r.json();
    assert_ne!(copy["id"], f["id"]);
    assert_eq!(
        (&copy["folder"], &copy["name"], &copy["sha256"]),
        (&"y/z".into(), &"b.txt".into(), &f["sha256"])
    );
    // Without --json: one line naming the copy and its url.
    let r = cli.run(&["cp", id]).await;
    r.expect(0);
    let (_, list) = srv.get_json(&srv.secret_key, "/v1/files?folder=x").await;
    let newest = &list["files"][0];
    assert_ne!(newest["id"], f["id"]);
    assert_eq!(
        r.stdout,
        format!(
            "copied {id} to {} ({})\n",
            newest["id"].as_str().unwrap(),
            newest["url"].as_str().unwrap()
        )
    );
    assert_eq!(srv.usage().await["upload_count"], 3);
    cli.run(&["cp", "f_missing"])
        .await
        .expect_error(4, "not_found");
    cli.run(&["cp", id, "--name", "a/b"])
        .await
        .expect_error(1, "bad_request");
}

async fn cp_json(cli: &Cli, args: &[&str]) -> serde_json::Value {
    let args: Vec<&str> = ["cp", "--json"].iter().chain(args).copied().collect();
    let r = cli.run(&args).await;
    r.expect(0);
    r.json()
}

/// `cp --private` and `--public` set the copy's access; by default the copy
/// is as its file is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cp_sets_the_copys_access() {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let f = srv.upload_ok("a.txt", b"abc".to_vec(), &[]).await;
    let id = f["id"].as_str().unwrap();
    let copy = cp_json(&cli, &[id, "--private"]).await;
    assert_eq!(
        (&copy["private"], &copy["url"]),
        (&true.into(), &serde_json::Value::Null)
    );
    let copy_id = copy["id"].as_str().unwrap();
    let back = cp_json(&cli, &[copy_id, "--public"]).await;
    assert_eq!(back["private"], false);
    assert!(back["url"].is_string());
    assert_eq!(cp_json(&cli, &[id]).await["private"], false);
    assert_eq!(cp_json(&cli, &[copy_id]).await["private"], true);
    let both = cli.run(&["cp", id, "--private", "--public"]).await;
    assert_eq!(both.status, 2, "{}", both.stderr);
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
    // Not on a terminal: no question, so --yes is required.
    cli.run(&["delete", "--folder", "t", "--recursive"])
        .await
        .expect_error(2, "usage");
    let r = cli
        .run(&["delete", "--folder", "t", "--recursive", "--yes"])
        .await;
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

/// `download --folder F -o DIR`: the tree recreated (a repeated path
/// numbered as the folder's zip names it, a private file through a signed
/// URL), a partial file resumed, a rerun downloading nothing, a different
/// file replaced only with --force.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn download_folder_recreates_the_tree_and_resumes() {
    use crate::cli_common::{pattern, write_file};
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let big = pattern(300_000, 7);
    srv.upload_ok("a.txt", b"A1".to_vec(), &[("folder", "t")])
        .await;
    srv.upload_ok("a.txt", b"A2".to_vec(), &[("folder", "t")])
        .await;
    let b = srv
        .upload_ok("b.bin", big.clone(), &[("folder", "t/sub")])
        .await;
    srv.upload_ok("c.txt", b"deep".to_vec(), &[("folder", "t/sub/deep")])
        .await;
    srv.upload_ok(
        "p.txt",
        b"private".to_vec(),
        &[("folder", "t"), ("private", "true")],
    )
    .await;
    srv.upload_ok("x.txt", b"outside".to_vec(), &[("folder", "tt")])
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_s = out.to_str().unwrap();
    let want: [(&str, &[u8]); 5] = [
        ("a.txt", b"A2"),
        ("a (2).txt", b"A1"),
        ("sub/b.bin", &big),
        ("sub/deep/c.txt", b"deep"),
        ("p.txt", b"private"),
    ];
    let check = || {
        for (rel, bytes) in want {
            assert_eq!(std::fs::read(out.join(rel)).unwrap(), bytes, "{rel}");
        }
    };

    // Usage errors: an id with --folder, --folder without -o.
    assert_eq!(
        cli.run(&["download", "f_1", "--folder", "t", "-o", out_s])
            .await
            .status,
        2
    );
    assert_eq!(cli.run(&["download", "--folder", "t"]).await.status, 2);

    let r = cli
        .run(&["download", "--folder", "/t/", "-o", out_s, "--json"])
        .await;
    r.expect(0);
    let mut lines: Vec<(String, bool)> = r
        .json_lines()
        .iter()
        .map(|l| {
            (
                l["path"].as_str().unwrap().to_string(),
                l["downloaded"] == true,
            )
        })
        .collect();
    lines.sort();
    let mut expected: Vec<(String, bool)> =
        want.iter().map(|(p, _)| ((*p).to_string(), true)).collect();
    expected.sort();
    assert_eq!(lines, expected);
    check();
    assert!(!out.join("x.txt").exists());

    // Cut off midway: the partial file is resumed, the rest skipped.
    let b_id = b["id"].as_str().unwrap();
    std::fs::remove_file(out.join("sub/b.bin")).unwrap();
    write_file(
        &out,
        &format!("sub/.filestore-{b_id}.part"),
        &big[..100_000],
    );
    let r = cli.run(&["download", "--folder", "t", "-o", out_s]).await;
    r.expect(0);
    assert!(r.stderr.contains("resuming"), "{}", r.stderr);
    assert!(
        r.stdout.contains("downloaded 1 of 5 files") && r.stdout.contains("4 already complete"),
        "{}",
        r.stdout
    );
    check();
    assert!(!out.join(format!("sub/.filestore-{b_id}.part")).exists());

    // A rerun downloads nothing.
    let r = cli
        .run(&["download", "--folder", "t", "-o", out_s, "--json"])
        .await;
    r.expect(0);
    assert!(r.json_lines().iter().all(|l| l["downloaded"] == false));
    assert_eq!(r.json_lines().len(), 5);

    // Other bytes in the tree: refused (the others go on), replaced with --force.
    std::fs::write(out.join("sub/deep/c.txt"), b"mine").unwrap();
    let r = cli.run(&["download", "--folder", "t", "-o", out_s]).await;
    assert_eq!(r.status, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    cli.run(&["download", "--folder", "t", "-o", out_s, "--force"])
        .await
        .expect(0);
    check();
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
    assert!(out[2].starts_with("NAME "), "{}", r.stdout);
    assert_eq!(out.len(), 4, "{}", r.stdout);
    assert!(out[3].starts_with("releases/notes.txt "), "{}", r.stdout);

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

    // The root: its subfolders, then its own files only (`folder=/`).
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
    assert_eq!(recs.len(), 3 + 1, "{}", r.stdout);
    assert_eq!(recs[3]["name"], "root.txt");

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
    srv.upload_ok("root2.txt", b"abc".to_vec(), &[]).await;
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
    assert_eq!(recs.len(), 1, "the root's other file: {}", r.stdout);
    assert!(recs.iter().all(|f| f.get("id").is_some()), "{}", r.stdout);
}
