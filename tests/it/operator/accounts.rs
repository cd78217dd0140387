//! `admin account delete ID [--yes]` and `admin account usage ID [--json]`
//! (CONTRACT §22), on either database, while a server runs on it.

use crate::common::process::admin;
use crate::common::{Backend, TestOptions, TestServer};
use serde_json::Value;
use std::time::Duration;

/// `filestore admin ARGS` on the server's data and database: (exit code,
/// stdout, stderr).
fn run(srv: &TestServer, args: &[&str]) -> (i32, String, String) {
    let url = srv.on_postgres().then(|| srv.database_url().to_string());
    let out = admin(&srv.data_dir, url.as_deref(), args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn status_of(srv: &TestServer, key: &str, path: &str) -> u16 {
    srv.get_json(key, path).await.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_deletes_an_account_with_its_files_keys_tokens_and_webhooks() {
    let srv = TestServer::start_with(TestOptions {
        backend: Some(Backend::LocalBlobs),
        reap_interval: Some(Duration::from_millis(100)),
        ..Default::default()
    })
    .await;
    let (gone, key) = srv.new_account("gone", "free").await;
    let mut urls = Vec::new();
    for name in ["a.txt", "b.txt"] {
        let r = srv.upload_as(&key, name, vec![b'g'; 3000], &[]).await;
        assert_eq!(r.status(), 201);
        let file: Value = r.json().await.unwrap();
        urls.push(file["url"].as_str().unwrap().to_string());
    }
    let token = srv
        .http
        .post(srv.url("/v1/upload-tokens"))
        .bearer_auth(&key)
        .json(&serde_json::json!({"max_uploads": 5}))
        .send()
        .await
        .unwrap();
    assert_eq!(token.status(), 201);
    let token: Value = token.json().await.unwrap();
    let token = token["token"].as_str().unwrap().to_string();
    let (code, _, err) = run(
        &srv,
        &[
            "webhook",
            "create",
            "--account",
            "gone",
            "--url",
            "http://127.0.0.1:9/hook",
        ],
    );
    assert_eq!(code, 0, "{err}");
    // Another account's file stays.
    let kept = srv.upload_ok("kept.txt", vec![b'k'; 3000], &[]).await;
    let blobs = srv.blob_count().await;
    assert_eq!(blobs, 3);

    // The collector's usage reading of it (`GET /v1/usage/history`) goes too.
    let readings =
        format!("SELECT COUNT(*) FROM usage_days WHERE account_id = '{gone}' AND upload_total = 2");
    srv.eventually(10, "a usage reading of the account", || {
        let n = srv.count(&readings);
        async move { n == 1 }
    })
    .await;

    // Off a terminal, only with --yes: exit 2, nothing gone.
    let (code, _, err) = run(&srv, &["account", "delete", "gone"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--yes"), "{err}");
    assert_eq!(status_of(&srv, &key, "/v1/usage").await, 200);
    let (code, _, _) = run(&srv, &["account", "delete", "nobody", "--yes"]);
    assert_eq!(code, 4);

    let (code, out, err) = run(&srv, &["account", "delete", "gone", "--yes", "--json"]);
    assert_eq!(code, 0, "{err}");
    let done: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (&done["id"], &done["name"]),
        (&gone.as_str().into(), &"gone".into())
    );
    assert_eq!(done["deleted"], true);
    assert_eq!(
        (
            &done["files"],
            &done["bytes"],
            &done["keys"],
            &done["tokens"],
            &done["webhooks"]
        ),
        (&2.into(), &6000.into(), &1.into(), &1.into(), &1.into())
    );
    // Its key and token are refused at once, its files are gone.
    assert_eq!(status_of(&srv, &key, "/v1/usage").await, 401);
    let with_token = srv
        .post_form(&token, TestServer::form("t.txt", b"t".to_vec(), &[]))
        .await;
    assert_eq!(with_token.status(), 401);
    for url in &urls {
        assert_eq!(srv.http.get(url).send().await.unwrap().status(), 404);
    }
    let (_, accounts, _) = run(&srv, &["account", "list", "--json"]);
    assert!(!accounts.contains("\"gone\""), "{accounts}");
    let (_, keys, _) = run(&srv, &["key", "list", "--json"]);
    assert!(!keys.contains(&gone), "{keys}");
    let (_, hooks, _) = run(&srv, &["webhook", "list", "--json"]);
    assert!(hooks.trim().is_empty(), "{hooks}");
    for table in [
        "files",
        "usage_periods",
        "usage_days",
        "upload_tokens",
        "api_keys",
        "webhooks",
    ] {
        let n = srv.count(&format!(
            "SELECT COUNT(*) FROM {table} WHERE account_id = '{gone}'"
        ));
        assert_eq!(n, 0, "{table}");
    }
    // The server's collector frees the blobs; the other account's stay.
    srv.eventually(10, "the deleted account's blobs freed", || async {
        srv.blob_count().await == 1
    })
    .await;
    let kept_url = kept["url"].as_str().unwrap();
    assert_eq!(srv.http.get(kept_url).send().await.unwrap().status(), 200);
    let (code, _, _) = run(&srv, &["account", "delete", "gone", "--yes"]);
    assert_eq!(code, 4, "gone already");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_account_usage_prints_the_usage_record() {
    let srv = TestServer::start().await;
    let (_, key) = srv.new_account("measured", "hobby").await;
    let r = srv.upload_as(&key, "m.bin", vec![1; 4321], &[]).await;
    assert_eq!(r.status(), 201);
    let (status, served) = srv.get_json(&key, "/v1/usage").await;
    assert_eq!(status, 200);
    let (code, out, err) = run(&srv, &["account", "usage", "measured", "--json"]);
    assert_eq!(code, 0, "{err}");
    let printed: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(printed, served, "the record of GET /v1/usage");
    assert_eq!(printed["storage_bytes"], 4321);
    assert_eq!(printed["upload_count"], 1);
    assert_eq!(printed["plan"], "hobby");
    let (code, out, _) = run(&srv, &["account", "usage", "measured"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("plan       hobby\n"), "{out}");
    assert!(out.contains("uploads    1 of 50000"), "{out}");
    let (code, _, err) = run(&srv, &["account", "usage", "nobody"]);
    assert_eq!(code, 4, "{err}");
}
