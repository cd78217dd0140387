//! A receiver down then up, failed and timed-out attempts retried under
//! one id and delivered once, redirects not followed, per-file order.

use super::*;
use crate::common::receiver::*;
use std::time::Duration;

/// A receiver answering 503 for a while, then 200: every event arrives, each
/// under one webhook-id on every attempt, the accepted attempt stamped with
/// its own time (Standard Webhooks: the attempt's timestamp, which verifiers
/// hold to 5 minutes); health stays ok meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receiver_down_then_up_loses_nothing_and_keeps_each_webhook_id() {
    if !tools("receiver_down_then_up_loses_nothing_and_keeps_each_webhook_id") {
        return;
    }
    let srv = TestServer::start().await;
    let rx = Receiver::start(&RxOptions {
        down: true,
        ..Default::default()
    });
    hook(&srv, &rx, &[]);
    let key = srv.secret_key.clone();
    let mut ids = Vec::new();
    for i in 0..4 {
        let f = upload(&srv, &key, &format!("down-{i}.txt"), 100 + i, &[]).await;
        ids.push(s(&f["id"]).to_string());
    }
    delete(&srv, &key, &ids[0]).await;
    delete(&srv, &key, &ids[1]).await;
    // Each file.created tried three times, in vain (1 s, then 2 s between).
    rx.wait(60, "three failed attempts of each file.created", |reqs| {
        ids.iter().all(|id| of_event(reqs, CREATED, id).len() >= 3)
    })
    .await;
    health_ok(&srv.http, &srv.base_url).await;
    let before_up = rx.requests();
    assert!(
        before_up.iter().all(|r| r["status"] == 503),
        "{}",
        summary(&before_up)
    );
    rx.up();
    let mut want: Vec<(&str, &str)> = ids.iter().map(|id| (CREATED, id.as_str())).collect();
    want.push((DELETED, &ids[0]));
    want.push((DELETED, &ids[1]));
    let reqs = rx.wait_delivered(120, &want).await;
    health_ok(&srv.http, &srv.base_url).await;
    one_id_per_event(&reqs);
    for (ty, id) in &want {
        let d = the_delivery(&reqs, ty, id);
        let attempts = of_event(&reqs, ty, id);
        // The accepted attempt is the last; every earlier one was refused.
        assert!(
            std::ptr::eq(*attempts.last().unwrap(), d),
            "{}",
            summary(&reqs)
        );
        for a in &attempts[..attempts.len() - 1] {
            assert_eq!(a["status"], 503, "{}", summary(&reqs));
        }
        let header: f64 = s(&d["webhook_timestamp"]).parse().unwrap();
        let received = d["received_at"].as_f64().unwrap();
        if *ty == CREATED {
            assert!(attempts.len() >= 4, "{ty} {id}: {}", summary(&reqs));
            // Accepted at least 3 s after the first attempt: stamped anew.
            assert!(
                (header - received).abs() <= 3.0,
                "{ty} of {id}: a retry received at {received:.3} carries \
                 webhook-timestamp {header} (the first attempt's?); Standard \
                 Webhooks stamps each attempt, and verifiers refuse stamps \
                 older than 5 minutes"
            );
        }
    }
}

/// `--fail-first 2`: the same webhook-id three times (500, 500, 200), the
/// waits growing (about 1 s, then 2 s), and never again once accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_attempts_are_retried_under_one_id_and_delivered_once() {
    if !tools("failed_attempts_are_retried_under_one_id_and_delivered_once") {
        return;
    }
    let srv = TestServer::start().await;
    let rx = Receiver::start(&RxOptions {
        fail_first: 2,
        ..Default::default()
    });
    hook(&srv, &rx, &[CREATED]);
    let f = upload(&srv, &srv.secret_key.clone(), "retry.txt", 123, &[]).await;
    let id = s(&f["id"]).to_string();
    rx.wait_delivered(60, &[(CREATED, &id)]).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let reqs = rx.requests();
    one_id_per_event(&reqs);
    let attempts = of_event(&reqs, CREATED, &id);
    let statuses: Vec<u64> = attempts
        .iter()
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [500, 500, 200], "{}", summary(&reqs));
    assert_eq!(reqs.len(), 3, "{}", summary(&reqs));
    let at: Vec<f64> = attempts
        .iter()
        .map(|r| r["received_at"].as_f64().unwrap())
        .collect();
    // Lower bounds only: a busy machine makes waits longer, never shorter.
    assert!(
        at[1] - at[0] >= 0.5,
        "first retry after {:.3}s",
        at[1] - at[0]
    );
    assert!(
        at[2] - at[1] >= 1.0,
        "second retry after {:.3}s",
        at[2] - at[1]
    );
    assert_eq!(attempts[2]["data"], f);
}

