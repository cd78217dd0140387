//! Retry policy: which failures are retried and how long to wait.
//!
//! Connection errors, 408, 429 and 5xx are retried; other 4xx never. The wait
//! is exponential with jitter, unless the server tells (`Retry-After`, or
//! `X-RateLimit-Reset` as a unix time), in which case that is honoured, plus a
//! little jitter so parallel transfers do not return in lockstep.

use rand::Rng;
use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How many times and how patiently to retry.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub retries: u32,
    /// First backoff step.
    pub base: Duration,
    /// Largest backoff step.
    pub max_backoff: Duration,
    /// Longest server-requested wait that is honoured; a longer one (e.g. the
    /// monthly upload quota resetting next month) fails at once.
    pub max_wait: Duration,
}

impl RetryPolicy {
    /// The default policy with `retries` retries.
    pub fn new(retries: u32) -> Self {
        RetryPolicy {
            retries,
            base: Duration::from_millis(500),
            max_backoff: Duration::from_secs(10),
            max_wait: Duration::from_secs(120),
        }
    }

    /// Exponential backoff with "equal jitter": half fixed, half random.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let step = self
            .base
            .saturating_mul(1u32 << attempt.min(16))
            .min(self.max_backoff);
        let half = step / 2;
        let jitter = rand::rng().random_range(0..=half.as_millis() as u64);
        half + Duration::from_millis(jitter)
    }

    /// The wait before retry number `attempt + 1`, given what the server said.
    /// `None`: the server asked for longer than `max_wait`; do not retry.
    pub fn wait(&self, attempt: u32, hint: Option<Duration>) -> Option<Duration> {
        match hint {
            Some(h) if h > self.max_wait => None,
            Some(h) => {
                let jitter = rand::rng().random_range(0..=250u64);
                Some(h + Duration::from_millis(jitter))
            }
            None => Some(self.backoff(attempt)),
        }
    }
}

/// Whether a response status is worth retrying.
pub fn retryable_status(status: StatusCode) -> bool {
    status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::TOO_MANY_REQUESTS
        || status.is_server_error()
}

/// Whether a transport error is worth retrying (no answer was received).
pub fn retryable_error(err: &reqwest::Error) -> bool {
    err.is_connect() || err.is_timeout() || err.is_request() || err.is_body()
}

/// How long the server asks to wait: `Retry-After` (seconds), else
/// `X-RateLimit-Reset` (unix seconds) minus now.
pub fn server_hint(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(secs) = text("retry-after").and_then(|v| v.parse::<u64>().ok()) {
        return Some(Duration::from_secs(secs));
    }
    let reset = text("x-ratelimit-reset").and_then(|v| v.parse::<u64>().ok())?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(reset.saturating_sub(now)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy::new(3);
        for attempt in 0..20 {
            let d = p.backoff(attempt);
            let step = (p.base * (1 << attempt.min(16))).min(p.max_backoff);
            assert!(d >= step / 2 && d <= step, "{attempt}: {d:?}");
        }
    }

    #[test]
    fn hints_are_honoured_unless_too_long() {
        let p = RetryPolicy::new(3);
        let w = p.wait(0, Some(Duration::from_secs(2))).unwrap();
        assert!(w >= Duration::from_secs(2) && w <= Duration::from_millis(2250));
        assert!(p.wait(0, Some(Duration::from_secs(86_400))).is_none());
    }

    #[test]
    fn retry_after_wins_over_reset() {
        let mut h = HeaderMap::new();
        h.insert("x-ratelimit-reset", HeaderValue::from_static("1"));
        assert_eq!(server_hint(&h), Some(Duration::ZERO));
        h.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(server_hint(&h), Some(Duration::from_secs(7)));
        assert_eq!(server_hint(&HeaderMap::new()), None);
    }

    #[test]
    fn which_statuses_retry() {
        for s in [408, 429, 500, 502, 503, 504] {
            assert!(retryable_status(StatusCode::from_u16(s).unwrap()), "{s}");
        }
        for s in [400, 401, 403, 404, 413] {
            assert!(!retryable_status(StatusCode::from_u16(s).unwrap()), "{s}");
        }
    }
}
