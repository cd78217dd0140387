//! Why a configuration was refused.

use std::path::PathBuf;

/// A configuration that cannot be used: the command line reports it as a
/// usage error (exit 2) with the message.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `at`: where in the file (`line L, column C: `), when known; one
    /// line, as every error is (toml's own text draws the line below it).
    #[error("config {}: {at}{message}", path.display())]
    Parse {
        path: PathBuf,
        at: String,
        message: String,
    },
    #[error("{setting} {}: {source}", path.display())]
    SecretFile {
        setting: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A value out of range, a missing companion setting, an unknown name.
    #[error("{0}")]
    Invalid(String),
}

impl ConfigError {
    /// The refusal of `text`, the file at `path`, as TOML.
    pub(crate) fn parse(path: &std::path::Path, text: &str, source: &toml::de::Error) -> Self {
        let at = source.span().map_or_else(String::new, |span| {
            let mut end = span.start.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let before = text[..end].trim_start_matches('\u{feff}');
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}: ")
        });
        ConfigError::Parse {
            path: path.to_path_buf(),
            at,
            message: source
                .message()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

impl From<String> for ConfigError {
    fn from(message: String) -> Self {
        ConfigError::Invalid(message)
    }
}

impl From<&str> for ConfigError {
    fn from(message: &str) -> Self {
        ConfigError::Invalid(message.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::ConfigError;

    #[test]
    fn a_toml_error_is_one_line_with_where_it_is() {
        let text = "[server]\nport = 80\nbind = \n";
        let e = toml::from_str::<toml::Table>(text).unwrap_err();
        let message = ConfigError::parse(std::path::Path::new("c.toml"), text, &e).to_string();
        assert!(!message.contains('\n'), "{message}");
        assert!(
            message.starts_with("config c.toml: line 3, column 8: "),
            "{message}"
        );
    }
}