/// Any answer but 2xx is a failure to retry, a 4xx like 410 too, and a
/// redirect is not followed (the event goes to the webhook's url only).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_answer_but_2xx_is_retried_and_redirects_are_not_followed() {
    if !tools("any_answer_but_2xx_is_retried_and_redirects_are_not_followed") {
        return;
    }
    let srv = TestServer::start().await;
    let receivers: Vec<(u16, Receiver)> = [307u16, 410, 404]
        .into_iter()
        .map(|status| {
            let rx = Receiver::start(&RxOptions {
                fail_first: 1,
                fail_status: Some(status),
                ..Default::default()
            });
            (status, rx)
        })
        .collect();
    for (_, rx) in &receivers {
        hook(&srv, rx, &[CREATED]);
    }
    let f = upload(&srv, &srv.secret_key.clone(), "statuses.txt", 77, &[]).await;
    let id = s(&f["id"]).to_string();
    for (_, rx) in &receivers {
        rx.wait_delivered(60, &[(CREATED, &id)]).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    for (status, rx) in &receivers {
        let reqs = rx.requests();
        for r in &reqs {
            assert_eq!(
                (s(&r["method"]), s(&r["path"])),
                ("POST", "/hook"),
                "answered {status}, the receiver then got a request elsewhere:\n{}",
                summary(&reqs)
            );
        }
        one_id_per_event(&reqs);
        let statuses: Vec<u64> = reqs.iter().map(|r| r["status"].as_u64().unwrap()).collect();
        assert_eq!(statuses, [u64::from(*status), 200], "{}", summary(&reqs));
    }
}

/// A receiver that holds the request longer than the delivery timeout
/// (10 s): the sender gives up on that attempt and tries again (same id)
/// before the receiver ever answers; uploads and health carry on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attempt_that_outlasts_the_delivery_timeout_is_retried() {
    if !tools("an_attempt_that_outlasts_the_delivery_timeout_is_retried") {
        return;
    }
    let srv = TestServer::start().await;
    let rx = Receiver::start(&RxOptions {
        delay_ms: 25_000,
        ..Default::default()
    });
    hook(&srv, &rx, &[CREATED]);
    let key = srv.secret_key.clone();
    upload(&srv, &key, "hang.txt", 5, &[]).await;
    let arrivals = rx
        .wait_arrivals(60, 2, "a second attempt of a request held 25 s")
        .await;
    assert_eq!(arrivals[0]["webhook_id"], arrivals[1]["webhook_id"]);
    let (first, second) = (
        arrivals[0]["received_at"].as_f64().unwrap(),
        arrivals[1]["received_at"].as_f64().unwrap(),
    );
    assert!(
        second - first >= 9.0,
        "retried {:.3}s after an attempt still unanswered (timeout 10 s)",
        second - first
    );
    assert!(
        second < first + 25.0,
        "the second attempt came only once the first was answered"
    );
    upload(&srv, &key, "meanwhile.txt", 6, &[]).await;
    health_ok(&srv.http, &srv.base_url).await;
}

/// In order per file: a file's file.deleted is not sent before its
/// file.created has been accepted, even when file.created's first attempts
/// fail and the delete was committed long before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_file_order_holds_when_the_first_attempts_fail() {
    if !tools("per_file_order_holds_when_the_first_attempts_fail") {
        return;
    }
    let srv = TestServer::start().await;
    let rx = Receiver::start(&RxOptions {
        fail_first: 2,
        ..Default::default()
    });
    hook(&srv, &rx, &[]);
    let key = srv.secret_key.clone();
    let mut ids = Vec::new();
    for i in 0..5 {
        let f = upload(&srv, &key, &format!("order-{i}.txt"), 50 + i, &[]).await;
        let id = s(&f["id"]).to_string();
        delete(&srv, &key, &id).await;
        ids.push(id);
    }
    let want: Vec<(&str, &str)> = ids
        .iter()
        .flat_map(|id| [(CREATED, id.as_str()), (DELETED, id.as_str())])
        .collect();
    let reqs = rx.wait_delivered(120, &want).await;
    one_id_per_event(&reqs);
    for id in &ids {
        let created = the_delivery(&reqs, CREATED, id);
        the_delivery(&reqs, DELETED, id);
        let accepted_at = created["received_at"].as_f64().unwrap();
        for d in of_event(&reqs, DELETED, id) {
            assert!(
                d["received_at"].as_f64().unwrap() > accepted_at,
                "file.deleted of {id} sent before its file.created was accepted:\n{}",
                summary(&reqs)
            );
        }
    }
}
