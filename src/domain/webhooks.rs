//! Webhooks (CONTRACT §12): the events, the subscription's rules, the
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
use std::collections::HashMap;
use std::time::Duration;

pub const FILE_CREATED: &str = "file.created";
pub const FILE_DELETED: &str = "file.deleted";
pub const FILE_EXPIRED: &str = "file.expired";

/// Every event, in the order `events` lists them by default.
pub const EVENTS: [&str; 3] = [FILE_CREATED, FILE_DELETED, FILE_EXPIRED];

/// A delivery that has not succeeded this long after its event is dropped.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Waits between attempts: 1 s, 2 s, 4 s… up to an hour.
pub const RETRY: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(3600));

/// How long one attempt may take (connect, send, the answer's status).
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// A claimed event is not handed to another sender before this (longer than
/// an attempt): a node that dies mid-attempt leaves it to be sent again.
pub const CLAIM_LEASE: Duration = Duration::from_secs(60);

/// Attempts of one subscription in flight at once, per node: a receiver
/// that hangs holds this many of the sender's attempts, never more.
pub const PER_SUBSCRIPTION: u32 = 4;

/// Failed attempts in a row after which a subscription's circuit opens: its
/// events wait, all of them, instead of each failing on its own schedule.
pub const TRIP_AFTER: u32 = 4;

/// How long an open circuit keeps a subscription's events waiting before a
/// round of attempts tries the receiver again (the first time, then after
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
        .map(|e| e.to_string())
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
/// `each`, or what `limits` gives it (a subscription with attempts in flight
/// or its circuit open).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Budget {
    pub max: u32,
    pub each: u32,
    pub limits: HashMap<String, u32>,
}

impl Budget {
    /// `max` in all, `each` of any subscription.
    pub fn new(max: u32, each: u32) -> Budget {
        Budget {
            max,
            each,
            limits: HashMap::new(),
        }
    }

    /// What subscription `webhook` may have of this claim.
    pub fn of(&self, webhook: &str) -> u32 {
        self.limits
            .get(webhook)
            .copied()
            .unwrap_or(self.each)
            .min(self.max)
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
/// second…), at most `max`. A subscription with a backlog gets no more of
/// the claim than one with a single event, until that one has none left;
/// within a subscription, an event due since its commit goes before one
/// whose retry came due since, so a backlog of failures does not starve
/// the first attempts.
pub fn fair_pick(candidates: &[Candidate], max: u32) -> Vec<i64> {
    let mut sorted: Vec<&Candidate> = candidates.iter().collect();
    sorted.sort_by(|a, b| (&a.webhook_id, a.due, a.seq).cmp(&(&b.webhook_id, b.due, b.seq)));
    let mut ranked: Vec<(usize, i64, i64)> = Vec::with_capacity(sorted.len());
    let mut rank = 0;
    for (i, c) in sorted.iter().enumerate() {
        rank = match i {
            0 => 0,
            _ if sorted[i - 1].webhook_id == c.webhook_id => rank + 1,
            _ => 0,
        };
        ranked.push((rank, c.due, c.seq));
    }
    ranked.sort_unstable();
    ranked
        .into_iter()
        .take(usize::try_from(max).unwrap_or(usize::MAX))
        .map(|(_, _, seq)| seq)
        .collect()
}

/// One subscription as the sender of one node sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Subscription {
    in_flight: u32,
    /// Failed attempts in a row.
    failures: u32,
    /// Times its circuit opened since its last success (0: closed).
    trips: u32,
    /// Until when its circuit is open (unix ms).
    open_until: i64,
    /// When an attempt last failed (unix ms).
    failed_at: i64,
}

/// The sender's share of attempts among subscriptions: at most
/// [`PER_SUBSCRIPTION`] in flight each, and a circuit per subscription.
/// After [`TRIP_AFTER`] failures in a row the circuit opens: none of the
/// subscription's events is claimed for a [`CIRCUIT`] step; then a round of
/// attempts tries the receiver (half-open): a success closes the circuit, a
/// failure opens it again for twice as long. So a receiver that hangs or
/// fails holds at most its own attempts and is tried a few times per wait,
/// not once per event; the waits are in memory: no write per event, and
/// nothing the other subscriptions' claims pay for.
#[derive(Debug, Clone, Default)]
pub struct Scheduler {
    subs: HashMap<String, Subscription>,
}

impl Scheduler {
    /// The budget of a claim of up to `max` events at `now`.
    pub fn budget(&mut self, max: u32, now: i64) -> Budget {
        // No attempt for a day since one failed: the subscription has
        // nothing left to send (or is gone).
        let day = millis(GIVE_UP_AFTER);
        self.subs
            .retain(|_, s| s.in_flight > 0 || s.failed_at.saturating_add(day) > now);
        let mut budget = Budget::new(max, PER_SUBSCRIPTION);
        for (id, s) in &self.subs {
            let cap = match s.open_until > now {
                true => 0,
                false => PER_SUBSCRIPTION,
            };
            let left = cap.saturating_sub(s.in_flight);
            if left != PER_SUBSCRIPTION {
                budget.limits.insert(id.clone(), left);
            }
        }
        budget
    }

