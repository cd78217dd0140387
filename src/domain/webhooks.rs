//! Webhooks (docs/decisions.md, "Webhooks"): the events, the subscription's rules, the
//! Standard Webhooks signature, the retry schedule, and how the sender
//! shares its attempts among subscriptions. No I/O here: the outbox lives in
//! the metadata store, the sender in `service::webhooks`.

use super::backoff::Backoff;
use crate::clock::millis;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

pub const FILE_CREATED: &str = "file.created";
pub const FILE_DELETED: &str = "file.deleted";
pub const FILE_EXPIRED: &str = "file.expired";

/// Every event, in the order `events` lists them by default.
pub const EVENTS: [&str; 3] = [FILE_CREATED, FILE_DELETED, FILE_EXPIRED];

/// A delivery that has not succeeded this long after its event is dropped.
pub const GIVE_UP_AFTER: Duration = Duration::from_hours(24);

/// Waits between attempts: 1 s, 2 s, 4 s… up to an hour.
pub const RETRY: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_hours(1));

/// How long one attempt may take (connect, send, the answer's status).
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// A claimed event is not handed to another sender before this (longer than
/// an attempt): a node that dies mid-attempt leaves it to be sent again.
pub const CLAIM_LEASE: Duration = Duration::from_mins(1);

/// Attempts of one subscription in flight at once, per node: a receiver
/// that hangs holds this many of the sender's attempts, never more.
pub const PER_SUBSCRIPTION: u32 = 4;

/// Attempts in flight at once, per node, all subscriptions together. An
/// attempt is an async HTTP request: a socket and a little memory, no thread.
pub const NODE_IN_FLIGHT: u32 = 256;

/// Of [`NODE_IN_FLIGHT`], what failing subscriptions may claim together (see
/// [`Scheduler`]): the other half is kept for the subscriptions with no
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

/// The events a subscription asks for: every event when none is named;
/// each named once, known, in the canonical order.
pub fn events(asked: &[String]) -> Result<Vec<String>, String> {
    for e in asked {
        if !EVENTS.contains(&e.as_str()) {
            return Err(format!(
                "unknown event {e:?} (events: {})",
                EVENTS.join(", ")
            ));
        }
    }
    Ok(EVENTS
        .iter()
        .filter(|e| asked.is_empty() || asked.iter().any(|a| a == *e))
        .map(ToString::to_string)
        .collect())
}

/// A receiver's URL: absolute http(s), with a host, no credentials, no
/// fragment, at most 2048 bytes.
pub fn url(raw: &str) -> Result<String, String> {
    let bad = |why: &str| Err(format!("webhook url {raw:?}: {why}"));
    if raw.len() > 2048 {
        return bad("longer than 2048 bytes");
    }
    let Ok(u) = reqwest::Url::parse(raw) else {
        return bad("not an absolute URL");
    };
    if !matches!(u.scheme(), "http" | "https") {
        return bad("not http or https");
    }
    if u.host_str().is_none_or(str::is_empty) {
        return bad("no host");
    }
    if !u.username().is_empty() || u.password().is_some() {
        return bad("credentials do not belong in it");
    }
    if u.fragment().is_some() {
        return bad("a fragment is never sent");
    }
    Ok(u.to_string())
}

/// A new signing secret: `whsec_` and the base64 of 32 random bytes.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("whsec_{}", STANDARD.encode(bytes))
}

/// A message id (`webhook-id`): `msg_` and 128 random bits.
pub fn message_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    format!("msg_{}", hex::encode(bytes))
}

