//! A connection's socket with the deadline of its phase (idle, head, busy),
//! stalled-write detection, and the rewrite of hyper's own error answers.

use super::phase::Phase;
use crate::config::Limits;
use crate::service::download::Socket;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

/// A connection's socket, with the deadline of its phase.
pub(super) struct TimedIo {
    tcp: TcpStream,
    phase: Arc<Phase>,
    /// Told every byte a write puts into the socket (what a download
    /// waits on, and books).
    socket: Arc<Socket>,
    limits: Limits,
    /// Bytes of a request have arrived since the connection was last idle.
    in_head: bool,
    /// Responses finished, as last seen.
    seen_done: u64,
    /// When the phase's time is up.
    deadline: Instant,
    /// When `timer` fires: never after `deadline`, often before it. A
    /// deadline moved later (a response's end moves it to the idle one)
    /// leaves the timer as it is; once it fires early it is set to the
    /// deadline. So a keep-alive request moves the timer once (to its head's
    /// deadline, when that is the earlier), not twice.
    armed: Instant,
    timer: Pin<Box<Sleep>>,
    /// When the last write made progress (for a client that stops reading).
    write_deadline: Option<Pin<Box<Sleep>>>,
    /// Whether the send buffer was widened (the client reads).
    widened: bool,
    /// hyper's own answer to a request it could not parse, rewritten with
    /// the envelope: the bytes, and how many are written.
    rewritten: Option<(Vec<u8>, usize)>,
}

impl TimedIo {
    pub(super) fn new(
        tcp: TcpStream,
        phase: Arc<Phase>,
        socket: Arc<Socket>,
        limits: Limits,
    ) -> TimedIo {
        let deadline = Instant::now() + limits.idle_timeout;
        TimedIo {
            tcp,
            phase,
            socket,
            limits,
            in_head: false,
            seen_done: 0,
            deadline,
            armed: deadline,
            timer: Box::pin(tokio::time::sleep_until(deadline)),
            write_deadline: None,
            widened: false,
            rewritten: None,
        }
    }

    /// hyper answers a request it cannot parse (a bad `Content-Length`, a
    /// URI or headers over its limits) by itself, with an empty body, before
    /// any service runs. Such an answer is the only one written while no
    /// request is in flight and none has finished since the last read: it is
    /// replaced by the same status with the envelope, and the connection
    /// closes after it, as hyper would.
    fn rewrite_own_error(&mut self, buf: &[u8]) -> bool {
        if self.rewritten.is_some()
            || self.phase.busy()
            || self.phase.done() != self.seen_done
            || !buf.starts_with(b"HTTP/1.1 ")
        {
            return false;
        }
        let status = std::str::from_utf8(&buf[9..buf.len().min(12)])
            .ok()
            .and_then(|s| s.parse::<u16>().ok())
            .and_then(|s| axum::http::StatusCode::from_u16(s).ok());
        let Some(status) = status.filter(|s| s.is_client_error() || s.is_server_error()) else {
            return false;
        };
        let reason = status.canonical_reason().unwrap_or("error");
        let message = format!("the request could not be read: {}", reason.to_lowercase());
        let body = serde_json::to_string(&crate::server::error::error_body(
            crate::server::error::code_for_status(status),
            &message,
        ))
        .unwrap_or_default();
        let head = format!(
            "HTTP/1.1 {} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            status.as_u16(),
            body.len()
        );
        self.rewritten = Some(([head.into_bytes(), body.into_bytes()].concat(), 0));
        true
    }

    /// A write that made no progress starts (or goes on with) the stall
    /// clock: after `stall_timeout` without progress, the client is gone
    /// (and the connection closed); a write that did is counted in the
    /// socket's [`Socket::took`]. The stall's start is shown to the accept loop, which may close the
    /// connection after [`STALLED_AFTER`](super::evict::STALLED_AFTER) when it needs the room.
    fn stall_check(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        if polled.is_ready() {
            if self.write_deadline.take().is_some() {
                self.phase.stall_ended();
            }
            if let Poll::Ready(Ok(n)) = &polled {
                self.socket.took(*n);
                if !self.widened && self.socket.accepted() >= super::WIDEN_AFTER {
                    self.widened = true;
                    let wide = super::WIDE_SEND_BUFFER;
                    let _ = socket2::SockRef::from(&self.tcp).set_send_buffer_size(wide);
                }
            }
            return polled;
        }
        let timeout = self.limits.stall_timeout;
        let phase = &self.phase;
        let stall = self.write_deadline.get_or_insert_with(|| {
            let now = Instant::now();
            phase.stall_began(now);
            Box::pin(tokio::time::sleep_until(now + timeout))
        });
        ready!(stall.as_mut().poll(cx));
        Poll::Ready(Err(timed_out("the client stopped reading")))
    }

    /// Writes what is left of a rewritten answer.
    fn poll_rewritten(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, done)) = self.rewritten.as_mut() {
            if *done == bytes.len() {
                return Poll::Ready(Ok(()));
            }
            let n = ready!(Pin::new(&mut self.tcp).poll_write(cx, &bytes[*done..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *done += n;
        }
        Poll::Ready(Ok(()))
    }

    fn set_deadline(&mut self, at: Instant) {
        self.deadline = at;
        if at < self.armed {
            self.armed = at;
            self.timer.as_mut().reset(at);
        }
    }

    /// Whether the deadline has passed; if not, `cx` is woken when it may have.
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        while self.timer.as_mut().poll(cx).is_ready() {
            if self.armed >= self.deadline {
                return true;
            }
            // Fired early: the deadline moved since.
            self.armed = self.deadline;
            self.timer.as_mut().reset(self.deadline);
        }
        false
    }
}

fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, what.to_string())
}

impl AsyncRead for TimedIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let busy = this.phase.busy();
        let done = this.phase.done();
        if done != this.seen_done {
            // A response has finished: the connection is idle from now.
            this.seen_done = done;
            this.in_head = false;
            let at = Instant::now() + this.limits.idle_timeout;
            this.set_deadline(at);
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.tcp).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            if buf.filled().len() > before && !busy && !this.in_head {
                this.in_head = true;
                let at = Instant::now() + this.limits.header_timeout;
                this.set_deadline(at);
            }
            return polled;
        }
        if polled.is_pending() && !busy && this.expired(cx) {
            return Poll::Ready(Err(timed_out(if this.in_head {
                "request headers not received in time"
            } else {
                "idle connection"
            })));
        }
        polled
    }
}

impl AsyncWrite for TimedIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.rewritten.is_some() || this.rewrite_own_error(buf) {
            // hyper's bytes are taken (and dropped); ours go out instead.
            ready!(this.poll_rewritten(cx))?;
            return Poll::Ready(Ok(buf.len()));
        }
        let polled = Pin::new(&mut this.tcp).poll_write(cx, buf);
        this.stall_check(cx, polled)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_rewritten(cx))?;
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_rewritten(cx))?;
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let first = bufs
            .iter()
            .find(|b| !b.is_empty())
            .map_or(&[][..], |b| &b[..]);
        if this.rewritten.is_some() || this.rewrite_own_error(first) {
            ready!(this.poll_rewritten(cx))?;
            return Poll::Ready(Ok(bufs.iter().map(|b| b.len()).sum()));
        }
        let polled = Pin::new(&mut this.tcp).poll_write_vectored(cx, bufs);
        this.stall_check(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }
}
