//! The access log's line: `info` on the target `filestore::access`, one a
//! request, with method, route, status, bytes in and out, duration,
//! account, client address and request id (`server::request_id`). Where `serve` writes its log plainly (JSON, or text without
//! colour) the line is made here, as the log's formatter would make it, and
//! handed straight to the log's writer ([`write_directly`]): at a hundred
//! thousand cached downloads a second, going through the formatter (field
//! visitors, styles, a clock formatted per line) cost a quarter of each
//! download; this costs a tenth of that. `RUST_LOG` decides as before
//! whether the line is written. Anywhere else (a terminal's colours, a
//! process without `serve`'s writer) it is a `tracing` event.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::net::IpAddr;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One request, as its access line tells it.
pub(crate) struct Line<'a> {
    pub(crate) method: &'a str,
    pub(crate) route: &'a str,
    pub(crate) status: u16,
    pub(crate) bytes_in: u64,
    pub(crate) bytes_out: u64,
    /// Milliseconds, rounded to the microsecond.
    pub(crate) duration_ms: f64,
    pub(crate) account: &'a str,
    /// The connection's peer (None: a request from no connection).
    pub(crate) client: Option<IpAddr>,
    /// The request's id, as its `X-Request-Id` answer header gives it.
    pub(crate) request_id: &'a str,
    /// When the request was answered.
    pub(crate) at: SystemTime,
}

/// A client's address as the line writes it: empty when unknown.
struct Client(Option<IpAddr>);

impl std::fmt::Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(ip) => ip.fmt(f),
            None => Ok(()),
        }
    }
}

/// What takes whole lines for the log.
type WriteLines = Box<dyn Fn(&[u8]) + Send + Sync>;

/// The log's writer, and the form its lines take.
struct Direct {
    json: bool,
    write: WriteLines,
}

static DIRECT: OnceLock<Direct> = OnceLock::new();

/// From now on, access lines are made here and given to `write` (whole
/// lines, newline included): JSON objects if `json`, else plain text.
pub(crate) fn write_directly(json: bool, write: impl Fn(&[u8]) + Send + Sync + 'static) {
    let _ = DIRECT.set(Direct {
        json,
        write: Box::new(write),
    });
}

/// Writes `line`'s access line, if the log takes `info` on its target.
pub(crate) fn record(line: &Line<'_>) {
    if !tracing::enabled!(target: "filestore::access", tracing::Level::INFO) {
        return;
    }
    let Some(direct) = DIRECT.get() else {
        event(line);
        return;
    };
    thread_local! {
        static BUF: RefCell<String> = const { RefCell::new(String::new()) };
    }
    BUF.with_borrow_mut(|buf| {
        buf.clear();
        format_line(buf, line, line.at, direct.json);
        (direct.write)(buf.as_bytes());
    });
}

/// `line` as a `tracing` event, for the log's formatter to write.
fn event(line: &Line<'_>) {
    tracing::info!(
        target: "filestore::access",
        method = %line.method,
        route = %line.route,
        status = line.status,
        bytes_in = line.bytes_in,
        bytes_out = line.bytes_out,
        duration_ms = line.duration_ms,
        account = %line.account,
        client = %Client(line.client),
        request_id = %line.request_id,
    );
}

/// `line` as the log's formatter writes it at `now`: text
/// (`<time>  INFO filestore::access: method=GET …`) or one JSON object
/// with its fields flattened (`--log-format json`).
fn format_line(buf: &mut String, line: &Line<'_>, now: SystemTime, json: bool) {
    // Writing to a String cannot fail.
    if json {
        buf.push_str("{\"timestamp\":\"");
        timestamp(buf, now);
        buf.push_str("\",\"level\":\"INFO\",\"method\":");
        json_str(buf, line.method);
        buf.push_str(",\"route\":");
        json_str(buf, line.route);
        let _ = write!(
            buf,
            ",\"status\":{},\"bytes_in\":{},\"bytes_out\":{},\"duration_ms\":",
            line.status, line.bytes_in, line.bytes_out
        );
        buf.push_str(&serde_json::to_string(&line.duration_ms).unwrap_or_else(|_| "null".into()));
        buf.push_str(",\"account\":");
        json_str(buf, line.account);
        // An address or an id needs no escaping (`request_id` lets
        // nothing else through).
        let _ = write!(
            buf,
            ",\"client\":\"{}\",\"request_id\":",
            Client(line.client)
        );
        json_str(buf, line.request_id);
        buf.push_str(",\"target\":\"filestore::access\"}\n");
    } else {
        timestamp(buf, now);
        let _ = writeln!(
            buf,
            "  INFO filestore::access: method={} route={} status={} bytes_in={} bytes_out={} \
             duration_ms={:?} account={} client={} request_id={}",
            line.method,
            line.route,
            line.status,
            line.bytes_in,
            line.bytes_out,
            line.duration_ms,
            line.account,
            Client(line.client),
            line.request_id
        );
    }
}

/// `s` as a JSON string.
fn json_str(buf: &mut String, s: &str) {
    buf.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()));
}

