//! The tus 1.0.0 protocol's header rules (<https://tus.io/protocols/resumable-upload>):
//! versions, `Upload-Length` / `Upload-Offset`, `Upload-Metadata` mapped to
//! the upload's fields, and `Upload-Checksum`. Pure: the server uses them,
//! and the client builds what they parse.

use super::validate;
use base64::Engine;
use std::time::Duration;

pub const VERSION: &str = "1.0.0";
pub const EXTENSIONS: &str = "creation,creation-with-upload,termination,expiration,checksum";
pub const CHECKSUM_ALGORITHMS: &str = "sha1,sha256";
/// The content type of a PATCH body.
pub const OFFSET_STREAM: &str = "application/offset+octet-stream";
/// An incomplete upload expires this long after its last PATCH.
pub const EXPIRES_AFTER: Duration = Duration::from_hours(24);
/// An incomplete upload that a non-secret credential (a public key, an
/// upload token) created expires once it went this long without receiving a
/// byte: from its creation, then from each PATCH that brought bytes. A page
/// that anyone can read cannot hold an account's quota for a day.
pub const UNTOUCHED_EXPIRES_AFTER: Duration = Duration::from_mins(10);

/// How long an incomplete upload lives without receiving a byte, by who
/// created it.
pub fn idle_expiry(by_secret_key: bool) -> Duration {
    if by_secret_key {
        EXPIRES_AFTER
    } else {
        UNTOUCHED_EXPIRES_AFTER
    }
}

/// The upload's expiry after a PATCH at `now` that brought `bytes`:
/// `idle_ms` further, except that a PATCH bringing nothing keeps the expiry
/// of an upload on the short (non-secret) clock, which only bytes move.
pub fn expiry_after_patch(now: i64, expires_at: i64, idle_ms: i64, bytes: u64) -> i64 {
    let short = idle_ms < crate::clock::millis(EXPIRES_AFTER);
    if bytes == 0 && short {
        expires_at
    } else {
        now.saturating_add(idle_ms)
    }
}

/// Whether key `key_id` (secret or not) may continue, read or end an upload
/// that `created_by` created: that key itself, or any secret key of the
/// account (the account's uploads are the caller's to see already). An
/// upload made before its creator was recorded is any key's of the account.
pub fn may_use(created_by: Option<&str>, key_id: &str, secret: bool) -> bool {
    secret || created_by.is_none_or(|c| c == key_id)
}

/// `Upload-Length` / `Upload-Offset`: a non-negative decimal integer.
pub fn parse_size(name: &str, raw: &str) -> Result<u64, String> {
    if raw.is_empty() || raw.len() > 19 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{name} must be a non-negative integer"));
    }
    raw.parse()
        .map_err(|_| format!("{name} must be a non-negative integer"))
}

/// The upload's fields, from `Upload-Metadata`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Metadata {
    pub name: Option<String>,
    pub content_type: Option<String>,
    pub folder: Option<String>,
    /// None when the client does not say.
    pub private: Option<bool>,
    pub expires: Option<Duration>,
    /// The file's metadata: the JSON of the `metadata` key
    /// (`super::metadata::parse`); an empty value is none.
    pub metadata: super::metadata::Metadata,
    /// `replace` (None when the client does not say).
    pub replace: Option<bool>,
    /// `if_absent`.
    pub if_absent: bool,
}

