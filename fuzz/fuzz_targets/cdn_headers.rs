//! The CDN's request headers: Range, If-Range, If-None-Match, If-Modified-Since.
#![no_main]
use axum::http::{header, HeaderMap, HeaderValue};
use filestore::testing::server::cdn::{not_modified, parse_range, requested_range};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, &str, &str, u32)| {
    let (range, cond, since, size) = input;
    let size = u64::from(size);
    if let Ok(Some((start, end))) = parse_range(range, size) {
        assert!(start <= end && end < size);
    }
    let mut h = HeaderMap::new();
    for (name, v) in [
        (header::RANGE, range),
        (header::IF_RANGE, cond),
        (header::IF_NONE_MATCH, cond),
        (header::IF_MODIFIED_SINCE, since),
    ] {
        if let Ok(v) = HeaderValue::from_str(v) {
            h.insert(name, v);
        }
    }
    let _ = not_modified(&h, "\"etag\"", i64::from(size as u32) * 1000);
    if let Ok(Some((start, end))) = requested_range(&h, "\"etag\"", 0, size) {
        assert!(start <= end && end < size);
    }
});
