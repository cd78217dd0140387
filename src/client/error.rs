//! The client's error type, its stable code and the exit status it maps to
//! (docs/decisions.md, "Command line").

use std::fmt;

/// Exit statuses of the command line (docs/decisions.md, "Command line").
pub(crate) mod exit {
    /// Success.
    pub(crate) const OK: u8 = 0;
    /// Any other error.
    pub(crate) const OTHER: u8 = 1;
    /// Usage error: bad flags, values or missing configuration.
    pub(crate) const USAGE: u8 = 2;
    /// Unauthorized or forbidden (401, 403).
    pub(crate) const AUTH: u8 = 3;
    /// Not found (404).
    pub(crate) const NOT_FOUND: u8 = 4;
    /// A limit: 413, or 429 after the retries.
    pub(crate) const LIMIT: u8 = 5;
    /// Server or network error.
    pub(crate) const SERVER: u8 = 6;
    /// Interrupted (Ctrl-C): 128 + SIGINT, as shells report it.
    pub(crate) const INTERRUPTED: u8 = 130;

    /// The exit status of an HTTP error status.
    pub(crate) fn for_status(status: u16) -> u8 {
        match status {
            401 | 403 => AUTH,
            404 | 410 => NOT_FOUND,
            413 | 429 => LIMIT,
            408 | 500..=599 => SERVER,
            _ => OTHER,
        }
    }
}

/// Everything that can go wrong in a client command.
#[derive(Debug)]
pub(crate) enum ClientError {
    /// The server answered with an error status.
    Api {
        status: u16,
        code: String,
        message: String,
    },
    /// No answer: connection refused, reset, timed out, TLS failure.
    Network(String),
    /// The server answered something that is not the API (bad JSON, wrong length).
    Protocol(String),
    /// Downloaded bytes whose SHA-256 is not the file's (docs/decisions.md, "Checksums").
    ChecksumMismatch(String),
    /// Bad flags or values, or no server / key configured.
    Usage(String),
    /// A local file operation failed.
    Io(String),
    /// Standard output was closed by the reader (`| head`): not a failure.
    BrokenPipe,
    /// Ctrl-C: the command stopped where it was.
    Interrupted,
}

impl ClientError {
    /// A usage error with this message.
    pub(crate) fn usage(msg: impl Into<String>) -> Self {
        ClientError::Usage(msg.into())
    }

    /// A local I/O error, with what was being done.
    // An error constructor: takes the error as `map_err` hands it over.
    #[allow(clippy::needless_pass_by_value)]
    pub(crate) fn io(context: impl fmt::Display, err: std::io::Error) -> Self {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            return ClientError::BrokenPipe;
        }
        ClientError::Io(format!("{context}: {err}"))
    }

    /// A transport error from reqwest as one line: the URL (without its
    /// query, which may carry a signature) and the cause in a few words
    /// (connection refused, DNS lookup failed, TLS, timed out), not the HTTP
    /// library's chain of wrappers.
    pub(crate) fn network(err: &reqwest::Error) -> Self {
        let cause = network_cause(err);
        let Some(url) = err.url() else {
            return ClientError::Network(cause);
        };
        let mut url = url.clone();
        url.set_query(None);
        url.set_fragment(None);
        ClientError::Network(if err.is_connect() {
            format!("cannot connect to {url}: {cause}")
        } else if err.is_timeout() {
            format!("no answer from {url}: {cause}")
        } else {
            format!("request to {url} failed: {cause}")
        })
    }

    /// The machine-readable code printed in `error: <code>: <message>`.
    pub(crate) fn code(&self) -> &str {
        match self {
            ClientError::Api { code, .. } => code,
            ClientError::Network(_) => "network",
            ClientError::Protocol(_) => "protocol",
            ClientError::ChecksumMismatch(_) => "checksum_mismatch",
            ClientError::Usage(_) => "usage",
            ClientError::Io(_) => "io",
            ClientError::BrokenPipe => "broken_pipe",
            ClientError::Interrupted => "interrupted",
        }
    }

    /// The human-readable message.
    pub(crate) fn message(&self) -> &str {
        match self {
            ClientError::Api { message, .. } => message,
            ClientError::Network(m)
            | ClientError::Protocol(m)
            | ClientError::ChecksumMismatch(m)
            | ClientError::Usage(m)
            | ClientError::Io(m) => m,
            ClientError::BrokenPipe => "standard output closed",
            ClientError::Interrupted => "stopped by Ctrl-C",
        }
    }

    /// The HTTP status, when the server answered.
    pub(crate) fn status(&self) -> Option<u16> {
        match self {
            ClientError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The process exit status this error maps to.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            // The server found the upload's bytes were not the ones sent.
            ClientError::Api { code, .. } if code == "checksum_mismatch" => exit::SERVER,
            // `upload --no-clobber` to a path that holds a file.
            ClientError::Api { code, .. } if code == "conflict" => exit::LIMIT,
            ClientError::Api { status, .. } => exit::for_status(*status),
            ClientError::Network(_)
            | ClientError::Protocol(_)
            | ClientError::ChecksumMismatch(_) => exit::SERVER,
            ClientError::Usage(_) => exit::USAGE,
            ClientError::Io(_) => exit::OTHER,
            ClientError::BrokenPipe => exit::OK,
            ClientError::Interrupted => exit::INTERRUPTED,
        }
    }

    /// This error with `prefix: ` put before its message (e.g. the file it concerns).
    #[must_use]
    pub(crate) fn context(self, prefix: impl fmt::Display) -> Self {
        self.map_message(|m| format!("{prefix}: {m}"))
    }

    /// This error, of the same kind, with its message rewritten by `f`.
    #[must_use]
    pub(crate) fn map_message(self, f: impl FnOnce(String) -> String) -> Self {
        match self {
            ClientError::Api {
                status,
                code,
                message,
            } => ClientError::Api {
                status,
                code,
                message: f(message),
            },
            ClientError::Network(m) => ClientError::Network(f(m)),
            ClientError::Protocol(m) => ClientError::Protocol(f(m)),
            ClientError::ChecksumMismatch(m) => ClientError::ChecksumMismatch(f(m)),
            ClientError::Usage(m) => ClientError::Usage(f(m)),
            ClientError::Io(m) => ClientError::Io(f(m)),
            ClientError::BrokenPipe => ClientError::BrokenPipe,
            ClientError::Interrupted => ClientError::Interrupted,
        }
    }
}

