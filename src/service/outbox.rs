//! What wakes the webhook sender (`webhooks`): a commit that may have
//! queued events, or a delivery that ended.

use tokio::sync::Notify;

/// What wakes the sender.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    pub(crate) wake: Notify,
    /// A delivery ended (its slot is free).
    pub(crate) settled: Notify,
}

impl Outbox {
    /// Something was committed that may have queued events.
    pub(crate) fn wake(&self) {
        self.wake.notify_one();
    }
}
