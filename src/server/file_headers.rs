//! The headers of every CDN answer of a file (`/live/…` and the stable
//! links `/p/…`, GET and HEAD, 200, 206 and 304, the hot path's ready
//! answer included), made here and nowhere else: validators, type, name,
//! the safe headers, the caching, and what the file carries from S3
//! (`domain::object::ObjectAttrs`, CONTRACT §18).
//!
//! The rule for a file's own headers (docs/api.md, "CDN routes"):
//! - `Content-Disposition`, `Content-Encoding` and `Content-Language` given
//!   at its S3 PUT describe its bytes: sent with them (replacing the default
//!   `inline` disposition). A variant is other bytes (re-encoded, with a
//!   name of its own): it keeps the `Content-Language` only; never the
//!   file's `Content-Encoding` (its bytes are not so encoded) nor its
//!   `Content-Disposition` (which names the original).
//! - Caching: a private file (served only signed) is always
//!   `private, no-store` and never gets its `Expires`: no cache may keep
//!   it past its signature, whatever the file says. A public file (and its
//!   variants) that has a `Cache-Control` or an `Expires` gets them instead
//!   of the route's default (`public, max-age=300` on `/live/`, `no-cache`
//!   on a stable link): an `Expires` alone stands alone, as a default
//!   `max-age` would override it (RFC 9111, 5.3).
//! - The checksum and the multipart ETag are S3's: the CDN's `ETag` and
//!   `Content-Digest` stay the SHA-256's (a variant's its own).

use super::conditional::{disposition, httpdate, put};
use crate::domain::files::StoredFile;
use axum::http::{header, HeaderMap, HeaderValue};

/// Which CDN route answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// `/live/<account>/<file>/<name>`: one file, for good.
    Live,
    /// `/p/<account>/<path>`: whatever file is newest at the path.
    Path,
}

impl Route {
    /// The `Cache-Control` of a public file that says nothing of its own.
    fn default_caching(self) -> &'static str {
        match self {
            Route::Live => "public, max-age=300",
            // A re-published path is seen at once; the ETag revalidates.
            Route::Path => "no-cache",
        }
    }
}

/// What an answer serves: the file's bytes, or a variant's (with its own
/// ETag, type and name).
#[derive(Debug, Clone, Copy)]
pub(super) struct Served<'a> {
    pub route: Route,
    pub etag: &'a str,
    pub content_type: &'a str,
    pub name: &'a str,
    pub variant: bool,
}

impl<'a> Served<'a> {
    /// The file `row` itself at `route`.
    pub(super) fn file(route: Route, row: &'a StoredFile, etag: &'a str) -> Served<'a> {
        Served {
            route,
            etag,
            content_type: &row.content_type,
            name: &row.name,
            variant: false,
        }
    }
}

/// The headers of a CDN answer of `row` as `served`.
pub(super) fn file_headers(row: &StoredFile, served: &Served<'_>) -> HeaderMap {
    let attrs = &row.attrs;
    let own = |v: &Option<String>| {
        v.as_deref()
            .filter(|_| !served.variant)
            .and_then(|v| HeaderValue::from_str(v).ok())
    };
    let mut h = HeaderMap::new();
    put(&mut h, header::ETAG, served.etag);
    put(&mut h, header::LAST_MODIFIED, &httpdate(row.created_at));
    put(&mut h, header::CONTENT_TYPE, served.content_type);
    match own(&attrs.content_disposition) {
        Some(v) => {
            h.insert(header::CONTENT_DISPOSITION, v);
        }
        None => put(
            &mut h,
            header::CONTENT_DISPOSITION,
            &disposition(served.name),
        ),
    }
    if let Some(v) = own(&attrs.content_encoding) {
        h.insert(header::CONTENT_ENCODING, v);
    }
    if let Some(v) = &attrs.content_language {
        put(&mut h, header::CONTENT_LANGUAGE, v);
    }
    // Static values: a hot file's answer clones these headers per request,
    // and a static value is copied, not counted.
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox"),
    );
    caching(&mut h, row, served.route);
    h
}