    /// An attempt of `webhook` was claimed and starts.
    pub fn started(&mut self, webhook: &str) {
        self.subs.entry(webhook.to_string()).or_default().in_flight += 1;
    }

    /// An attempt of `webhook` ended at `now`, delivered or not. Returns
    /// until when its circuit opens, when this failure opens it.
    pub fn finished(&mut self, webhook: &str, delivered: bool, now: i64) -> Option<i64> {
        let s = self.subs.entry(webhook.to_string()).or_default();
        s.in_flight = s.in_flight.saturating_sub(1);
        if delivered {
            (s.failures, s.trips, s.open_until) = (0, 0, 0);
            if s.in_flight == 0 {
                self.subs.remove(webhook);
            }
            return None;
        }
        s.failed_at = now;
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
        let c = candidates(&[("wh_a", &[1, 2, 3, 4]), ("wh_b", &[9]), ("wh_c", &[5, 7])]);
        assert_eq!(fair_pick(&c, 5), [1, 5, 9, 2, 7]);
        assert_eq!(fair_pick(&c, 2), [1, 5]);
        assert_eq!(fair_pick(&c, 100), [1, 5, 9, 2, 7, 3, 4]);
        assert!(fair_pick(&c, 0).is_empty());
        assert!(fair_pick(&[], 4).is_empty());
        // A retry that came due late goes after a first attempt due since
        // its commit.
        let mut c = candidates(&[("wh_a", &[1, 2, 3])]);
        c[0].due = 10;
        assert_eq!(fair_pick(&c, 2), [2, 3]);
    }

    #[test]
    fn a_budget_gives_each_subscription_its_share_never_more_than_the_claim() {
        let mut b = Budget::new(64, PER_SUBSCRIPTION);
        b.limits.insert("wh_busy".into(), 1);
        assert_eq!((b.of("wh_busy"), b.of("wh_other")), (1, 4));
        assert_eq!(Budget::new(2, PER_SUBSCRIPTION).of("wh_other"), 2);
    }

    #[test]
    fn at_most_four_in_flight_per_subscription() {
        let mut s = Scheduler::default();
        for _ in 0..3 {
            s.started("wh_a");
        }
        let b = s.budget(64, 0);
        assert_eq!((b.of("wh_a"), b.of("wh_b")), (1, 4));
        s.started("wh_a");
        assert_eq!(s.budget(64, 0).of("wh_a"), 0);
        assert_eq!(s.finished("wh_a", true, 1), None);
        assert_eq!(s.budget(64, 1).of("wh_a"), 1);
        for _ in 0..3 {
            s.finished("wh_a", true, 2);
        }
        assert!(s.budget(64, 2).limits.is_empty(), "{s:?}");
    }

