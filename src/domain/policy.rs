//! An upload policy: what an upload token (and, in part, a public key)
//! allows (docs/decisions.md, "Upload tokens"). The policy decides; a request
//! field may repeat what it says but not contradict it (400).

use super::filepath::AtPath;
use super::metadata::{self, Metadata};
use super::sniff;
use std::time::Duration;

/// What an upload asks besides its bytes (None: it does not say).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Asked {
    pub folder: Option<String>,
    pub private: Option<bool>,
    pub expires: Option<Duration>,
    pub metadata: Metadata,
    /// The `replace` field.
    pub replace: Option<bool>,
    /// The `if_absent` field.
    pub if_absent: bool,
}

/// What an upload gets once its policy has decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Settled {
    pub folder: Option<String>,
    pub private: bool,
    pub expires: Option<Duration>,
    pub metadata: Metadata,
    /// What it does to the files at its path.
    pub at_path: AtPath,
}

/// Everything optional: an empty policy allows what the plan allows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UploadPolicy {
    /// The files' folder (None: the request's).
    pub folder: Option<String>,
    /// At most this many bytes per file (None: the plan's).
    pub max_size: Option<u64>,
    /// The sniffed types allowed (`type/subtype` or `type/*`; empty: any).
    pub types: Vec<String>,
    /// Whether the files are private (None: the request's).
    pub private: Option<bool>,
    /// The files' `expires` (None: the request's).
    pub file_expires: Option<Duration>,
    /// Merged under the request's metadata; these keys win.
    pub metadata: Metadata,
    /// Whether its files replace the files at their paths (an upload
    /// token's `replace`).
    pub replace: bool,
    /// Whether an unset `folder` and `file_expires` still decide (the root,
    /// permanent files), as an upload token's do; a public key's only
    /// restrict what they name.
    pub decides: bool,
    /// At most this many of its uploads' bodies arriving at once (an
    /// upload token's uploads left); None: the plan's `concurrent_uploads`
    /// only.
    pub at_once: Option<u64>,
}

impl UploadPolicy {
    /// An upload's fields as the policy settles them: folder, privacy and
    /// lifetime may be repeated, not changed (the error is a 400's
    /// message); the policy's metadata keys win.
    pub(crate) fn settle(&self, asked: Asked) -> Result<Settled, String> {
        Ok(Settled {
            folder: self.folder(asked.folder)?,
            private: self.private(asked.private)?,
            expires: self.expires(asked.expires)?,
            metadata: self.metadata(asked.metadata)?,
            at_path: self.at_path(asked.replace, asked.if_absent)?,
        })
    }

    /// What a file does at its path: a policy that replaces decides it
    /// (a request may repeat `replace=true`, not say otherwise).
    pub(crate) fn at_path(&self, replace: Option<bool>, if_absent: bool) -> Result<AtPath, String> {
        if self.replace && (replace == Some(false) || if_absent) {
            return Err(
                "replace=false or if_absent contradicts the upload policy (replace): leave it out"
                    .into(),
            );
        }
        AtPath::of(replace.unwrap_or(self.replace), if_absent)
    }

    /// The type a file whose first bytes are `head` is stored as, when the
    /// policy checks types (None: it does not, and the name and declared
    /// type decide); the error (a 415's message) when it refuses the type.
    pub(crate) fn type_of(
        &self,
        head: &[u8],
        declared: Option<&str>,
    ) -> Result<Option<String>, String> {
        if !self.checks_types() {
            return Ok(None);
        }
        let t = sniff::sniff(head, declared);
        if !self.admits_type(&t) {
            return Err(format!(
                "the file's bytes are {t}; the upload policy allows {}",
                self.types.join(", ")
            ));
        }
        Ok(Some(t))
    }

    /// The folder a file goes to: the policy's, which a request may repeat.
    pub(crate) fn folder(&self, asked: Option<String>) -> Result<Option<String>, String> {
        match (&self.folder, asked) {
            (None, Some(a)) if self.decides => Err(format!(
                "folder {a:?} contradicts the upload policy (the root folder): leave it out"
            )),
            (None, asked) => Ok(asked),
            (Some(f), None) => Ok(Some(f.clone())),
            (Some(f), Some(a)) if *f == a => Ok(Some(a)),
            (Some(f), Some(a)) => Err(format!(
                "folder {a:?} contradicts the upload policy's folder {f:?}: leave it out"
            )),
        }
    }

    /// Whether a file is private: the policy's, which a request may repeat.
    pub(crate) fn private(&self, asked: Option<bool>) -> Result<bool, String> {
        match (self.private, asked) {
            (None, asked) => Ok(asked.unwrap_or(false)),
            (Some(p), None) => Ok(p),
            (Some(p), Some(a)) if p == a => Ok(a),
            (Some(p), Some(_)) => Err(format!(
                "private contradicts the upload policy (private {p}): leave it out"
            )),
        }
    }

    /// A file's lifetime: the policy's, which a request may repeat.
    pub(crate) fn expires(&self, asked: Option<Duration>) -> Result<Option<Duration>, String> {
        match (self.file_expires, asked) {
            (None, Some(_)) if self.decides => {
                Err("expires contradicts the upload policy (permanent files): leave it out".into())
            }
            (None, asked) => Ok(asked),
            (Some(e), None) => Ok(Some(e)),
            (Some(e), Some(a)) if e == a => Ok(Some(a)),
            (Some(e), Some(_)) => Err(format!(
                "expires contradicts the upload policy's {}s: leave it out",
                e.as_secs()
            )),
        }
    }

