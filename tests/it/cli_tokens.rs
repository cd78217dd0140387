//! Upload tokens, upload policies and file metadata on the command line
//! (docs/api.md, "Upload tokens"): `token create` (its URL takes a plain multipart POST
//! with no key), `upload --metadata` (multipart and resumable), `list
//! --metadata`, and `admin key create --kind public` with a policy.

use crate::cli_common::{pattern, write_file, Action, Cli, Proxy};
use crate::common::{process, TestServer};
use std::sync::Arc;

async fn setup() -> (TestServer, Cli) {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    (srv, cli)
}

/// The first bytes of a PNG, then filler: sniffed as `image/png`.
fn png(len: usize) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0".to_vec();
    bytes.extend(pattern(len.saturating_sub(bytes.len()), 3));
    bytes
}

/// A multipart POST of one `file` part to `url`, without any key.
async fn post_file(srv: &TestServer, url: &str, name: &str, bytes: Vec<u8>) -> reqwest::Response {
    srv.http
        .post(url)
        .multipart(TestServer::form(name, bytes, &[]))
        .send()
        .await
        .expect("upload request")
}

#[tokio::test(flavor = "multi_thread")]
async fn token_create_prints_a_url_that_a_plain_post_uploads_to() {
    let (srv, cli) = setup().await;
    let run = cli
        .run(&[
            "token",
            "create",
            "--folder",
            "avatars",
            "--type",
            "image/*",
            "--max-size",
            "10KB",
            "--metadata",
            "user=u1",
        ])
        .await;
    run.expect(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "only the url: {run:?}");
    let url = lines[0];
    let prefix = format!("{}/v1/upload?token=upt_", srv.base_url);
    assert!(url.starts_with(&prefix), "{url}");

    // Not an image: refused, and the token's one use is kept.
    let r = post_file(&srv, url, "cat.png", b"#!/bin/sh\necho hi\n".to_vec()).await;
    assert_eq!(r.status(), 415, "{}", r.text().await.unwrap_or_default());

    let r = post_file(&srv, url, "cat.png", png(2000)).await;
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
    let file: serde_json::Value = r.json().await.unwrap();
    assert_eq!(file["folder"], "avatars");
    assert_eq!(file["type"], "image/png");
    assert_eq!(file["metadata"], serde_json::json!({ "user": "u1" }));

    // --max-uploads defaults to 1: the token is used up.
    let r = post_file(&srv, url, "again.png", png(100)).await;
    assert_eq!(r.status(), 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn token_create_json_is_the_record() {
    let (_srv, cli) = setup().await;
    let run = cli
        .run(&[
            "token",
            "create",
            "--max-uploads",
            "3",
            "--expires",
            "15m",
            "--max-size",
            "1MB",
            "--type",
            "IMAGE/png",
            "--type",
            "application/pdf",
            "--private",
            "--file-expires",
            "7d",
            "--metadata",
            "user=u1",
            "--metadata",
            "user=u2",
            "--json",
        ])
        .await;
    run.expect(0);
    let t = run.json();
    let id = t["id"].as_str().unwrap();
    let token = t["token"].as_str().unwrap();
    assert!(id.starts_with("ut_") && id.len() == 27, "{t}");
    assert!(token.starts_with("upt_") && token.len() == 68, "{t}");
    assert!(
        t["url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/v1/upload?token={token}")),
        "{t}"
    );
    assert_eq!(t["max_uploads"], 3);
    assert_eq!(t["uploads_left"], 3);
    assert!(t.get("revoked_at").is_none(), "{t}");
    assert_eq!(
        t["policy"],
        serde_json::json!({
            "folder": null,
            "max_size": 1_000_000,
            "types": ["image/png", "application/pdf"],
            "private": true,
            "file_expires": 604_800,
            "metadata": { "user": "u2" },
            "replace": false,
        })
    );
    let at = |k: &str| {
        chrono::DateTime::parse_from_rfc3339(t[k].as_str().unwrap())
            .unwrap()
            .timestamp()
    };
    assert_eq!(at("expires_at") - at("created_at"), 900, "{t}");
}

#[tokio::test(flavor = "multi_thread")]
async fn token_create_refuses_bad_flags_before_sending() {
    let (srv, cli) = setup().await;
    for args in [
        &["--expires", "2d"][..],
        &["--max-uploads", "1001"],
        &["--max-size", "0"],
        &["--type", "image"],
        &["--metadata", "User=x"],
        &["--file-expires", "1y"],
    ] {
        let argv: Vec<&str> = ["token", "create"].iter().chain(args).copied().collect();
        cli.run(&argv).await.expect_error(2, "usage");
    }
    // A public key may not make tokens.
    let public = srv.new_key("public", &["https://app.example.com"]).await;
    Cli::new(&srv.base_url, &public)
        .run(&["token", "create"])
        .await
        .expect(3);
}

#[tokio::test(flavor = "multi_thread")]
async fn upload_metadata_round_trips_through_multipart_and_tus() {
    let (_srv, cli) = setup().await;
    let small = write_file(&cli.cwd(), "small.txt", b"hello");
    let up = cli
        .run(&[
            "upload",
            small.to_str().unwrap(),
            "--metadata",
            "user=u1",
            "--metadata",
            "note=a b=c",
            "--metadata",
            "user=u2",
            "--json",
        ])
        .await;
    up.expect(0);
    let rec = &up.json_lines()[0];
    let want = serde_json::json!({ "user": "u2", "note": "a b=c" });
    assert_eq!(rec["metadata"], want);
    let got = cli
        .run(&["get", rec["id"].as_str().unwrap(), "--json"])
        .await;
    got.expect(0);
    assert_eq!(got.json()["metadata"], want);

    // At or above --chunk-size the upload is resumable (tus).
    let big = write_file(&cli.cwd(), "big.bin", &pattern(200_000, 9));
    let up = cli
        .run(&[
            "upload",
            big.to_str().unwrap(),
            "--chunk-size",
            "64KiB",
            "--metadata",
            "user=u3",
            "--json",
        ])
        .await;
    up.expect(0);
    let rec = &up.json_lines()[0];
    assert_eq!(rec["size"], 200_000);
    assert_eq!(rec["metadata"], serde_json::json!({ "user": "u3" }));
    let got = cli
        .run(&["get", rec["id"].as_str().unwrap(), "--json"])
        .await;
    assert_eq!(got.json()["metadata"], serde_json::json!({ "user": "u3" }));

    // Without --metadata a file has none.
    let up = cli
        .run(&["upload", small.to_str().unwrap(), "--json"])
        .await;
    up.expect(0);
    assert_eq!(up.json_lines()[0]["metadata"], serde_json::json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_metadata_fails_before_anything_is_sent() {
    let (srv, _) = setup().await;
    let forward: crate::cli_common::Rule = Arc::new(|_, _, _| Action::Forward);
    let proxy = Proxy::start(&srv.base_url, forward).await;
    let cli = Cli::new(&proxy.url, &srv.secret_key);
    let file = write_file(&cli.cwd(), "a.txt", b"hello");
    let path = file.to_str().unwrap();
    let seventeen: Vec<String> = (0..17).map(|i| format!("k{i}=v")).collect();
    let huge = format!("k={}", "x".repeat(5000));
    let mut cases: Vec<Vec<&str>> = vec![
        vec!["upload", path, "--metadata", "Bad=x"],
        vec!["upload", path, "--metadata", "no-equals-sign"],
        vec!["upload", path, "--metadata", &huge],
        vec!["upload", path, "--chunk-size", "1", "--metadata", "a.b=c"],
        vec!["list", "--metadata", "Bad=x"],
        vec!["token", "create", "--metadata", &huge],
    ];
    let mut many = vec!["upload", path];
    for pair in &seventeen {
        many.extend(["--metadata", pair.as_str()]);
    }
    cases.push(many);
    for argv in &cases {
        let run = cli.run(argv).await;
        run.expect_error(2, "usage");
        assert!(run.stderr.contains("metadata"), "{argv:?}: {run:?}");
    }
    assert!(
        proxy.hits.lock().unwrap().is_empty(),
        "no request was sent: {:?}",
        proxy.hits.lock().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn list_filters_by_metadata() {
    let (_srv, cli) = setup().await;
    let file = write_file(&cli.cwd(), "a.txt", b"hello");
    let path = file.to_str().unwrap();
    let mut ids = Vec::new();
    for meta in [
        &["user=u1", "kind=avatar"][..],
        &["user=u1", "kind=doc"],
        &["user=u2", "kind=avatar"],
        &[],
    ] {
        let mut argv = vec!["upload", path, "--json"];
        for m in meta {
            argv.extend(["--metadata", m]);
        }
        let up = cli.run(&argv).await;
        up.expect(0);
        ids.push(up.json_lines()[0]["id"].as_str().unwrap().to_string());
    }
    let listed = |run: &crate::cli_common::Run| -> Vec<String> {
        run.expect(0);
        let mut v: Vec<String> = run
            .json_lines()
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let run = cli.run(&["list", "--metadata", "user=u1", "--json"]).await;
    assert_eq!(listed(&run), sorted(vec![ids[0].clone(), ids[1].clone()]));
    let run = cli
        .run(&[
            "list",
            "--metadata",
            "user=u1",
            "--metadata",
            "kind=avatar",
            "--json",
        ])
        .await;
    assert_eq!(listed(&run), vec![ids[0].clone()], "all must match");
    let run = cli
        .run(&["list", "--metadata", "user=nobody", "--json"])
        .await;
    assert!(listed(&run).is_empty());
    // Pages of a filtered listing follow the cursor.
    let run = cli
        .run(&[
            "list",
            "--metadata",
            "kind=avatar",
            "--limit",
            "1",
            "--json",
        ])
        .await;
    assert_eq!(listed(&run).len(), 1);
    let run = cli
        .run(&["list", "--metadata", "kind=avatar", "--all", "--json"])
        .await;
    assert_eq!(listed(&run), sorted(vec![ids[0].clone(), ids[2].clone()]));
    // Human output: the table of the matching files.
    let run = cli.run(&["list", "--metadata", "user=u2"]).await;
    run.expect(0);
    assert_eq!(
        run.stdout.lines().count(),
        2,
        "header and one file: {run:?}"
    );
}

/// `filestore admin` on the test server's store.
fn admin(srv: &TestServer, args: &[&str]) -> std::process::Output {
    let url = srv.on_postgres().then(|| srv.database_url());
    process::admin(&srv.data_dir, url, args)
}

#[tokio::test(flavor = "multi_thread")]
async fn admin_key_create_stores_a_public_keys_policy() {
    let srv = TestServer::start().await;
    let origin = "https://app.example.com";
    let out = admin(
        &srv,
        &[
            "key",
            "create",
            "--account",
            &srv.account_id,
            "--kind",
            "public",
            "--origin",
            origin,
            "--max-size",
            "1KB",
            "--type",
            "image/PNG",
            "--folder",
            "/uploads/",
            "--json",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let key: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(key["folder"], "uploads");
    assert_eq!(key["max_size"], 1000);
    assert_eq!(key["types"], serde_json::json!(["image/png"]));
    let pk = key["key"].as_str().unwrap().to_string();

    let out = admin(&srv, &["key", "list", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let listed: serde_json::Value = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|k| k["id"] == key["id"])
        .expect("the key is listed");
    assert_eq!(
        (&listed["folder"], &listed["max_size"], &listed["types"]),
        (&key["folder"], &key["max_size"], &key["types"])
    );
    assert!(!text.contains(&pk), "never the secret");
    let out = admin(&srv, &["key", "list"]);
    let human = String::from_utf8(out.stdout).unwrap();
    assert!(
        human.contains("folder=uploads  max_size=1000  types=image/png"),
        "{human}"
    );

    // The policy holds for the key's uploads.
    let r = srv.upload_with_origin(&pk, origin, "a.png", png(500)).await;
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
    let file: serde_json::Value = r.json().await.unwrap();
    assert_eq!(file["folder"], "uploads");
    assert_eq!(file["type"], "image/png");
    let r = srv
        .upload_with_origin(&pk, origin, "big.png", png(2000))
        .await;
    assert_eq!(r.status(), 413);
    let r = srv
        .upload_with_origin(&pk, origin, "a.png", b"just text".to_vec())
        .await;
    assert_eq!(r.status(), 415);

    // Secret keys take no policy, as they take no origin.
    for flags in [
        &["--max-size", "1KB"][..],
        &["--type", "image/png"],
        &["--folder", "x"],
    ] {
        let mut argv = vec![
            "key",
            "create",
            "--account",
            &srv.account_id,
            "--kind",
            "secret",
        ];
        argv.extend(flags);
        let out = admin(&srv, &argv);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("--max-size, --type and --folder are for public keys only"),
            "{err}"
        );
    }
    // A bad type or folder is refused; "token" is not a key kind.
    for flags in [
        &["--type", "image"][..],
        &["--folder", "../x"],
        &["--max-size", "0"],
    ] {
        let mut argv = vec![
            "key",
            "create",
            "--account",
            &srv.account_id,
            "--kind",
            "public",
            "--origin",
            origin,
        ];
        argv.extend(flags);
        let out = admin(&srv, &argv);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {out:?}");
    }
    let out = admin(
        &srv,
        &[
            "key",
            "create",
            "--account",
            &srv.account_id,
            "--kind",
            "token",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
