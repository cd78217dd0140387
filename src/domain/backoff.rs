//! Exponential backoff: one rule for every retry loop, server and client.

use std::time::Duration;

/// Steps that double from `base` up to `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub base: Duration,
    pub max: Duration,
}

impl Backoff {
    pub const fn new(base: Duration, max: Duration) -> Backoff {
        Backoff { base, max }
    }

    /// The wait before retry number `attempt` (0 for the first retry).
    pub fn step(&self, attempt: u32) -> Duration {
        self.base
            .saturating_mul(1u32 << attempt.min(20))
            .min(self.max)
    }

    /// [`Backoff::step`] with "equal jitter": half fixed, half random, so
    /// that clients retrying together do not come back together.
    pub fn jittered(&self, attempt: u32) -> Duration {
        use rand::Rng;
        let half = self.step(attempt) / 2;
        let jitter =
            rand::rng().random_range(0..=u64::try_from(half.as_millis()).unwrap_or(u64::MAX));
        half + Duration::from_millis(jitter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_then_stays_at_the_cap() {
        let b = Backoff::new(Duration::from_secs(1), Duration::from_mins(1));
        let steps: Vec<u64> = (0..9).map(|a| b.step(a).as_secs()).collect();
        assert_eq!(steps, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(b.step(u32::MAX), Duration::from_mins(1));
        for a in 0..12 {
            let j = b.jittered(a);
            assert!(j >= b.step(a) / 2 && j <= b.step(a), "{a}: {j:?}");
        }
    }
}