    /// The request's metadata with the policy's merged over it (the
    /// policy's keys win); the result must still keep metadata's limits.
    pub(crate) fn metadata(&self, asked: Metadata) -> Result<Metadata, String> {
        if self.metadata.is_empty() {
            return Ok(asked);
        }
        let mut merged = asked;
        merged.extend(self.metadata.iter().map(|(k, v)| (k.clone(), v.clone())));
        metadata::check(&merged).map_err(|e| format!("{e} (with the upload policy's)"))?;
        Ok(merged)
    }

    /// The largest file allowed: the policy's size within the plan's.
    pub(crate) fn max_size(&self, plan_max: u64) -> u64 {
        self.max_size.map_or(plan_max, |m| m.min(plan_max))
    }

    /// Whether a file of this sniffed type may be stored.
    pub(crate) fn admits_type(&self, sniffed: &str) -> bool {
        self.types.is_empty() || sniff::allowed(&self.types, sniffed)
    }

    /// Whether the bytes' type must be sniffed at all.
    pub(crate) fn checks_types(&self) -> bool {
        !self.types.is_empty()
    }
}

/// Checks and normalises a policy's list of types (each `type/subtype` or
/// `type/*`, at most 32, duplicates dropped).
pub(crate) fn parse_types(raw: &[String]) -> Result<Vec<String>, String> {
    const MAX_TYPES: usize = 32;
    if raw.len() > MAX_TYPES {
        return Err(format!("at most {MAX_TYPES} types"));
    }
    let mut out: Vec<String> = Vec::new();
    for t in raw {
        let t = sniff::parse_type(t)?;
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token() -> UploadPolicy {
        UploadPolicy {
            folder: Some("avatars".into()),
            max_size: Some(1000),
            types: vec!["image/*".into()],
            private: Some(true),
            file_expires: Some(Duration::from_hours(1)),
            metadata: [("user".to_string(), "u1".to_string())].into(),
            decides: true,
            at_once: None,
            replace: false,
        }
    }

    #[test]
    fn a_replacing_policy_decides_what_a_file_does_at_its_path() {
        let open = UploadPolicy::default();
        assert_eq!(open.at_path(None, false), Ok(AtPath::Add));
        assert_eq!(open.at_path(Some(true), false), Ok(AtPath::Replace));
        assert_eq!(open.at_path(Some(false), true), Ok(AtPath::IfAbsent));
        assert!(open.at_path(Some(true), true).is_err());
        let replaces = UploadPolicy {
            replace: true,
            ..token()
        };
        assert_eq!(replaces.at_path(None, false), Ok(AtPath::Replace));
        assert_eq!(replaces.at_path(Some(true), false), Ok(AtPath::Replace));
        assert!(replaces.at_path(Some(false), false).is_err());
        assert!(replaces.at_path(None, true).is_err());
    }

    #[test]
    fn the_policy_decides_and_a_request_may_only_repeat_it() {
        let p = token();
        assert_eq!(p.folder(None).unwrap().as_deref(), Some("avatars"));
        assert_eq!(
            p.folder(Some("avatars".into())).unwrap().as_deref(),
            Some("avatars")
        );
        assert!(p.folder(Some("other".into())).is_err());
        assert!(p.private(None).unwrap());
        assert!(p.private(Some(true)).unwrap());
        assert!(p.private(Some(false)).is_err());
        assert_eq!(p.expires(None).unwrap(), Some(Duration::from_hours(1)));
        assert!(p.expires(Some(Duration::from_mins(1))).is_err());
        let open = UploadPolicy::default();
        assert_eq!(open.folder(Some("x".into())).unwrap().as_deref(), Some("x"));
        let decides = UploadPolicy {
            decides: true,
            ..UploadPolicy::default()
        };
        assert!(decides.folder(Some("x".into())).is_err());
        assert_eq!(decides.folder(None).unwrap(), None);
        assert!(decides.expires(Some(Duration::from_mins(1))).is_err());
        assert_eq!(decides.expires(None).unwrap(), None);
        assert!(!open.private(None).unwrap());
        assert_eq!(open.expires(None).unwrap(), None);
    }

    #[test]
    fn the_policys_metadata_wins_and_the_merge_keeps_the_limits() {
        let p = token();
        let asked: Metadata = [
            ("user".to_string(), "forged".to_string()),
            ("note".to_string(), "hi".to_string()),
        ]
        .into();
        let m = p.metadata(asked).unwrap();
        assert_eq!(m["user"], "u1");
        assert_eq!(m["note"], "hi");
        let many: Metadata = (0..16)
            .map(|i| (format!("k{i}"), "v".to_string()))
            .collect();
        assert!(p.metadata(many).is_err(), "17 keys once merged");
    }

    #[test]
    fn settle_and_type_of() {
        let p = token();
        let s = p.settle(Asked::default()).unwrap();
        assert_eq!(s.folder.as_deref(), Some("avatars"));
        assert!(s.private);
        assert_eq!(s.metadata["user"], "u1");
        let forged = Asked {
            private: Some(false),
            ..Asked::default()
        };
        assert!(p.settle(forged).is_err());
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(p.type_of(png, None).unwrap().as_deref(), Some("image/png"));
        assert!(p.type_of(b"<html></html>", Some("image/png")).is_err());
        assert_eq!(UploadPolicy::default().type_of(b"<html>", None), Ok(None));
    }

    #[test]
    fn size_and_types() {
        let p = token();
        assert_eq!(p.max_size(10_000), 1000);
        assert_eq!(p.max_size(10), 10);
        assert_eq!(UploadPolicy::default().max_size(10), 10);
        assert!(p.admits_type("image/png"));
        assert!(!p.admits_type("application/x-executable"));
        assert!(UploadPolicy::default().admits_type("application/x-executable"));
        assert_eq!(
            parse_types(&["IMAGE/png".into(), "image/png".into()]).unwrap(),
            vec!["image/png".to_string()]
        );
        assert!(parse_types(&["nope".into()]).is_err());
    }
}