/// The cause of a transport error in a few words, from its chain of
/// sources: the innermost one says what happened, the outer ones where.
fn network_cause(err: &reqwest::Error) -> String {
    let mut chain: Vec<&(dyn std::error::Error + 'static)> = Vec::new();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        chain.push(s);
        source = s.source();
    }
    let texts: Vec<String> = chain.iter().map(ToString::to_string).collect();
    let all = texts.join(": ").to_ascii_lowercase();
    let innermost = texts.last().cloned().unwrap_or_else(|| err.to_string());
    let io_kind = chain
        .iter()
        .rev()
        .find_map(|e| e.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind);
    let host = err
        .url()
        .and_then(|u| u.host_str())
        .unwrap_or("the host")
        .to_string();
    if err.is_timeout() || io_kind == Some(std::io::ErrorKind::TimedOut) {
        return "timed out".into();
    }
    if all.contains("dns error") || all.contains("failed to lookup address") {
        return format!("DNS lookup of {host} failed ({innermost})");
    }
    if all.contains("certificate")
        || all.contains("tls")
        || all.contains("handshake")
        || all.contains("received corrupt message")
    {
        return format!("TLS handshake with {host} failed ({innermost})");
    }
    match io_kind {
        Some(std::io::ErrorKind::ConnectionRefused) => "connection refused".into(),
        Some(std::io::ErrorKind::ConnectionReset) => "connection reset by the server".into(),
        Some(std::io::ErrorKind::ConnectionAborted) => "connection aborted".into(),
        Some(std::io::ErrorKind::UnexpectedEof) => "connection closed by the server".into(),
        _ if all.contains("connection closed")
            || all.contains("incomplete message")
            || all.contains("channel closed") =>
        {
            "connection closed by the server before its answer was complete".into()
        }
        // `Network is unreachable (os error 101)`: the words only.
        _ => match innermost.find(" (os error ") {
            Some(i) => innermost[..i].to_string(),
            None => innermost,
        },
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.message())
    }
}

impl std::error::Error for ClientError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(status: u16) -> ClientError {
        ClientError::Api {
            status,
            code: "x".into(),
            message: "m".into(),
        }
    }

    #[test]
    fn statuses_map_to_contract_exit_codes() {
        assert_eq!(api(401).exit_code(), 3);
        assert_eq!(api(403).exit_code(), 3);
        assert_eq!(api(404).exit_code(), 4);
        assert_eq!(api(413).exit_code(), 5);
        assert_eq!(api(429).exit_code(), 5);
        assert_eq!(api(503).exit_code(), 6);
        assert_eq!(api(400).exit_code(), 1);
        assert_eq!(exit::for_status(410), 4);
        assert_eq!(exit::for_status(408), 6);
        assert_eq!(exit::for_status(422), 1);
        assert_eq!(ClientError::Network("x".into()).exit_code(), 6);
        assert_eq!(ClientError::usage("x").exit_code(), 2);
        let mismatch = ClientError::ChecksumMismatch("x".into());
        assert_eq!(
            (mismatch.code(), mismatch.exit_code()),
            ("checksum_mismatch", 6)
        );
        let refused = ClientError::Api {
            status: 400,
            code: "checksum_mismatch".into(),
            message: "m".into(),
        };
        assert_eq!(refused.exit_code(), 6);
    }

    #[test]
    fn context_prefixes_the_message() {
        let e = api(404).context("f_1");
        assert_eq!(e.to_string(), "x: f_1: m");
    }
}
