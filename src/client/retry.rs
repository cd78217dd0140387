//! Retry policy and the one retry loop of the client.
//!
//! Connection errors, 408, 429 and 5xx are retried; other 4xx never. The wait
//! is exponential with jitter, unless the server tells (`Retry-After` on any
//! status, or `X-RateLimit-Reset` as a unix time on a 429), in which case that
//! is honoured, plus a little jitter so parallel transfers do not return in
//! lockstep. [`Retrier`] is the loop's state: API requests and downloads both
//! go through it, so they wait, report and give up the same way.

use super::error::ClientError;
use crate::domain::backoff::Backoff;
use rand::Rng;
use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How many times and how patiently to retry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RetryPolicy {
    /// Retries after the first attempt.
    pub retries: u32,
    /// Waits between attempts when the server names none (with jitter).
    pub backoff: Backoff,
    /// Longest server-requested wait that is honoured; a longer one (e.g. the
    /// monthly upload quota resetting next month) fails at once.
    pub max_wait: Duration,
}

impl RetryPolicy {
    /// The default policy with `retries` retries.
    pub(crate) fn new(retries: u32) -> Self {
        RetryPolicy {
            retries,
            backoff: Backoff::new(Duration::from_millis(500), Duration::from_secs(10)),
            max_wait: Duration::from_mins(2),
        }
    }

    /// The wait before retry number `attempt + 1`, given what the server said.
    /// `None`: the server asked for longer than `max_wait`; do not retry.
    pub(crate) fn wait(&self, attempt: u32, hint: Option<Duration>) -> Option<Duration> {
        match hint {
            Some(h) if h > self.max_wait => None,
            Some(h) => {
                let jitter = rand::rng().random_range(0..=250u64);
                Some(h + Duration::from_millis(jitter))
            }
            None => Some(self.backoff.jittered(attempt)),
        }
    }
}

/// Whether a response status is worth retrying (423: a resumable upload
/// another node is writing to now).
pub(crate) fn retryable_status(status: StatusCode) -> bool {
    status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::LOCKED
        || status == StatusCode::TOO_MANY_REQUESTS
        || status.is_server_error()
}

/// Whether a transport error is worth retrying (no answer was received).
pub(crate) fn retryable_error(err: &reqwest::Error) -> bool {
    err.is_connect() || err.is_timeout() || err.is_request() || err.is_body()
}

/// How long the server asks to wait before the request is made again:
/// `Retry-After` (seconds) on any status; on a 429 only, else
/// `X-RateLimit-Reset` (unix seconds) minus now. The server sends the
/// `X-RateLimit-*` headers on every answer of some routes, 5xx included,
/// where the reset says when the rate window turns over, not when the
/// server will be back.
pub(crate) fn server_hint(status: StatusCode, headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(secs) = text("retry-after").and_then(|v| v.parse::<u64>().ok()) {
        return Some(Duration::from_secs(secs));
    }
    if status != StatusCode::TOO_MANY_REQUESTS {
        return None;
    }
    let reset = text("x-ratelimit-reset").and_then(|v| v.parse::<u64>().ok())?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(reset.saturating_sub(now)))
}

/// What a retry is about to do, for progress reporting.
#[derive(Debug, Clone)]
pub(crate) struct RetryNotice {
    /// The retry about to be made (1-based); 0 when this is no retry but a
    /// request held back because another one hit the rate limit (see
    /// [`RetryNotice::is_hold`]).
    pub attempt: u32,
    /// Retries allowed in total.
    pub of: u32,
    /// How long until it is made.
    pub wait: Duration,
    /// Why: the status or the transport error.
    pub reason: String,
}

impl RetryNotice {
    /// A request waits for a rate-limit window that another request of the
    /// same run hit (it has not failed itself).
    pub(crate) fn is_hold(&self) -> bool {
        self.attempt == 0
    }

