//! The CDN's hot path: a plain `GET` or `HEAD` of a public file this node
//! served in the last second, whose bytes are in its row, or of a variant
//! of one (`?w=&h=&fit=&format=&q=`, nothing else) kept in memory, is
//! answered before the router, from headers made once per file and
//! variant (CORS included), without the router and its layers, the render
//! pool or the blob store. What those would do is kept: the request-header
//! limit (a request over it goes the full way, to its 431), the bytes
//! counted as bandwidth, the access line and the metrics. Anything else
//! goes the full way: any other query (a signature), a `Range` or a
//! conditional header, a percent-encoded path, a private, expired, unknown
//! or blob-stored file (its variants excepted), a variant not kept, any
//! other method. The answer is the full path's, header for header
//! (`tests/it/cdn.rs`, `tests/it/images`).

use super::file_headers::{file_headers, Route, Served};
use super::{cors, envelope, observe, variant};
use crate::domain::digest;
use crate::domain::transform::{Transform, KEYS};
use crate::service::cdn::{count_hot, hot, hot_row, Kept};
use crate::service::{images, App};
use axum::body::Body;
use axum::http::{header, HeaderMap, Method, Request};
use axum::response::Response;
use bytes::Bytes;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
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

/// Variants of one file whose headers are kept (more are made per request).
const VARIANTS_KEPT: usize = 8;

/// A hot file's 200s, each made once: the file's headers (for a file whose
/// bytes are in its row), and its kept variants' headers and bytes, by the
/// query and `Accept` that asked for them (a variant's bytes never change,
/// and what is made here goes with the file's row when it changes).
#[derive(Default)]
struct Ready {
    file: OnceLock<HeaderMap>,
    variants: Mutex<Vec<MadeVariant>>,
}

/// A variant's answer, made for a query and an `Accept`.
struct MadeVariant {
    query: String,
    accept: Option<String>,
    headers: HeaderMap,
    bytes: Bytes,
}

/// The headers the full path gives a whole public file of `row`.
fn file_ready(row: &crate::domain::files::StoredFile) -> HeaderMap {
    let etag = format!("\"{}\"", row.sha256);
    let served = Served::file(Route::Live, row, &etag);
    let mut h = file_headers(row, &served);
    if let Some(d) = digest::content_digest(&row.sha256) {
        super::conditional::put(&mut h, header::HeaderName::from_static(digest::HEADER), &d);
    }
    super::conditional::put(&mut h, header::CONTENT_LENGTH, &row.size.to_string());
    cors::cdn_headers(&mut h);
    h
}

/// What `kept` has made for the hot path.
fn ready(kept: &Kept) -> Option<&Ready> {
    let made = kept.made.get_or_init(|| Arc::new(Ready::default()));
    made.downcast_ref::<Ready>()
}

/// The whole file `kept` (hot: its bytes are in its row).
fn whole_file(kept: &Kept) -> Option<(HeaderMap, Bytes)> {
    let h = ready(kept)?.file.get_or_init(|| file_ready(kept.row()));
    Some((h.clone(), kept.data().clone()))
}

/// The variant of `kept` that `query` names, when the query names nothing
/// else and the variant is kept in memory.
fn kept_variant(
    app: &App,
    kept: &Kept,
    query: &str,
    accept: Option<&str>,
) -> Option<(HeaderMap, Bytes)> {
    let ready = ready(kept)?;
    let made = |list: &[MadeVariant]| {
        list.iter()
            .find(|m| m.query == query && m.accept.as_deref() == accept)
            .map(|m| (m.headers.clone(), m.bytes.clone()))
    };
    if let Some(found) = made(
        &ready
            .variants
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    ) {
        return Some(found);
    }
    let only_variant = form_urlencoded::parse(query.as_bytes()).all(|(k, _)| KEYS.contains(&&*k));
    if !only_variant {
        return None;
    }
    let t = Transform::from_query(query).ok()??;
    let row = kept.row();
    let plan = images::plan(app, row, t, accept).ok()?;
    let hit = images::kept_variant(app, &row.id, &plan.key)?;
    let (v, bytes) = (&hit.0, &hit.1);
    let mut h = variant::variant_headers(row, Route::Live, &plan, &v.content_type);
    super::conditional::put(&mut h, header::CONTENT_LENGTH, &bytes.len().to_string());
    cors::cdn_headers(&mut h);
    let mut list = ready
        .variants
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    // Another request may have made it meanwhile: kept once.
    if list.len() < VARIANTS_KEPT && made(&list).is_none() {
        list.push(MadeVariant {
            query: query.to_string(),
            accept: accept.map(str::to_string),
            headers: h.clone(),
            bytes: bytes.clone(),
        });
    }
    Some((h, bytes.clone()))
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
    let (kept, (headers, bytes)) = match uri.query() {
        None => {
            let kept = hot(app, account, file, name, now)?;
            let made = whole_file(&kept)?;
            (kept, made)
        }
        Some(query) => {
            let kept = hot_row(app, account, file, name, now)?;
            let accept = h.get(header::ACCEPT).and_then(|v| v.to_str().ok());
            let made = kept_variant(app, &kept, query, accept)?;
            (kept, made)
        }
    };
    let size = bytes.len() as u64;
    let mut response = if head {
        Response::new(Body::empty())
    } else {
        count_hot(app, &kept, size, now);
        Response::new(Body::from(bytes))
    };
    *response.headers_mut() = headers;
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
