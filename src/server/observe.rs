//! What every request leaves behind: one `info` access-log line (method,
//! route, status, bytes in and out, duration, account id, client address,
//! request id; never a key, a query string or a file name) and its metrics (requests by route and
//! status, latency, bytes). The metrics cost nothing unless a recorder is
//! installed (`--metrics-listen`, see [`super::metrics`]).

use super::request_id::Tag;
use axum::extract::{MatchedPath, Request};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::Response;
use http_body::Body as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

/// A request body that counts the bytes read from it.
struct Counted {
    inner: axum::body::Body,
    read: Arc<AtomicU64>,
}

impl http_body::Body for Counted {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled {
            if let Some(data) = frame.data_ref() {
                self.read.fetch_add(data.len() as u64, Ordering::Relaxed);
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

pub(crate) use crate::service::caller::AccountTag;

/// The route label of a door with no routes of its own (the S3 door's
/// requests are all `s3`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RouteLabel(pub(crate) &'static str);

/// The middleware: times the request and reports it once its response head
/// is ready (a download's body may still be streaming then).
pub(crate) async fn observe(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    // The route's template (`/v1/files/{id}`), not the path: no file names
    // or ids in metric labels, and a bounded number of series.
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str)
        .or_else(|| req.extensions().get::<RouteLabel>().map(|l| l.0))
        .unwrap_or("unmatched")
        .to_string();
    let tag = req.extensions().get::<Tag>().cloned();
    // The CDN's routes name the account second: `/live/{account}/…`,
    // `/p/{account}/…`.
    let cdn_account = (route.starts_with("/live/") || route.starts_with("/p/"))
        .then(|| req.uri().path().split('/').nth(2).map(str::to_string))
        .flatten();
    // Bytes of the body as they are read (a cut-off upload sent fewer than
    // its Content-Length said).
    let read = Arc::new(AtomicU64::new(0));
    let req = req.map(|body| {
        axum::body::Body::new(Counted {
            inner: body,
            read: read.clone(),
        })
    });
    let response = next.run(req).await;
    let bytes_in = read.load(Ordering::Relaxed);
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    let bytes_out = content_length(response.headers())
        .or_else(|| response.body().size_hint().exact())
        .unwrap_or(0);
    let account = response
        .extensions()
        .get::<AccountTag>()
        .map(|a| a.0.clone())
        .or(cdn_account)
        .unwrap_or_default();
    report_at(
        &method,
        &route,
        status,
        (bytes_in, bytes_out),
        elapsed,
        (&account, tag.as_ref()),
        std::time::SystemTime::now(),
    );
    response
}

/// The access line and metrics of a request answered at `at` (a time its
/// caller read), for `account` and the client and id of `tag`.
pub(crate) fn report_at(
    method: &axum::http::Method,
    route: &str,
    status: u16,
    (bytes_in, bytes_out): (u64, u64),
    elapsed: std::time::Duration,
    (account, tag): (&str, Option<&Tag>),
    at: std::time::SystemTime,
) {
    super::access::record(&super::access::Line {
        method: method.as_str(),
        route,
        status,
        bytes_in,
        bytes_out,
        duration_ms: millis(elapsed),
        account,
        client: tag.map(|t| t.client),
        request_id: tag.map_or("", Tag::id),
        at,
    });
    if !super::metrics::on() {
        return;
    }
    let route = route.to_string();
    let labels = [
        ("method", method_label(method).to_string()),
        ("route", route.clone()),
        ("status", status.to_string()),
    ];
    metrics::counter!("filestore_http_requests_total", &labels).increment(1);
    metrics::histogram!("filestore_http_request_duration_seconds", "route" => route.clone())
        .record(elapsed.as_secs_f64());
    metrics::counter!("filestore_http_request_bytes_total", "route" => route.clone())
        .increment(bytes_in);
    metrics::counter!("filestore_http_response_bytes_total", "route" => route).increment(bytes_out);
}

/// A duration in milliseconds rounded to the microsecond: `0.207`, never
/// `0.20746900000000001` (a whole number of microseconds divided by 1000 is
/// the double nearest that decimal, which prints with at most 3 decimals in
/// text and in JSON).
fn millis(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// The method as a metric label: the standard ones by name, any other as
/// `OTHER` (hyper takes any token as a method: a label per name would let
/// anyone grow the series without bound).
fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::PATCH => "PATCH",
        _ => "OTHER",
    }
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Method;

    #[test]
    fn durations_print_with_at_most_three_decimals() {
        use std::time::Duration;
        assert_eq!(millis(Duration::from_nanos(207_469)).to_string(), "0.207");
        assert_eq!(
            format!("{:?}", millis(Duration::from_nanos(207_469))),
            "0.207"
        );
        assert_eq!(millis(Duration::from_nanos(1_500_500)).to_string(), "1.501");
        assert_eq!(format!("{:?}", millis(Duration::from_secs(2))), "2000.0");
        assert_eq!(
            serde_json::json!(millis(Duration::from_nanos(12_345_678))).to_string(),
            "12.346"
        );
        for nanos in (0..5_000_000_u64).step_by(7_919) {
            let text = format!("{:?}", millis(Duration::from_nanos(nanos)));
            let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
            assert!(decimals <= 3, "{nanos} ns printed as {text}");
        }
    }

    #[test]
    fn unknown_methods_share_one_label() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::DELETE), "DELETE");
        for odd in ["FOO1", "FOO2", "PROPFIND"] {
            assert_eq!(
                method_label(&Method::from_bytes(odd.as_bytes()).unwrap()),
                "OTHER"
            );
        }
    }
}
