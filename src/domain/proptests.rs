//! Property tests of the parsers of outside input in `domain`: whatever the
//! input, they never panic, and what they accept keeps their promises.

use super::digest;
use super::signing::{Signer, Verdict};
use super::validate;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use proptest::prelude::*;

proptest! {
    #[test]
    fn expires_accepts_exactly_number_unit_up_to_a_year(raw in "\\PC{0,12}") {
        if let Ok(d) = validate::expires(&raw) {
            prop_assert!(d.as_secs() >= 1 && d <= validate::MAX_EXPIRES);
            let t = raw.as_str();
            prop_assert!(t[..t.len() - 1].bytes().all(|b| b.is_ascii_digit()));
            prop_assert!("smhdw".contains(&t[t.len() - 1..]));
        }
    }

    #[test]
    fn expires_round_trips(n in 1u64..=400, unit in prop::sample::select(vec![('s', 1u64), ('m', 60), ('h', 3600), ('d', 86_400), ('w', 604_800)])) {
        let got = validate::expires(&format!("{n}{}", unit.0));
        let secs = n * unit.1;
        if secs <= validate::MAX_EXPIRES.as_secs() {
            prop_assert_eq!(got.unwrap().as_secs(), secs);
        } else {
            prop_assert!(got.is_err());
        }
    }

    #[test]
    fn folders_accepted_are_clean_and_stable(raw in "[a-zA-Z0-9_./ -]{0,40}|\\PC{0,300}|[a./é\u{1}\u{7f}\u{85}\u{200e} +%*\\\\]{0,12}|(/?[ab.]{0,3}){0,400}") {
        if let Ok(Some(f)) = validate::folder(&raw) {
            prop_assert!(!f.is_empty() && f.len() <= validate::MAX_FOLDER);
            prop_assert!(!f.starts_with('/') && !f.ends_with('/'));
            for seg in f.split('/') {
                prop_assert!(!seg.is_empty() && seg != "." && seg != "..");
                prop_assert!(seg.len() <= validate::MAX_SEGMENT);
                prop_assert!(!seg.chars().any(char::is_control));
                prop_assert!(validate::bidi(seg).is_none());
            }
            prop_assert_eq!(validate::folder(&f), Ok(Some(f.clone())));
        }
    }

    /// The rule, stated as its definition: every string of clean segments
    /// within the lengths is accepted as itself, leading and trailing `/`
    /// dropped.
    #[test]
    fn folders_of_clean_segments_are_accepted(segs in prop::collection::vec("[^/\\p{Cc}\u{200e}\u{200f}\u{61c}\u{202a}-\u{202e}\u{2066}-\u{2069}]{1,40}", 1..8), lead in "/{0,2}", trail in "/{0,2}") {
        let joined = segs.join("/");
        let raw = format!("{lead}{joined}{trail}");
        let clean = segs.iter().all(|s| s != "." && s != ".." && s.len() <= validate::MAX_SEGMENT);
        let fits = raw.len() <= validate::MAX_FOLDER;
        match validate::folder(&raw) {
            Ok(Some(f)) => {
                prop_assert!(clean && fits);
                prop_assert_eq!(f, joined);
            }
            Ok(None) => prop_assert!(false, "not the root"),
            Err(_) => prop_assert!(!(clean && fits)),
        }
    }

    #[test]
    fn file_names_lose_directories_and_control_characters(raw in "\\PC{0,300}|[a-z/\\\\.\u{0}-\u{1f}]{0,20}") {
        if let Ok(n) = validate::file_name(&raw) {
            prop_assert!(!n.is_empty() && n.len() <= 255);
            prop_assert!(!n.contains('/') && !n.contains('\\'));
            prop_assert!(!n.chars().any(char::is_control));
            prop_assert!(n != "." && n != "..");
        }
    }

    #[test]
    fn limits_are_1_to_100(raw in "\\PC{0,6}|[0-9]{1,4}") {
        if let Ok(n) = validate::limit(Some(&raw)) {
            prop_assert!((1..=100).contains(&n));
            prop_assert_eq!(raw.trim_start_matches('+').parse::<u64>().ok(), Some(u64::from(n)));
        }
    }

    #[test]
    fn a_signature_is_valid_only_for_what_it_signed(
        acc in "acc_[0-9a-f]{1,24}", file in "f_[0-9a-f]{1,44}",
        expires in 1i64..4_000_000_000, flip in 0usize..64, garbage in "\\PC{0,80}",
    ) {
        let s = Signer::new(crate::domain::secret::Secret::new("a secret that is long enough for hmac keys"));
        let sig = s.sign(&acc, &file, expires, None);
        prop_assert_eq!(s.verify(&acc, &file, expires, None, &sig, expires - 1), Verdict::Valid);
        prop_assert_eq!(s.verify(&acc, &file, expires, None, &sig, expires), Verdict::Expired);
        let mut tampered = sig.clone().into_bytes();
        tampered[flip] = if tampered[flip] == b'0' { b'1' } else { b'0' };
        let tampered = String::from_utf8(tampered).unwrap();
        prop_assert_eq!(s.verify(&acc, &file, expires, None, &tampered, 0), Verdict::Invalid);
        prop_assert_eq!(s.verify(&acc, &file, expires + 1, None, &sig, 0), Verdict::Invalid);
        prop_assert_eq!(s.verify(&acc, "f_other", expires, None, &sig, 0), Verdict::Invalid);
        if garbage.to_ascii_lowercase() != sig {
            prop_assert_eq!(s.verify(&acc, &file, expires, None, &garbage, 0), Verdict::Invalid);
        }
    }
}

