//! Plans and limits: file size, storage quota (race-free), monthly uploads,
//! month rollover, rate limits, grace period, plan switches.

use crate::common::{error_code, Backend, TestOptions, TestServer};
use std::sync::Arc;
use std::time::Duration;

const SMALL_PLANS: &str = r#"
[plans.free]
max_file_size = 1000
storage = 3000
uploads = 5
rate_limit = 1000
rate_window = "1m"

[plans.roomy]
max_file_size = 100000
storage = 1000000
uploads = 1000
rate_limit = 1000
rate_window = "1m"

[plans.strict]
max_file_size = 100000
storage = 1000000
uploads = 1000
rate_limit = 3
rate_window = "1h"
"#;

async fn small(b: Backend) -> TestServer {
    TestServer::start_with(TestOptions {
        plans_toml: Some(SMALL_PLANS.into()),
        backend: Some(b),
        ..Default::default()
    })
    .await
}

both_stores!(
    file_too_large_from_content_length_and_mid_stream,
    storage_quota_refuses_and_leaves_nothing,
    concurrent_uploads_never_pass_the_quota,
    monthly_uploads_and_rollover,
    rate_limit_headers_count_down_then_429,
    grace_period_blocks_uploads_only,
    plan_switch_takes_effect_at_once,
    a_replayed_upload_is_never_refused_by_the_quota_it_fills,
);

async fn file_too_large_from_content_length_and_mid_stream(b: Backend) {
    let srv = small(b).await;
    assert_eq!(
        srv.upload("ok.bin", vec![1; 1000], &[]).await.status(),
        201,
        "exactly the maximum is allowed"
    );
    let r = srv.upload("big.bin", vec![1; 1001], &[]).await;
    assert_eq!(error_code(r).await, (413, "file_too_large".into()));
    // Content-Length far above the plan: refused before the body is read.
    let r = srv.upload("huge.bin", vec![1; 200_000], &[]).await;
    assert_eq!(error_code(r).await, (413, "file_too_large".into()));
    // A chunked body (no Content-Length): refused mid-stream.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = vec![Ok(vec![7; 600]), Ok(vec![7; 600])];
    let part = reqwest::multipart::Part::stream(reqwest::Body::wrap_stream(
        futures_util::stream::iter(chunks),
    ))
    .file_name("s.bin");
    let form = reqwest::multipart::Form::new().part("file", part);
    let r = srv.post_form(&srv.secret_key, form).await;
    assert!(r.headers().get("content-length").is_some());
    assert_eq!(error_code(r).await, (413, "file_too_large".into()));
    assert_eq!(srv.leftovers(), (1, 0, 0));
    assert_eq!(srv.usage().await["storage_bytes"], 1000);
    assert_eq!(srv.usage().await["upload_count"], 1);
    assert_eq!(srv.blob_count().await, 1);
}

async fn storage_quota_refuses_and_leaves_nothing(b: Backend) {
    let srv = small(b).await;
    for i in 0..3 {
        assert_eq!(
            srv.upload(&format!("{i}"), vec![0; 900], &[])
                .await
                .status(),
            201
        );
    }
    let r = srv.upload("over.bin", vec![0; 301], &[]).await;
    assert_eq!(error_code(r).await, (413, "storage_limit_exceeded".into()));
    assert_eq!(
        srv.upload("fits.bin", vec![0; 300], &[]).await.status(),
        201
    );
    let usage = srv.usage().await;
    assert_eq!(
        (
            usage["storage_bytes"].as_u64(),
            usage["upload_count"].as_u64()
        ),
        (Some(3000), Some(4))
    );
    let r = srv.upload("one.bin", vec![0; 1], &[]).await;
    assert_eq!(error_code(r).await, (413, "storage_limit_exceeded".into()));
    assert_eq!(srv.leftovers(), (4, 0, 0));
    assert_eq!(srv.blob_count().await, 4);
    // Deleting gives the bytes back.
    let (_, list) = srv.get_json(&srv.secret_key, "/v1/files?limit=1").await;
    let id = list["files"][0]["id"].as_str().unwrap();
    srv.delete_as(&srv.secret_key, id).await;
    assert_eq!(srv.usage().await["storage_bytes"], 2700);
    assert_eq!(
        srv.upload("again.bin", vec![0; 300], &[]).await.status(),
        201
    );
}

