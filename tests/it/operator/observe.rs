//! Access lines carry the client's address and the request's id, which
//! every answer returns as `X-Request-Id` (a sane one the request brought is
//! kept); the metrics have the store's gauges (CONTRACT §22).

use crate::common::pg;
use crate::common::process::{admin, free_port, metric_value, Serve, ServeProcess};
use crate::common::upload_form;
use serde_json::Value;
use std::time::{Duration, Instant};

/// The JSON access line whose `request_id` is `id` (waiting for it).
fn line_of(served: &ServeProcess, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let found = served
            .lines()
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["target"] == "filestore::access" && v["request_id"] == id);
        if let Some(line) = found {
            return line;
        }
        assert!(
            Instant::now() < deadline,
            "no access line with request_id {id}:\n{}",
            served.log_text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A request's status and the id its answer carries.
async fn ask(req: reqwest::RequestBuilder) -> (u16, String) {
    let r = req.send().await.unwrap();
    let id = r.headers()["x-request-id"].to_str().unwrap().to_string();
    (r.status().as_u16(), id)
}

fn fresh(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn access_lines_carry_the_client_and_the_request_id_every_answer_returns() {
    let dir = tempfile::tempdir().unwrap();
    let served = Serve::new(dir.path())
        .args(&["--log-format", "json"])
        .start();
    let key = served.key();
    let http = reqwest::Client::new();

    let (status, id) = ask(http.get(served.url("/v1/usage")).bearer_auth(&key)).await;
    assert_eq!(status, 200);
    assert!(fresh(&id), "{id}");
    let line = line_of(&served, &id);
    assert_eq!(line["client"], "127.0.0.1", "{line}");
    assert_eq!(line["route"], "/v1/usage");
    assert!(line["account"].as_str().unwrap().starts_with("acc_"));

    // A sane id a proxy or client sends is kept; anything else replaced.
    let (_, kept) = ask(http
        .get(served.url("/v1/health"))
        .header("x-request-id", "lb-7f3a:42"))
    .await;
    assert_eq!(kept, "lb-7f3a:42");
    assert_eq!(line_of(&served, "lb-7f3a:42")["route"], "/v1/health");
    for odd in ["two words", "quote\"d", &"x".repeat(129)] {
        let (_, id) = ask(http
            .get(served.url("/v1/health"))
            .header("x-request-id", odd))
        .await;
        assert!(fresh(&id), "{odd:?} gave {id}");
        assert_eq!(line_of(&served, &id)["client"], "127.0.0.1");
    }
    // Errors and the CDN's hot path (a public file asked twice) too.
    let (status, id) = ask(http.get(served.url("/v1/nothing"))).await;
    assert_eq!(status, 404);
    assert_eq!(line_of(&served, &id)["status"], 404);
    let up = http
        .post(served.url("/v1/upload"))
        .bearer_auth(&key)
        .multipart(upload_form("hot.txt", b"hot".to_vec(), &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(up.status(), 201);
    let file: Value = up.json().await.unwrap();
    let url = file["url"].as_str().unwrap();
    for _ in 0..2 {
        let (status, id) = ask(http.get(url)).await;
        assert_eq!(status, 200);
        let line = line_of(&served, &id);
        assert_eq!(
            (&line["route"], &line["client"]),
            (&"/live/{account}/{file}/{name}".into(), &"127.0.0.1".into())
        );
        assert!(
            line["account"].as_str().unwrap().starts_with("acc_"),
            "{line}"
        );
    }
    // A stable link's line names its account as /live/'s does.
    let (status, id) = ask(http.get(file["path_url"].as_str().unwrap())).await;
    assert_eq!(status, 200);
    let line = line_of(&served, &id);
    assert_eq!(line["route"], "/p/{account}/{*path}", "{line}");
    assert_eq!(
        line["account"],
        file["url"].as_str().unwrap().split('/').nth(4).unwrap(),
        "{line}"
    );
}

/// The text form has them too.
#[test]
fn text_access_lines_name_the_client_and_the_request_id() {
    let dir = tempfile::tempdir().unwrap();
    let served = Serve::new(dir.path()).start();
    let (status, _) = crate::common::process::raw_get(served.port, "/v1/health", None).unwrap();
    assert_eq!(status, 200);
    let line =
        served.wait_for(|l| l.contains("filestore::access") && l.contains("route=/v1/health"));
    assert!(line.contains(" client=127.0.0.1 request_id="), "{line}");
}

async fn scrape(metrics: u16) -> String {
    reqwest::get(format!("http://127.0.0.1:{metrics}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// A gauge's value (whole: counts and bytes).
fn gauge(text: &str, name: &str) -> u64 {
    metric_value(text, name, "").unwrap_or_else(|| panic!("no {name} in:\n{text}")) as u64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_show_the_stores_bytes_files_accounts_and_free_disk() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let db = pg::database_for(&data).await;
    let metrics = free_port();
    let served = Serve::new(&data)
        .database_url(db.as_deref())
        .metrics(metrics)
        .start();
    let key = served.key();
    let http = reqwest::Client::new();
    let mut ids = Vec::new();
    for (name, size) in [("a.bin", 5), ("b.bin", 7)] {
        let up = http
            .post(served.url("/v1/upload"))
            .bearer_auth(&key)
            .multipart(upload_form(name, vec![1; size], &[]))
            .send()
            .await
            .unwrap();
        assert_eq!(up.status(), 201);
        let file: Value = up.json().await.unwrap();
        ids.push(file["id"].as_str().unwrap().to_string());
    }
    let made = admin(
        &data,
        db.as_deref(),
        &["account", "create", "--name", "other"],
    );
    assert!(made.status.success(), "{made:?}");
    let text = scrape(metrics).await;
    assert_eq!(gauge(&text, "filestore_stored_bytes"), 12);
    assert_eq!(gauge(&text, "filestore_files"), 2);
    assert_eq!(gauge(&text, "filestore_accounts"), 2);
    for family in [
        "filestore_stored_bytes",
        "filestore_files",
        "filestore_accounts",
        "filestore_disk_free_bytes",
    ] {
        assert!(
            text.contains(&format!("# TYPE {family} gauge")),
            "{family}:\n{text}"
        );
        assert!(
            text.contains(&format!("# HELP {family} ")),
            "{family}:\n{text}"
        );
    }
    // The data dir's volume, as statvfs gives it (other writers move it a little).
    let free = gauge(&text, "filestore_disk_free_bytes");
    let vfs = rustix::fs::statvfs(&data).unwrap();
    let now = vfs.f_bavail * vfs.f_frsize;
    assert!(free > 0 && free.abs_diff(now) < 1 << 30, "{free} vs {now}");
    // A delete and an account's removal show at the next scrape.
    let gone = http
        .delete(served.url(&format!("/v1/files/{}", ids[0])))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 200);
    let removed = admin(
        &data,
        db.as_deref(),
        &["account", "delete", "other", "--yes"],
    );
    assert!(removed.status.success(), "{removed:?}");
    let text = scrape(metrics).await;
    assert_eq!(gauge(&text, "filestore_stored_bytes"), 7);
    assert_eq!(gauge(&text, "filestore_files"), 1);
    assert_eq!(gauge(&text, "filestore_accounts"), 1);
}
