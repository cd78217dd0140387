//! The sender's scheduler: attempts in flight per subscription, circuits,
//! and the failing subscriptions' share of the node's attempts.

use super::claim::Budget;
use super::limits::{
    CIRCUIT, FAILING_SHARE, GIVE_UP_AFTER, PER_SUBSCRIPTION, PROBE, STALLED, TRIP_AFTER,
};
use crate::clock::millis;
use std::collections::HashMap;

#[cfg(test)]
mod tests;

/// An attempt as [`Scheduler::started`] saw it: whether it counts in the
/// failing subscriptions' share, and when it started (unix ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Started {
    pub in_share: bool,
    pub at: i64,
}

/// One subscription as the sender of one node sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Subscription {
    in_flight: u32,
    /// Of those, the attempts claimed while it was failing.
    in_share: u32,
    /// Failed attempts in a row.
    failures: u32,
    /// Times its circuit opened since its last success (0: closed).
    trips: u32,
    /// Until when its circuit is open (unix ms).
    open_until: i64,
    /// When an attempt last failed (unix ms).
    failed_at: i64,
    /// When an attempt last ended, or the first of those in flight started
    /// (unix ms).
    progress_at: i64,
    /// Whether its last failed attempt took [`STALLED`] or longer (its
    /// receiver hangs, or times out).
    slow: bool,
}

impl Subscription {
    /// Whether it counts among the failing: an attempt failed since its
    /// last success, its circuit is open or half-open, or its attempts in
    /// flight have stalled.
    fn failing(&self, now: i64) -> bool {
        self.failures > 0
            || self.trips > 0
            || self.open_until > now
            || (self.in_flight > 0 && now.saturating_sub(self.progress_at) >= millis(STALLED))
    }

    /// What it holds of the failing subscriptions' share at `now`: all its
    /// attempts while it is failing, else those claimed while it was.
    fn of_share(&self, now: i64) -> u32 {
        if self.failing(now) {
            self.in_flight
        } else {
            self.in_share
        }
    }

    /// How many it may have in flight at `now`: none while its circuit is
    /// open; one (a probe) while its attempts in flight stall, or while it
    /// fails slowly (its last failure took [`STALLED`] or more); else
    /// [`PER_SUBSCRIPTION`].
    fn cap(&self, now: i64) -> u32 {
        let stalled = self.in_flight > 0 && now.saturating_sub(self.progress_at) >= millis(STALLED);
        let failing_slowly = self.slow && (self.failures > 0 || self.trips > 0);
        match (self.open_until > now, stalled || failing_slowly) {
            (true, _) => 0,
            (false, true) => PROBE,
            (false, false) => PER_SUBSCRIPTION,
        }
    }
}

/// The sender's share of attempts among subscriptions, on one node.
///
/// - At most [`PER_SUBSCRIPTION`] of a subscription in flight.
/// - A circuit per subscription: after [`TRIP_AFTER`] failures in a row it
///   opens and none of the subscription's events is claimed for a
///   [`CIRCUIT`] step; then it is half-open and a round of attempts tries
///   the receiver: a success closes the circuit, a failure opens it again
///   for twice as long.
/// - A receiver that hangs (attempts in flight of which none has ended for
///   [`STALLED`], or a last failure that took that long) gets one attempt
///   at a time ([`PROBE`]), none while any of its own is in flight: it
///   holds its first four until they time out, then one probe per
///   [`DELIVERY_TIMEOUT`](super::limits::DELIVERY_TIMEOUT) and wait, not four. A receiver that fails fast
///   (an error answer, a refused connection) holds an attempt for
///   milliseconds, so its half-open rounds keep four: each of its events is
///   retried about on its own schedule, not one event per wait.
/// - A failing subscription (an attempt failed since its last success, its
///   circuit open or half-open, or its attempts stalled) is claimed for
///   only while the failing ones together have fewer than the
///   scheduler's share in flight ([`FAILING_SHARE`] of the node's
///   [`NODE_IN_FLIGHT`](super::limits::NODE_IN_FLIGHT)). The rest of the node's attempts is kept for the
///   subscriptions with no recent failure: however many receivers hang or
///   fail (one downstream outage across tenants), those of the healthy ones
///   find a free attempt at once, and the node's sockets stay bounded.
///
/// Attempts claimed for a failing subscription count in the share until
/// they end, whatever their subscription does meanwhile, so those are
/// never more than the share. Attempts claimed while their subscription was
/// healthy count in once it stalls or fails, and can overfill the share
/// only by the first round of receivers that go from healthy to hanging
/// within one delivery timeout (four each): filling the healthy half too
/// takes 32 subscriptions, made by an administrator, doing so at once.
///
/// All of this is in memory: no write per event, and nothing the other
/// subscriptions' claims pay for.
#[derive(Debug, Clone)]
pub struct Scheduler {
    subs: HashMap<String, Subscription>,
    share: u32,
}

