//! The request rate window, shared by both nodes.

use crate::common::cluster::*;
use crate::common::error_code;
use futures_util::future::join_all;
use reqwest::Response;
use std::collections::BTreeSet;

/// Asserts the rate headers of a response of a key's window.
fn rate_headers(r: &Response) -> (i64, i64, i64) {
    (
        header_num(r, "x-ratelimit-limit"),
        header_num(r, "x-ratelimit-remaining"),
        header_num(r, "x-ratelimit-reset"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_window_is_shared_across_nodes() {
    let plans = ROOMY
        .replace("rate_limit = 100_000", "rate_limit = 6")
        .replace("rate_window = \"1m\"", "rate_window = \"1h\"");
    let Some(c) = Cluster::start("rate", &plans, false).await else {
        return;
    };
    // A, B, A, B, A, B: the key's 6 requests, counted down in one window.
    let mut resets = BTreeSet::new();
    for i in 0..6 {
        let r = c
            .http
            .get(c.url(i % 2, "/v1/usage"))
            .bearer_auth(&c.key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "request {i} on node {}", i % 2);
        let (limit, remaining, reset) = rate_headers(&r);
        assert_eq!(
            (limit, remaining),
            (6, 5 - i as i64),
            "request {i} on node {}",
            i % 2
        );
        resets.insert(reset);
    }
    assert_eq!(resets.len(), 1, "one window, one reset time: {resets:?}");
    let reset = *resets.iter().next().unwrap();
    let now = chrono::Utc::now().timestamp();
    assert!(
        reset > now + 3500 && reset <= now + 3601,
        "{reset} vs now {now}"
    );
    // The 7th is refused on either node, with the same window's headers;
    // uploads and signed URLs draw on the same budget.
    for n in [A, B] {
        let r = c
            .http
            .get(c.url(n, "/v1/usage"))
            .bearer_auth(&c.key)
            .send()
            .await
            .unwrap();
        assert_eq!(rate_headers(&r), (6, 0, reset), "node {n}");
        let retry = header_num(&r, "retry-after");
        assert!(retry >= 1 && retry <= reset - now + 1, "{retry}");
        assert_eq!(
            error_code(r).await,
            (429, "rate_limit_exceeded".into()),
            "node {n}"
        );
        let r = c.upload(n, &c.key, "x", vec![1], &[], None).await;
        assert_eq!(rate_headers(&r), (6, 0, reset), "node {n}");
        assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    }
    // New keys, each opening its window with 20 requests at once, 10 to
    // each node: exactly 6 pass, each seeing a different remaining count,
    // all in one window.
    for round in 0..4 {
        let key = c.new_key("default");
        let answers = join_all((0..20).map(|i| {
            let (c, key) = (&c, &key);
            async move {
                let r = c
                    .http
                    .get(c.url(i % 2, "/v1/usage"))
                    .bearer_auth(key)
                    .send()
                    .await
                    .unwrap();
                (r.status().as_u16(), rate_headers(&r))
            }
        }))
        .await;
        let passed: Vec<i64> = answers
            .iter()
            .filter(|a| a.0 == 200)
            .map(|a| a.1 .1)
            .collect();
        assert_eq!(
            passed.len(),
            6,
            "round {round}: exactly the window's 6 across both nodes: {answers:?}"
        );
        assert_eq!(
            passed.iter().copied().collect::<BTreeSet<_>>(),
            (0..6).collect::<BTreeSet<_>>(),
            "round {round}: each remaining count handed out once: {answers:?}"
        );
        assert!(
            answers.iter().all(|a| a.0 == 200 || a.0 == 429),
            "{answers:?}"
        );
        let resets: BTreeSet<i64> = answers.iter().map(|a| a.1 .2).collect();
        assert_eq!(resets.len(), 1, "round {round}: one window: {answers:?}");
    }
}
