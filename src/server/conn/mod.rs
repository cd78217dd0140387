//! Connections: the accept loop and the limits of docs/decisions.md, "Serving limits" that live below
//! the router.
//!
//! - At most `max_connections` at once. When all are taken, the oldest
//!   connection that serves no request (idle, or still sending its head) is
//!   closed to make room; failing that, the one whose response has made no
//!   progress for longest, once that is over [`STALLED_AFTER`](evict::STALLED_AFTER) (a client
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
//!   `stall_timeout` without progress).
//! - Each accepted socket's send buffer is capped ([`SEND_BUFFER`]; widened
//!   to [`WIDE_SEND_BUFFER`] once the client has read [`WIDEN_AFTER`]), and
//!   what it accepts is counted for the downloads on it (`service::download`):
//!   a client that reads nothing holds that buffer and one download window,
//!   not the kernel's autotuned megabytes and hyper's queue.
//! - Shutdown: stop accepting, let every connection finish its request in
//!   flight (idle ones close at once), and give up after `shutdown_timeout`.

mod body;
mod evict;
mod phase;
mod rate;
mod timed_io;

pub(crate) use body::BodyTimeout;

use super::hot::Front;
use super::request_id::{Tag, X_REQUEST_ID};
use crate::config::Limits;
use crate::service::download::Socket;
use axum::body::Body;
use axum::extract::Request;
use axum::Router;
use body::TimedBody;
use evict::Registry;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use phase::{Guarded, Phase, PhaseGuard};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use timed_io::TimedIo;
use tokio::net::TcpListener;
use tokio::time::Instant;
use tower::ServiceExt;

/// How often the accept loop, full and with nothing to close, looks again
/// for a connection that has since stalled.
const SHED_RETRY: Duration = Duration::from_millis(250);
/// `SO_SNDBUF` of an accepted socket (Linux doubles it for its own
/// bookkeeping): what a client that stops reading leaves in the kernel, and
/// what it is charged beyond what it read. Left alone the kernel grows a
/// socket's buffer up to `tcp_wmem`'s maximum (4 MiB by default).
pub(crate) const SEND_BUFFER: usize = 64 * 1024;
/// `SO_SNDBUF` once a connection's client has read [`WIDEN_AFTER`]: a
/// client that reads gets the kernel's room to keep the link busy while
/// the next window is read from the store (capped at [`SEND_BUFFER`],
/// 256 MiB downloads went 2.6 times slower on loopback).
pub(crate) const WIDE_SEND_BUFFER: usize = 512 * 1024;
/// Bytes a connection's socket must have accepted before its send buffer
/// is widened: a client that reads nothing never gets there.
pub(crate) const WIDEN_AFTER: u64 = 1 << 20;
/// Serves `router` on `listener` until `shutdown` completes; then finishes the
/// requests in flight, for at most `shutdown_timeout`. `front`, when given,
/// answers first the requests it can (the CDN's hot path, `server::hot`).
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    front: Option<Front>,
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
        let (tcp, client) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => (tcp, peer.ip()),
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
        let _ = socket2::SockRef::from(&tcp).set_send_buffer_size(SEND_BUFFER);
        let phase = Arc::new(Phase::default());
        let phase_of_conn = phase.clone();
        let socket = Arc::new(Socket::default());
        let io = TokioIo::new(TimedIo::new(tcp, phase.clone(), socket.clone(), limits));
        let (started, done) = (phase.clone(), phase);
        let (router, front) = (router.clone(), front.clone());
        let service = tower::service_fn(move |mut req: Request<hyper::body::Incoming>| {
            started.start();
            let socket = socket.clone();
            // Its client and id, for its access line and its answer.
            let tag = Tag::of(client, req.headers());
            let id = tag.id.clone();
            req.extensions_mut().insert(tag);
            let answered = front.as_ref().and_then(|f| f(&req));
            // The router (one for all connections: its count is shared by
            // every core) only for a request the front did not answer.
            let next = answered.ok_or_else(|| router.clone());
            let done = done.clone();
            async move {
                let mut response = match next {
                    Ok(answer) => answer,
                    Err(router) => {
                        let mut req = req.map(|b| Body::new(TimedBody::new(b, &limits)));
                        // What a download's body waits on and books.
                        req.extensions_mut().insert(socket);
                        router.oneshot(req).await?
                    }
                };
                response.headers_mut().insert(&X_REQUEST_ID, id);
                let guard = PhaseGuard(done);
                Ok::<_, std::convert::Infallible>(response.map(|inner| {
                    Body::new(Guarded {
                        inner,
                        _guard: guard,
                    })
                }))
            }
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
/// What an open connection costs in memory besides its download window
/// (hyper's state and read buffer, its task, `TimedIo`): about 25 KiB was
/// measured per connection whose client reads nothing.
const CONNECTION_COST: u64 = 32 * 1024;

/// How many connections fit in a quarter of `memory_budget` (the other
/// quarters: download windows, `service::download`, and the rest of the
/// process).
pub(crate) fn connections_within(memory_budget: u64) -> usize {
    usize::try_from(memory_budget / 4 / CONNECTION_COST)
        .unwrap_or(usize::MAX)
        .max(1)
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

#[cfg(test)]
mod tests {
    #[test]
    fn connections_fit_a_quarter_of_the_budget() {
        assert_eq!(super::connections_within(1 << 30), 8192);
        assert_eq!(super::connections_within(64 << 20), 512);
        assert_eq!(super::connections_within(0), 1);
    }
}