/// `Cache-Control` and `Expires`, as the module's rule says.
fn caching(h: &mut HeaderMap, row: &StoredFile, route: Route) {
    if row.private {
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("private, no-store"),
        );
        return;
    }
    let valid = |v: &Option<String>| v.as_deref().and_then(|v| HeaderValue::from_str(v).ok());
    let (control, expires) = (valid(&row.attrs.cache_control), valid(&row.attrs.expires));
    if control.is_none() && expires.is_none() {
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(route.default_caching()),
        );
        return;
    }
    for (name, value) in [(header::CACHE_CONTROL, control), (header::EXPIRES, expires)] {
        if let Some(v) = value {
            h.insert(name, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::object::ObjectAttrs;

    fn row(private: bool, attrs: ObjectAttrs) -> StoredFile {
        StoredFile {
            name: "a.txt".into(),
            content_type: "text/plain".into(),
            private,
            attrs,
            ..StoredFile::default()
        }
    }

    fn headers(row: &StoredFile, route: Route, variant: bool) -> Vec<(String, String)> {
        let served = Served {
            variant,
            ..Served::file(route, row, "\"e\"")
        };
        let h = file_headers(row, &served);
        let mut out: Vec<(String, String)> = [
            header::CACHE_CONTROL,
            header::EXPIRES,
            header::CONTENT_DISPOSITION,
            header::CONTENT_ENCODING,
            header::CONTENT_LANGUAGE,
        ]
        .into_iter()
        .filter_map(|n| {
            let v = h.get(&n)?.to_str().ok()?.to_string();
            Some((n.to_string(), v))
        })
        .collect();
        out.sort();
        out
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut out: Vec<_> = p
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        out.sort();
        out
    }

    fn all() -> ObjectAttrs {
        ObjectAttrs {
            cache_control: Some("max-age=60".into()),
            content_disposition: Some("attachment; filename=\"r.txt\"".into()),
            content_encoding: Some("gzip".into()),
            content_language: Some("fr".into()),
            expires: Some("Wed, 21 Oct 2037 07:28:00 GMT".into()),
            ..ObjectAttrs::default()
        }
    }

    const INLINE: &str = "inline; filename=\"a.txt\"; filename*=UTF-8''a.txt";

    #[test]
    fn a_file_without_attributes_gets_the_routes_defaults() {
        let plain = row(false, ObjectAttrs::default());
        let live = [
            ("cache-control", "public, max-age=300"),
            ("content-disposition", INLINE),
        ];
        assert_eq!(headers(&plain, Route::Live, false), pairs(&live));
        let path = [
            ("cache-control", "no-cache"),
            ("content-disposition", INLINE),
        ];
        assert_eq!(headers(&plain, Route::Path, false), pairs(&path));
        let private = row(true, ObjectAttrs::default());
        assert_eq!(
            headers(&private, Route::Path, true),
            pairs(&[
                ("cache-control", "private, no-store"),
                ("content-disposition", INLINE)
            ])
        );
    }

    #[test]
    fn a_public_file_sends_its_own_headers_on_both_routes() {
        let f = row(false, all());
        let own = [
            ("cache-control", "max-age=60"),
            ("expires", "Wed, 21 Oct 2037 07:28:00 GMT"),
            ("content-disposition", "attachment; filename=\"r.txt\""),
            ("content-encoding", "gzip"),
            ("content-language", "fr"),
        ];
        assert_eq!(headers(&f, Route::Live, false), pairs(&own));
        assert_eq!(headers(&f, Route::Path, false), pairs(&own));
    }

    #[test]
    fn a_variant_keeps_the_caching_and_language_not_the_encoding_or_name() {
        let f = row(false, all());
        let variant = [
            ("cache-control", "max-age=60"),
            ("expires", "Wed, 21 Oct 2037 07:28:00 GMT"),
            ("content-disposition", INLINE),
            ("content-language", "fr"),
        ];
        assert_eq!(headers(&f, Route::Live, true), pairs(&variant));
    }

    #[test]
    fn a_private_file_is_never_cached_whatever_it_says() {
        let f = row(true, all());
        let private = [
            ("cache-control", "private, no-store"),
            ("content-disposition", "attachment; filename=\"r.txt\""),
            ("content-encoding", "gzip"),
            ("content-language", "fr"),
        ];
        assert_eq!(headers(&f, Route::Live, false), pairs(&private));
        assert_eq!(headers(&f, Route::Path, false), pairs(&private));
    }

    #[test]
    fn an_expires_alone_replaces_the_default_and_a_bad_value_is_none() {
        let f = row(
            false,
            ObjectAttrs {
                expires: Some("Wed, 21 Oct 2037 07:28:00 GMT".into()),
                content_disposition: Some("bad\nvalue".into()),
                ..ObjectAttrs::default()
            },
        );
        assert_eq!(
            headers(&f, Route::Live, false),
            pairs(&[
                ("expires", "Wed, 21 Oct 2037 07:28:00 GMT"),
                ("content-disposition", INLINE)
            ])
        );
        let bad = row(
            false,
            ObjectAttrs {
                cache_control: Some("x\u{7f}".into()),
                ..ObjectAttrs::default()
            },
        );
        assert_eq!(
            headers(&bad, Route::Path, false),
            pairs(&[
                ("cache-control", "no-cache"),
                ("content-disposition", INLINE)
            ])
        );
    }
}
