//! Connections: the accept loop and the limits of docs/decisions.md, "Serving limits" that live below
//! the router.
//!
//! - At most `max_connections` at once. When all are taken, the oldest
//!   connection that serves no request (idle, or still sending its head) is
//!   closed to make room; failing that, the one whose response has made no
//!   progress for longest, once that is over [`STALLED_AFTER`] (a client
//!   that stopped reading a download serves no one either). Only while every
//!   connection is serving a request that moves do new ones wait in the
//!   kernel's accept queue (never refused), and the loop looks again for a
//!   stalled one every [`SHED_RETRY`]. The open-file
//!   limit is raised to its hard limit at start, and `max_connections` kept
//!   under it, so `accept` never fails with "too many open files".
//! - Each connection is in one of three phases, which decide its deadline:
//!   *idle* (between requests: closed after `idle_timeout` without a byte),
//!   *head* (a request has begun: closed if its headers are not all in within
//!   `header_timeout`), *busy* (a request is being served: its body has
//!   `body_timeout` between bytes and must average `min_upload_rate` over
//!   any `min_upload_window` (30 s) once that long has passed, see
//!   [`TimedBody`]; a response the client stops reading is dropped after
//!   `idle_timeout` without progress).
//! - Shutdown: stop accepting, let every connection finish its request in
//!   flight (idle ones close at once), and give up after `shutdown_timeout`.

use crate::config::Limits;
use axum::body::Body;
use axum::extract::Request;
use axum::Router;
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError};
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

/// A response write that has made no progress for this long makes its
/// connection one that can be closed to make room for a new one.
pub(crate) const STALLED_AFTER: Duration = Duration::from_secs(2);

/// How often the accept loop, full and with nothing to close, looks again
/// for a connection that has since stalled.
const SHED_RETRY: Duration = Duration::from_millis(250);

/// What the service tells the connection's I/O: whether a request is in
/// flight, and how many responses have finished; and what the I/O tells the
/// accept loop: since when its writes have made no progress.
#[derive(Debug, Default)]
struct Phase {
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

fn millis_since_epoch(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(epoch()).as_millis()).unwrap_or(u64::MAX)
}

impl Phase {
    fn start(&self) {
        self.busy.store(true, Ordering::Release);
    }
    fn finish(&self) {
        self.done.fetch_add(1, Ordering::AcqRel);
        self.busy.store(false, Ordering::Release);
    }
    fn busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }
    fn done(&self) -> u64 {
        self.done.load(Ordering::Acquire)
    }
    fn stall_began(&self, at: Instant) {
        self.stalled_since
            .store(millis_since_epoch(at).saturating_add(1), Ordering::Release);
    }
    fn stall_ended(&self) {
        self.stalled_since.store(0, Ordering::Release);
    }
    /// When the current stall began (as in [`Phase::stalled_since`]), if
    /// the connection is serving a request whose writes make no progress.
    fn stalled(&self) -> Option<u64> {
        match self.stalled_since.load(Ordering::Acquire) {
            0 => None,
            since if self.busy() => Some(since),
            _ => None,
        }
    }
}

