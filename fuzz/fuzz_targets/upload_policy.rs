//! What an upload token's bearer controls besides the bytes: the metadata
//! JSON, the list's `metadata.KEY=VALUE` filters, the policy's types, and
//! the type sniffed from the first bytes.
#![no_main]
use filestore::testing::domain::{metadata, sniff};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(m) = metadata::parse(&text) {
        // What is accepted keeps the limits, and reads back the same.
        assert!(m.len() <= metadata::MAX_KEYS);
        let json = metadata::to_json(&m);
        assert!(json.len() <= metadata::MAX_BYTES);
        assert_eq!(metadata::parse(&json).unwrap(), m);
    }
    if let Ok(pairs) = metadata::filters(Some(&text)) {
        assert!(pairs.iter().all(|(k, _)| metadata::valid_key(k)));
    }
    if let Ok(t) = sniff::parse_type(&text) {
        assert!(t.contains('/') && t == t.to_ascii_lowercase());
    }
    let t = sniff::sniff(data, Some(&text));
    assert!(t.contains('/'));
    // An image family never admits SVG, whatever the bytes.
    if t == "image/svg+xml" {
        assert!(!sniff::allowed(&["image/*".to_string()], &t));
    }
});
