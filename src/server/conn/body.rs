//! Request bodies with a deadline between bytes and a floor under their
//! rate (see [`RateFloor`]).

use super::rate::RateFloor;
use crate::config::Limits;
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// A request body that fails when `body_timeout` passes without a byte, or
/// when it arrives slower than `min_upload_rate` (see [`RateFloor`]): a
/// stalled or trickling upload ends (and its spool is removed) instead of
/// holding its disk space and its connection for as long as the client likes.
pub(crate) struct TimedBody {
    inner: hyper::body::Incoming,
    timeout: Duration,
    /// When the body stalls: `timeout` after the last frame.
    stall_at: Instant,
    /// Started at the first poll (time before the handler reads the body is
    /// not the client's).
    floor: Option<RateFloor>,
    rate: u64,
    window: Duration,
    /// Wakes at `stall_at` or at the floor's next judgement, the earlier.
    timer: Pin<Box<Sleep>>,
}

/// The error a body that stalls or trickles ends with (a 408).
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyTimeout {
    #[error("no byte of the request body for {0:?}")]
    Stalled(Duration),
    #[error("the request body arrived slower than {rate} bytes/s over {window:?}")]
    TooSlow { rate: u64, window: Duration },
}

impl TimedBody {
    pub(super) fn new(inner: hyper::body::Incoming, limits: &Limits) -> TimedBody {
        let stall_at = Instant::now() + limits.body_timeout;
        TimedBody {
            inner,
            timeout: limits.body_timeout,
            stall_at,
            floor: None,
            rate: limits.min_upload_rate,
            window: limits.min_upload_window,
            timer: Box::pin(tokio::time::sleep_until(stall_at)),
        }
    }

    /// The next time to look at the body when no frame comes.
    fn wake_at(&self) -> Instant {
        match &self.floor {
            Some(f) => self.stall_at.min(f.next_check()),
            None => self.stall_at,
        }
    }
}

impl HttpBody for TimedBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        let now = Instant::now();
        if this.floor.is_none() {
            this.floor = Some(RateFloor::new(this.rate, this.window, now));
            let at = this.wake_at();
            this.timer.as_mut().reset(at);
        }
        let floor = this.floor.as_mut().expect("set above");
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                if let Some(Ok(f)) = &frame {
                    floor.add(now, f.data_ref().map_or(0, Bytes::len) as u64);
                }
                this.stall_at = now + this.timeout;
                let at = this.wake_at();
                this.timer.as_mut().reset(at);
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => loop {
                ready!(this.timer.as_mut().poll(cx));
                let now = Instant::now();
                if now >= this.stall_at {
                    return Poll::Ready(Some(Err(Box::new(BodyTimeout::Stalled(this.timeout)))));
                }
                let floor = this.floor.as_mut().expect("set above");
                if floor.too_slow(now) {
                    let (rate, window) = (this.rate, this.window);
                    return Poll::Ready(Some(Err(Box::new(BodyTimeout::TooSlow { rate, window }))));
                }
                let at = this.wake_at();
                this.timer.as_mut().reset(at);
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