/// Serves `router` on `listener` until `shutdown` completes; then finishes the
/// requests in flight, for at most `shutdown_timeout`.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    let open = Registry::default();
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    // The head's deadline is kept by `TimedIo`, which knows the phase.
    http.timer(TokioTimer::new()).header_read_timeout(None);
    tokio::pin!(shutdown);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of file descriptors or memory: wait, don't spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let permit = if let Ok(p) = slots.clone().try_acquire_owned() {
            p
        } else {
            // Full, and a client is waiting: make room by closing the
            // oldest connection that serves no request (idle, or still
            // sending its head), as nginx reuses keep-alive connections,
            // or else the longest-stalled download. Idle, slow and
            // non-reading clients can then never keep a new client (a
            // health check) out for long; only while every connection
            // is serving a request that moves does this one wait (and
            // the next ones in the accept queue).
            let mut shed = open.shed_one(Instant::now());
            let waited = loop {
                let retry = async {
                    if shed {
                        // A connection is closing: its slot comes.
                        std::future::pending::<()>().await;
                    }
                    tokio::time::sleep(SHED_RETRY).await;
                };
                tokio::select! {
                    p = slots.clone().acquire_owned() => {
                        break Some(p.expect("the semaphore is never closed"));
                    }
                    () = retry => shed = open.shed_one(Instant::now()),
                    () = &mut shutdown => break None,
                }
            };
            match waited {
                Some(p) => p,
                None => break,
            }
        };
        // No Nagle: a response's head and body leave at once, not after the
        // peer's delayed ACK (40 ms per small download on a keep-alive connection).
        let _ = tcp.set_nodelay(true);
        let phase = Arc::new(Phase::default());
        let phase_of_conn = phase.clone();
        let io = TokioIo::new(TimedIo::new(tcp, phase.clone(), limits));
        let (started, done) = (phase.clone(), phase);
        let service = router
            .clone()
            .map_request(move |req: Request<hyper::body::Incoming>| {
                started.start();
                req.map(|b| Body::new(TimedBody::new(b, &limits)))
            })
            .map_response(move |res: axum::response::Response| {
                let guard = PhaseGuard(done.clone());
                res.map(|inner| {
                    Body::new(Guarded {
                        inner,
                        _guard: guard,
                    })
                })
            });
        let conn = http.serve_connection(io, TowerToHyperService::new(service));
        let conn = graceful.watch(conn);
        let (id, shed) = open.add(phase_of_conn);
        let open = open.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = conn => {}
                () = shed.notified() => {}
            }
            open.remove(id);
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.shutdown_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            after = ?limits.shutdown_timeout,
            "requests still in flight at the shutdown timeout; closing them"
        );
    }
}

/// The open connections, in the order they were accepted, with their phase
/// and a way to close them.
#[derive(Clone, Default)]
struct Registry(Arc<std::sync::Mutex<Open>>);

#[derive(Default)]
struct Open {
    next: u64,
    conns: std::collections::BTreeMap<u64, (Arc<Phase>, Arc<tokio::sync::Notify>)>,
}

impl Registry {
    fn add(&self, phase: Arc<Phase>) -> (u64, Arc<tokio::sync::Notify>) {
        let mut o = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let id = o.next;
        o.next += 1;
        let shed = Arc::new(tokio::sync::Notify::new());
        o.conns.insert(id, (phase, shed.clone()));
        (id, shed)
    }

    fn remove(&self, id: u64) {
        let mut o = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        o.conns.remove(&id);
    }

    /// Closes the oldest connection with no request in flight, or else the
    /// one whose writes have made no progress for longest, if that is over
    /// [`STALLED_AFTER`] at `now`; whether one was closed.
    fn shed_one(&self, now: Instant) -> bool {
        let mut o = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let idle = o.conns.iter().find(|(_, (phase, _))| !phase.busy());
        let victim = idle.or_else(|| {
            let stall = u64::try_from(STALLED_AFTER.as_millis()).unwrap_or(u64::MAX);
            let limit = millis_since_epoch(now).saturating_sub(stall) + 1;
            o.conns
                .iter()
                .filter_map(|c| c.1 .0.stalled().filter(|s| *s <= limit).map(|s| (s, c)))
                .min_by_key(|(since, _)| *since)
                .map(|(_, c)| c)
        });
        let Some((id, shed)) = victim.map(|(id, (_, shed))| (*id, shed.clone())) else {
            return false;
        };
        o.conns.remove(&id);
        shed.notify_one();
        true
    }
}

/// Raises the soft open-file limit to the hard one and returns how many
/// connections fit under it (64 descriptors kept for files and the database).
pub(crate) fn connection_room() -> Option<usize> {
    #[cfg(unix)]
    {
        use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
        let mut lim = getrlimit(Resource::Nofile);
        if lim.current < lim.maximum {
            let raised = Rlimit {
                current: lim.maximum,
                maximum: lim.maximum,
            };
            if setrlimit(Resource::Nofile, raised).is_ok() {
                lim = getrlimit(Resource::Nofile);
            }
        }
        lim.current
            .map(|n| usize::try_from(n.saturating_sub(64)).unwrap_or(usize::MAX))
    }
    #[cfg(not(unix))]
    None
}

