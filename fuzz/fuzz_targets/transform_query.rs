//! An image variant's query (`?w=&h=&fit=&format=&q=` on a CDN URL).
#![no_main]
use filestore::testing::domain::transform::{Transform, MAX_SIDE};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &str| {
    let Ok(Some(t)) = Transform::from_query(data) else {
        return;
    };
    // What is accepted is in range, and the query it writes reads back the same.
    let side = |s: Option<u32>| s.is_none_or(|n| (1..=MAX_SIDE).contains(&n));
    assert!(side(t.w) && side(t.h));
    assert!((1..=100).contains(&t.q));
    assert_eq!(Transform::from_query(&t.query()), Ok(Some(t)));
    let canonical = t.canonical();
    assert!(canonical.starts_with("w=") && canonical.contains("&q="));
});
