//! The CDN's hot path: a plain `GET` or `HEAD` of a public file this node
//! served in the last second, whose bytes are in its row, is answered before
//! the router, from an answer made once per file (its headers, CORS
//! included), without the router and its layers. What those would do is
//! kept: the request-header limit (a request over it goes the full way, to
//! its 431), the bytes counted as bandwidth, the access line and the
//! metrics. Anything else goes the full way: a query (a signature, an image
//! variant), a `Range` or a conditional header, a percent-encoded path, a
//! private, expired, unknown or blob-stored file, any other method. The
//! answer is the full path's, header for header (`tests/it/cdn.rs`).

use super::file_headers::{file_headers, Route, Served};
use super::{cors, envelope, observe};
use crate::domain::digest;
use crate::service::cdn::{count_hot, hot};
use crate::service::App;
use axum::body::Body;
use axum::http::{header, HeaderMap, Method, Request};
use axum::response::Response;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// What the connection loop asks first: a request's answer, or None for
/// the router to give it.
pub(crate) type Front =
    Arc<dyn Fn(&Request<hyper::body::Incoming>) -> Option<Response> + Send + Sync>;

/// The hot path of `app`'s CDN.
pub(crate) fn front(app: Arc<App>) -> Front {
    Arc::new(move |req| answer(&app, req))
}

/// The CDN route's template, as the metrics and the access line name it.
const ROUTE: &str = "/live/{account}/{file}/{name}";

/// Headers that ask for something else than the whole file as it is.
const CONDITIONS: [header::HeaderName; 4] = [
    header::RANGE,
    header::IF_NONE_MATCH,
    header::IF_MODIFIED_SINCE,
    header::IF_RANGE,
];

/// A hot file's 200, made once: its headers.
struct Ready {
    headers: HeaderMap,
}

impl Ready {
    /// The headers the full path gives a whole public file of `row`.
    fn of(row: &crate::domain::files::StoredFile) -> Ready {
        let etag = format!("\"{}\"", row.sha256);
        let served = Served::file(Route::Live, row, &etag);
        let mut h = file_headers(row, &served);
        if let Some(d) = digest::content_digest(&row.sha256) {
            super::conditional::put(&mut h, header::HeaderName::from_static(digest::HEADER), &d);
        }
        super::conditional::put(&mut h, header::CONTENT_LENGTH, &row.size.to_string());
        cors::cdn_headers(&mut h);
        Ready { headers: h }
    }
}

fn answer<B>(app: &App, req: &Request<B>) -> Option<Response> {
    // The system's clock, read once: the file's expiry, the month its bytes
    // count in, the access line's time; the duration is the monotonic
    // clock's (a step of the system's clock does not show in it).
    let (started, begun) = (SystemTime::now(), Instant::now());
    let head = match *req.method() {
        Method::GET => false,
        Method::HEAD => true,
        _ => return None,
    };
    let uri = req.uri();
    if uri.query().is_some() {
        return None;
    }
    let rest = uri.path().strip_prefix("/live/")?;
    if rest.contains('%') {
        // The router decodes it.
        return None;
    }
    let mut parts = rest.split('/');
    let (account, file, name) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || account.is_empty() || file.is_empty() || name.is_empty() {
        return None;
    }
    let h = req.headers();
    if CONDITIONS.iter().any(|n| h.contains_key(n))
        || envelope::headers_size(h) > app.config.max_header_bytes
    {
        return None;
    }
    let now = app.clock.ms_at(started);
    let kept = hot(app, account, file, name, now)?;
    let made = kept.made.get_or_init(|| Arc::new(Ready::of(kept.row())));
    let ready = made.downcast_ref::<Ready>()?;
    let size = kept.row().size;
    let mut response = if head {
        Response::new(Body::empty())
    } else {
        count_hot(app, &kept, size, now);
        Response::new(Body::from(kept.data().clone()))
    };
    *response.headers_mut() = ready.headers.clone();
    let elapsed = begun.elapsed();
    observe::report_at(
        req.method(),
        ROUTE,
        200,
        (0, size),
        elapsed,
        (account, req.extensions().get()),
        started + elapsed,
    );
    Some(response)
}