/// Parses `Upload-Metadata`: comma-separated `key base64(value)` pairs (a
/// key alone has an empty value). `filename` (or `name`), `filetype` (or
/// `type`), `folder`, `private`, `expires`, `metadata`, `replace` and
/// `if_absent` follow the
/// multipart fields' rules (`filename` wins over `name` and `filetype` over `type` when both
/// come, as Uppy sends them); other keys are ignored; a key given twice is
/// refused.
pub fn parse_metadata(raw: &str) -> Result<Metadata, String> {
    let mut m = Metadata::default();
    let mut seen = std::collections::HashSet::new();
    for pair in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = match pair.split_once(' ') {
            Some((k, v)) => (k, v.trim()),
            None => (pair, ""),
        };
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!("Upload-Metadata: invalid key {key:?}"));
        }
        if !seen.insert(key.to_string()) {
            return Err(format!("Upload-Metadata: key {key:?} given twice"));
        }
        let value = base64::engine::general_purpose::STANDARD
            .decode(value)
            .map_err(|_| format!("Upload-Metadata: the value of {key:?} is not base64"))?;
        let text = || {
            String::from_utf8(value.clone())
                .map_err(|_| format!("Upload-Metadata: the value of {key:?} is not UTF-8"))
        };
        match key {
            "filename" | "name" => {
                let name = validate::file_name(&text()?)?;
                if key == "filename" || m.name.is_none() {
                    m.name = Some(name);
                }
            }
            "filetype" | "type" => {
                let t = text()?;
                if key == "filetype" || m.content_type.is_none() {
                    m.content_type = (!t.is_empty()).then_some(t);
                }
            }
            "folder" => m.folder = validate::folder(&text()?)?,
            "private" => m.private = Some(validate::boolean(&text()?)?),
            "replace" => m.replace = Some(flag(key, &text()?)?),
            "if_absent" => m.if_absent = flag(key, &text()?)?,
            "expires" => {
                let t = text()?;
                m.expires = if t.is_empty() {
                    None
                } else {
                    Some(validate::expires(&t)?)
                };
            }
            "metadata" => {
                let t = text()?;
                if !t.is_empty() {
                    m.metadata = super::metadata::parse(&t)?;
                }
            }
            _ => {}
        }
    }
    Ok(m)
}

/// A true/false value (`replace`, `if_absent`).
fn flag(key: &str, raw: &str) -> Result<bool, String> {
    validate::boolean(raw).map_err(|_| format!("Upload-Metadata: {key} {raw:?}: use true or false"))
}

/// A checksum algorithm of the checksum extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Sha1,
    Sha256,
}

/// The OpenAPI pattern of `Upload-Checksum`: either algorithm with a digest
/// of its length in canonical padded base64 (property-tested against
/// [`parse_checksum`]).
pub const CHECKSUM_PATTERN: &str =
    "^(sha1 [A-Za-z0-9+/]{26}[AEIMQUYcgkosw048]=|sha256 [A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=)$";

/// `Upload-Checksum: <algorithm> <base64 digest>`.
pub fn parse_checksum(raw: &str) -> Result<(Algorithm, Vec<u8>), String> {
    let (algo, digest) = raw
        .trim()
        .split_once(' ')
        .ok_or("Upload-Checksum must be: <algorithm> <base64 digest>")?;
    let (algo, len) = match algo {
        "sha1" => (Algorithm::Sha1, 20),
        "sha256" => (Algorithm::Sha256, 32),
        other => {
            return Err(format!(
            "Upload-Checksum: unsupported algorithm {other:?} (supported: {CHECKSUM_ALGORITHMS})"
        ))
        }
    };
    let digest = base64::engine::general_purpose::STANDARD
        .decode(digest.trim())
        .map_err(|_| "Upload-Checksum: the digest is not base64".to_string())?;
    if digest.len() != len {
        return Err(format!(
            "Upload-Checksum: a {algo:?} digest has {len} bytes, not {}",
            digest.len()
        ));
    }
    Ok((algo, digest))
}

