//! A claim of due events: each subscription's budget, and the round-robin
//! pick across subscriptions ([`fair_pick`]).

use std::collections::{HashMap, HashSet};

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

#[cfg(test)]
mod tests {
    use super::super::limits::PER_SUBSCRIPTION;
    use super::*;

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
    }
}
