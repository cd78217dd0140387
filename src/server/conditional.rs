//! The HTTP of serving a stored file, shared by the routes that serve one
//! (the CDN's files and variants, later other doors): conditional requests
//! (ETag, Last-Modified), single byte ranges, dates and file names in
//! headers (the CDN's headers themselves: `file_headers`).

use crate::service::ServiceError;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use headers::{ETag, HeaderMapExt, IfModifiedSince, IfNoneMatch, IfRange, LastModified};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// RFC 8187 `attr-char`s stay as they are; everything else is encoded.
const ATTR_CHAR: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'!')
    .remove(b'#')
    .remove(b'$')
    .remove(b'&')
    .remove(b'+')
    .remove(b'-')
    .remove(b'.')
    .remove(b'^')
    .remove(b'_')
    .remove(b'`')
    .remove(b'|')
    .remove(b'~');

/// The part of `size` bytes a `Range` asks for, with its `Content-Range`
/// and `Content-Length` set in `h`: (206, offset, length); None for the
/// whole (no range, or one to ignore).
pub(super) fn ranged(
    h: &mut HeaderMap,
    headers: &HeaderMap,
    etag: &str,
    created_at: i64,
    size: u64,
) -> Result<Option<(StatusCode, u64, u64)>, ServiceError> {
    let Some((start, end)) = requested_range(headers, etag, created_at, size)? else {
        return Ok(None);
    };
    put(
        h,
        header::CONTENT_RANGE,
        &format!("bytes {start}-{end}/{size}"),
    );
    let len = end - start + 1;
    put(h, header::CONTENT_LENGTH, &len.to_string());
    Ok(Some((StatusCode::PARTIAL_CONTENT, start, len)))
}

/// Sets a header, skipping a value no header can carry.
pub(super) fn put(h: &mut HeaderMap, name: header::HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        h.insert(name, v);
    }
}