proptest! {
    #[test]
    fn content_digests_round_trip_among_other_algorithms(
        bytes in prop::array::uniform32(any::<u8>()),
        other in prop::collection::vec(any::<u8>(), 0..80),
        before in any::<bool>(),
    ) {
        let ours = digest::content_digest_of(&bytes);
        prop_assert_eq!(digest::parse_content_digest(&ours), Ok(Some(bytes)));
        prop_assert_eq!(digest::content_digest(&hex::encode(bytes)), Some(ours.clone()));
        let theirs = format!("sha-512=:{}:;p=1", STANDARD.encode(&other));
        let both = if before { format!("{theirs}, {ours}") } else { format!("{ours},{theirs}") };
        prop_assert_eq!(digest::parse_content_digest(&both), Ok(Some(bytes)));
    }

    #[test]
    fn hex_digests_round_trip_in_either_case(bytes in prop::array::uniform32(any::<u8>()), upper in any::<bool>()) {
        let hex = hex::encode(bytes);
        let sent = if upper { hex.to_uppercase() } else { hex.clone() };
        prop_assert_eq!(digest::parse_hex(&sent), Ok(bytes));
        prop_assert_eq!(digest::normalise_hex(&sent), Ok(hex));
    }

    #[test]
    fn content_digest_garbage_never_panics(raw in "\\PC{0,80}|[a-z0-9*=:;,()\"?. +/\\\\-]{0,60}|sha-256=:[A-Za-z0-9+/=]{0,50}:") {
        if let Ok(Some(_)) = digest::parse_content_digest(&raw) {
            prop_assert!(raw.contains("sha-256="));
        }
    }
}

/// The OpenAPI patterns say exactly what the validators accept (the
/// schemathesis run in CI relies on it both ways).
mod patterns_match_the_validators {
    use super::validate;
    use proptest::prelude::*;

    fn re(pattern: &str) -> regex::Regex {
        regex::Regex::new(pattern).expect("a valid pattern")
    }

