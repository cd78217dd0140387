//! `kill -9` of a child `serve` with events pending or mid-attempt.

use super::*;
use crate::common::process::free_port;
use crate::common::receiver::*;
use std::collections::BTreeMap;
use std::time::Duration;

/// `serve` killed with `kill -9` while events wait for a receiver that is
/// down (503, then not even listening): after a restart and the receiver
/// back, every event arrives, under the webhook-id its first attempts had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_with_events_pending_then_restart_delivers_everything() {
    if !tools("kill_9_with_events_pending_then_restart_delivers_everything") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let (mut node, key, account) = first_node(&data, port, None).await;
    let db = node.database_url.clone();
    let target = target_of(&node);
    let mut rx = Receiver::start(&RxOptions {
        down: true,
        ..Default::default()
    });
    let (_, secret) = target.create_webhook(&account, &rx.url(), &[]);
    rx.set_secret(&secret);
    let http = reqwest::Client::new();
    let mut ids = Vec::new();
    for i in 0..10 {
        let f = node_upload(&http, &node, &key, &format!("crash-{i}.bin"), 1000 + i).await;
        ids.push(s(&f["id"]).to_string());
    }
    for id in &ids[..3] {
        node_delete(&http, &node, &key, id).await;
    }
    // Tried (and refused) before the crash.
    rx.wait(60, "a failed attempt of each file.created", |reqs| {
        ids.iter().all(|id| !of_event(reqs, CREATED, id).is_empty())
    })
    .await;
    let log = rx.log.clone();
    let rx_port = rx.port;
    let first_ids: BTreeMap<(String, String), String> = rx
        .requests()
        .iter()
        .map(|r| {
            let event = (s(&r["type"]).to_string(), s(&r["data_id"]).to_string());
            (event, s(&r["webhook_id"]).to_string())
        })
        .collect();
    // The receiver gone altogether (connection refused), the server killed.
    rx.stop();
    node.kill_9();
    let node = start_node(&data, db.as_deref(), port, None);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rx2 = Receiver::start(&RxOptions {
        port: Some(rx_port),
        secret: Some(secret),
        log: Some(log),
        ..Default::default()
    });
    let mut want: Vec<(&str, &str)> = ids.iter().map(|id| (CREATED, id.as_str())).collect();
    want.extend(ids[..3].iter().map(|id| (DELETED, id.as_str())));
    let reqs = rx2.wait_delivered(120, &want).await;
    health_ok(&http, &node.base).await;
    one_id_per_event(&reqs);
    for (ty, id) in &want {
        let d = the_delivery(&reqs, ty, id);
        if *ty == CREATED {
            assert_eq!(
                s(&d["webhook_id"]),
                first_ids[&(ty.to_string(), id.to_string())],
                "{id}: another webhook-id after the restart"
            );
        }
    }
    drop(node);
}

/// `serve` killed with `kill -9` in the middle of an attempt (the receiver
/// holding the request): after a restart the event is sent again, under
/// the same webhook-id (at least once: the answer was never seen).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_attempt_the_event_is_sent_again_under_its_id() {
    if !tools("kill_9_mid_attempt_the_event_is_sent_again_under_its_id") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let (mut node, key, account) = first_node(&data, port, None).await;
    let db = node.database_url.clone();
    let target = target_of(&node);
    let rx = Receiver::start(&RxOptions {
        delay_ms: 3000,
        ..Default::default()
    });
    let (_, secret) = target.create_webhook(&account, &rx.url(), &[CREATED]);
    rx.set_secret(&secret);
    let http = reqwest::Client::new();
    let f = node_upload(&http, &node, &key, "mid-attempt.bin", 321).await;
    rx.wait_arrivals(30, 1, "an attempt").await;
    node.kill_9();
    let killed_at = now();
    let node = start_node(&data, db.as_deref(), port, None);
    // The claim of a node that is gone may wait out a lease (a minute or so).
    let arrivals = rx
        .wait_arrivals(150, 2, "the event sent again after the restart")
        .await;
    assert_eq!(
        arrivals[0]["webhook_id"], arrivals[1]["webhook_id"],
        "another webhook-id after the restart"
    );
    assert!(arrivals[1]["received_at"].as_f64().unwrap() > killed_at);
    let reqs = rx
        .wait(30, "the second attempt answered", |reqs| reqs.len() >= 2)
        .await;
    one_id_per_event(&reqs);
    assert!(reqs.iter().all(|r| r["data"] == f), "{}", summary(&reqs));
    health_ok(&http, &node.base).await;
}
