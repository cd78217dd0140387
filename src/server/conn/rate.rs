//! The body-rate floor: a sliding window that a request body's bytes must
//! fill at `min_upload_rate`.

use std::time::Duration;
use tokio::time::Instant;

/// The floor under a body's rate: the bytes of the last `window` (a
/// sliding window, in [`STEPS`] steps) must reach `rate` × `window`. Judged
/// at each step's end once a whole window has passed since the body began,
/// so no body is cut in its first `window`, and a pause shorter than the
/// window costs nothing when the rest makes up for it.
#[derive(Debug)]
pub(crate) struct RateFloor {
    rate: u64,
    window: Duration,
    start: Instant,
    /// Bytes per step, by step number modulo [`RING`] (the steps of the
    /// last window, and the one under way).
    steps: [u64; RING],
    /// The step under way (counted from `start`).
    step: u64,
}

/// Steps a window is cut into.
pub(crate) const STEPS: u32 = 10;

/// The steps kept: a window's, and the one under way.
const RING: usize = STEPS as usize + 1;

/// Where step number `step` is kept.
fn slot(step: u64) -> usize {
    usize::try_from(step % RING as u64).expect("less than RING")
}

impl RateFloor {
    pub(crate) fn new(rate: u64, window: Duration, now: Instant) -> RateFloor {
        RateFloor {
            rate,
            window: window.max(Duration::from_millis(STEPS.into())),
            start: now,
            steps: [0; RING],
            step: 0,
        }
    }

    fn step_len(&self) -> Duration {
        self.window / STEPS
    }

    /// Moves to the step `now` is in, emptying the ones it passes.
    fn advance(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.start);
        let target = u64::try_from(elapsed.as_nanos() / self.step_len().as_nanos().max(1))
            .unwrap_or(u64::MAX);
        let from = self.step.max(target.saturating_sub(RING as u64));
        for s in from + 1..=target {
            self.steps[slot(s)] = 0;
        }
        self.step = self.step.max(target);
    }

    /// `n` bytes arrived at `now`.
    pub(crate) fn add(&mut self, now: Instant, n: u64) {
        self.advance(now);
        let i = slot(self.step);
        self.steps[i] = self.steps[i].saturating_add(n);
    }

    /// Whether the last whole window (the `STEPS` steps before the one under
    /// way) brought less than the floor; never before a window has passed.
    pub(crate) fn too_slow(&mut self, now: Instant) -> bool {
        if self.rate == 0 || now < self.start + self.window {
            return false;
        }
        self.advance(now);
        let current = slot(self.step);
        let got: u64 = (0..RING)
            .filter(|i| *i != current)
            .map(|i| self.steps[i])
            .sum();
        u128::from(got) * 1000 < u128::from(self.rate) * self.window.as_millis()
    }

    /// When to judge next: the end of the step under way, and not before a
    /// whole window has passed. Far away when the floor is off.
    pub(crate) fn next_check(&self) -> Instant {
        if self.rate == 0 {
            return self.start + Duration::from_hours(365 * 24);
        }
        let step = u32::try_from(self.step + 1).unwrap_or(u32::MAX).max(STEPS);
        self.start + self.step_len() * step
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    const W: Duration = Duration::from_secs(30);

    fn at(start: Instant, secs: f64) -> Instant {
        start + Duration::from_secs_f64(secs)
    }

    #[test]
    fn no_body_is_judged_before_a_whole_window() {
        let t0 = Instant::now();
        let mut f = RateFloor::new(1024, W, t0);
        assert!(!f.too_slow(at(t0, 0.0)));
        assert!(!f.too_slow(at(t0, 29.9)), "nothing came, but it is early");
        assert_eq!(f.next_check(), at(t0, 30.0));
        assert!(f.too_slow(at(t0, 30.0)), "then nothing in 30 s is too slow");
    }

    #[test]
    fn the_average_over_the_window_decides() {
        let t0 = Instant::now();
        // 1 KiB/s needs 30 KiB in 30 s: 31 KiB in one burst passes...
        let mut f = RateFloor::new(1024, W, t0);
        f.add(at(t0, 1.0), 31 * 1024);
        assert!(!f.too_slow(at(t0, 30.0)));
        // ...and the window slides: once the burst is more than 30 s old,
        // nothing after it is too slow.
        assert!(!f.too_slow(at(t0, 30.5)));
        assert!(f.too_slow(at(t0, 33.0)));
        // 29 KiB, spread evenly, is not enough.
        let mut f = RateFloor::new(1024, W, t0);
        for s in 0..29 {
            f.add(at(t0, f64::from(s) + 0.5), 1024);
        }
        assert!(f.too_slow(at(t0, 30.0)));
        // A steady 2 KiB/s passes for as long as it goes on.
        let mut f = RateFloor::new(1024, W, t0);
        for s in 0..120 {
            f.add(at(t0, f64::from(s) + 0.5), 2048);
            assert!(!f.too_slow(at(t0, f64::from(s) + 0.9)), "at {s} s");
        }
    }

    #[test]
    fn a_pause_shorter_than_the_window_is_made_up_by_the_rest() {
        let t0 = Instant::now();
        let mut f = RateFloor::new(1024, W, t0);
        // 20 s of 4 KiB/s, then 19 s of silence: the last 30 s hold about
        // 10 s of it (over 40 KiB), enough.
        for s in 0..20 {
            f.add(at(t0, f64::from(s) + 0.5), 4096);
        }
        assert!(!f.too_slow(at(t0, 39.0)));
        // But 30 s of silence is not.
        assert!(f.too_slow(at(t0, 51.0)));
    }

    #[test]
    fn the_next_check_is_each_step_after_the_first_window_and_off_means_never() {
        let t0 = Instant::now();
        let mut f = RateFloor::new(1, W, t0);
        f.add(at(t0, 45.5), 100_000);
        assert_eq!(
            f.next_check(),
            at(t0, 48.0),
            "the end of the step under way"
        );
        let mut off = RateFloor::new(0, W, t0);
        assert!(!off.too_slow(at(t0, 1000.0)));
        assert!(off.next_check() > at(t0, 86_400.0));
    }
}