    /// One line for the user: `retry 2/3 of LABEL in 1.5s: REASON`, or
    /// `waiting 30s for the rate limit window before LABEL`.
    pub(crate) fn describe(&self, label: &str) -> String {
        if self.is_hold() {
            format!(
                "waiting {:.0?} for the rate limit window before {label}",
                self.wait
            )
        } else {
            format!(
                "retry {}/{} of {label} in {:.1?}: {}",
                self.attempt, self.of, self.wait, self.reason
            )
        }
    }
}

/// One failed attempt, as the retry loop sees it.
#[derive(Debug)]
pub(crate) struct Failure {
    /// The error to give when no retry follows.
    pub error: ClientError,
    /// Whether another attempt may succeed.
    pub retryable: bool,
    /// The wait the server asked for.
    pub hint: Option<Duration>,
    /// Why the attempt failed, for the retry notice.
    pub reason: String,
}

impl Failure {
    /// An error answer: retried per [`retryable_status`], waiting per
    /// [`server_hint`]; `error` is its decoded body.
    pub(crate) fn status(status: StatusCode, headers: &HeaderMap, error: ClientError) -> Failure {
        Failure {
            error,
            retryable: retryable_status(status),
            hint: server_hint(status, headers),
            reason: status_text(status),
        }
    }

    /// No answer (or an answer cut off): retried per [`retryable_error`].
    pub(crate) fn transport(err: &reqwest::Error) -> Failure {
        let error = ClientError::network(err);
        Failure {
            reason: error.message().to_string(),
            error,
            retryable: retryable_error(err),
            hint: None,
        }
    }
}

/// `503 Service Unavailable`.
pub(crate) fn status_text(status: StatusCode) -> String {
    format!(
        "{} {}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    )
    .trim_end()
    .to_string()
}

/// The state of one retry loop: how many retries were made, under which
/// policy, and whom to tell before each.
pub(crate) struct Retrier<'a> {
    policy: RetryPolicy,
    made: u32,
    on_retry: &'a (dyn Fn(&RetryNotice) + Sync),
}

impl<'a> Retrier<'a> {
    /// A loop under `policy` that reports each retry to `on_retry`.
    pub(crate) fn new(policy: RetryPolicy, on_retry: &'a (dyn Fn(&RetryNotice) + Sync)) -> Self {
        Retrier {
            policy,
            made: 0,
            on_retry,
        }
    }

    /// After a failed attempt: when another one is due, reports it, sleeps
    /// and gives `Ok`; otherwise gives the failure's error (see [`Self::give_up`]).
    pub(crate) async fn after(&mut self, failure: Failure) -> Result<(), ClientError> {
        let wait = if failure.retryable && self.made < self.policy.retries {
            self.policy.wait(self.made, failure.hint)
        } else {
            None
        };
        let Some(wait) = wait else {
            return Err(self.give_up(failure.error));
        };
        self.made += 1;
        tracing::debug!(attempt = self.made, ?wait, reason = %failure.reason, "retrying");
        (self.on_retry)(&RetryNotice {
            attempt: self.made,
            of: self.policy.retries,
            wait,
            reason: failure.reason,
        });
        tokio::time::sleep(wait).await;
        Ok(())
    }

