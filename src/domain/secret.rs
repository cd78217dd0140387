//! The one secret type: signing secrets, S3 credentials, API keys in the
//! client's profiles and a new key shown once. `Debug` never shows the
//! value; serializing does (that is how a secret is written where it was
//! asked for: a profile file, `admin key create`'s output).

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A string that never shows in `Debug` or logs.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value itself: only where it is used (a MAC key, a request header).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Reads a secret from a file (`*_file` settings, for secrets mounted by
    /// an orchestrator): the whole file less one trailing line break.
    pub fn from_file(path: &Path) -> std::io::Result<Secret> {
        let text = std::fs::read_to_string(path)?;
        let value = text
            .strip_suffix('\n')
            .map_or(text.as_str(), |t| t.strip_suffix('\r').unwrap_or(t));
        Ok(Secret(value.to_string()))
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Secret {
        Secret(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_redacts_and_serde_is_transparent() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s:?}"), "<redacted>");
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"hunter2\"");
        let back: Secret = serde_json::from_str("\"hunter2\"").unwrap();
        assert_eq!(back.expose(), "hunter2");
    }

    #[test]
    fn a_file_loses_one_trailing_line_break() {
        let dir = tempfile::tempdir().unwrap();
        for (text, want) in [
            ("abc\n", "abc"),
            ("abc\r\n", "abc"),
            ("abc", "abc"),
            ("abc\n\n", "abc\n"),
            (" abc \n", " abc "),
        ] {
            let p = dir.path().join("s");
            std::fs::write(&p, text).unwrap();
            assert_eq!(Secret::from_file(&p).unwrap().expose(), want, "{text:?}");
        }
    }
}