/// A connection's socket, with the deadline of its phase.
struct TimedIo {
    tcp: TcpStream,
    phase: Arc<Phase>,
    limits: Limits,
    /// Bytes of a request have arrived since the connection was last idle.
    in_head: bool,
    /// Responses finished, as last seen.
    seen_done: u64,
    deadline: Instant,
    timer: Pin<Box<Sleep>>,
    /// When the last write made progress (for a client that stops reading).
    write_deadline: Option<Pin<Box<Sleep>>>,
    /// hyper's own answer to a request it could not parse, rewritten with
    /// the envelope: the bytes, and how many are written.
    rewritten: Option<(Vec<u8>, usize)>,
}

impl TimedIo {
    fn new(tcp: TcpStream, phase: Arc<Phase>, limits: Limits) -> TimedIo {
        let deadline = Instant::now() + limits.idle_timeout;
        TimedIo {
            tcp,
            phase,
            limits,
            in_head: false,
            seen_done: 0,
            deadline,
            timer: Box::pin(tokio::time::sleep_until(deadline)),
            write_deadline: None,
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
        let body = serde_json::to_string(&super::error::error_body(
            super::error::code_for_status(status),
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
    /// clock: after `idle_timeout` without progress, the client is gone.
    /// The stall's start is shown to the accept loop, which may close the
    /// connection after [`STALLED_AFTER`] when it needs the room.
    fn stall_check(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        if polled.is_ready() {
            if self.write_deadline.take().is_some() {
                self.phase.stall_ended();
            }
            return polled;
        }
        let idle = self.limits.idle_timeout;
        let phase = &self.phase;
        let stall = self.write_deadline.get_or_insert_with(|| {
            let now = Instant::now();
            phase.stall_began(now);
            Box::pin(tokio::time::sleep_until(now + idle))
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
        if at != self.deadline {
            self.deadline = at;
            self.timer.as_mut().reset(at);
        }
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
        if polled.is_pending() && !busy && this.timer.as_mut().poll(cx).is_ready() {
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
    fn new(inner: hyper::body::Incoming, limits: &Limits) -> TimedBody {
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

/// The floor under a body's rate: the bytes of the last `window` (a
/// sliding window, in [`STEPS`] steps) must reach `rate` × `window`. Judged
/// at each step's end once a whole window has passed since the body began,
/// so no body is cut in its first `window`, and a pause shorter than the
/// window costs nothing when the rest makes up for it.
#[derive(Debug)]
pub(crate) struct RateFloor {
    rate: u64,
    window: Duration,
    start: Instant,
    /// Bytes per step, by step number modulo [`RING`] (the steps of the
    /// last window, and the one under way).
    steps: [u64; RING],
    /// The step under way (counted from `start`).
    step: u64,
}

/// Steps a window is cut into.
pub(crate) const STEPS: u32 = 10;

/// The steps kept: a window's, and the one under way.
const RING: usize = STEPS as usize + 1;

/// Where step number `step` is kept.
fn slot(step: u64) -> usize {
    usize::try_from(step % RING as u64).expect("less than RING")
}

impl RateFloor {
    pub(crate) fn new(rate: u64, window: Duration, now: Instant) -> RateFloor {
        RateFloor {
            rate,
            window: window.max(Duration::from_millis(STEPS.into())),
            start: now,
            steps: [0; RING],
            step: 0,
        }
    }

    fn step_len(&self) -> Duration {
        self.window / STEPS
    }

    /// Moves to the step `now` is in, emptying the ones it passes.
    fn advance(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.start);
        let target = u64::try_from(elapsed.as_nanos() / self.step_len().as_nanos().max(1))
            .unwrap_or(u64::MAX);
        let from = self.step.max(target.saturating_sub(RING as u64));
        for s in from + 1..=target {
            self.steps[slot(s)] = 0;
        }
        self.step = self.step.max(target);
    }

    /// `n` bytes arrived at `now`.
    pub(crate) fn add(&mut self, now: Instant, n: u64) {
        self.advance(now);
        let i = slot(self.step);
        self.steps[i] = self.steps[i].saturating_add(n);
    }

    /// Whether the last whole window (the `STEPS` steps before the one under
    /// way) brought less than the floor; never before a window has passed.
    pub(crate) fn too_slow(&mut self, now: Instant) -> bool {
        if self.rate == 0 || now < self.start + self.window {
            return false;
        }
        self.advance(now);
        let current = slot(self.step);
        let got: u64 = (0..RING)
            .filter(|i| *i != current)
            .map(|i| self.steps[i])
            .sum();
        u128::from(got) * 1000 < u128::from(self.rate) * self.window.as_millis()
    }

    /// When to judge next: the end of the step under way, and not before a
    /// whole window has passed. Far away when the floor is off.
    pub(crate) fn next_check(&self) -> Instant {
        if self.rate == 0 {
            return self.start + Duration::from_hours(365 * 24);
        }
        let step = u32::try_from(self.step + 1).unwrap_or(u32::MAX).max(STEPS);
        self.start + self.step_len() * step
    }
}

/// Marks the connection idle again when the response's body is done (or dropped).
struct PhaseGuard(Arc<Phase>);

/// A response body that holds its connection's [`PhaseGuard`].
struct Guarded {
    inner: Body,
    _guard: PhaseGuard,
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

#[cfg(test)]
mod tests {
    use super::*;

    const W: Duration = Duration::from_secs(30);

    fn at(start: Instant, secs: f64) -> Instant {
        start + Duration::from_secs_f64(secs)
    }

    #[test]
    fn no_body_is_judged_before_a_whole_window() {
        let t0 = Instant::now();
        let mut f = RateFloor::new(1024, W, t0);
        assert!(!f.too_slow(at(t0, 0.0)));
        assert!(!f.too_slow(at(t0, 29.9)), "nothing came, but it is early");
        assert_eq!(f.next_check(), at(t0, 30.0));
        assert!(f.too_slow(at(t0, 30.0)), "then nothing in 30 s is too slow");
    }

    #[test]
    fn the_average_over_the_window_decides() {
        let t0 = Instant::now();
        // 1 KiB/s needs 30 KiB in 30 s: 31 KiB in one burst passes...
        let mut f = RateFloor::new(1024, W, t0);
        f.add(at(t0, 1.0), 31 * 1024);
        assert!(!f.too_slow(at(t0, 30.0)));
        // ...and the window slides: once the burst is more than 30 s old,
        // nothing after it is too slow.
        assert!(!f.too_slow(at(t0, 30.5)));
        assert!(f.too_slow(at(t0, 33.0)));
        // 29 KiB, spread evenly, is not enough.
        let mut f = RateFloor::new(1024, W, t0);
        for s in 0..29 {
            f.add(at(t0, f64::from(s) + 0.5), 1024);
        }
        assert!(f.too_slow(at(t0, 30.0)));
        // A steady 2 KiB/s passes for as long as it goes on.
        let mut f = RateFloor::new(1024, W, t0);
        for s in 0..120 {
            f.add(at(t0, f64::from(s) + 0.5), 2048);
            assert!(!f.too_slow(at(t0, f64::from(s) + 0.9)), "at {s} s");
        }
    }

    #[test]
    fn a_pause_shorter_than_the_window_is_made_up_by_the_rest() {
        let t0 = Instant::now();
        let mut f = RateFloor::new(1024, W, t0);
        // 20 s of 4 KiB/s, then 19 s of silence: the last 30 s hold about
        // 10 s of it (over 40 KiB), enough.
        for s in 0..20 {
            f.add(at(t0, f64::from(s) + 0.5), 4096);
        }
        assert!(!f.too_slow(at(t0, 39.0)));
        // But 30 s of silence is not.
        assert!(f.too_slow(at(t0, 51.0)));
    }

    #[test]
    fn the_next_check_is_each_step_after_the_first_window_and_off_means_never() {
        let t0 = Instant::now();
        let mut f = RateFloor::new(1, W, t0);
        f.add(at(t0, 45.5), 100_000);
        assert_eq!(
            f.next_check(),
            at(t0, 48.0),
            "the end of the step under way"
        );
        let mut off = RateFloor::new(0, W, t0);
        assert!(!off.too_slow(at(t0, 1000.0)));
        assert!(off.next_check() > at(t0, 86_400.0));
    }
}
