//! The webhook sender (docs/decisions.md, "Webhooks"). What a delivery's
//! body says is the door's ([`Render`]: the /v1 door's File record); when
//! and to whom it goes is decided here. Events are written to the outbox by
//! the metadata store in the transaction of their change, so nothing is
//! sent before a change is committed and nothing committed goes unsent. This
//! task claims due events (a file's in order; on PostgreSQL one node at a
//! time per event), posts each, signed per Standard Webhooks, and removes it
//! once a receiver answers 2xx; otherwise it is tried again with backoff
//! for 24 h under the same `webhook-id`; each attempt's outcome is logged
//! for the account (`db::console::DeliveryRepo`). Deliveries run beside the request
//! path with a bounded number in flight, so a slow or dead receiver costs
//! uploads nothing, and they are shared among subscriptions
//! (`webhooks::Scheduler`): at most 4 of one subscription in flight, claims
//! taken round-robin across subscriptions, a receiver failing again and
//! again waits behind its own circuit and is then tried by one probe, and
//! the failing subscriptions together claim at most half of the node's
//! attempts, so that however many receivers hang, the others' events find
//! an attempt at once: a failing receiver delays only its own events. A
//! commit on this node wakes the sender at once; events of other nodes,
//! retries and reopened circuits are found by polling every second.

use super::outbox::Outbox;
use super::App;
use crate::clock::millis;
pub(crate) use crate::db::OutboxEvent;
use crate::db::{DeliveryRow, DeliveryStatus};
use crate::domain::webhooks::{
    self, Scheduler, CLAIM_LEASE, DELIVERY_TIMEOUT, FAILING_SHARE, NODE_IN_FLIGHT,
};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;
use tokio::sync::Semaphore;

/// How often the outbox is looked at when nothing woke the sender.
const POLL: Duration = Duration::from_secs(1);

/// Runs the sender until the app is dropped by everyone else.
pub(crate) fn spawn(app: Arc<App>, render: Render) -> tokio::task::JoinHandle<()> {
    let weak = Arc::downgrade(&app);
    let outbox = app.outbox.clone();
    drop(app);
    tokio::spawn(run(weak, outbox, render))
}

/// A delivery's body for an event, in the wire format of the door whose
/// records the receivers read.
pub(crate) type Render = fn(&App, &OutboxEvent) -> Vec<u8>;

async fn run(weak: Weak<App>, outbox: Arc<Outbox>, render: Render) {
    let Some(receivers) = weak.upgrade().map(|app| app.config.webhook_receivers) else {
        return;
    };
    let client = match reqwest::Client::builder()
        .dns_resolver(Arc::new(super::webhook_guard::Guarded(receivers)))
        .connect_timeout(Duration::from_secs(5))
        .timeout(DELIVERY_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("filestore-webhooks/", env!("CARGO_PKG_VERSION")))
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "webhook sender: no HTTP client; no events are sent");
            return;
        }
    };
    let slots = Arc::new(Semaphore::new(NODE_IN_FLIGHT as usize));
    let scheduler = Arc::new(Mutex::new(Scheduler::new(FAILING_SHARE)));
    loop {
        let free = slots.available_permits();
        let mut more = false;
        if free > 0 {
            let Some(app) = weak.upgrade() else { return };
            let now = app.clock.now_ms();
            let max = u32::try_from(free).unwrap_or(u32::MAX);
            // Only this loop starts attempts: what is in flight can only
            // fall between the budget and the attempts it allows.
            let budget = lock(&scheduler).budget(max, now);
            // A read first: most commits queue no event, and a claim writes.
            let due = app.meta.any_due_events(now, &budget).await.unwrap_or(true);
            let claimed = if due {
                app.meta
                    .claim_events(now, now + millis(CLAIM_LEASE), &budget)
                    .await
            } else {
                Ok(Vec::new())
            };
            match claimed {
                Ok(events) => {
                    more = events.len() == free;
                    for event in events {
                        let Ok(slot) = slots.clone().try_acquire_owned() else {
                            break;
                        };
                        let mut attempt = Attempt::start(&scheduler, &event.webhook_id, now, &app);
                        let (app, client, outbox) = (app.clone(), client.clone(), outbox.clone());
                        tokio::spawn(async move {
                            let body = render(&app, &event);
                            attempt.delivered = deliver(&app, &client, event, body).await;
                            drop(attempt);
                            drop(slot);
                            outbox.settled.notify_one();
                        });
                    }
                }
                Err(e) => tracing::warn!(error = %e, "webhook outbox: claim failed"),
            }
        }
        if more && slots.available_permits() > 0 {
            continue;
        }
        tokio::select! {
            () = outbox.wake.notified() => {}
            () = outbox.settled.notified() => {}
            () = tokio::time::sleep(POLL) => {}
        }
    }
}

