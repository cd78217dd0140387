//! The outbox gauge and the delivery counters; health `ok` throughout.

use super::*;
use crate::common::process::free_port;
use crate::common::receiver::*;
use std::time::{Duration, Instant};

/// The outbox gauge counts the events waiting while the receiver is down and
/// falls to 0 once they are delivered; the delivery counters count failures
/// and successes; health stays 200 `ok`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_show_the_outbox_and_health_stays_ok() {
    const GAUGE: &str = "filestore_webhook_outbox_events";
    const COUNTER: &str = "filestore_webhook_deliveries_total";
    if !tools("metrics_show_the_outbox_and_health_stays_ok") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (node, key, account) = first_node(&data, free_port(), Some(free_port())).await;
    let target = target_of(&node);
    let rx = Receiver::start(&RxOptions {
        down: true,
        ..Default::default()
    });
    let (_, secret) = target.create_webhook(&account, &rx.url(), &[CREATED]);
    rx.set_secret(&secret);
    let http = reqwest::Client::new();
    let mut ids = Vec::new();
    for i in 0..5 {
        let f = node_upload(&http, &node, &key, &format!("m-{i}.txt"), 10 + i).await;
        ids.push(s(&f["id"]).to_string());
    }
    let deadline = Instant::now() + Duration::from_mins(1);
    loop {
        let pending = node.metric(&http, GAUGE, "").await;
        let failed = node.metric(&http, COUNTER, "result=\"failed\"").await;
        if pending == Some(5.0) && failed.is_some_and(|f| f >= 5.0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "while the receiver is down: {GAUGE} = {pending:?} (want 5), \
             {COUNTER}{{result=\"failed\"}} = {failed:?} (want >= 5)"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    health_ok(&http, &node.base).await;
    rx.up();
    let want: Vec<(&str, &str)> = ids.iter().map(|id| (CREATED, id.as_str())).collect();
    rx.wait_delivered(120, &want).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pending = node.metric(&http, GAUGE, "").await;
        let ok = node.metric(&http, COUNTER, "result=\"ok\"").await;
        if pending == Some(0.0) && ok == Some(5.0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "after delivery: {GAUGE} = {pending:?} (want 0), \
             {COUNTER}{{result=\"ok\"}} = {ok:?} (want 5)"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    health_ok(&http, &node.base).await;
}
