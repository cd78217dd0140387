//! The connection limits of docs/decisions.md, "Serving limits", as configured (`server.*_timeout`,
//! `server.max_connections`, `server.min_upload_rate`); `server::conn`
//! enforces them.

use std::time::Duration;

/// The connection limits (docs/decisions.md, "Serving limits").
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub idle_timeout: Duration,
    pub shutdown_timeout: Duration,
    pub max_connections: usize,
    /// Bytes per second a request body (an upload's) must average over
    /// `min_upload_window`; 0 turns the floor off.
    pub min_upload_rate: u64,
    /// The window `min_upload_rate` is averaged over: [`MIN_UPLOAD_WINDOW`]
    /// (not a config key; tests shorten it).
    pub min_upload_window: Duration,
}

/// The window a body's rate is averaged over: long enough that a slow
/// mobile link with pauses passes, short enough that a trickle is cut soon.
pub(crate) const MIN_UPLOAD_WINDOW: Duration = Duration::from_secs(30);
