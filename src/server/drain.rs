//! Refused uploads are read to the end (within bounds) after the answer.
//!
//! When an upload is refused early (413 from `Content-Length`, or mid-stream),
//! the handler answers without reading the rest of the body. Closing a socket
//! with unread data makes the kernel send a reset, and a client still sending
//! would then see "connection reset" instead of the 413. So the upload body is
//! wrapped: if it is dropped unfinished, a task keeps reading and discarding it
//! (at most [`DRAIN_MAX_BYTES`] for at most [`DRAIN_MAX_TIME`]) while the
//! answer goes out.

use axum::body::{Body, BodyDataStream, Bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use futures_util::{Stream, StreamExt};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

pub(crate) const DRAIN_MAX_BYTES: u64 = 1 << 30;
pub(crate) const DRAIN_MAX_TIME: Duration = Duration::from_mins(1);

pub(crate) async fn drain_refused_bodies(req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let body = Body::from_stream(DrainOnDrop {
        inner: Some(body.into_data_stream()),
        finished: false,
    });
    next.run(Request::from_parts(parts, body)).await
}

struct DrainOnDrop {
    inner: Option<BodyDataStream>,
    finished: bool,
}

impl Stream for DrainOnDrop {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = inner.poll_next_unpin(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            self.finished = true;
        }
        polled
    }
}

impl Drop for DrainOnDrop {
    fn drop(&mut self) {
        let Some(mut rest) = self.inner.take().filter(|_| !self.finished) else {
            return;
        };
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let drain = async {
                    let mut read = 0u64;
                    while let Some(Ok(chunk)) = rest.next().await {
                        read += chunk.len() as u64;
                        if read > DRAIN_MAX_BYTES {
                            break;
                        }
                    }
                };
                let _ = tokio::time::timeout(DRAIN_MAX_TIME, drain).await;
            });
        }
    }
}
