//! A connection's phase (idle, or serving a request; stalled writes), shared
//! by its I/O, its service and the accept loop.

use axum::body::Body;
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::time::Instant;

/// What the service tells the connection's I/O: whether a request is in
/// flight, and how many responses have finished; and what the I/O tells the
/// accept loop: since when its writes have made no progress.
#[derive(Debug, Default)]
pub(super) struct Phase {
    busy: AtomicBool,
    done: AtomicU64,
    /// Milliseconds from [`epoch`] (plus one) to the first write of the
    /// current stall; 0 while writes go through.
    stalled_since: AtomicU64,
}

/// The time [`Phase::stalled_since`] counts from.
fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

pub(super) fn millis_since_epoch(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(epoch()).as_millis()).unwrap_or(u64::MAX)
}

impl Phase {
    pub(super) fn start(&self) {
        self.busy.store(true, Ordering::Release);
    }
    pub(super) fn finish(&self) {
        self.done.fetch_add(1, Ordering::AcqRel);
        self.busy.store(false, Ordering::Release);
    }
    pub(super) fn busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }
    pub(super) fn done(&self) -> u64 {
        self.done.load(Ordering::Acquire)
    }
    pub(super) fn stall_began(&self, at: Instant) {
        self.stalled_since
            .store(millis_since_epoch(at).saturating_add(1), Ordering::Release);
    }
    pub(super) fn stall_ended(&self) {
        self.stalled_since.store(0, Ordering::Release);
    }
    /// When the current stall began (as in [`Phase::stalled_since`]), if
    /// the connection is serving a request whose writes make no progress.
    pub(super) fn stalled(&self) -> Option<u64> {
        match self.stalled_since.load(Ordering::Acquire) {
            0 => None,
            since if self.busy() => Some(since),
            _ => None,
        }
    }
}
/// Marks the connection idle again when the response's body is done (or dropped).
pub(super) struct PhaseGuard(pub(super) Arc<Phase>);

/// A response body that holds its connection's [`PhaseGuard`].
pub(super) struct Guarded {
    pub(super) inner: Body,
    pub(super) _guard: PhaseGuard,
}

impl HttpBody for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for PhaseGuard {
    fn drop(&mut self) {
        self.0.finish();
    }
}
