//! The Authorization header.
#![no_main]
use axum::http::{header, HeaderMap, HeaderValue};
use filestore::testing::server::auth::bearer;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(v) = HeaderValue::from_bytes(data) else {
        return;
    };
    let mut h = HeaderMap::new();
    h.insert(header::AUTHORIZATION, v);
    if let Ok(key) = bearer(&h) {
        assert!(!key.is_empty() && key.trim() == key);
    }
});