/// `webhook-signature` of `body` sent as message `id` at unix second
/// `timestamp`: `v1,` and the base64 of HMAC-SHA256 keyed with the secret's
/// bytes (the base64 after `whsec_`) over `<id>.<timestamp>.<body>`.
pub fn signature(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, String> {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap_or(secret))
        .map_err(|e| format!("webhook secret is not base64: {e}"))?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|e| e.to_string())?;
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// When to try again after failed attempt number `attempts` (1 for the
/// first) of an event made at `event_ms`, or None when it is given up.
pub fn retry_at(event_ms: i64, attempts: u32, now_ms: i64) -> Option<i64> {
    let wait = RETRY.step(attempts.saturating_sub(1));
    let at = now_ms.saturating_add(millis(wait));
    let give_up = event_ms.saturating_add(millis(GIVE_UP_AFTER));
    (at <= give_up).then_some(at)
}

/// What one claim may take: `max` events in all and, of each subscription,
/// `each`, or what `limits` gives it (a subscription with attempts in flight,
/// failing, or its circuit open); of the subscriptions in `failing`,
/// `failing_max` together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    pub max: u32,
    pub each: u32,
    pub limits: HashMap<String, u32>,
    pub failing: HashSet<String>,
    pub failing_max: u32,
}

impl Budget {
    /// `max` in all, `each` of any subscription, none failing.
    pub fn new(max: u32, each: u32) -> Budget {
        Budget {
            max,
            each,
            limits: HashMap::new(),
            failing: HashSet::new(),
            failing_max: u32::MAX,
        }
    }

    /// What subscription `webhook` may have of this claim.
    pub fn of(&self, webhook: &str) -> u32 {
        let n = self
            .limits
            .get(webhook)
            .copied()
            .unwrap_or(self.each)
            .min(self.max);
        if self.failing.contains(webhook) {
            n.min(self.failing_max)
        } else {
            n
        }
    }
}

/// An event a claim could take: its place in the outbox, since when it is
/// due (unix ms: its commit, or the retry its last failure set) and its
/// subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub seq: i64,
    pub due: i64,
    pub webhook_id: String,
}