impl Default for Scheduler {
    fn default() -> Scheduler {
        Scheduler::new(FAILING_SHARE)
    }
}

impl Scheduler {
    /// A scheduler whose failing subscriptions share `share` attempts.
    pub fn new(share: u32) -> Scheduler {
        Scheduler {
            subs: HashMap::new(),
            share,
        }
    }

    /// The budget of a claim of up to `max` events at `now`.
    pub fn budget(&mut self, max: u32, now: i64) -> Budget {
        // No attempt for a day since one failed: the subscription has
        // nothing left to send (or is gone).
        let day = millis(GIVE_UP_AFTER);
        self.subs
            .retain(|_, s| s.in_flight > 0 || s.failed_at.saturating_add(day) > now);
        let failing_in_flight: u32 = self.subs.values().map(|s| s.of_share(now)).sum();
        let mut budget = Budget::new(max, PER_SUBSCRIPTION);
        budget.failing_max = self.share.saturating_sub(failing_in_flight);
        for (id, s) in &self.subs {
            let left = s.cap(now).saturating_sub(s.in_flight);
            if s.failing(now) {
                budget.failing.insert(id.clone());
                budget
                    .limits
                    .insert(id.clone(), left.min(budget.failing_max));
            } else if left != PER_SUBSCRIPTION {
                budget.limits.insert(id.clone(), left);
            }
        }
        budget
    }

    /// An attempt of `webhook` was claimed (by a budget of `now`) and
    /// starts; what [`Scheduler::finished`] is to be given back.
    pub fn started(&mut self, webhook: &str, now: i64) -> Started {
        let s = self.subs.entry(webhook.to_string()).or_default();
        let in_share = s.failing(now);
        if s.in_flight == 0 {
            s.progress_at = now;
        }
        s.in_flight += 1;
        s.in_share += u32::from(in_share);
        Started { in_share, at: now }
    }

    /// An attempt of `webhook` (`started`: as [`Scheduler::started`] said)
    /// ended at `now`, delivered or not. Returns until when its circuit
    /// opens, when this failure opens it.
    pub fn finished(
        &mut self,
        webhook: &str,
        started: Started,
        delivered: bool,
        now: i64,
    ) -> Option<i64> {
        let s = self.subs.entry(webhook.to_string()).or_default();
        s.in_flight = s.in_flight.saturating_sub(1);
        s.in_share = s.in_share.saturating_sub(u32::from(started.in_share));
        s.progress_at = now;
        if delivered {
            (s.failures, s.trips, s.open_until, s.slow) = (0, 0, 0, false);
            if s.in_flight == 0 {
                self.subs.remove(webhook);
            }
            return None;
        }
        s.failed_at = now;
        s.slow = now.saturating_sub(started.at) >= millis(STALLED);
        if s.open_until > now {
            // Sent before the circuit opened: already counted in.
            return None;
        }
        s.failures += 1;
        let half_open = s.trips > 0;
        if !half_open && s.failures < TRIP_AFTER {
            return None;
        }
        s.failures = 0;
        s.open_until = now.saturating_add(millis(CIRCUIT.step(s.trips)));
        s.trips = s.trips.saturating_add(1);
        Some(s.open_until)
    }
}