    #[test]
    fn on_the_edges() {
        let expires = re(&validate::expires_pattern());
        for s in [
            "",
            "1s",
            "0s",
            "00h",
            "01h",
            "365d",
            "366d",
            "52w",
            "53w",
            "8760h",
            "8761h",
            "525600m",
            "525601m",
            "31536000s",
            "31536001s",
            "1H",
            " 1h",
            "1h ",
            "1",
            "h",
        ] {
            assert_eq!(
                expires.is_match(s),
                s.is_empty() || validate::expires(s).is_ok(),
                "expires {s:?}"
            );
        }
        let folder = re(validate::FOLDER_PATTERN);
        for s in [
            "",
            "/",
            "a",
            "/a/",
            "a//b",
            "./a",
            "a/.",
            "..",
            ".a",
            "..a",
            "...",
            "a/..b/c",
            "a b",
            "é",
            "my docs/ünï+%",
            "a\\b*",
            "a\tb",
            "a\u{7f}",
            "a/\u{9f}",
            "a\u{a0}",
            "a\u{202e}b",
            "a\u{2069}",
            "a\u{200d}",
        ] {
            assert_eq!(
                folder.is_match(s),
                validate::folder(s).is_ok(),
                "folder {s:?}"
            );
        }
        let mime = re(crate::domain::sniff::TYPE_PATTERN);
        for s in [
            "",
            "image/png",
            "Image/PNG",
            "image/*",
            "*/*",
            "image",
            "image/",
            "/png",
            "a/b/c",
            "a b/c",
            " image/png ",
            "text/plain;x",
            "application/vnd.a+json",
        ] {
            assert_eq!(
                mime.is_match(s),
                crate::domain::sniff::parse_type(s).is_ok(),
                "type {s:?}"
            );
        }
        let key = re(crate::domain::metadata::KEY_PATTERN);
        for s in [
            "",
            "a",
            "A",
            "a-b_c9",
            "a.b",
            "é",
            &"k".repeat(64),
            &"k".repeat(65),
        ] {
            assert_eq!(
                key.is_match(s),
                crate::domain::metadata::valid_key(s),
                "key {s:?}"
            );
        }
        let boolean = re(validate::BOOLEAN_PATTERN);
        for s in [
            "", "true", "TRUE", "No", "oFF", "1", "0", " true", "2", "yes ",
        ] {
            assert_eq!(
                boolean.is_match(s),
                validate::boolean(s).is_ok(),
                "boolean {s:?}"
            );
        }
    }

    proptest! {
        #[test]
        fn sha256_field(raw in "[0-9a-fA-Fg ]{62,66}|\\PC{0,70}") {
            let matched = re(super::digest::SHA256_FIELD_PATTERN).is_match(&raw);
            // Empty is no digest (the form's field left empty).
            prop_assert_eq!(matched, raw.is_empty() || super::digest::parse_hex(&raw).is_ok());
        }

        #[test]
        fn expires(raw in "[0-9]{0,9}[smhdwSx ]?") {
            let matched = re(&validate::expires_pattern()).is_match(&raw);
            prop_assert_eq!(matched, raw.is_empty() || validate::expires(&raw).is_ok());
        }

        #[test]
        fn folder(raw in "[a./_ \\u{0}\u{1f}\u{7f}\u{85}\u{a0}\u{200d}\u{200e}\u{2066}é%]{0,12}") {
            let matched = re(validate::FOLDER_PATTERN).is_match(&raw);
            prop_assert_eq!(matched, validate::folder(&raw).is_ok());
        }

        #[test]
        fn boolean(raw in "[tTrRuUeEfFaAlLsSyYnNoO01 ]{0,5}") {
            let matched = re(validate::BOOLEAN_PATTERN).is_match(&raw);
            prop_assert_eq!(matched, validate::boolean(&raw).is_ok());
        }
    }
}

proptest! {
    #[test]
    fn metadata_accepted_keeps_its_promises(raw in "\\PC{0,200}") {
        if let Ok(m) = super::metadata::parse(&raw) {
            prop_assert!(super::metadata::check(&m).is_ok());
            prop_assert!(super::metadata::to_json(&m).len() <= super::metadata::MAX_BYTES);
        }
    }

    #[test]
    fn metadata_round_trips(m in prop::collection::btree_map("[a-z0-9_-]{1,64}", "\\PC{0,40}", 0..=16usize)) {
        let json = super::metadata::to_json(&m);
        match super::metadata::parse(&json) {
            Ok(back) => prop_assert_eq!(&back, &m),
            Err(_) => prop_assert!(json.len() > super::metadata::MAX_BYTES),
        }
        prop_assert_eq!(super::metadata::from_stored(&json), m);
    }
}