    #[test]
    fn failures_in_a_row_open_the_circuit_then_a_round_tries_again() {
        let mut s = Scheduler::default();
        let t = 1_000_000;
        for _ in 0..4 {
            s.started("wh_a");
        }
        // Three failures and a success: not in a row.
        for _ in 0..3 {
            assert_eq!(s.finished("wh_a", false, t), None);
        }
        assert_eq!(s.finished("wh_a", true, t), None);
        for _ in 0..3 {
            s.started("wh_a");
            assert_eq!(s.finished("wh_a", false, t), None);
        }
        s.started("wh_a");
        s.started("wh_a");
        // The fourth in a row opens it for a second; an attempt sent before
        // and failing after does not count again.
        assert_eq!(s.finished("wh_a", false, t), Some(t + 1_000));
        assert_eq!(s.finished("wh_a", false, t + 10), None);
        assert_eq!(s.budget(64, t + 999).of("wh_a"), 0);
        assert_eq!(s.budget(64, t + 1_000).of("wh_a"), PER_SUBSCRIPTION);
        // Half-open: a round of attempts; its first failure opens it again,
        // for twice as long, and the round's others do not count.
        for _ in 0..4 {
            s.started("wh_a");
        }
        assert_eq!(s.budget(64, t + 1_000).of("wh_a"), 0);
        assert_eq!(s.finished("wh_a", false, t + 1_500), Some(t + 3_500));
        assert_eq!(s.finished("wh_a", false, t + 1_600), None);
        assert_eq!(s.finished("wh_a", false, t + 1_700), None);
        assert_eq!(s.budget(64, t + 3_499).of("wh_a"), 0);
        // A success closes it, at once: four at a time again.
        assert_eq!(s.finished("wh_a", true, t + 2_000), None);
        assert_eq!(s.budget(64, t + 2_000).of("wh_a"), PER_SUBSCRIPTION);
        // The others never waited.
        assert_eq!(s.budget(64, t + 1_500).of("wh_b"), PER_SUBSCRIPTION);
    }

    #[test]
    fn the_circuit_waits_double_up_to_an_hour_and_is_forgotten_after_a_day() {
        let mut s = Scheduler::default();
        let mut now = 0;
        let mut waits = Vec::new();
        for _ in 0..4 {
            s.started("wh_a");
        }
        for _ in 0..3 {
            s.finished("wh_a", false, now);
        }
        for _ in 0..16 {
            let until = s.finished("wh_a", false, now).expect("it opens");
            waits.push((until - now) / 1_000);
            now = until;
            assert_eq!(s.budget(64, now).of("wh_a"), PER_SUBSCRIPTION);
            s.started("wh_a");
        }
        assert_eq!(
            waits,
            [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3600, 3600, 3600, 3600]
        );
        s.finished("wh_a", false, now);
        let day = millis(GIVE_UP_AFTER);
        s.budget(64, now + day - 1);
        assert!(s.subs.contains_key("wh_a"));
        s.budget(64, now + day);
        assert!(s.subs.is_empty());
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
            let picked = fair_pick(&c, max);
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

        /// Claims that stay within the budget never have more than four of
        /// a subscription in flight, and none start while its circuit is
        /// open.
        #[test]
        fn the_budget_bounds_what_is_in_flight(
            steps in proptest::collection::vec((0u8..3, 0u8..4, 0u32..6, proptest::bool::ANY), 1..200),
        ) {
            let mut s = Scheduler::default();
            let mut now = 0i64;
            let mut flying: Vec<String> = Vec::new();
            for (op, sub, n, ok) in steps {
                let w = format!("wh_{sub}");
                now += 300;
                match op {
                    0 => {
                        let take = s.budget(64, now).of(&w).min(n);
                        for _ in 0..take {
                            s.started(&w);
                            flying.push(w.clone());
                        }
                    }
                    1 => {
                        if let Some(i) = flying.iter().position(|f| *f == w) {
                            flying.remove(i);
                            s.finished(&w, ok, now);
                        }
                    }
                    _ => now += i64::from(n) * 1_000,
                }
                let in_flight = u32::try_from(flying.iter().filter(|f| **f == w).count()).unwrap();
                proptest::prop_assert!(in_flight <= PER_SUBSCRIPTION);
                let sub = s.subs.get(&w).copied().unwrap_or_default();
                proptest::prop_assert_eq!(sub.in_flight, in_flight);
                let cap = match sub.open_until > now {
                    true => 0,
                    false => PER_SUBSCRIPTION,
                };
                proptest::prop_assert_eq!(s.budget(64, now).of(&w), cap.saturating_sub(in_flight));
            }
        }
    }
}
