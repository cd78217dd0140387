//! The list query: limit and cursor.
#![no_main]
use filestore::testing::domain::validate;
use filestore::testing::service::files::decode_cursor;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &str| {
    if let Ok(n) = validate::limit(Some(data)) {
        assert!((1..=100).contains(&n));
    }
    if let Some(after) = decode_cursor(data) {
        assert!(after.id.starts_with("f_") && after.id.len() <= 64);
    }
});
