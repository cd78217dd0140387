//! The delivery's numbers: retries and their schedule, timeouts, and how
//! many attempts a subscription, the failing ones, and a node may have.

use crate::clock::millis;
use crate::domain::backoff::Backoff;
use std::time::Duration;

/// A delivery that has not succeeded this long after its event is dropped.
pub const GIVE_UP_AFTER: Duration = Duration::from_hours(24);

/// Waits between attempts: 1 s, 2 s, 4 s… up to an hour.
pub const RETRY: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_hours(1));

/// How long one attempt may take (connect, send, the answer's status).
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// A claimed event is not handed to another sender before this (longer than
/// an attempt): a node that dies mid-attempt leaves it to be sent again.
pub const CLAIM_LEASE: Duration = Duration::from_mins(1);

/// A folder delete writes its events this many files to a row (a batch),
/// which the sender expands into one event each before it claims
/// ([`EXPANDED_PER_CLAIM`] batches at a time): the delete answers without
/// writing an outbox row per file.
pub const EVENT_BATCH: u32 = 1000;

/// Batches a claim expands before it picks (see [`EVENT_BATCH`]).
pub const EXPANDED_PER_CLAIM: u32 = 2;

/// Attempts of one subscription in flight at once, per node: a receiver
/// that hangs holds this many of the sender's attempts, never more.
pub const PER_SUBSCRIPTION: u32 = 4;

/// Attempts in flight at once, per node, all subscriptions together. An
/// attempt is an async HTTP request: a socket and a little memory, no thread.
pub const NODE_IN_FLIGHT: u32 = 256;

/// Of [`NODE_IN_FLIGHT`], what failing subscriptions may claim together (see
/// [`Scheduler`](super::scheduler::Scheduler)): the other half is kept for the subscriptions with no
/// recent failure, however many receivers hang.
pub const FAILING_SHARE: u32 = NODE_IN_FLIGHT / 2;

/// A subscription with attempts in flight of which none has ended for this
/// long counts as failing (its receiver hangs, or is very slow), before its
/// attempts time out.
pub const STALLED: Duration = Duration::from_secs(2);

/// Attempts of a failing subscription (its circuit half-open, say) in
/// flight: one probe; the others wait for its success.
pub const PROBE: u32 = 1;

/// Failed attempts in a row after which a subscription's circuit opens: its
/// events wait, all of them, instead of each failing on its own schedule.
pub const TRIP_AFTER: u32 = 4;

/// How long an open circuit keeps a subscription's events waiting before a
/// probe tries the receiver again (the first time, then after
/// each failed round): 1 s, 2 s, 4 s… up to an hour, as an event's own
/// retries.
pub const CIRCUIT: Backoff = RETRY;
/// When to try again after failed attempt number `attempts` (1 for the
/// first) of an event made at `event_ms`, or None when it is given up.
pub fn retry_at(event_ms: i64, attempts: u32, now_ms: i64) -> Option<i64> {
    let wait = RETRY.step(attempts.saturating_sub(1));
    let at = now_ms.saturating_add(millis(wait));
    let give_up = event_ms.saturating_add(millis(GIVE_UP_AFTER));
    (at <= give_up).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_up_to_an_hour_for_a_day() {
        let t0 = 1_700_000_000_000;
        assert_eq!(retry_at(t0, 1, t0), Some(t0 + 1_000));
        assert_eq!(retry_at(t0, 2, t0 + 1_000), Some(t0 + 3_000));
        assert_eq!(retry_at(t0, 30, t0), Some(t0 + 3_600_000));
        let day = 24 * 3_600_000;
        assert_eq!(retry_at(t0, 30, t0 + day - 3_600_000), Some(t0 + day));
        assert_eq!(retry_at(t0, 30, t0 + day - 3_599_999), None);
    }
}
