//! Per-key fixed-window rate limiting. A key's window opens with its first
//! request and lasts the plan's `rate_window`; within it the key may make
//! `rate_limit` requests; the next request after it ends opens a new window.
//! `X-RateLimit-Reset` is exactly when the current window ends. (Windows are
//! not aligned to the clock, so a key never gets a window cut short by a
//! boundary it happened to start near.)
//!
//! The rule is [`Window::at`] and [`Window::decision`]; where the windows are
//! kept is the metadata store's business: in this process's memory
//! ([`RateLimiter`], on SQLite: one node) or in the database, shared by every
//! node (PostgreSQL's `rate_windows`: one upsert that moves a window as
//! [`Window::at`] + [`Window::count`] do, for the requests of a key that a
//! node counts together, at the latest of their times, each taking its own
//! place in the window).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// Windows shorter than this are taken as this long.
pub const MIN_WINDOW_MS: i64 = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u64,
    pub remaining: u64,
    /// Unix second at which the window resets.
    pub reset: i64,
}

/// A key's current window: when it opened, when it ends, and how many
/// requests it has counted (refused ones too: a request is allowed when it
/// is among the first `limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: i64,
    pub end: i64,
    pub used: u64,
}

impl Window {
    /// The window a request at `now_ms` falls in, given the key's last one:
    /// that one until it ends, else a new, empty one opening at `now_ms`. A
    /// request whose `now_ms` is before the window's start (it read the
    /// clock, then waited for the database while a later one opened the
    /// window; or another node's clock is a little behind) counts in it: a
    /// window never restarts early, so the budget is never given twice.
    pub fn at(last: Option<Window>, window_ms: i64, now_ms: i64) -> Window {
        match last {
            Some(w) if now_ms < w.end => w,
            _ => Window {
                start: now_ms,
                end: now_ms.saturating_add(window_ms.max(MIN_WINDOW_MS)),
                used: 0,
            },
        }
    }

    /// This window with one more request counted.
    #[must_use]
    pub fn count(self) -> Window {
        Window {
            used: self.used.saturating_add(1),
            ..self
        }
    }

    /// Where the key stands: `counted` says whether the request asking is
    /// among `used` (a check) or not (a peek).
    pub fn decision(&self, limit: u64, counted: bool) -> Decision {
        let allowed = if counted {
            self.used <= limit
        } else {
            self.used < limit
        };
        Decision {
            allowed,
            limit,
            remaining: limit.saturating_sub(self.used),
            reset: (self.end + 999).div_euclid(1000),
        }
    }
}

/// The windows of one process's keys, in memory.
#[derive(Debug, Default)]
pub struct RateLimiter {
    windows: Mutex<HashMap<String, Window>>,
}

impl RateLimiter {
    /// The window of `key` at `now_ms`, with this request counted when
    /// `count` (see [`Window::decision`]).
    pub fn window(&self, key: &str, window_ms: i64, now_ms: i64, count: bool) -> Window {
        let mut map = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() > 100_000 {
            prune_locked(&mut map, now_ms);
        }
        let window = Window::at(map.get(key).copied(), window_ms, now_ms);
        if !count {
            return window;
        }
        let window = window.count();
        map.insert(key.to_string(), window);
        window
    }

    /// Forgets the windows that ended before `now_ms`; returns how many.
    pub fn prune(&self, now_ms: i64) -> usize {
        let mut map = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
        prune_locked(&mut map, now_ms)
    }
}

fn prune_locked(map: &mut HashMap<String, Window>, now_ms: i64) -> usize {
    let before = map.len();
    map.retain(|_, w| now_ms < w.end);
    before - map.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(rl: &RateLimiter, key: &str, limit: u64, window_ms: i64, now: i64) -> Decision {
        rl.window(key, window_ms, now, true).decision(limit, true)
    }

    fn peek(rl: &RateLimiter, key: &str, limit: u64, window_ms: i64, now: i64) -> Decision {
        rl.window(key, window_ms, now, false).decision(limit, false)
    }

    #[test]
    fn counts_down_then_refuses_then_resets() {
        let rl = RateLimiter::default();
        let t0 = 1_700_000_000_500; // not aligned to anything
        let d = check(&rl, "k", 3, 60_000, t0);
        assert_eq!((d.allowed, d.remaining, d.reset), (true, 2, 1_700_000_061));
        assert_eq!(check(&rl, "k", 3, 60_000, t0 + 1).remaining, 1);
        assert_eq!(check(&rl, "k", 3, 60_000, t0 + 2).remaining, 0);
        let refused = check(&rl, "k", 3, 60_000, t0 + 59_999);
        assert!(!refused.allowed);
        assert_eq!(refused.reset, 1_700_000_061);
        assert!(
            check(&rl, "other", 3, 60_000, t0 + 3).allowed,
            "keys are independent"
        );
        let peeked = peek(&rl, "k", 3, 60_000, t0 + 59_999);
        assert_eq!((peeked.remaining, peeked.reset), (0, 1_700_000_061));
        let fresh = peek(&rl, "new", 3, 60_000, t0);
        assert_eq!((fresh.allowed, fresh.remaining), (true, 3));
        assert_eq!(
            peek(&rl, "new", 3, 60_000, t0).remaining,
            3,
            "peeking counts nothing"
        );
        let next = check(&rl, "k", 3, 60_000, t0 + 60_000);
        assert_eq!(
            (next.allowed, next.remaining, next.reset),
            (true, 2, 1_700_000_121)
        );
    }
}

#[cfg(test)]
mod late {
    use super::*;

    /// A request that read the clock before the window opened, but counts
    /// after (it waited for the database), counts in that window instead of
    /// restarting it: the budget is never given twice.
    #[test]
    fn a_late_request_counts_in_the_window_a_later_one_opened() {
        let rl = RateLimiter::default();
        let t0 = 1_700_000_000_000;
        let first = rl.window("k", 60_000, t0, true);
        let late = rl.window("k", 60_000, t0 - 5, true);
        assert_eq!(
            (late.start, late.end, late.used),
            (first.start, first.end, 2)
        );
        assert!(
            !rl.window("k", 60_000, t0 - 5, true)
                .decision(2, true)
                .allowed
        );
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the spacing of the requests, each window allows exactly
        /// its first `limit` and refuses the rest, and a window lasts
        /// exactly its length from its first request.
        #[test]
        fn each_window_allows_exactly_its_first_limit(
            gaps in prop::collection::vec(0i64..3_000, 1..200),
            limit in 0u64..8,
            window_ms in 0i64..10_000,
        ) {
            let rl = RateLimiter::default();
            let mut now = 1_700_000_000_000i64;
            let (mut start, mut seen) = (None::<i64>, 0u64);
            for gap in gaps {
                now += gap;
                let w = rl.window("k", window_ms, now, true);
                let d = w.decision(limit, true);
                let length = window_ms.max(MIN_WINDOW_MS);
                if start.is_none_or(|s| now >= s + length) {
                    start = Some(now);
                    seen = 0;
                }
                seen += 1;
                prop_assert_eq!(w.start, start.unwrap());
                prop_assert_eq!(w.end, start.unwrap() + length);
                prop_assert_eq!(d.allowed, seen <= limit);
                prop_assert_eq!(d.remaining, limit.saturating_sub(seen));
                let peeked = rl.window("k", window_ms, now, false).decision(limit, false);
                prop_assert_eq!(peeked.allowed, seen < limit);
            }
        }
    }
}
