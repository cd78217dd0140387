//! The upload form's text fields, the file part's name and the upload's
//! `Content-Digest` header: never a panic; what is accepted keeps the
//! contract's shape.
#![no_main]
use filestore::testing::domain::{digest, validate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &str| {
    if let Ok(d) = validate::expires(data) {
        assert!(d.as_secs() >= 1 && d <= validate::MAX_EXPIRES);
    }
    if let Ok(Some(f)) = validate::folder(data) {
        assert!(!f.is_empty() && f.len() <= validate::MAX_FOLDER);
        assert!(!f.chars().any(char::is_control) && validate::bidi(&f).is_none());
        assert_eq!(validate::folder(&f), Ok(Some(f.clone())));
    }
    if let Ok(n) = validate::file_name(data) {
        assert!(!n.is_empty() && n.len() <= 255 && !n.contains('/') && !n.contains('\\'));
    }
    let _ = validate::boolean(data);
    let _ = validate::content_type(Some(data), data);
    if let Ok(d) = digest::parse_hex(data) {
        let lower = data.to_ascii_lowercase();
        assert_eq!(digest::normalise_hex(data).as_deref(), Ok(lower.as_str()));
        assert_eq!(digest::parse_hex(&lower), Ok(d));
    }
    if let Ok(Some(d)) = digest::parse_content_digest(data) {
        let again = digest::content_digest_of(&d);
        assert_eq!(digest::parse_content_digest(&again), Ok(Some(d)));
    }
});
