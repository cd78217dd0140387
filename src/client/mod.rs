//! The HTTP client of the command line: settings and profiles, retries,
//! error decoding, streaming upload and download.

pub(crate) mod answer;
mod calls;
pub(crate) use calls::Cursors;
pub(crate) mod config;
pub(crate) mod download;
pub(crate) mod error;
pub(crate) mod http;
pub(crate) mod profiles;
pub(crate) mod retry;
pub(crate) mod tus;
pub(crate) mod upload;

pub(crate) use answer::Fetched;
pub(crate) use error::ClientError;
pub(crate) use http::Client;
pub(crate) use retry::{RetryNotice, RetryPolicy};

/// Counts the bytes of one transfer as they move (a progress bar, or nothing).
pub(crate) trait Meter: Send + Sync {
    /// `n` more bytes moved.
    fn add(&self, n: u64);
    /// `n` bytes were already there before this run (a resumed transfer):
    /// counted in the position, not in the rate.
    fn resumed(&self, n: u64) {
        self.add(n);
    }
    /// The transfer starts over from byte 0 (a retry).
    fn reset(&self);
}

/// A meter that counts nothing (tests).
#[cfg(test)]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct NoMeter;

#[cfg(test)]
impl Meter for NoMeter {
    fn add(&self, _n: u64) {}
    fn reset(&self) {}
}
