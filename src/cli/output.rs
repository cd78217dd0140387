//! The printer: results on stdout, either human text or JSON (one compact
//! record a line). Each line is written and flushed at once, so a pipeline
//! (`| jq`) sees records as they come; a closed stdout is reported as
//! [`ClientError::BrokenPipe`], which the command line treats as success.
//! Messages for the person (notes, progress lines, `serve`'s banner) go to
//! stderr through [`stderr_line`].

use crate::client::ClientError;
use std::io::Write;

/// Where results go, and in which form.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Printer {
    json: bool,
}

impl Printer {
    /// A printer for `--json` (true) or human output.
    pub(crate) fn new(json: bool) -> Self {
        Printer { json }
    }

    /// Whether `--json` was asked for.
    pub(crate) fn is_json(self) -> bool {
        self.json
    }

    /// One JSON record on a line of its own.
    pub(crate) fn record(self, value: &serde_json::Value) -> Result<(), ClientError> {
        let text = serde_json::to_string(value)
            .map_err(|e| ClientError::Protocol(format!("cannot encode record: {e}")))?;
        self.line(&text)
    }

    /// Bytes as they are (a completion script, a man page).
    #[allow(clippy::unused_self)] // Output goes through the printer, whatever its mode.
    pub(crate) fn raw(self, bytes: &[u8]) -> Result<(), ClientError> {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)
            .and_then(|()| out.flush())
            .map_err(|e| ClientError::io("writing to standard output", e))
    }

    /// One line of text.
    #[allow(clippy::unused_self)] // Output goes through the printer, whatever its mode.
    pub(crate) fn line(self, text: &str) -> Result<(), ClientError> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")
            .and_then(|()| out.flush())
            .map_err(|e| ClientError::io("writing to standard output", e))
    }
}

/// One line on stderr: a message for the person (a note, a progress line,
/// `serve`'s banner), not a result. Like `eprintln!`, which it is, it panics
/// if stderr cannot be written (the error line in `entry` never does).
#[allow(clippy::print_stderr)] // This module is where output is written.
pub(crate) fn stderr_line(text: &str) {
    eprintln!("{text}");
}

/// The error line a failed command ends with, on stderr; never panics when
/// stderr is gone (the command's status still says it failed).
/// With `serve --log-format json`, it is one `ERROR` object of the log
/// (its `code` and `message`) like every other line there.
pub(crate) fn error_line(code: &str, message: &str) {
    let line = if super::logging::is_json() {
        super::logging::json_line(
            super::logging::Level::Error,
            "filestore",
            message,
            &[("code", code.into())],
        )
    } else {
        format!("error: {code}: {message}")
    };
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Asks the person at the terminal `question` (on stderr, no newline) and
/// returns the answer's line, trimmed (empty when stdin is closed).
pub(crate) fn ask(question: &str) -> String {
    use std::io::BufRead;
    let mut err = std::io::stderr();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    answer.trim().to_owned()
}