async fn concurrent_uploads_never_pass_the_quota(b: Backend) {
    // 16 parallel uploads of 900 bytes against a 3000-byte quota: exactly 3
    // fit (all 16 may arrive at once: the quota decides, not concurrent_uploads).
    let plans = SMALL_PLANS.replace("uploads = 5", "uploads = 100\nconcurrent_uploads = 16");
    let srv = Arc::new(
        TestServer::start_with(TestOptions {
            plans_toml: Some(plans),
            backend: Some(b),
            ..Default::default()
        })
        .await,
    );
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let srv = srv.clone();
            tokio::spawn(async move {
                srv.upload(&format!("{i}.bin"), vec![i as u8; 900], &[])
                    .await
            })
        })
        .collect();
    let mut created = 0;
    let mut refused = 0;
    for t in tasks {
        let r = t.await.unwrap();
        match r.status().as_u16() {
            201 => created += 1,
            413 => {
                assert_eq!(error_code(r).await.1, "storage_limit_exceeded");
                refused += 1;
            }
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!((created, refused), (3, 13));
    let usage = srv.usage().await;
    assert_eq!(usage["storage_bytes"], 2700);
    assert_eq!(usage["upload_count"], 3);
    let (files, queued, spool) = srv.leftovers();
    assert_eq!((files, queued, spool), (3, 0, 0));
    assert_eq!(srv.blob_count().await, 3);
}

async fn monthly_uploads_and_rollover(b: Backend) {
    let srv = small(b).await;
    for i in 0..5 {
        assert_eq!(
            srv.upload(&format!("{i}"), vec![1], &[]).await.status(),
            201
        );
    }
    let r = srv.upload("sixth", vec![1], &[]).await;
    let reset: i64 = r.headers()["x-ratelimit-reset"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let retry: i64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    let now = srv.clock.now();
    let next = filestore::testing::clock::period_of(now).next_start;
    assert_eq!(reset, next.timestamp(), "reset is the next period start");
    assert!(retry >= 1 && retry <= next.timestamp() - now.timestamp() + 1);
    let usage = srv.usage().await;
    assert_eq!(usage["upload_count"], 5);
    assert_eq!(usage["plan"], "free");
    assert_eq!(
        usage["limits"],
        serde_json::json!({"storage_bytes": 3000, "bandwidth_bytes": 5_000_000_000u64, "upload_count": 5})
    );
    let period_start = usage["period_start"].as_str().unwrap().to_string();
    assert_eq!(period_start, now.format("%Y-%m-01").to_string());
    // Bandwidth is fair use: downloads go on whatever the count.
    // A new month: counters start at zero without any job, storage stays.
    let to_next = (next - now).to_std().unwrap() + Duration::from_secs(1);
    srv.clock.advance(to_next);
    let usage = srv.usage().await;
    assert_eq!(usage["upload_count"], 0);
    assert_eq!(usage["bandwidth_bytes"], 0);
    assert_eq!(usage["storage_bytes"], 5);
    assert_eq!(usage["period_start"], next.format("%Y-%m-%d").to_string());
    assert_ne!(usage["period_start"].as_str().unwrap(), period_start);
    assert_eq!(srv.upload("new month", vec![1], &[]).await.status(), 201);
    assert_eq!(srv.usage().await["upload_count"], 1);
}

async fn rate_limit_headers_count_down_then_429(b: Backend) {
    let srv = small(b).await;
    let (_acc, key) = srv.new_account("strict", "strict").await;
    let mut remaining = Vec::new();
    let mut resets = Vec::new();
    for _ in 0..3 {
        let r = srv
            .http
            .get(srv.url("/v1/usage"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["x-ratelimit-limit"], "3");
        remaining.push(
            r.headers()["x-ratelimit-remaining"]
                .to_str()
                .unwrap()
                .to_string(),
        );
        resets.push(
            r.headers()["x-ratelimit-reset"]
                .to_str()
                .unwrap()
                .parse::<i64>()
                .unwrap(),
        );
    }
    assert_eq!(remaining, ["2", "1", "0"]);
    assert!(resets.iter().all(|r| *r == resets[0]));
    let now = chrono::Utc::now().timestamp();
    assert!(resets[0] > now && resets[0] <= now + 3600 + 1);
    // Spent: usage, upload and signed-url all refuse, with Retry-After.
    let r = srv
        .http
        .get(srv.url("/v1/usage"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-ratelimit-remaining"], "0");
    assert_eq!(
        r.headers()["x-ratelimit-reset"]
            .to_str()
            .unwrap()
            .parse::<i64>()
            .unwrap(),
        resets[0]
    );
    let retry: i64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=3601).contains(&retry));
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    let r = srv.upload_as(&key, "a", vec![1], &[]).await;
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    let r = srv
        .sign_as(&key, "f_x", serde_json::json!({"expires_in": 5}))
        .await;
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    // Reads are not rate limited; another key has its own budget.
    let (status, _) = srv.get_json(&key, "/v1/files").await;
    assert_eq!(status, 200);
    let r = srv
        .http
        .get(srv.url("/v1/usage"))
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-ratelimit-limit"], "1000");
    // Errors of limited endpoints carry the headers too.
    let r = srv.upload("big", vec![1; 5000], &[]).await;
    assert_eq!(r.status(), 413);
    assert!(r.headers().contains_key("x-ratelimit-remaining"));
    // The next window starts afresh.
    srv.clock.advance(Duration::from_secs(3601));
    let r = srv
        .http
        .get(srv.url("/v1/usage"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-ratelimit-remaining"], "2");
}

async fn grace_period_blocks_uploads_only(b: Backend) {
    let srv = small(b).await;
    let f = srv
        .upload_ok("before.txt", b"b".to_vec(), &[("private", "true")])
        .await;
    let id = f["id"].as_str().unwrap().to_string();
    srv.set_account("default", None, Some(true)).await;
    let r = srv.upload("during.txt", b"d".to_vec(), &[]).await;
    assert_eq!(
        r.headers()["x-ratelimit-limit"],
        "1000",
        "403s of limited routes carry the headers"
    );
    assert!(
        r.headers().contains_key("x-ratelimit-remaining")
            && r.headers().contains_key("x-ratelimit-reset")
    );
    assert_eq!(error_code(r).await, (403, "grace_period".into()));
    assert_eq!(srv.get_json(&srv.secret_key, "/v1/files").await.0, 200);
    assert_eq!(
        srv.get_json(&srv.secret_key, &format!("/v1/files/{id}"))
            .await
            .0,
        200
    );
    let signed = srv.signed_url(&id, 60).await;
    assert_eq!(srv.http.get(&signed).send().await.unwrap().status(), 200);
    assert_eq!(srv.usage().await["upload_count"], 1);
    let r = srv.delete_as(&srv.secret_key, &id).await;
    assert_eq!(r.status(), 200);
    srv.set_account("default", None, Some(false)).await;
    assert_eq!(
        srv.upload("after.txt", b"a".to_vec(), &[]).await.status(),
        201
    );
}

async fn plan_switch_takes_effect_at_once(b: Backend) {
    let srv = small(b).await;
    assert_eq!(srv.upload("a", vec![0; 5000], &[]).await.status(), 413);
    srv.set_account("default", Some("roomy"), None).await;
    assert_eq!(srv.upload("a", vec![0; 5000], &[]).await.status(), 201);
    srv.set_account("default", Some("free"), None).await;
    assert_eq!(srv.upload("a", vec![0; 5000], &[]).await.status(), 413);
}

async fn a_replayed_upload_is_never_refused_by_the_quota_it_fills(b: Backend) {
    // The first reply is lost; the client retries with the same key while the
    // stored file already fills most of the quota.
    let srv = small(b).await;
    let send = || {
        srv.http
            .post(srv.url("/v1/upload"))
            .bearer_auth(&srv.secret_key)
            .header("idempotency-key", "retry-me")
            .multipart(TestServer::form("big.bin", vec![7; 900], &[]))
            .send()
    };
    for _ in 0..2 {
        assert_eq!(srv.upload("filler", vec![0; 1000], &[]).await.status(), 201);
    }
    let first: serde_json::Value = send().await.unwrap().json().await.unwrap();
    let again = send().await.unwrap();
    assert_eq!(again.status(), 201);
    assert_eq!(again.json::<serde_json::Value>().await.unwrap(), first);
    let usage = srv.usage().await;
    assert_eq!(
        (
            usage["storage_bytes"].as_u64(),
            usage["upload_count"].as_u64()
        ),
        (Some(2900), Some(3))
    );
}
