//! The upload form's text fields and the file part's name: never a panic;
//! what is accepted keeps the contract's shape.
#![no_main]
use filestore::domain::validate;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &str| {
    if let Ok(d) = validate::expires(data) {
        assert!(d.as_secs() >= 1 && d <= validate::MAX_EXPIRES);
    }
    if let Ok(Some(f)) = validate::folder(data) {
        assert!(!f.is_empty() && f.len() <= 255);
        assert_eq!(validate::folder(&f), Ok(Some(f.clone())));
    }
    if let Ok(n) = validate::file_name(data) {
        assert!(!n.is_empty() && n.len() <= 255 && !n.contains('/') && !n.contains('\\'));
    }
    let _ = validate::boolean(data);
    let _ = validate::content_type(Some(data), data);
});
