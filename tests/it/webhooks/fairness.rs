//! Webhook fairness, on whichever database the suite runs:
//! a claim shares itself among subscriptions (each within its budget, in
//! turn); and end to end, a receiver that accepts connections and never
//! answers, and one that answers 500, beside healthy ones during a steady
//! stream of uploads: the healthy receivers get every event promptly, the
//! hanging one never holds more than 4 attempts at once, and the failing
//! one's circuit holds its events instead of trying each.
//!
//! The receivers are in this process (axum, and a bare TCP listener for the
//! one that hangs, so that it sees each attempt's connection close).

use crate::common::meta::{account, commit, inline_file, stores, webhook};
use crate::common::receiver::{failing, hanging, healthy, Hanging, Healthy};
use crate::common::TestServer;
use filestore::testing::db::{CommitOutcome, DynMetaStore, Quota};
use filestore::testing::domain::webhooks::{Budget, FAILING_SHARE, PER_SUBSCRIPTION, PROBE};
use serde_json::Value;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// The claim, at the store

async fn files(s: &DynMetaStore, account: &str, n: usize) {
    let limits = Quota::UNLIMITED;
    for i in 0..n {
        let out = commit(s.clone(), inline_file(account, i, 3, None), limits).await;
        assert!(matches!(out, CommitOutcome::Committed(_)));
    }
}

