//! The CLI of folder and bulk operations: `mv`, `cp`, `delete --folder`.

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
    cli.run(&["delete", "--folder", "/", "-r", "--yes"])
        .await
        .expect_error(1, "bad_request");
}