/// `Upload-Metadata` for these fields: what a client sends.
pub fn encode_metadata(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            format!(
                "{k} {}",
                base64::engine::general_purpose::STANDARD.encode(v)
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_creating_key_or_a_secret_key_may_use_an_upload() {
        use super::may_use;
        assert!(may_use(Some("key_a"), "key_a", false));
        assert!(!may_use(Some("key_a"), "key_b", false));
        assert!(may_use(Some("key_a"), "key_b", true));
        assert!(may_use(None, "key_b", false));
    }

    #[test]
    fn empty_patches_do_not_keep_short_lived_uploads() {
        use super::{expiry_after_patch, idle_expiry};
        use crate::clock::millis;
        let (long, short) = (millis(idle_expiry(true)), millis(idle_expiry(false)));
        assert_eq!(short, 600_000);
        assert_eq!(expiry_after_patch(1_000, 5_000, short, 0), 5_000);
        assert_eq!(expiry_after_patch(1_000, 5_000, short, 1), 601_000);
        assert_eq!(expiry_after_patch(1_000, 5_000, long, 0), 1_000 + long);
    }

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("Upload-Length", "0"), Ok(0));
        assert_eq!(parse_size("Upload-Length", "1048576"), Ok(1 << 20));
        for bad in ["", "-1", "+1", "1.0", " 1", "0x10", "99999999999999999999"] {
            assert!(parse_size("Upload-Length", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn metadata_maps_to_fields() {
        let raw = encode_metadata(&[
            ("filename", "report.pdf"),
            ("filetype", "application/pdf"),
            ("folder", "docs/2026"),
            ("private", "true"),
            ("expires", "7d"),
            ("other", "ignored"),
        ]);
        let m = parse_metadata(&raw).unwrap();
        assert_eq!(m.name.as_deref(), Some("report.pdf"));
        assert_eq!(m.content_type.as_deref(), Some("application/pdf"));
        assert_eq!(m.folder.as_deref(), Some("docs/2026"));
        assert_eq!(m.private, Some(true));
        assert_eq!(m.expires, Some(Duration::from_hours(7 * 24)));
        let alias = parse_metadata(&encode_metadata(&[
            ("name", "a.txt"),
            ("type", "text/plain"),
        ]))
        .unwrap();
        assert_eq!(alias.name.as_deref(), Some("a.txt"));
        assert_eq!(alias.content_type.as_deref(), Some("text/plain"));
        assert_eq!(parse_metadata("").unwrap(), Metadata::default());
        // A key without a value has the empty value: the multipart rules apply.
        assert_eq!(parse_metadata("private").unwrap().private, Some(false));
    }

    #[test]
    fn the_metadata_key_is_the_files_metadata() {
        let m = parse_metadata(&encode_metadata(&[("metadata", r#"{"b":"2","a":"1"}"#)])).unwrap();
        assert_eq!(
            m.metadata.into_iter().collect::<Vec<_>>(),
            [("a".into(), "1".into()), ("b".into(), "2".into())]
        );
        assert!(parse_metadata(&encode_metadata(&[("metadata", "")]))
            .unwrap()
            .metadata
            .is_empty());
        for bad in [r#"{"A":"1"}"#, r#"{"a":1}"#, "[]", "x"] {
            assert!(
                parse_metadata(&encode_metadata(&[("metadata", bad)])).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn bad_metadata_is_refused() {
        for bad in [
            "filename !!!".to_string(),
            encode_metadata(&[("folder", "../up")]),
            encode_metadata(&[("private", "maybe")]),
            encode_metadata(&[("expires", "forever")]),
            encode_metadata(&[("folder", "a"), ("folder", "b")]),
            format!(
                "filename {}",
                base64::engine::general_purpose::STANDARD.encode([0xff, 0xfe])
            ),
        ] {
            assert!(parse_metadata(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn checksums() {
        let b64 = |n: usize| base64::engine::general_purpose::STANDARD.encode(vec![1u8; n]);
        assert_eq!(
            parse_checksum(&format!("sha1 {}", b64(20))).unwrap().0,
            Algorithm::Sha1
        );
        assert_eq!(
            parse_checksum(&format!("sha256 {}", b64(32))).unwrap().0,
            Algorithm::Sha256
        );
        for bad in [
            format!("md5 {}", b64(16)),
            format!("sha1 {}", b64(32)),
            "sha256 ***".to_string(),
            "sha256".to_string(),
        ] {
            assert!(parse_checksum(&bad).is_err(), "{bad:?}");
        }
    }

    proptest! {
        /// What the pattern admits parses, and every digest either
        /// algorithm can give matches the pattern.
        #[test]
        fn the_checksum_pattern_is_the_parser(
            raw in CHECKSUM_PATTERN.trim_start_matches('^').trim_end_matches('$'),
            digest in proptest::collection::vec(any::<u8>(), 32),
        ) {
            prop_assert!(parse_checksum(&raw).is_ok(), "{}", raw);
            let re = regex::Regex::new(CHECKSUM_PATTERN).unwrap();
            let b64 = |d: &[u8]| base64::engine::general_purpose::STANDARD.encode(d);
            let sha1 = format!("sha1 {}", b64(&digest[..20]));
            let sha256 = format!("sha256 {}", b64(&digest));
            prop_assert!(re.is_match(&sha1) && re.is_match(&sha256));
        }

        #[test]
        fn header_parsers_never_panic(s in ".{0,200}") {
            let _ = parse_metadata(&s);
            let _ = parse_checksum(&s);
            let _ = parse_size("Upload-Offset", &s);
        }

        #[test]
        fn any_valid_name_round_trips(name in "[A-Za-z0-9 ._-]{1,60}") {
            prop_assume!(validate::file_name(&name).is_ok());
            let m = parse_metadata(&encode_metadata(&[("filename", &name)])).unwrap();
            prop_assert_eq!(m.name, Some(validate::file_name(&name).unwrap()));
        }
    }
}