    /// The error that ends the loop, with "(after N retries)" when retries
    /// were made.
    pub(crate) fn give_up(&self, err: ClientError) -> ClientError {
        match self.made {
            0 => err,
            n => {
                let note = format!("after {n} {}", if n == 1 { "retry" } else { "retries" });
                err.map_message(|m| format!("{m} ({note})"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn without_a_hint_the_wait_is_the_jittered_backoff() {
        let p = RetryPolicy::new(3);
        for attempt in 0..20 {
            let d = p.wait(attempt, None).unwrap();
            let step = p.backoff.step(attempt);
            assert!(d >= step / 2 && d <= step, "{attempt}: {d:?}");
        }
        assert_eq!(p.backoff.step(20), Duration::from_secs(10));
    }

    #[test]
    fn hints_are_honoured_unless_too_long() {
        let p = RetryPolicy::new(3);
        let w = p.wait(0, Some(Duration::from_secs(2))).unwrap();
        assert!(w >= Duration::from_secs(2) && w <= Duration::from_millis(2250));
        assert!(p.wait(0, Some(Duration::from_hours(24))).is_none());
    }

    fn in_an_hour() -> HeaderValue {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        HeaderValue::from_str(&(now.as_secs() + 3600).to_string()).unwrap()
    }

    #[test]
    fn retry_after_wins_over_reset() {
        let mut h = HeaderMap::new();
        h.insert("x-ratelimit-reset", HeaderValue::from_static("1"));
        let limited = StatusCode::TOO_MANY_REQUESTS;
        assert_eq!(server_hint(limited, &h), Some(Duration::ZERO));
        h.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(server_hint(limited, &h), Some(Duration::from_secs(7)));
        assert_eq!(server_hint(limited, &HeaderMap::new()), None);
    }

    #[test]
    fn rate_limit_reset_is_a_hint_on_429_only() {
        let mut h = HeaderMap::new();
        h.insert("x-ratelimit-reset", in_an_hour());
        let hint = server_hint(StatusCode::TOO_MANY_REQUESTS, &h).unwrap();
        assert!(hint > Duration::from_secs(3500), "{hint:?}");
        for s in [500, 502, 503, 408] {
            let status = StatusCode::from_u16(s).unwrap();
            assert_eq!(server_hint(status, &h), None, "{s}");
        }
        // Retry-After counts on any status.
        h.insert("retry-after", HeaderValue::from_static("2"));
        let hint = server_hint(StatusCode::SERVICE_UNAVAILABLE, &h);
        assert_eq!(hint, Some(Duration::from_secs(2)));
    }

    fn failure(status: u16, hint: Option<Duration>) -> Failure {
        let status = StatusCode::from_u16(status).unwrap();
        Failure {
            error: ClientError::Api {
                status: status.as_u16(),
                code: "x".into(),
                message: "m".into(),
            },
            retryable: retryable_status(status),
            hint,
            reason: status_text(status),
        }
    }

    /// A policy with millisecond waits.
    fn fast(retries: u32) -> RetryPolicy {
        RetryPolicy {
            retries,
            backoff: Backoff::new(Duration::from_millis(1), Duration::from_millis(2)),
            max_wait: Duration::from_secs(1),
        }
    }

    #[tokio::test]
    async fn the_retrier_reports_waits_and_gives_up_with_a_count() {
        let notices = std::sync::Mutex::new(Vec::new());
        let record = |n: &RetryNotice| notices.lock().unwrap().push(n.clone());
        let mut r = Retrier::new(fast(2), &record);
        r.after(failure(503, None)).await.unwrap();
        let hint = Some(Duration::from_millis(30));
        r.after(failure(503, hint)).await.unwrap();
        let err = r.after(failure(503, None)).await.unwrap_err();
        assert_eq!(err.message(), "m (after 2 retries)");
        assert_eq!(r.made, 2);
        let notices = notices.into_inner().unwrap();
        assert_eq!(notices.len(), 2);
        assert_eq!((notices[0].attempt, notices[0].of), (1, 2));
        assert_eq!(notices[0].reason, "503 Service Unavailable");
        assert!(notices[1].wait >= Duration::from_millis(30));

        // Not retryable: the error at once, noting earlier retries.
        let mut r = Retrier::new(fast(3), &|_| {});
        assert_eq!(
            r.after(failure(404, None)).await.unwrap_err().message(),
            "m"
        );
        r.after(failure(502, None)).await.unwrap();
        let err = r.after(failure(404, None)).await.unwrap_err();
        assert_eq!(err.message(), "m (after 1 retry)");
        // A server asking for longer than max_wait: no retry.
        let mut r = Retrier::new(fast(3), &|_| {});
        let long = Some(Duration::from_secs(2));
        assert!(r.after(failure(429, long)).await.is_err());
        assert_eq!(r.made, 0);
    }

    #[test]
    fn which_statuses_retry() {
        for s in [408, 423, 429, 500, 502, 503, 504] {
            assert!(retryable_status(StatusCode::from_u16(s).unwrap()), "{s}");
        }
        for s in [400, 401, 403, 404, 413] {
            assert!(!retryable_status(StatusCode::from_u16(s).unwrap()), "{s}");
        }
    }
}