/// An HTTP date (IMF-fixdate, whole seconds) of unix milliseconds.
pub(super) fn httpdate(ms: i64) -> String {
    let secs = u64::try_from(ms / 1000).unwrap_or(0);
    httpdate::fmt_http_date(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
}

/// `inline` with an ASCII fallback name and the exact name in `filename*`.
pub(super) fn disposition(name: &str) -> String {
    content_disposition("inline", name)
}

/// A `Content-Disposition` of `kind` (`inline`, `attachment`) naming
/// `name`, as [`disposition`] says.
pub(super) fn content_disposition(kind: &str, name: &str) -> String {
    let fallback: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!(
        "{kind}; filename=\"{fallback}\"; filename*=UTF-8''{}",
        utf8_percent_encode(name, ATTR_CHAR)
    )
}

/// Whether a conditional GET may be answered 304: `If-None-Match` (weak
/// comparison, `*` included) decides when present, else `If-Modified-Since`.
/// Parsing and comparison are the `headers` crate's; an unparsable header
/// is ignored, as RFC 9110 asks.
pub fn not_modified(headers: &HeaderMap, etag: &str, created_at: i64) -> bool {
    if let Some(inm) = headers.typed_get::<IfNoneMatch>() {
        return etag
            .parse::<ETag>()
            .is_ok_and(|etag| !inm.precondition_passes(&etag));
    }
    if let Some(ims) = headers.typed_get::<IfModifiedSince>() {
        return !ims.is_modified(system_time(created_at));
    }
    false
}

/// A time in Unix milliseconds as a `SystemTime` (before 1970: the epoch).
fn system_time(ms: i64) -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// The single byte range asked for, as inclusive (start, end); None for the
/// whole file (no Range, an `If-Range` the file no longer matches — strong
/// ETag comparison or date, by the `headers` crate — several ranges, or a
/// header that is not a byte range at all).
pub fn requested_range(
    headers: &HeaderMap,
    etag: &str,
    created_at: i64,
    size: u64,
) -> Result<Option<(u64, u64)>, ServiceError> {
    let Some(raw) = headers.get(header::RANGE).and_then(|v| v.to_str().ok()) else {
        return Ok(None);
    };
    if headers.contains_key(header::IF_RANGE) {
        // A validator that cannot be read matches nothing: the whole file.
        let Some(if_range) = headers.typed_get::<IfRange>() else {
            return Ok(None);
        };
        let last_modified = LastModified::from(system_time(created_at));
        if if_range.is_modified(etag.parse::<ETag>().ok().as_ref(), Some(&last_modified)) {
            return Ok(None);
        }
    }
    parse_range(raw, size)
}

/// Parses a `Range` value by hand: the `headers` crate's `Range` cannot tell
/// an unsatisfiable range (416) from one to ignore, and drops a suffix
/// longer than the file instead of serving it whole, as RFC 9110 asks.
pub fn parse_range(raw: &str, size: u64) -> Result<Option<(u64, u64)>, ServiceError> {
    let unsatisfiable = || {
        ServiceError::RangeNotSatisfiable(
            format!("range {raw:?} is outside the file's {size} bytes"),
            size,
        )
    };
    let Some(spec) = raw.trim().strip_prefix("bytes=") else {
        return Ok(None);
    };
    if spec.contains(',') {
        return Ok(None);
    }
    let Some((a, b)) = spec.trim().split_once('-') else {
        return Ok(None);
    };
    let (a, b) = (a.trim(), b.trim());
    let range = match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ok(None),
        (true, false) => {
            let Ok(n) = b.parse::<u64>() else {
                return Ok(None);
            };
            if n == 0 || size == 0 {
                return Err(unsatisfiable());
            }
            (size.saturating_sub(n), size - 1)
        }
        (false, _) => {
            let Ok(start) = a.parse::<u64>() else {
                return Ok(None);
            };
            let end = if b.is_empty() {
                u64::MAX
            } else {
                match b.parse::<u64>() {
                    Ok(e) if e >= start => e,
                    _ => return Ok(None),
                }
            };
            if start >= size {
                return Err(unsatisfiable());
            }
            (start, end.min(size - 1))
        }
    };
    Ok(Some(range))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_range("bytes=0-9", 100).unwrap(), Some((0, 9)));
        assert_eq!(parse_range("bytes=90-", 100).unwrap(), Some((90, 99)));
        assert_eq!(parse_range("bytes=-10", 100).unwrap(), Some((90, 99)));
        assert_eq!(parse_range("bytes=-1000", 100).unwrap(), Some((0, 99)));
        assert_eq!(parse_range("bytes=50-1000", 100).unwrap(), Some((50, 99)));
        assert!(parse_range("bytes=100-", 100).is_err());
        assert!(parse_range("bytes=0-0", 0).is_err());
        assert!(parse_range("bytes=-0", 100).is_err());
        assert_eq!(parse_range("bytes=0-1,5-6", 100).unwrap(), None);
        assert_eq!(parse_range("items=0-1", 100).unwrap(), None);
        assert_eq!(parse_range("bytes=9-3", 100).unwrap(), None);
        assert_eq!(parse_range("bytes=x-3", 100).unwrap(), None);
    }

    proptest::proptest! {
        #[test]
        fn ranges_never_panic_and_stay_inside_the_file(raw in "\\PC{0,40}|bytes=[0-9]{0,20}-[0-9]{0,20}", size in 0u64..10_000) {
            if let Ok(Some((start, end))) = parse_range(&raw, size) {
                proptest::prop_assert!(start <= end && end < size);
            }
        }

        #[test]
        fn a_valid_range_is_what_it_says(size in 1u64..1_000_000, a in 0u64..1_000_000, len in 0u64..1_000_000) {
            let start = a % size;
            let end = start + len;
            let got = parse_range(&format!("bytes={start}-{end}"), size).unwrap();
            proptest::prop_assert_eq!(got, Some((start, end.min(size - 1))));
            let suffix = parse_range(&format!("bytes=-{}", len + 1), size).unwrap();
            proptest::prop_assert_eq!(suffix, Some((size.saturating_sub(len + 1), size - 1)));
        }

        #[test]
        fn conditional_headers_never_panic(inm in "\\PC{0,60}", ims in "\\PC{0,40}", created in 0i64..4_000_000_000_000) {
            let mut h = HeaderMap::new();
            if let Ok(v) = HeaderValue::from_str(&ims) {
                h.insert(header::IF_MODIFIED_SINCE, v);
            }
            let _ = not_modified(&h, "\"abc\"", created);
            if let Ok(v) = HeaderValue::from_str(&inm) {
                h.insert(header::IF_NONE_MATCH, v);
            }
            let _ = not_modified(&h, "\"abc\"", created);
            let _ = requested_range(&h, "\"abc\"", created, 100);
        }
    }

    #[test]
    fn if_modified_since_uses_http_dates() {
        let mut h = HeaderMap::new();
        let created = 1_700_000_000_000;
        h.insert(
            header::IF_MODIFIED_SINCE,
            HeaderValue::from_str(&httpdate(created)).unwrap(),
        );
        assert!(not_modified(&h, "\"x\"", created));
        assert!(!not_modified(&h, "\"x\"", created + 1000));
        h.insert(
            header::IF_MODIFIED_SINCE,
            HeaderValue::from_static("Sunday, 06-Nov-94 08:49:37 GMT"),
        );
        assert!(
            !not_modified(&h, "\"x\"", created),
            "obsolete RFC 850 dates are HTTP dates too"
        );
    }

    #[test]
    fn if_none_match_compares_weakly_and_wins_over_the_date() {
        let created = 1_700_000_000_000;
        let check = |inm: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::IF_NONE_MATCH, HeaderValue::from_str(inm).unwrap());
            // A date that alone would say "not modified": If-None-Match decides.
            h.insert(
                header::IF_MODIFIED_SINCE,
                HeaderValue::from_str(&httpdate(created + 10_000)).unwrap(),
            );
            not_modified(&h, "\"x\"", created)
        };
        let cases = [
            ("\"x\"", true),
            ("W/\"x\"", true),
            ("\"y\", \"x\"", true),
            ("*", true),
            ("\"y\"", false),
            ("\"xx\"", false),
        ];
        for (inm, want) in cases {
            assert_eq!(check(inm), want, "If-None-Match: {inm}");
        }
    }

    #[test]
    fn if_range_takes_a_strong_etag_or_a_date() {
        let created = 1_700_000_000_000;
        let range = |if_range: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::RANGE, HeaderValue::from_static("bytes=0-9"));
            h.insert(header::IF_RANGE, HeaderValue::from_str(if_range).unwrap());
            requested_range(&h, "\"x\"", created, 100).unwrap()
        };
        let cases = [
            ("\"x\"".to_string(), Some((0, 9))),
            ("W/\"x\"".to_string(), None),
            ("\"y\"".to_string(), None),
            (httpdate(created), Some((0, 9))),
            (httpdate(created - 5_000), None),
            ("not a date or etag".to_string(), None),
        ];
        for (if_range, want) in cases {
            assert_eq!(range(&if_range), want, "If-Range: {if_range}");
        }
    }

    #[test]
    fn disposition_is_safe() {
        let d = disposition("a\"b\\c é.txt");
        assert!(d.starts_with("inline; filename=\"a_b_c _.txt\"; filename*=UTF-8''"));
        assert!(!d.contains('\n'));
        let d = content_disposition("attachment", "ünï+%\"\\.zip");
        assert_eq!(
            d,
            "attachment; filename=\"_n_+%__.zip\"; filename*=UTF-8''%C3%BCn%C3%AF+%25%22%5C.zip"
        );
    }
}
