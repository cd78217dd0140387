//! Two nodes on one PostgreSQL database: each event once, never two
//! attempts of one id at once.

use super::*;
use crate::common::cluster::second_node;
use crate::common::receiver::*;
use std::io::Write;
use std::time::Duration;

/// Two nodes on one PostgreSQL database, 40 uploads alternating between
/// them, a receiver failing each first attempt: every event delivered once,
/// each webhook-id's attempts one after another, never two at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_send_each_event_once_never_two_attempts_at_once() {
    if pg::admin_url().is_none() {
        let _ = writeln!(
            std::io::stderr(),
            "skipped two_nodes_send_each_event_once_never_two_attempts_at_once: \
             set FILESTORE_TEST_DATABASE_URL (two nodes need PostgreSQL)"
        );
        return;
    }
    if !tools("two_nodes_send_each_event_once_never_two_attempts_at_once") {
        return;
    }
    let a = TestServer::start().await;
    let b = second_node(&a, crate::common::TestOptions::default()).await;
    let rx = Receiver::start(&RxOptions {
        fail_first: 1,
        delay_ms: 100,
        ..Default::default()
    });
    hook(&a, &rx, &[CREATED]);
    let mut ids = Vec::new();
    for i in 0..40 {
        let node = if i % 2 == 0 { &a } else { &b };
        let f = upload(node, &a.secret_key, &format!("two-{i}.txt"), 10 + i, &[]).await;
        ids.push(s(&f["id"]).to_string());
    }
    let want: Vec<(&str, &str)> = ids.iter().map(|id| (CREATED, id.as_str())).collect();
    rx.wait_delivered(180, &want).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let reqs = rx.requests();
    one_id_per_event(&reqs);
    for id in &ids {
        the_delivery(&reqs, CREATED, id);
        let attempts = of_event(&reqs, CREATED, id);
        assert_eq!(attempts.len(), 2, "{id}: {}", summary(&reqs));
        for pair in attempts.windows(2) {
            let (first, next) = (pair[0], pair[1]);
            assert!(
                next["received_at"].as_f64().unwrap() >= first["answered_at"].as_f64().unwrap(),
                "two attempts of {} at once:\n{}",
                s(&first["webhook_id"]),
                summary(&reqs)
            );
        }
    }
    health_ok(&a.http, &a.base_url).await;
    health_ok(&b.http, &b.base_url).await;
}
