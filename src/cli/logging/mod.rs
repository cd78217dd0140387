//! Log lines on stderr, filtered by `RUST_LOG` (default `info` for `serve`,
//! `warn` for every other command): text, coloured only when stderr is a
//! terminal, or one JSON object a line (`--log-format json`). The server
//! writes through a background thread that gathers lines into a few writes a
//! second ([`batch`]), so a request never waits on (or wakes) a log write.
//!
//! The process's own lines (`serve`'s start-up, first-start key, warning and
//! shutdown lines, the error a command ends with, a panic) take the same
//! form: with `--log-format json` every line on stderr is one JSON object
//! ([`notice`], [`json_line`]).

mod batch;

use super::output::{shown, stderr_line, stderr_record};
use crate::config::LogFormat;
use std::io::{IsTerminal, Write as _};
use std::sync::atomic::{AtomicBool, Ordering};
use tracing_subscriber::EnvFilter;

/// Keeps the background writer running; dropping it writes what is left.
#[must_use = "logs written in the background are lost once this is dropped"]
pub(crate) struct LogGuard {
    _worker: Option<batch::Flusher>,
    /// The background writer, when its lines are plain (JSON, or text
    /// without colour): the access log writes its lines straight to it.
    plain: Option<batch::Batched>,
}

impl LogGuard {
    /// Whole lines given to this go to the log in its order, when the log
    /// is written in the background without colour.
    pub(crate) fn plain_writer(&self) -> Option<impl Fn(&[u8]) + Send + Sync + 'static> {
        let w = self.plain.clone()?;
        Some(move |line: &[u8]| w.add(line))
    }
}

/// Installs the process's subscriber (a second call changes nothing).
/// `background`: write from a thread of its own (the server).
pub(crate) fn init(format: LogFormat, default_level: &str, background: bool) -> LogGuard {
    use_format(format);
    // s3s logs every refused S3 request at `error` (a stranger could fill
    // the log with them): the door's access lines and its own errors say
    // what matters, so s3s is heard only when RUST_LOG asks for it.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("{default_level},s3s=off")));
    let (writer, guard) = if background {
        let (w, g) = batch::start(Box::new(std::io::stderr()));
        flush_before_panics();
        (
            tracing_subscriber::fmt::writer::BoxMakeWriter::new(w.clone()),
            Some((g, w)),
        )
    } else {
        (
            tracing_subscriber::fmt::writer::BoxMakeWriter::new(std::io::stderr),
            None,
        )
    };
    let ansi = matches!(format, LogFormat::Text) && std::io::stderr().is_terminal();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(ansi).try_init(),
        LogFormat::Json => {
            json_panics();
            builder
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_span_list(false)
                .try_init()
        }
    };
    let (worker, plain) = match guard {
        Some((g, w)) => (Some(g), (!ansi).then_some(w)),
        None => (None, None),
    };
    LogGuard {
        _worker: worker,
        plain,
    }
}

/// Whether the process's own lines (`serve`'s start-up, key, warning and
/// shutdown lines, its error line, a panic) are JSON objects: set by
/// [`use_format`] as soon as `serve` knows its log format.
static JSON: AtomicBool = AtomicBool::new(false);

/// Writes the process's own lines in `format` from now on.
pub(crate) fn use_format(format: LogFormat) {
    JSON.store(matches!(format, LogFormat::Json), Ordering::Relaxed);
}

/// Whether the process's own lines are JSON objects.
pub(crate) fn is_json() -> bool {
    JSON.load(Ordering::Relaxed)
}

/// The level of one of the process's own lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Info,
    Warn,
    Error,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        }
    }
}

/// One line of the server's own on stderr, shown whatever `RUST_LOG` says
/// (start-up, the first start's key, warnings, shutdown): `text` as it is,
/// or with `--log-format json` one object in the form of the log's own
/// lines: `timestamp`, `level`, `message` (`text` without its `filestore: `
/// or `warning: ` prefix), `fields`, and `target` `filestore::serve`.
/// Written at once, after the log lines gathered before it, not through the
/// background writer: it must not wait for (or be lost with) the next batch.
pub(crate) fn notice(level: Level, text: &str, fields: &[(&str, serde_json::Value)]) {
    // After every log line before it.
    batch::flush();
    if is_json() {
        stderr_record(&json_line(level, "filestore::serve", text, fields));
    } else {
        stderr_line(text);
    }
}

/// The error line a failed command ends with, on stderr; never panics when
/// stderr is gone (the command's status still says it failed).
/// With `serve --log-format json`, it is one `ERROR` object of the log
/// (its `code` and `message`) like every other line there.
pub(crate) fn error_line(code: &str, message: &str) {
    let line = if is_json() {
        json_line(Level::Error, "filestore", message, &[("code", code.into())])
    } else {
        format!("error: {}: {}", shown(code), shown(message))
    };
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// `text` and `fields` as one JSON log line (no newline).
pub(crate) fn json_line(
    level: Level,
    target: &str,
    text: &str,
    fields: &[(&str, serde_json::Value)],
) -> String {
    use tracing_subscriber::fmt::time::FormatTime as _;
    let mut timestamp = String::new();
    // The log's own clock and form (RFC 3339, UTC); writing to a String
    // cannot fail.
    let _ = tracing_subscriber::fmt::time::SystemTime.format_time(
        &mut tracing_subscriber::fmt::format::Writer::new(&mut timestamp),
    );
    let message = text.strip_prefix("filestore: ").unwrap_or(text);
    let message = message.strip_prefix("warning: ").unwrap_or(message);
    let mut line = serde_json::Map::new();
    line.insert("timestamp".into(), timestamp.into());
    line.insert("level".into(), level.as_str().into());
    line.insert("message".into(), message.into());
    for (name, value) in fields {
        line.insert((*name).to_string(), value.clone());
    }
    line.insert("target".into(), target.into());
    serde_json::Value::Object(line).to_string()
}

/// A panic's message comes after the log lines gathered before it (and
/// they are not lost if the panic ends the process): the hook set so far
/// (the standard one, or [`json_panics`]'s, set later, which flushes too)
/// runs after a flush that never waits for a lock.
fn flush_before_panics() {
    let before = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        batch::try_flush();
        before(info);
    }));
}

/// With JSON logs, a panic is one `ERROR` object too (message and
/// location), not the standard hook's text.
fn json_panics() {
    std::panic::set_hook(Box::new(|info| {
        batch::try_flush();
        let message = info.payload_as_str().unwrap_or("panic");
        let mut fields = vec![(
            "thread",
            serde_json::Value::from(std::thread::current().name().unwrap_or("unnamed")),
        )];
        if let Some(at) = info.location() {
            fields.push(("location", at.to_string().into()));
        }
        stderr_record(&json_line(
            Level::Error,
            "filestore::panic",
            &format!("panicked: {message}"),
            &fields,
        ));
    }));
}