/// (subscription, seq) of what a claim took, in claim order.
fn taken(events: &[filestore::testing::db::OutboxEvent]) -> Vec<(String, i64)> {
    events
        .iter()
        .map(|e| (e.webhook_id.clone(), e.seq))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_takes_subscriptions_in_turn_each_within_its_budget() {
    let (_dir, s) = stores(1).await;
    let s = s.into_iter().next().unwrap();
    let (busy_acc, quiet_acc) = (account(&*s).await, account(&*s).await);
    let busy = webhook(&s, &busy_acc, &["file.created"]).await;
    let quiet = webhook(&s, &quiet_acc, &["file.created"]).await;
    files(&s, &busy_acc, 10).await;
    files(&s, &quiet_acc, 2).await;
    let (now, lease) = (10_000, 70_000);
    // Six in all, four of a subscription at most: the busy one's backlog
    // (queued first) leaves the quiet one's events their turn.
    let first = s
        .claim_events(now, lease, &Budget::new(6, PER_SUBSCRIPTION))
        .await
        .unwrap();
    let of = |w: &str| first.iter().filter(|e| e.webhook_id == w).count();
    assert_eq!((of(&busy), of(&quiet)), (4, 2), "{:?}", taken(&first));
    let busy_seqs: Vec<i64> = first
        .iter()
        .filter(|e| e.webhook_id == busy)
        .map(|e| e.seq)
        .collect();
    // The busy one's four are its oldest.
    let mut rest = s
        .claim_events(now, lease, &Budget::new(100, 100))
        .await
        .unwrap();
    assert_eq!(rest.len(), 6, "{:?}", taken(&rest));
    assert!(busy_seqs.iter().all(|b| rest.iter().all(|r| r.seq > *b)));
    // Back in the outbox (their attempts failed): with the busy one at its
    // cap nothing is due for a claim, though its events are.
    for e in &rest {
        s.event_failed(e.seq, now, "answered 500").await.unwrap();
    }
    let mut at_cap = Budget::new(64, PER_SUBSCRIPTION);
    at_cap.limits.insert(busy.clone(), 0);
    assert!(!s.any_due_events(now, &at_cap).await.unwrap());
    assert!(s
        .claim_events(now, lease, &at_cap)
        .await
        .unwrap()
        .is_empty());
    assert!(s
        .any_due_events(now, &Budget::new(64, PER_SUBSCRIPTION))
        .await
        .unwrap());
    // The quiet one's next event is claimed past the busy one's backlog.
    files(&s, &quiet_acc, 1).await;
    assert!(s.any_due_events(now, &at_cap).await.unwrap());
    let quiet_only = s.claim_events(now, lease, &at_cap).await.unwrap();
    assert_eq!(quiet_only.len(), 1, "{:?}", taken(&quiet_only));
    assert_eq!(quiet_only[0].webhook_id, quiet);
    // One left to the busy one (three in flight): its oldest due.
    at_cap.limits.insert(busy.clone(), 1);
    let one = s.claim_events(now, lease, &at_cap).await.unwrap();
    rest.sort_by_key(|e| e.seq);
    assert_eq!(taken(&one), [(busy.clone(), rest[0].seq)]);
}

// ---------------------------------------------------------------------------
// Helpers

/// A subscription of `account` to `url`; its secret.
async fn hook(srv: &TestServer, account: &str, url: &str) -> String {
    let created = filestore::testing::service::admin::create_webhook(
        &*srv.app.meta,
        account,
        url,
        &["file.created".to_string()],
        srv.clock.now_ms(),
    )
    .await
    .unwrap();
    created.secret.expose().to_string()
}

/// The value at percentile `p` of `v` (nearest rank).
fn percentile(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Commit-to-receipt latency of `rx` for `ids`, ms, or the ids it lacks.
fn latencies(rx: &Healthy, ids: &[String]) -> Result<Vec<f64>, Vec<String>> {
    let got = rx.got.lock().unwrap();
    let missing: Vec<String> = ids
        .iter()
        .filter(|id| !got.contains_key(*id))
        .cloned()
        .collect();
    if missing.is_empty() {
        Ok(ids.iter().map(|id| got[id].0 - got[id].1).collect())
    } else {
        Err(missing)
    }
}

// ---------------------------------------------------------------------------
// End to end

/// Two accounts: the first's files go to a healthy receiver and to one that
/// hangs, the second's to another healthy one and to one that answers 500.
/// Sixty uploads to each over twelve seconds (past the first attempts'
/// 10 s timeout, so retries and circuit tries come in the middle of the
/// stream): each healthy receiver gets every event with commit-to-receipt
/// p99 under a second, the hanging one never has more than 4 requests open
/// at once, and the failing one is tried far fewer times than it has events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_or_failing_receiver_delays_only_its_own_subscription() {
    let srv = TestServer::start().await;
    let (other_acc, other_key) = srv.new_account("fairness-other", "pro").await;
    let (rx_a, url_a) = healthy().await;
    let (rx_b, url_b) = healthy().await;
    let (hung, url_hung) = hanging().await;
    let (failed, url_failed) = failing().await;
    *rx_a.secret.lock().unwrap() = hook(&srv, &srv.account_id, &url_a).await;
    hook(&srv, &srv.account_id, &url_hung).await;
    *rx_b.secret.lock().unwrap() = hook(&srv, &other_acc, &url_b).await;
    hook(&srv, &other_acc, &url_failed).await;

    let keys = [srv.secret_key.clone(), other_key];
    let mut ids: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    let start = Instant::now();
    for i in 0..120usize {
        let slot = start + Duration::from_millis(100 * i as u64);
        tokio::time::sleep_until(slot.into()).await;
        let which = i % 2;
        let r = srv
            .upload_as(&keys[which], &format!("fair-{i}.txt"), vec![b'x'; 64], &[])
            .await;
        assert_eq!(r.status(), 201, "upload {i}: {:?}", r.text().await);
        let f: Value = r.json().await.unwrap();
        ids[which].push(f["id"].as_str().unwrap().to_string());
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let (lat_a, lat_b) = loop {
        match (latencies(&rx_a, &ids[0]), latencies(&rx_b, &ids[1])) {
            (Ok(a), Ok(b)) => break (a, b),
            (a, b) => assert!(
                Instant::now() < deadline,
                "healthy receivers still lack events 30 s after the uploads: {:?} {:?}",
                a.err(),
                b.err()
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    for (name, lat) in [("first", &lat_a), ("second", &lat_b)] {
        let (p50, p99) = (percentile(lat, 50.0), percentile(lat, 99.0));
        // Straight to stderr (shown with --nocapture): the figures.
        let _ = writeln!(
            std::io::stderr(),
            "healthy receiver of the {name} account: commit to receipt p50 {p50:.1} ms, \
             p99 {p99:.1} ms"
        );
        assert!(
            p99 < 1000.0,
            "the {name} account's healthy receiver: commit to receipt p50 {p50:.0} ms, \
             p99 {p99:.0} ms (every latency: {lat:?})"
        );
    }
    // Each event once to the healthy ones (no attempt of theirs failed).
    assert_eq!(rx_a.deliveries.load(Ordering::SeqCst), 60);
    assert_eq!(rx_b.deliveries.load(Ordering::SeqCst), 60);
    // The hanging receiver held its 4 attempts, never more, and is tried
    // again once they time out.
    let again = Instant::now() + Duration::from_secs(30);
    while hung.requests.load(Ordering::SeqCst) <= PER_SUBSCRIPTION as usize {
        assert!(
            Instant::now() < again,
            "the hanging receiver was never tried again after its attempts timed out"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let most = hung.most.load(Ordering::SeqCst);
    assert_eq!(
        most, PER_SUBSCRIPTION as usize,
        "most requests open at once"
    );
    // The failing one's circuit held its 60 events: a few attempts, then
    // a round after each wait.
    let tries = failed.load(Ordering::SeqCst);
    let _ = writeln!(
        std::io::stderr(),
        "hanging receiver: at most {most} requests open at once; \
         failing receiver: {tries} attempts for 60 events"
    );
    assert!(
        (1..=30).contains(&tries),
        "the receiver answering 500 had {tries} attempts for 60 events"
    );
    // Nothing of theirs is lost: their events wait in the outbox.
    assert!(srv.app.meta.pending_events().await.unwrap() >= 120);
}

/// Twenty subscriptions whose receivers hang (one downstream outage across
/// tenants) beside a healthy one, all to one account's files, and an upload
/// every 150 ms for 13.5 s (past the first attempts' 10 s timeout, so their
/// circuits and probes come in the middle of the stream): the healthy
/// receiver gets every event with commit-to-receipt p99 under a second; no
/// hanging receiver ever has more than 4 requests open, nor all of them
/// together more than the failing subscriptions' share; and once their
/// first attempts have timed out, each has at most one (the probe).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_hanging_receivers_leave_a_healthy_one_prompt() {
    const HANGING: usize = 20;
    const UPLOADS: usize = 90;
    const EVERY: u64 = 150;
    let srv = TestServer::start().await;
    let (rx, url) = healthy().await;
    let mut hung = Vec::new();
    for _ in 0..HANGING {
        let (h, u) = hanging().await;
        hook(&srv, &srv.account_id, &u).await;
        hung.push(h);
    }
    *rx.secret.lock().unwrap() = hook(&srv, &srv.account_id, &url).await;

    // Watches the hanging receivers' open requests: all of them together at
    // any time, and each one's once its first attempts are over.
    let open_all = |hung: &[Arc<Hanging>]| -> Vec<usize> {
        hung.iter().map(|h| h.open.load(Ordering::SeqCst)).collect()
    };
    let start = Instant::now();
    let watch = {
        let hung = hung.clone();
        tokio::spawn(async move {
            let (mut most_all, mut most_late) = (0usize, 0usize);
            // Past the first attempts' timeout (they start within the first
            // half second), with a margin for the sender and the receivers.
            let late = Duration::from_secs(12);
            while start.elapsed() < Duration::from_millis(EVERY * UPLOADS as u64 + 1_000) {
                let open = open_all(&hung);
                most_all = most_all.max(open.iter().sum());
                if start.elapsed() > late {
                    most_late = most_late.max(open.iter().copied().max().unwrap_or(0));
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (most_all, most_late)
        })
    };

    let mut ids = Vec::new();
    for i in 0..UPLOADS {
        let slot = start + Duration::from_millis(EVERY * i as u64);
        tokio::time::sleep_until(slot.into()).await;
        let r = srv
            .upload(&format!("outage-{i}.txt"), vec![b'x'; 64], &[])
            .await;
        assert_eq!(r.status(), 201, "upload {i}: {:?}", r.text().await);
        let f: Value = r.json().await.unwrap();
        ids.push(f["id"].as_str().unwrap().to_string());
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let lat = loop {
        match latencies(&rx, &ids) {
            Ok(lat) => break lat,
            Err(missing) => assert!(
                Instant::now() < deadline,
                "the healthy receiver still lacks {} events 20 s after the uploads: {missing:?}",
                missing.len()
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let (p50, p99) = (percentile(&lat, 50.0), percentile(&lat, 99.0));
    let (most_all, most_late) = watch.await.unwrap();
    let most_each = hung
        .iter()
        .map(|h| h.most.load(Ordering::SeqCst))
        .max()
        .unwrap();
    let requests: usize = hung.iter().map(|h| h.requests.load(Ordering::SeqCst)).sum();
    let _ = writeln!(
        std::io::stderr(),
        "beside {HANGING} hanging receivers: healthy commit to receipt p50 {p50:.1} ms, \
         p99 {p99:.1} ms; hanging: at most {most_each} open each, {most_all} together, \
         {most_late} each after their first attempts, {requests} requests"
    );
    assert!(
        p99 < 1000.0,
        "the healthy receiver: commit to receipt p50 {p50:.0} ms, p99 {p99:.0} ms \
         (every latency: {lat:?})"
    );
    // Each event once (no attempt to the healthy one failed).
    assert_eq!(rx.deliveries.load(Ordering::SeqCst), UPLOADS);
    assert!(
        most_each <= PER_SUBSCRIPTION as usize,
        "a hanging receiver had {most_each} requests open at once"
    );
    assert!(
        most_all <= (HANGING * PER_SUBSCRIPTION as usize).min(FAILING_SHARE as usize),
        "the hanging receivers had {most_all} requests open at once"
    );
    assert!(
        most_late <= PROBE as usize,
        "once its first attempts timed out, a hanging receiver had {most_late} open at once"
    );
    // Each was tried: its four, then probes.
    assert!(hung
        .iter()
        .all(|h| h.requests.load(Ordering::SeqCst) >= PER_SUBSCRIPTION as usize));
}
