//! The printer: results on stdout, either human text or JSON (one compact
//! record a line). Each line is written and flushed at once, so a pipeline
//! (`| jq`) sees records as they come; a closed stdout is reported as
//! [`ClientError::BrokenPipe`], which the command line treats as success.
//! Messages for the person (notes, progress lines, `serve`'s banner) go to
//! stderr through [`stderr_line`]. Human text is [`shown`] first: a name
//! or message from a hostile server cannot move the cursor, recolour the
//! terminal or reverse what follows it.

use crate::client::ClientError;
use std::borrow::Cow;
use std::io::Write;

/// Whether `c` would act on a terminal rather than show: a control
/// character (C0, DEL, C1) other than tab, or a bidirectional formatting
/// character (the embeddings, overrides and isolates, and the marks).
fn acts(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` as a terminal should get it: each character that [`acts`]
/// written as `\u{…}`, the rest as it is.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    if !text.contains(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

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
    #[allow(clippy::unused_self)] // Output goes through the printer, whatever its mode.
    pub(crate) fn record(self, value: &serde_json::Value) -> Result<(), ClientError> {
        let text = serde_json::to_string(value)
            .map_err(|e| ClientError::Protocol(format!("cannot encode record: {e}")))?;
        write_line(&text)
    }

    /// Bytes as they are (a completion script, a man page).
    #[allow(clippy::unused_self)] // Output goes through the printer, whatever its mode.
    pub(crate) fn raw(self, bytes: &[u8]) -> Result<(), ClientError> {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)
            .and_then(|()| out.flush())
            .map_err(|e| ClientError::io("writing to standard output", e))
    }

    /// One line of human text, [`shown`].
    #[allow(clippy::unused_self)] // Output goes through the printer, whatever its mode.
    pub(crate) fn line(self, text: &str) -> Result<(), ClientError> {
        write_line(&shown(text))
    }
}

/// `text` and a newline on stdout, flushed.
fn write_line(text: &str) -> Result<(), ClientError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")
        .and_then(|()| out.flush())
        .map_err(|e| ClientError::io("writing to standard output", e))
}

/// One line on stderr: a message for the person (a note, a progress line,
/// `serve`'s banner), not a result. Like `eprintln!`, which it is, it panics
/// if stderr cannot be written (the error line in `entry` never does).
#[allow(clippy::print_stderr)] // This module is where output is written.
pub(crate) fn stderr_line(text: &str) {
    eprintln!("{}", shown(text));
}

/// One JSON line on stderr as it is (JSON has escaped what needs it; a
/// [`shown`] escape would break it). Panics as [`stderr_line`] does.
#[allow(clippy::print_stderr)] // This module is where output is written.
pub(crate) fn stderr_record(json: &str) {
    eprintln!("{json}");
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

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn what_would_act_on_a_terminal_is_written_out() {
        assert_eq!(
            shown("plain \u{e9}t\u{e9}\tname.txt"),
            "plain \u{e9}t\u{e9}\tname.txt"
        );
        assert_eq!(shown("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(shown("x\ry\n"), "x\\u{d}y\\u{a}");
        assert_eq!(shown("\u{7f}\u{9b}"), "\\u{7f}\\u{9b}");
        assert_eq!(shown("invoice\u{202e}fdp.exe"), "invoice\\u{202e}fdp.exe");
        assert_eq!(shown("\u{2066}\u{200f}"), "\\u{2066}\\u{200f}");
    }
}