/// An attempt in flight: counted in its subscription's share from its
/// claim until dropped, however its task ends.
struct Attempt {
    scheduler: Arc<Mutex<Scheduler>>,
    webhook: String,
    started: webhooks::Started,
    clock: crate::clock::Clock,
    delivered: bool,
}

impl Attempt {
    /// `now`: the time of the budget it was claimed by.
    fn start(scheduler: &Arc<Mutex<Scheduler>>, webhook: &str, now: i64, app: &App) -> Attempt {
        let started = lock(scheduler).started(webhook, now);
        Attempt {
            scheduler: scheduler.clone(),
            webhook: webhook.to_string(),
            started,
            clock: app.clock.clone(),
            delivered: false,
        }
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        let now = self.clock.now_ms();
        let opened =
            lock(&self.scheduler).finished(&self.webhook, self.started, self.delivered, now);
        if let Some(until) = opened {
            tracing::warn!(webhook = %self.webhook, wait_ms = until - now,
                "webhook receiver failing: its events wait, then one attempt tries it");
        }
    }
}

/// The scheduler (none of its methods panics, so a poisoned lock still
/// holds whole counts).
fn lock(s: &Mutex<Scheduler>) -> std::sync::MutexGuard<'_, Scheduler> {
    s.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One attempt; records its outcome. Whether the receiver took it.
async fn deliver(app: &App, client: &reqwest::Client, event: OutboxEvent, body: Vec<u8>) -> bool {
    // The transport's time (receivers check it against their clock), not
    // the event's.
    let sent_at = chrono::Utc::now().timestamp();
    let allowed = super::webhook_guard::check_literal(app.config.webhook_receivers, &event.url);
    let signed = allowed
        .and_then(|()| webhooks::signature(event.secret.expose(), &event.id, sent_at, &body));
    let answer = match signed {
        Ok(signature) => client
            .post(&event.url)
            .header("content-type", "application/json")
            .header("webhook-id", &event.id)
            .header("webhook-timestamp", sent_at.to_string())
            .header("webhook-signature", signature)
            .body(body)
            .send()
            .await
            .map(|r| r.status())
            .map_err(|e| e.without_url().to_string()),
        Err(e) => Err(e),
    };
    let http_status = answer.as_ref().ok().map(reqwest::StatusCode::as_u16);
    let outcome = answer.and_then(|s| {
        if s.is_success() {
            Ok(())
        } else {
            Err(format!("answered {s}"))
        }
    });
    let now = app.clock.now_ms();
    let delivered = outcome.is_ok();
    let (recorded, status) = match outcome {
        Ok(()) => {
            metrics::counter!("filestore_webhook_deliveries_total", "result" => "ok").increment(1);
            (
                app.meta.event_done(event.seq).await,
                DeliveryStatus::Delivered,
            )
        }
        Err(error) => {
            if let Some(at) = webhooks::retry_at(event.created_at, event.attempts, now) {
                metrics::counter!("filestore_webhook_deliveries_total", "result" => "failed")
                    .increment(1);
                tracing::info!(webhook = %event.webhook_id, event = %event.id, attempts = event.attempts,
                    error = %error, "webhook delivery failed; retried later");
                let failed = app.meta.event_failed(event.seq, at, &error).await;
                (failed, DeliveryStatus::Retrying)
            } else {
                metrics::counter!("filestore_webhook_deliveries_total", "result" => "dropped")
                    .increment(1);
                tracing::warn!(webhook = %event.webhook_id, event = %event.id, attempts = event.attempts,
                    error = %error, "webhook event given up after 24 h");
                (app.meta.event_done(event.seq).await, DeliveryStatus::Failed)
            }
        }
    };
    if let Err(e) = recorded {
        // The claim's lease runs out and the event is tried again.
        tracing::warn!(event = %event.id, error = %e, "webhook outcome not recorded");
        return delivered;
    }
    // The account's log of deliveries (`GET /v1/webhooks/{id}/deliveries`).
    let logged = app
        .meta
        .record_delivery(DeliveryRow {
            webhook_id: event.webhook_id,
            event_id: event.id,
            kind: event.kind,
            status,
            http_status,
            attempts: event.attempts,
            at: now,
        })
        .await;
    if let Err(e) = logged {
        tracing::warn!(error = %e, "webhook delivery not logged");
    }
    delivered
}
