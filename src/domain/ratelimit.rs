//! Per-key fixed-window rate limiting. Windows are aligned to multiples of
//! the plan's `rate_window` since the unix epoch, so `X-RateLimit-Reset` is
//! exact and the same for every server: a key may make `rate_limit` requests
//! in each window; the count starts from zero when the next window begins.

use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u64,
    pub remaining: u64,
    /// Unix second at which the window resets.
    pub reset: i64,
}

#[derive(Debug, Default)]
pub struct RateLimiter {
    windows: Mutex<HashMap<String, (i64, u64)>>,
}

impl RateLimiter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one request of `key` at `now_ms` against `limit` per `window_ms`.
    pub fn check(&self, key: &str, limit: u64, window_ms: i64, now_ms: i64) -> Decision {
        let window_ms = window_ms.max(1000);
        let start = now_ms - now_ms.rem_euclid(window_ms);
        let reset = (start + window_ms + 999) / 1000;
        let mut map = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() > 100_000 {
            map.retain(|_, (s, _)| *s >= start);
        }
        let entry = map.entry(key.to_string()).or_insert((start, 0));
        if entry.0 != start {
            *entry = (start, 0);
        }
        if entry.1 >= limit {
            return Decision {
                allowed: false,
                limit,
                remaining: 0,
                reset,
            };
        }
        entry.1 += 1;
        Decision {
            allowed: true,
            limit,
            remaining: limit - entry.1,
            reset,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_down_then_refuses_then_resets() {
        let rl = RateLimiter::new();
        let t0 = 60_000 * 1000; // aligned to a minute
        let d = rl.check("k", 3, 60_000, t0);
        assert_eq!((d.allowed, d.remaining, d.reset), (true, 2, 60_060));
        assert_eq!(rl.check("k", 3, 60_000, t0 + 1).remaining, 1);
        assert_eq!(rl.check("k", 3, 60_000, t0 + 2).remaining, 0);
        let refused = rl.check("k", 3, 60_000, t0 + 3);
        assert!(!refused.allowed);
        assert!(
            rl.check("other", 3, 60_000, t0 + 3).allowed,
            "keys are independent"
        );
        let next = rl.check("k", 3, 60_000, t0 + 60_000);
        assert_eq!((next.allowed, next.remaining), (true, 2));
    }
}
