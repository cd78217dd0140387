//! The render pool: renders past `images.concurrency` wait briefly or get
//! 503 with `Retry-After`, and the server keeps answering everything else.

use super::{png, with};
use crate::common::{TestOptions, TestServer};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_render_storm_gets_503s_and_leaves_the_others_answering() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[images]\nconcurrency = 1\n".into()),
        ..Default::default()
    })
    .await;
    let mut urls = Vec::new();
    for i in 0..3 {
        let f = srv
            .upload_ok(&format!("{i}.png"), png(1200, 900), &[])
            .await;
        for w in 0..14 {
            urls.push(with(f["url"].as_str().unwrap(), &format!("w={}", 100 + w)));
        }
    }
    let http = &srv.http;
    let storm = futures_util::future::join_all(urls.iter().map(|u| async move {
        let r = http.get(u).send().await.unwrap();
        let retry = r.headers().get("retry-after").cloned();
        (r.status().as_u16(), retry)
    }));
    let health = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        let r = srv.http.get(srv.url("/v1/health")).send().await.unwrap();
        (r.status().as_u16(), started.elapsed())
    };
    let (answers, (health, took)) = tokio::join!(storm, health);
    assert_eq!(health, 200);
    assert!(took < Duration::from_secs(1), "health took {took:?}");
    let busy: Vec<_> = answers.iter().filter(|(s, _)| *s == 503).collect();
    assert!(
        !busy.is_empty(),
        "42 renders at once on one permit: some 503"
    );
    assert!(busy.iter().all(|(_, retry)| retry.is_some()));
    assert!(
        answers.iter().all(|(s, _)| *s == 200 || *s == 503),
        "{answers:?}"
    );
    let done = answers.iter().filter(|(s, _)| *s == 200).count();
    assert_eq!(
        srv.count("SELECT COUNT(*) FROM image_variants"),
        done as i64
    );
}