/// The events a claim takes of `candidates` (each subscription's longest
/// due ones, within its budget): round-robin across subscriptions, each
/// round longest due first (every subscription's first, then every one's
/// second…), at most `budget.max`, and of the subscriptions in
/// `budget.failing` at most `budget.failing_max` together (those over it
/// are stepped over, not the others after them). A subscription with a backlog gets no more of
/// the claim than one with a single event, until that one has none left;
/// within a subscription, an event due since its commit goes before one
/// whose retry came due since, so a backlog of failures does not starve
/// the first attempts.
pub fn fair_pick(candidates: &[Candidate], budget: &Budget) -> Vec<i64> {
    let mut sorted: Vec<&Candidate> = candidates.iter().collect();
    sorted.sort_by(|a, b| (&a.webhook_id, a.due, a.seq).cmp(&(&b.webhook_id, b.due, b.seq)));
    let mut ranked: Vec<(usize, i64, i64, bool)> = Vec::with_capacity(sorted.len());
    let mut rank = 0;
    for (i, c) in sorted.iter().enumerate() {
        rank = match i {
            0 => 0,
            _ if sorted[i - 1].webhook_id == c.webhook_id => rank + 1,
            _ => 0,
        };
        ranked.push((rank, c.due, c.seq, budget.failing.contains(&c.webhook_id)));
    }
    ranked.sort_unstable();
    let max = usize::try_from(budget.max).unwrap_or(usize::MAX);
    let mut failing_left = budget.failing_max;
    let mut picked = Vec::new();
    for (_, _, seq, failing) in ranked {
        if picked.len() >= max {
            break;
        }
        if failing {
            if failing_left == 0 {
                continue;
            }
            failing_left -= 1;
        }
        picked.push(seq);
    }
    picked
}

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
///   [`DELIVERY_TIMEOUT`] and wait, not four. A receiver that fails fast
///   (an error answer, a refused connection) holds an attempt for
///   milliseconds, so its half-open rounds keep four: each of its events is
///   retried about on its own schedule, not one event per wait.
/// - A failing subscription (an attempt failed since its last success, its
///   circuit open or half-open, or its attempts stalled) is claimed for
///   only while the failing ones together have fewer than the
///   scheduler's share in flight ([`FAILING_SHARE`] of the node's
///   [`NODE_IN_FLIGHT`]). The rest of the node's attempts is kept for the
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_as_the_standard_webhooks_example() {
        // The example of the Standard Webhooks specification and libraries.
        let sig = signature(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        )
        .unwrap();
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert!(signature("whsec_!!", "m", 1, b"").is_err());
    }

    #[test]
    fn events_default_to_all_and_refuse_unknown_ones() {
        assert_eq!(events(&[]).unwrap(), EVENTS);
        let asked = vec![
            FILE_EXPIRED.to_string(),
            FILE_CREATED.to_string(),
            FILE_CREATED.to_string(),
        ];
        assert_eq!(events(&asked).unwrap(), [FILE_CREATED, FILE_EXPIRED]);
        assert!(events(&["file.updated".to_string()]).is_err());
    }

    #[test]
    fn urls() {
        assert_eq!(
            url("https://h.example/hook?x=1").unwrap(),
            "https://h.example/hook?x=1"
        );
        assert_eq!(url("http://127.0.0.1:9").unwrap(), "http://127.0.0.1:9/");
        for bad in [
            "ftp://h/",
            "/hook",
            "https://u:p@h/",
            "https://h/#f",
            "nonsense",
            "",
        ] {
            assert!(url(bad).is_err(), "{bad}");
        }
        assert!(url(&format!("https://h/{}", "a".repeat(2048))).is_err());
    }

    #[test]
    fn secrets_and_ids_have_their_shapes() {
        let s = new_secret();
        assert_eq!(STANDARD.decode(&s["whsec_".len()..]).unwrap().len(), 32);
        let m = message_id();
        assert!(m.starts_with("msg_") && m.len() == 36);
    }

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

    /// Candidates due at their commit (`due` = `seq`), or as given.
    fn candidates(of: &[(&str, &[i64])]) -> Vec<Candidate> {
        of.iter()
            .flat_map(|(w, seqs)| {
                seqs.iter().map(|&seq| Candidate {
                    seq,
                    due: seq,
                    webhook_id: w.to_string(),
                })
            })
            .collect()
    }

    #[test]
    fn a_claim_goes_round_robin_across_subscriptions_longest_due_first() {
        let all = |max| Budget::new(max, PER_SUBSCRIPTION);
        let c = candidates(&[("wh_a", &[1, 2, 3, 4]), ("wh_b", &[9]), ("wh_c", &[5, 7])]);
        assert_eq!(fair_pick(&c, &all(5)), [1, 5, 9, 2, 7]);
        assert_eq!(fair_pick(&c, &all(2)), [1, 5]);
        assert_eq!(fair_pick(&c, &all(100)), [1, 5, 9, 2, 7, 3, 4]);
        assert!(fair_pick(&c, &all(0)).is_empty());
        assert!(fair_pick(&[], &all(4)).is_empty());
        // A retry that came due late goes after a first attempt due since
        // its commit.
        let mut c = candidates(&[("wh_a", &[1, 2, 3])]);
        c[0].due = 10;
        assert_eq!(fair_pick(&c, &all(2)), [2, 3]);
    }

    #[test]
    fn a_claim_takes_of_the_failing_subscriptions_only_their_share() {
        let c = candidates(&[("wh_a", &[1, 2, 3]), ("wh_b", &[4, 5]), ("wh_c", &[6, 7])]);
        let mut b = Budget::new(100, PER_SUBSCRIPTION);
        b.failing = ["wh_a".to_string(), "wh_b".to_string()].into();
        b.failing_max = 2;
        // The failing ones' turns past their share are stepped over; the
        // healthy one's are not.
        assert_eq!(fair_pick(&c, &b), [1, 4, 6, 7]);
        b.failing_max = 1;
        assert_eq!(fair_pick(&c, &b), [1, 6, 7]);
        b.max = 2;
        assert_eq!(fair_pick(&c, &b), [1, 6]);
        b.max = 100;
        b.failing_max = 0;
        assert_eq!(fair_pick(&c, &b), [6, 7]);
        assert_eq!((b.of("wh_a"), b.of("wh_c")), (0, PER_SUBSCRIPTION));
    }

    #[test]
    fn a_budget_gives_each_subscription_its_share_never_more_than_the_claim() {
        let mut b = Budget::new(64, PER_SUBSCRIPTION);
        b.limits.insert("wh_busy".into(), 1);
        assert_eq!((b.of("wh_busy"), b.of("wh_other")), (1, 4));
        assert_eq!(Budget::new(2, PER_SUBSCRIPTION).of("wh_other"), 2);
        b.failing.insert("wh_other".into());
        b.failing_max = 3;
        assert_eq!((b.of("wh_busy"), b.of("wh_other")), (1, 3));
    }

    #[test]
    fn at_most_four_in_flight_per_subscription() {
        let mut s = Scheduler::default();
        let mut flying = Vec::new();
        for _ in 0..3 {
            flying.push(s.started("wh_a", 0));
        }
        let b = s.budget(64, 0);
        assert_eq!((b.of("wh_a"), b.of("wh_b")), (1, 4));
        flying.push(s.started("wh_a", 0));
        assert_eq!(s.budget(64, 0).of("wh_a"), 0);
        assert_eq!(s.finished("wh_a", flying.pop().unwrap(), true, 1), None);
        assert_eq!(s.budget(64, 1).of("wh_a"), 1);
        for a in flying {
            s.finished("wh_a", a, true, 2);
        }
        assert!(s.budget(64, 2).limits.is_empty(), "{s:?}");
    }

    #[test]
    fn failures_in_a_row_open_the_circuit_then_a_round_tries_again() {
        let mut s = Scheduler::default();
        let t = 1_000_000;
        let mut flying: Vec<Started> = (0..4).map(|_| s.started("wh_a", t)).collect();
        // Three failures and a success: not in a row.
        for _ in 0..3 {
            assert_eq!(s.finished("wh_a", flying.pop().unwrap(), false, t), None);
        }
        assert_eq!(s.finished("wh_a", flying.pop().unwrap(), true, t), None);
        for _ in 0..3 {
            let a = s.started("wh_a", t);
            assert_eq!(s.finished("wh_a", a, false, t), None);
        }
        let (a, b) = (s.started("wh_a", t), s.started("wh_a", t));
        // The fourth in a row opens it for a second; an attempt sent before
        // and failing after does not count again.
        assert_eq!(s.finished("wh_a", a, false, t), Some(t + 1_000));
        assert_eq!(s.finished("wh_a", b, false, t + 10), None);
        assert_eq!(s.budget(64, t + 999).of("wh_a"), 0);
        // Half-open, the receiver failing fast: a round of attempts, in the
        // failing ones' share; its first failure opens it again, for twice
        // as long, and the round's others do not count.
        assert_eq!(s.budget(64, t + 1_000).of("wh_a"), PER_SUBSCRIPTION);
        let mut round: Vec<Started> = (0..4).map(|_| s.started("wh_a", t + 1_000)).collect();
        assert!(round.iter().all(|a| a.in_share));
        assert_eq!(s.budget(64, t + 1_000).of("wh_a"), 0);
        assert_eq!(
            s.finished("wh_a", round.pop().unwrap(), false, t + 1_500),
            Some(t + 3_500)
        );
        assert_eq!(
            s.finished("wh_a", round.pop().unwrap(), false, t + 1_600),
            None
        );
        assert_eq!(
            s.finished("wh_a", round.pop().unwrap(), false, t + 1_700),
            None
        );
        assert_eq!(s.budget(64, t + 3_499).of("wh_a"), 0);
        // A success closes it, at once: four at a time again, not failing.
        assert_eq!(
            s.finished("wh_a", round.pop().unwrap(), true, t + 2_000),
            None
        );
        let b = s.budget(64, t + 2_000);
        assert_eq!(b.of("wh_a"), PER_SUBSCRIPTION);
        assert!(b.failing.is_empty());
        // The others never waited.
        assert_eq!(s.budget(64, t + 1_500).of("wh_b"), PER_SUBSCRIPTION);
    }

    #[test]
    fn a_receiver_that_hangs_gets_one_probe_at_a_time() {
        let mut s = Scheduler::default();
        let timeout = millis(DELIVERY_TIMEOUT);
        let mut flying: Vec<Started> = (0..4).map(|_| s.started("wh_a", 0)).collect();
        // None ends: once stalled, it is failing, and gets no more.
        assert!(s.budget(64, millis(STALLED) - 1).failing.is_empty());
        let b = s.budget(64, millis(STALLED));
        assert!(b.failing.contains("wh_a"));
        assert_eq!(b.of("wh_a"), 0);
        // They time out one by one: none is sent in their place.
        for i in 0..3 {
            let now = timeout + i;
            assert_eq!(s.finished("wh_a", flying.pop().unwrap(), false, now), None);
            assert_eq!(s.budget(64, now).of("wh_a"), 0);
        }
        let opened = timeout + 3;
        assert_eq!(
            s.finished("wh_a", flying.pop().unwrap(), false, opened),
            Some(opened + 1_000)
        );
        // Half-open: one probe; none more while it is in flight.
        let now = opened + 1_000;
        assert_eq!(s.budget(64, now).of("wh_a"), PROBE);
        let probe = s.started("wh_a", now);
        assert!(probe.in_share);
        assert_eq!(s.budget(64, now).of("wh_a"), 0);
        // It hangs too: twice as long, then one probe again.
        let end = now + timeout;
        assert_eq!(s.finished("wh_a", probe, false, end), Some(end + 2_000));
        assert_eq!(s.budget(64, end + 2_000).of("wh_a"), PROBE);
        // It succeeds: four at a time again.
        let probe = s.started("wh_a", end + 2_000);
        assert_eq!(s.finished("wh_a", probe, true, end + 2_010), None);
        assert_eq!(s.budget(64, end + 2_010).of("wh_a"), PER_SUBSCRIPTION);
    }

    #[test]
    fn the_circuit_waits_double_up_to_an_hour_and_is_forgotten_after_a_day() {
        let mut s = Scheduler::default();
        let mut now = 0;
        let mut waits = Vec::new();
        let mut flying: Vec<Started> = (0..4).map(|_| s.started("wh_a", now)).collect();
        for _ in 0..3 {
            s.finished("wh_a", flying.pop().unwrap(), false, now);
        }
        for _ in 0..16 {
            let a = flying.pop().unwrap();
            let until = s.finished("wh_a", a, false, now).expect("it opens");
            waits.push((until - now) / 1_000);
            now = until;
            assert_eq!(s.budget(64, now).of("wh_a"), PER_SUBSCRIPTION);
            flying.push(s.started("wh_a", now));
        }
        assert_eq!(
            waits,
            [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3600, 3600, 3600, 3600]
        );
        s.finished("wh_a", flying.pop().unwrap(), false, now);
        let day = millis(GIVE_UP_AFTER);
        s.budget(64, now + day - 1);
        assert!(s.subs.contains_key("wh_a"));
        s.budget(64, now + day);
        assert!(s.subs.is_empty());
    }

    /// Hanging receivers stall, then fail: together they claim no more than
    /// their share, and a healthy subscription's claim is untouched.
    #[test]
    fn hanging_and_failing_subscriptions_share_a_part_and_the_healthy_keep_the_rest() {
        let mut s = Scheduler::new(8);
        let hung = ["wh_h0", "wh_h1", "wh_h2", "wh_h3"];
        let mut flying: HashMap<&str, Vec<Started>> = HashMap::new();
        for h in hung {
            flying.insert(h, (0..4).map(|_| s.started(h, 0)).collect());
        }
        // Just started: nothing known yet, no one failing.
        let b = s.budget(64, 1_999);
        assert!(b.failing.is_empty());
        assert_eq!((b.of("wh_h0"), b.of("wh_ok")), (0, PER_SUBSCRIPTION));
        // None of their attempts ended for a while: they are failing, and
        // already hold more than the share.
        let stalled = millis(STALLED);
        let b = s.budget(64, stalled);
        assert_eq!(b.failing.len(), 4);
        assert_eq!(b.failing_max, 0);
        assert_eq!(b.of("wh_ok"), PER_SUBSCRIPTION);
        // A receiver answering 500 once is failing too: it waits for room
        // in the share; the healthy one does not wait.
        let a = s.started("wh_500", stalled);
        s.finished("wh_500", a, false, stalled + 1);
        let b = s.budget(64, stalled + 1);
        assert!(b.failing.contains("wh_500"));
        assert_eq!((b.of("wh_500"), b.of("wh_ok")), (0, PER_SUBSCRIPTION));
        // Two of the hanging ones time out (their circuits open): the
        // others still hold the share.
        for h in &hung[..2] {
            for a in flying.remove(h).unwrap() {
                s.finished(h, a, false, 10_000);
            }
        }
        assert_eq!(s.budget(64, 10_000).failing_max, 0);
        // Three of each other's time out: room again, for the failing
        // ones' turns; a slow one with an attempt in flight gets none.
        for h in &hung[2..] {
            for a in flying.get_mut(h).unwrap().drain(..3) {
                s.finished(h, a, false, 10_000);
            }
        }
        let b = s.budget(64, 10_000);
        assert_eq!(b.failing_max, 6);
        assert_eq!(b.of("wh_500"), PER_SUBSCRIPTION);
        assert_eq!((b.of("wh_h0"), b.of("wh_h2")), (0, 0));
        // Half-open: a probe each.
        let b = s.budget(64, 11_000);
        assert_eq!((b.of("wh_h0"), b.of("wh_h1")), (PROBE, PROBE));
        assert_eq!(b.of("wh_ok"), PER_SUBSCRIPTION);
    }

    proptest::proptest! {
        /// Whatever the candidates and the claim's size: each subscription's
        /// longest due, none twice, as many as the claim allows, and no
        /// subscription more than one ahead of another that has more left.
        #[test]
        fn fair_pick_is_round_robin(
            events in proptest::collection::vec((0usize..6, 0i64..20), 0..40),
            max in 0u32..50,
        ) {
            let c: Vec<Candidate> = events
                .iter()
                .enumerate()
                .map(|(i, (w, due))| Candidate {
                    seq: i64::try_from(i).unwrap(),
                    due: *due,
                    webhook_id: format!("wh_{w}"),
                })
                .collect();
            let picked = fair_pick(&c, &Budget::new(max, PER_SUBSCRIPTION));
            proptest::prop_assert_eq!(picked.len(), c.len().min(max as usize));
            let mut unique = picked.clone();
            unique.sort_unstable();
            unique.dedup();
            proptest::prop_assert_eq!(unique.len(), picked.len());
            let mut got: HashMap<&str, Vec<i64>> = HashMap::new();
            for p in &picked {
                let w = &c.iter().find(|x| x.seq == *p).expect("a candidate").webhook_id;
                got.entry(w.as_str()).or_default().push(*p);
            }
            for w in 0..6 {
                let w = format!("wh_{w}");
                let mut all: Vec<&Candidate> = c.iter().filter(|x| x.webhook_id == w).collect();
                all.sort_by_key(|x| (x.due, x.seq));
                let all: Vec<i64> = all.iter().map(|x| x.seq).collect();
                let mut mine = got.get(w.as_str()).cloned().unwrap_or_default();
                mine.sort_by_key(|seq| all.iter().position(|a| a == seq));
                proptest::prop_assert_eq!(&mine[..], &all[..mine.len()], "longest due first");
                for other in got.values() {
                    proptest::prop_assert!(
                        other.len() <= mine.len() + 1 || mine.len() == all.len(),
                        "{} got {} of {}, another {}", w, mine.len(), all.len(), other.len()
                    );
                }
            }
        }

        /// Claims of the node's free attempts, as the sender makes them
        /// (each subscription's due events within its budget, then
        /// `fair_pick`), whatever attempts end how and when: never more than
        /// four of a subscription in flight; none started while its circuit
        /// is open; of those claimed as probes, one at most; the
        /// attempts claimed for failing subscriptions never more than the
        /// share in flight; and a
        /// subscription that is not failing may always claim its four (or
        /// what is free on the node), however the others fare.
        #[test]
        fn the_budget_bounds_what_is_in_flight(
            steps in proptest::collection::vec((0u8..3, 0u8..6, 0u32..6, proptest::bool::ANY), 1..200),
            share in 1u32..12,
        ) {
            const NODE: u32 = 16;
            let mut s = Scheduler::new(share);
            let mut now = 0i64;
            // (subscription, as started, claimed as a probe)
            let mut flying: Vec<(String, Started, bool)> = Vec::new();
            for (op, sub, n, ok) in steps {
                let w = format!("wh_{sub}");
                now += 300;
                match op {
                    0 => {
                        let free = NODE - u32::try_from(flying.len()).unwrap();
                        let b = s.budget(free, now);
                        let mut c = Vec::new();
                        for k in 0..6 {
                            let k = format!("wh_{k}");
                            for i in 0..b.of(&k).min(n) {
                                c.push(Candidate {
                                    seq: i64::try_from(c.len()).unwrap(),
                                    due: i64::from(i),
                                    webhook_id: k.clone(),
                                });
                            }
                        }
                        for seq in fair_pick(&c, &b) {
                            let k = c[usize::try_from(seq).unwrap()].webhook_id.clone();
                            proptest::prop_assert!(
                                s.subs.get(&k).is_none_or(|x| x.open_until <= now),
                                "claimed while open"
                            );
                            let probe = s.subs.get(&k).is_some_and(|x| x.cap(now) == PROBE);
                            let started = s.started(&k, now);
                            proptest::prop_assert_eq!(started.in_share, b.failing.contains(&k));
                            flying.push((k.clone(), started, probe));
                        }
                    }
                    1 => {
                        if let Some(i) = flying.iter().position(|f| f.0 == w) {
                            let (_, started, _) = flying.remove(i);
                            s.finished(&w, started, ok, now);
                        }
                    }
                    _ => now += i64::from(n) * 1_000,
                }
                proptest::prop_assert!(flying.len() <= NODE as usize);
                let failing_started = flying.iter().filter(|f| f.1.in_share).count();
                proptest::prop_assert!(failing_started <= share as usize);
                let b = s.budget(NODE - u32::try_from(flying.len()).unwrap(), now);
                for k in 0..6 {
                    let k = format!("wh_{k}");
                    let mine: Vec<_> = flying.iter().filter(|f| f.0 == k).collect();
                    let in_flight = u32::try_from(mine.len()).unwrap();
                    proptest::prop_assert!(in_flight <= PER_SUBSCRIPTION);
                    proptest::prop_assert!(mine.iter().filter(|f| f.2).count() <= PROBE as usize);
                    let sub = s.subs.get(&k).copied().unwrap_or_default();
                    proptest::prop_assert_eq!(sub.in_flight, in_flight);
                    if sub.open_until > now {
                        proptest::prop_assert_eq!(b.of(&k), 0);
                    }
                    if !b.failing.contains(&k) {
                        proptest::prop_assert_eq!(
                            b.of(&k),
                            (PER_SUBSCRIPTION - in_flight).min(b.max)
                        );
                    }
                }
            }
        }
    }
}
