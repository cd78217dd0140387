//! Per-key fixed-window rate limiting. A key's window opens with its first
//! request and lasts the plan's `rate_window`; within it the key may make
//! `rate_limit` requests; the next request after it ends opens a new window.
//! `X-RateLimit-Reset` is exactly when the current window ends. (Windows are
//! not aligned to the clock, so a key never gets a window cut short by a
//! boundary it happened to start near.)

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
        self.decide(key, limit, window_ms, now_ms, true)
    }

    /// Where `key` stands, without counting a request.
    pub fn peek(&self, key: &str, limit: u64, window_ms: i64, now_ms: i64) -> Decision {
        self.decide(key, limit, window_ms, now_ms, false)
    }

    fn decide(&self, key: &str, limit: u64, window_ms: i64, now_ms: i64, count: bool) -> Decision {
        let window_ms = window_ms.max(1000);
        let mut map = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() > 100_000 {
            map.retain(|_, (start, _)| now_ms < *start + window_ms);
        }
        let (start, used) = match map.get(key) {
            Some(&(start, used)) if now_ms >= start && now_ms < start + window_ms => (start, used),
            _ => (now_ms, 0),
        };
        let reset = (start + window_ms + 999) / 1000;
        let allowed = used < limit;
        let used = used + u64::from(allowed && count);
        if count {
            map.insert(key.to_string(), (start, used));
        }
        Decision {
            allowed,
            limit,
            remaining: limit - used.min(limit),
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
        let t0 = 1_700_000_000_500; // not aligned to anything
        let d = rl.check("k", 3, 60_000, t0);
        assert_eq!((d.allowed, d.remaining, d.reset), (true, 2, 1_700_000_061));
        assert_eq!(rl.check("k", 3, 60_000, t0 + 1).remaining, 1);
        assert_eq!(rl.check("k", 3, 60_000, t0 + 2).remaining, 0);
        let refused = rl.check("k", 3, 60_000, t0 + 59_999);
        assert!(!refused.allowed);
        assert_eq!(refused.reset, 1_700_000_061);
        assert!(
            rl.check("other", 3, 60_000, t0 + 3).allowed,
            "keys are independent"
        );
        let peeked = rl.peek("k", 3, 60_000, t0 + 59_999);
        assert_eq!((peeked.remaining, peeked.reset), (0, 1_700_000_061));
        let fresh = rl.peek("new", 3, 60_000, t0);
        assert_eq!((fresh.allowed, fresh.remaining), (true, 3));
        assert_eq!(
            rl.peek("new", 3, 60_000, t0).remaining,
            3,
            "peeking counts nothing"
        );
        let next = rl.check("k", 3, 60_000, t0 + 60_000);
        assert_eq!(
            (next.allowed, next.remaining, next.reset),
            (true, 2, 1_700_000_121)
        );
    }
}
