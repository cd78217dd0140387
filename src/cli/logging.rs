//! Log lines on stderr, filtered by `RUST_LOG` (default `info` for `serve`,
//! `warn` for every other command): text, coloured only when stderr is a
//! terminal, or one JSON object a line (`--log-format json`). The server
//! writes through a background thread (`tracing-appender`), so a request
//! never waits on a log write: at tens of thousands of requests a second the
//! access log is one buffered stream, not one blocking write per line.

use crate::config::LogFormat;
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// Keeps the background writer running; dropping it flushes what is left.
#[must_use = "logs written in the background are lost once this is dropped"]
pub(crate) struct LogGuard {
    _worker: Option<tracing_appender::non_blocking::WorkerGuard>,
}

/// Installs the process's subscriber (a second call changes nothing).
/// `background`: write from a thread of its own (the server).
pub(crate) fn init(format: LogFormat, default_level: &str, background: bool) -> LogGuard {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let (writer, guard) = if background {
        // Not lossy: when the buffer is full a request waits for the writer
        // rather than losing its access-log line.
        let (w, g) = tracing_appender::non_blocking::NonBlockingBuilder::default()
            .lossy(false)
            .finish(std::io::stderr());
        (
            tracing_subscriber::fmt::writer::BoxMakeWriter::new(w),
            Some(g),
        )
    } else {
        (
            tracing_subscriber::fmt::writer::BoxMakeWriter::new(std::io::stderr),
            None,
        )
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .try_init(),
    };
    LogGuard { _worker: guard }
}
