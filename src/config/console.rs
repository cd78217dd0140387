//! `[console]`: the web console at `{base_url}/console` (CONTRACT §19).

use serde::Deserialize;
use std::time::Duration;

/// `[console]` as the file has it.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ConsoleSection {
    /// Whether `serve` serves the console (default true).
    pub enabled: Option<bool>,
    /// How long a console session lasts without a request (default 12h).
    #[serde(default, deserialize_with = "super::plans::opt_duration")]
    pub session_idle: Option<Duration>,
}

/// The console's settings, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Console {
    pub enabled: bool,
    pub session_idle: Duration,
}

/// `console.session_idle`: a working day and its evening.
pub(crate) const DEFAULT_SESSION_IDLE: Duration = Duration::from_hours(12);

/// The least `console.session_idle` may be: a session is touched at most
/// once a minute, so a shorter idle time would end sessions in use.
const MIN_SESSION_IDLE: Duration = Duration::from_mins(2);

impl ConsoleSection {
    pub(crate) fn resolve(&self) -> Result<Console, String> {
        let session_idle = self.session_idle.unwrap_or(DEFAULT_SESSION_IDLE);
        if session_idle < MIN_SESSION_IDLE {
            return Err(format!(
                "console.session_idle must be at least {}",
                humantime::format_duration(MIN_SESSION_IDLE)
            ));
        }
        Ok(Console {
            enabled: self.enabled.unwrap_or(true),
            session_idle,
        })
    }
}
