//! Tests of the [`Scheduler`]: caps, circuits, probes, the failing share.

use super::super::claim::{fair_pick, Candidate};
use super::super::limits::DELIVERY_TIMEOUT;
use super::*;

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