/// `now` as the log's clock writes it (RFC 3339, UTC, microseconds):
/// `2026-11-27T03:24:00.369335Z`. The date and time up to the second are
/// made once a second (per thread).
fn timestamp(buf: &mut String, now: SystemTime) {
    thread_local! {
        static SECOND: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
    }
    let since = now.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    SECOND.with_borrow_mut(|(secs, text)| {
        if *secs != since.as_secs() {
            *secs = since.as_secs();
            let at = chrono::DateTime::<chrono::Utc>::from(UNIX_EPOCH + Duration::from_secs(*secs));
            *text = at.format("%Y-%m-%dT%H:%M:%S").to_string();
        }
        buf.push_str(text);
    });
    let _ = write!(buf, ".{:06}Z", since.subsec_micros());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// What the log's own formatter writes for the event `record` would
    /// send it, at a known time (`json`: its JSON form).
    fn formatter_line(line: &Line<'_>, at: SystemTime, json: bool) -> String {
        #[derive(Clone, Default)]
        struct Sink(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Sink {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Sink {
            type Writer = Sink;
            fn make_writer(&'a self) -> Sink {
                self.clone()
            }
        }
        /// A clock stopped at `at`.
        struct Stopped(SystemTime);
        impl tracing_subscriber::fmt::time::FormatTime for Stopped {
            fn format_time(
                &self,
                w: &mut tracing_subscriber::fmt::format::Writer<'_>,
            ) -> std::fmt::Result {
                let mut s = String::new();
                timestamp(&mut s, self.0);
                // Checked against the formatter's own clock below.
                w.write_str(&s)
            }
        }
        let sink = Sink::default();
        let builder = tracing_subscriber::fmt()
            .with_writer(sink.clone())
            .with_ansi(false)
            .with_timer(Stopped(at));
        // The very event `record` gives the formatter when it writes none itself.
        let emit = || event(line);
        if json {
            let s = builder
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_span_list(false)
                .finish();
            tracing::subscriber::with_default(s, emit);
        } else {
            tracing::subscriber::with_default(builder.finish(), emit);
        }
        let bytes = sink.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    fn lines() -> Vec<Line<'static>> {
        vec![
            Line {
                method: "GET",
                route: "/live/{account}/{file}/{name}",
                status: 200,
                bytes_in: 0,
                bytes_out: 4096,
                duration_ms: 0.003,
                account: "acc_c1749a1fd4d59507497df11c",
                client: Some(IpAddr::from([203, 0, 113, 7])),
                request_id: "3f2a9c0d1e5b47a8b6c4d2e0f1a3b5c7",
                at: UNIX_EPOCH,
            },
            Line {
                method: "FOO",
                route: "unmatched",
                status: 405,
                bytes_in: 12_345_678_901,
                bytes_out: 84,
                duration_ms: 2000.0,
                account: "",
                client: None,
                request_id: "",
                at: UNIX_EPOCH,
            },
            Line {
                method: "PUT",
                route: "/v1/\"odd\"\\route\u{1}",
                status: 500,
                bytes_in: 1,
                bytes_out: 0,
                duration_ms: 0.0,
                account: "ä",
                client: Some("2001:db8::1".parse().unwrap()),
                request_id: "proxy-42:a/b+c=",
                at: UNIX_EPOCH,
            },
        ]
    }

    #[test]
    fn lines_are_the_formatters_own_text_and_json() {
        let at = UNIX_EPOCH + Duration::from_micros(1_795_750_000_123_456);
        for line in lines() {
            for json in [false, true] {
                let mut ours = String::new();
                format_line(&mut ours, &line, at, json);
                let theirs = formatter_line(&line, at, json);
                if json {
                    // The same object, key for key and in the same order.
                    let a: serde_json::Value = serde_json::from_str(&ours).unwrap();
                    let b: serde_json::Value = serde_json::from_str(&theirs).unwrap();
                    assert_eq!(a, b);
                }
                assert_eq!(ours, theirs, "json: {json}");
            }
        }
    }

    #[test]
    fn the_timestamp_is_the_log_clocks_form() {
        use tracing_subscriber::fmt::time::FormatTime as _;
        // The formatter's clock and ours, read around the same instant,
        // agree to the second and in form.
        let mut theirs = String::new();
        tracing_subscriber::fmt::time::SystemTime
            .format_time(&mut tracing_subscriber::fmt::format::Writer::new(
                &mut theirs,
            ))
            .unwrap();
        let mut ours = String::new();
        timestamp(&mut ours, SystemTime::now());
        assert_eq!(ours.len(), theirs.len(), "{ours} vs {theirs}");
        assert_eq!(ours.len(), "2026-11-27T03:24:00.369335Z".len());
        assert!(ours.ends_with('Z'));
        let at = UNIX_EPOCH + Duration::from_micros(1_795_750_000_123_456);
        let rfc3339 = |t: SystemTime| {
            chrono::DateTime::<chrono::Utc>::from(t)
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
        };
        // Twice in the same second (the kept part reused), then the next.
        for t in [
            at,
            at + Duration::from_micros(7),
            at + Duration::from_millis(900),
        ] {
            let mut fixed = String::new();
            timestamp(&mut fixed, t);
            assert_eq!(fixed, rfc3339(t));
        }
    }
}
