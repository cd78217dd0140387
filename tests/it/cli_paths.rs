//! Files reached by their path from the command line (issue 45, CONTRACT
//! §21): `get`, `download`, `sign`, `mv`, `cp` and `delete` take an id
//! (`f_…`) or a path (a leading `/` forces one); a path is its newest file,
//! but `delete` removes every file there. `upload --replace`, `upload
//! --no-clobber` and `sync` (which replaces) need the server's `replace`
//! and `if_absent` upload fields: those tests are marked below.

use crate::cli_common::{write_file, Cli};
use crate::common::TestServer;

async fn setup() -> (TestServer, Cli) {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    (srv, cli)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_path_names_its_newest_file() {
    let (srv, cli) = setup().await;
    let old = srv
        .upload_ok("app.txt", b"v1".to_vec(), &[("folder", "rel/latest")])
        .await;
    let new = srv
        .upload_ok("app.txt", b"v2!".to_vec(), &[("folder", "rel/latest")])
        .await;
    assert_ne!(old["id"], new["id"]);

    let got = cli.run(&["get", "rel/latest/app.txt", "--json"]).await;
    got.expect(0);
    assert_eq!(got.json()["id"], new["id"], "the newest file at the path");
    // A leading `/` is a path too.
    let got = cli.run(&["get", "/rel/latest/app.txt", "--json"]).await;
    assert_eq!(got.json()["id"], new["id"]);

    let dl = cli
        .run(&["download", "rel/latest/app.txt", "-o", "-"])
        .await;
    dl.expect(0);
    assert_eq!(dl.bytes, b"v2!");

    let signed = cli.run(&["sign", "rel/latest/app.txt", "--json"]).await;
    signed.expect(0);
    let url = signed.json()["url"].as_str().unwrap().to_string();
    assert!(url.contains(new["id"].as_str().unwrap()), "{url}");

    let copied = cli
        .run(&["cp", "rel/latest/app.txt", "--folder", "archive", "--json"])
        .await;
    copied.expect(0);
    assert_eq!(copied.json()["folder"], "archive");
    assert_eq!(copied.json()["size"], 3);

    let moved = cli
        .run(&["mv", "archive/app.txt", "--name", "app-v2.txt", "--json"])
        .await;
    moved.expect(0);
    assert_eq!(moved.json()["name"], "app-v2.txt");
    assert_eq!(moved.json()["id"], copied.json()["id"]);

    // An id is still an id.
    let by_id = cli
        .run(&["get", old["id"].as_str().unwrap(), "--json"])
        .await;
    assert_eq!(by_id.json()["id"], old["id"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_path_without_a_file_is_not_found_and_a_bad_one_a_usage_error() {
    let (_srv, cli) = setup().await;
    for cmd in ["get", "download", "sign", "delete"] {
        let r = cli.run(&[cmd, "nowhere/none.txt"]).await;
        r.expect_error(4, "not_found");
        assert!(
            r.stderr.contains("no file at path \"nowhere/none.txt\""),
            "{r:?}"
        );
    }
    cli.run(&["mv", "none.txt", "--name", "x"])
        .await
        .expect_error(4, "not_found");
    // `/f_x` is the path `f_x` (a file named so), not the id.
    let r = cli.run(&["get", "/f_doesnotexist"]).await;
    r.expect_error(4, "not_found");
    assert!(r.stderr.contains("no file at path"), "{r:?}");
    // No file can be at `a//b`.
    cli.run(&["get", "a//b.txt"]).await.expect_error(2, "usage");
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_path_removes_every_file_there() {
    let (srv, cli) = setup().await;
    for body in [&b"1"[..], b"22", b"333"] {
        srv.upload_ok("dup.txt", body.to_vec(), &[("folder", "d")])
            .await;
    }
    let keep = srv
        .upload_ok("other.txt", b"k".to_vec(), &[("folder", "d")])
        .await;
    let r = cli.run(&["delete", "d/dup.txt"]).await;
    r.expect(0);
    assert_eq!(r.stdout.trim(), "deleted 3 files at d/dup.txt", "{r:?}");
    cli.run(&["get", "d/dup.txt"])
        .await
        .expect_error(4, "not_found");
    let left = cli.run(&["list", "--folder", "d", "--json"]).await;
    let ids: Vec<_> = left.json_lines().iter().map(|f| f["id"].clone()).collect();
    assert_eq!(ids, [keep["id"].clone()]);

    // --json: one line a deleted file, with its path.
    srv.upload_ok("one.txt", b"1".to_vec(), &[]).await;
    let r = cli.run(&["delete", "one.txt", "--json"]).await;
    r.expect(0);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["path"], "one.txt");
    assert_eq!(lines[0]["success"], true);
}

/// Needs the server's `replace` upload field (CONTRACT §21): verified after
/// the merge with the server side.
#[tokio::test(flavor = "multi_thread")]
async fn upload_replace_leaves_one_file_at_the_path() {
    let (srv, cli) = setup().await;
    srv.upload_ok("app.txt", b"v1".to_vec(), &[("folder", "rel")])
        .await;
    srv.upload_ok("app.txt", b"v1b".to_vec(), &[("folder", "rel")])
        .await;
    let f = write_file(&cli.cwd(), "app.txt", b"v2");
    let r = cli
        .run(&[
            "upload",
            f.to_str().unwrap(),
            "--folder",
            "rel",
            "--replace",
            "--json",
        ])
        .await;
    r.expect(0);
    let new_id = r.json_lines()[0]["id"].clone();
    let left = cli.run(&["list", "--folder", "rel", "--json"]).await;
    let ids: Vec<_> = left.json_lines().iter().map(|f| f["id"].clone()).collect();
    assert_eq!(ids, [new_id], "one file at the path: {left:?}");
}

/// Needs the server's `if_absent` upload field (409 `conflict`, CONTRACT
/// §21): verified after the merge with the server side.
#[tokio::test(flavor = "multi_thread")]
async fn upload_no_clobber_refuses_a_taken_path_with_exit_5() {
    let (srv, cli) = setup().await;
    srv.upload_ok("a.txt", b"old".to_vec(), &[]).await;
    let f = write_file(&cli.cwd(), "a.txt", b"new");
    let r = cli
        .run(&["upload", f.to_str().unwrap(), "--no-clobber"])
        .await;
    r.expect_error(5, "conflict");
    let free = write_file(&cli.cwd(), "b.txt", b"new");
    cli.run(&["upload", free.to_str().unwrap(), "--no-clobber"])
        .await
        .expect(0);
    // The two flags contradict each other.
    cli.run(&[
        "upload",
        free.to_str().unwrap(),
        "--no-clobber",
        "--replace",
    ])
    .await
    .expect_error(2, "usage");
}

/// Needs the server's `replace` upload field: a changed file is re-published
/// in one step. Verified after the merge with the server side.
#[tokio::test(flavor = "multi_thread")]
async fn sync_republishes_a_changed_file_in_one_step() {
    let (_srv, cli) = setup().await;
    let root = cli.cwd().join("site");
    write_file(&root, "index.html", b"v1");
    let dir = root.to_str().unwrap();
    cli.run(&["sync", dir, "--folder", "www"]).await.expect(0);
    write_file(&root, "index.html", b"v2, longer");
    cli.run(&["sync", dir, "--folder", "www"]).await.expect(0);
    let left = cli.run(&["list", "--folder", "www", "--json"]).await;
    let files = left.json_lines();
    assert_eq!(files.len(), 1, "{left:?}");
    assert_eq!(files[0]["size"], 10);
}
