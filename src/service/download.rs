//! Downloads under the memory budget (docs/decisions.md, "Downloads under the memory budget"), for any door that
//! streams a blob to a client (the CDN today; an S3 door would take the same
//! body):
//!
//! - A download holds one [`WINDOW`] of its bytes beyond its socket: its next
//!   chunk (read at most [`WINDOW`] at a time) is read only once the socket
//!   has accepted every byte handed before it. A client that reads nothing
//!   holds that much here, whatever the file's size, besides what its
//!   socket's send buffer (capped by `server::conn`) keeps.
//! - Those windows come from [`Buffers`], a quarter of `server.memory_budget`:
//!   a download that finds none free waits for one (holding its connection,
//!   not memory) for at most `server.stall_timeout`, by when a stalled one
//!   has been closed, and is answered 503 with `Retry-After` past it.
//! - A download whose client has read [`WIDEN_AFTER`] (it reads: it is no
//!   stalled stranger) may hold up to [`WIDE`] windows beyond its socket,
//!   taken from [`Buffers`] only while more than half of them are free, and
//!   reads [`WIDE_CHUNK`] at a time: its reads then overlap its socket's
//!   writes in few trips to the store (a window at a time, a 256 MiB
//!   download ran at half the speed of the unbounded body: 829 against
//!   1,693 MB/s).
//! - Its account is charged the bytes the socket accepted (plus at most
//!   the response's head), not those read from the store: a download cut
//!   short is charged what went out. The last of them are booked by the
//!   socket as it takes them (hyper drops a body once its last chunk is
//!   queued), or when the connection closes.

use super::error::ServiceError;
use super::App;
use bytes::Bytes;
use futures_util::task::AtomicWaker;
use futures_util::{Stream, StreamExt};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub(crate) use crate::storage::ChunkSize;

/// Bytes a download holds beyond its socket, and the most read from the
/// store at once for it.
pub(crate) const WINDOW: usize = 64 * 1024;

/// The windows a download that reads may hold beyond its socket (1 MiB).
const WIDE: u32 = 16;

/// The chunks such a download reads: four of them in flight.
const WIDE_CHUNK: usize = WIDE as usize * WINDOW / 4;

/// What a download's client reads before it may hold [`WIDE`] windows: the
/// bytes after which its socket's send buffer widens too.
const WIDEN_AFTER: u64 = 1 << 20;

/// The share of `server.memory_budget` download windows take: the rest is
/// for connections, renders, uploads and caches.
const BUDGET_SHARE: u64 = 4;

/// What a connection's socket has accepted, as its downloads see it: the
/// connection's I/O counts every byte a write took and wakes the download
/// that waits for room.
#[derive(Debug, Default)]
pub(crate) struct Socket {
    accepted: AtomicU64,
    waiting: AtomicWaker,
    /// A download whose body ended before the socket took all of it (hyper
    /// drops a body once its last chunk is queued): booked once the socket
    /// has, or with what it took when the connection closes.
    owed: Mutex<Option<Owed>>,
    /// Whether `owed` holds one (looked at on every write without the lock).
    owing: AtomicBool,
}

/// The bandwidth of a download not booked yet.
struct Owed {
    app: Arc<App>,
    account_id: String,
    /// What the socket had accepted when the download began.
    from: u64,
    /// Bytes handed to the connection.
    handed: u64,
}

impl Owed {
    /// Books what the socket took of it, `accepted` being its count now.
    fn book(self, accepted: u64) {
        let sent = accepted.saturating_sub(self.from).min(self.handed);
        super::bandwidth::count_bandwidth(&self.app, &self.account_id, sent);
    }
}

impl std::fmt::Debug for Owed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Owed")
            .field("account_id", &self.account_id)
            .field("handed", &self.handed)
            .finish_non_exhaustive()
    }
}

impl Socket {
    /// Bytes the socket accepted so far (the connection's, heads included).
    pub(crate) fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Acquire)
    }

    /// A write put `n` bytes into the socket.
    pub(crate) fn took(&self, n: usize) {
        let accepted = self.accepted.fetch_add(n as u64, Ordering::AcqRel) + n as u64;
        self.waiting.wake();
        if self.owing.load(Ordering::Acquire) {
            let mut owed = self.owed.lock().unwrap_or_else(PoisonError::into_inner);
            if owed
                .as_ref()
                .is_some_and(|o| accepted.saturating_sub(o.from) >= o.handed)
            {
                self.owing.store(false, Ordering::Release);
                if let Some(o) = owed.take() {
                    o.book(accepted);
                }
            }
        }
    }

    /// Books `owed` once the socket has taken all of it (a download before
    /// it on the connection is booked now, with what went out of it).
    fn owe(&self, owed: Owed) {
        let mut slot = self.owed.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(before) = slot.replace(owed) {
            before.book(self.accepted());
        }
        self.owing.store(true, Ordering::Release);
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        let accepted = self.accepted();
        let owed = self.owed.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(o) = owed.take() {
            o.book(accepted);
        }
    }
}

/// The download windows the memory budget allows at once.
#[derive(Debug)]
pub(crate) struct Buffers {
    free: Arc<Semaphore>,
    count: usize,
    /// How long a download waits for a window before its 503.
    wait: Duration,
}

/// One download's window, given back when the download ends; and the
/// windows it took besides, once its client showed it reads.
#[derive(Debug)]
pub(crate) struct Buffer {
    _permit: OwnedSemaphorePermit,
    pool: Arc<Semaphore>,
    count: usize,
    extra: Option<OwnedSemaphorePermit>,
}

impl Buffer {
    /// Takes [`WIDE`] less one windows more, if more than half of the pool
    /// would still be free after (the rest is kept for downloads' first
    /// windows); returns the bytes the download may then hold.
    fn widen(&mut self) -> u64 {
        if self.extra.is_some() {
            return u64::from(WIDE) * WINDOW as u64;
        }
        let more = WIDE - 1;
        let enough = self.pool.available_permits() > self.count / 2 + more as usize;
        if let Some(extra) = enough
            .then(|| self.pool.clone().try_acquire_many_owned(more).ok())
            .flatten()
        {
            self.extra = Some(extra);
            return self.widen();
        }
        WINDOW as u64
    }
}

impl Buffers {
    /// A quarter of `memory_budget` in windows (at least one); a download
    /// waits `wait` at most for one.
    pub(crate) fn new(memory_budget: u64, wait: Duration) -> Buffers {
        let count = usize::try_from(memory_budget / BUDGET_SHARE / WINDOW as u64)
            .unwrap_or(usize::MAX)
            .clamp(1, Semaphore::MAX_PERMITS);
        Buffers {
            free: Arc::new(Semaphore::new(count)),
            count,
            wait,
        }
    }

    /// How many downloads may hold a window at once.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// A window, once one is free; 503 (with `Retry-After`) when none came
    /// within the wait.
    pub(crate) async fn take(&self) -> Result<Buffer, ServiceError> {
        let buffer = |p| Buffer {
            _permit: p,
            pool: self.free.clone(),
            count: self.count,
            extra: None,
        };
        if let Ok(p) = self.free.clone().try_acquire_owned() {
            return Ok(buffer(p));
        }
        match tokio::time::timeout(self.wait, self.free.clone().acquire_owned()).await {
            Ok(Ok(p)) => Ok(buffer(p)),
            _ => Err(ServiceError::Unavailable(format!(
                "all {} download buffers of the memory budget are in use; try again",
                self.count
            ))),
        }
    }
}

/// A body stream that counts the bytes it sends and books them as the
/// account's bandwidth when it ends or is dropped. [`Counted::bounded`]
/// ties it to its connection's [`Socket`]: it then holds one chunk beyond
/// the socket and books only what the socket accepted.
pub(crate) struct Counted<S> {
    inner: S,
    /// Bytes handed to the connection.
    handed: u64,
    account_id: String,
    app: Arc<App>,
    /// The socket, and what it had accepted when this body began.
    socket: Option<(Arc<Socket>, u64)>,
    /// The download's window of the memory budget, given back with it.
    buffer: Option<Buffer>,
    /// Bytes it may hold beyond the socket: a window, or [`WIDE`] once its
    /// client has read [`WIDEN_AFTER`] and the pool had them.
    allowance: u64,
    /// Whether it asked for more windows already.
    widened: bool,
    /// The size of its reads from the store.
    chunk: Option<ChunkSize>,
}

impl<S> Counted<S> {
    /// `inner`, its bytes counted as `account_id`'s bandwidth as they are
    /// handed to the connection.
    pub(crate) fn new(inner: S, account_id: String, app: Arc<App>) -> Counted<S> {
        Counted {
            inner,
            handed: 0,
            account_id,
            app,
            socket: None,
            buffer: None,
            allowance: WINDOW as u64,
            widened: false,
            chunk: None,
        }
    }

    /// `inner` sent through `socket` (when the connection gives one)
    /// holding `buffer`: the next chunk is taken from `inner` only once the
    /// socket has accepted all before it (or, widened, while what it holds
    /// and the next chunk fit its windows), and the bytes booked as
    /// `account_id`'s are those it accepted. `inner`'s chunks are at most
    /// `chunk`'s size ([`WINDOW`] at first), which this sets when it widens.
    pub(crate) fn bounded(
        inner: S,
        account_id: String,
        app: Arc<App>,
        socket: Option<Arc<Socket>>,
        buffer: Buffer,
        chunk: ChunkSize,
    ) -> Counted<S> {
        Counted {
            inner,
            handed: 0,
            account_id,
            app,
            socket: socket.map(|s| {
                let from = s.accepted();
                (s, from)
            }),
            buffer: Some(buffer),
            allowance: WINDOW as u64,
            widened: false,
            chunk: Some(chunk),
        }
    }

    /// Bytes of this body the socket accepted (its head's too, which went
    /// first), or those handed for a body with no socket.
    fn accepted(&self) -> u64 {
        match &self.socket {
            Some((s, from)) => s.accepted().saturating_sub(*from),
            None => self.handed,
        }
    }
}

impl<S: Stream<Item = std::io::Result<Bytes>> + Unpin> Stream for Counted<S> {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.socket.is_some() {
            let accepted = self.accepted();
            if !self.widened && accepted >= WIDEN_AFTER {
                self.widened = true;
                self.allowance = self.buffer.as_mut().map_or(WINDOW as u64, Buffer::widen);
                if self.allowance > WINDOW as u64 {
                    if let Some(chunk) = &self.chunk {
                        chunk.set(WIDE_CHUNK);
                    }
                }
            }
            // Room for one more chunk (at most `chunk`'s size) within what
            // it may hold beyond the socket.
            let next = self.chunk.as_ref().map_or(WINDOW, ChunkSize::get) as u64;
            let room = |c: &Self| c.handed - c.accepted().min(c.handed) + next <= c.allowance;
            if !room(&self) {
                // Woken by the socket's next write; looked at again after
                // registering, so a write in between is not missed.
                if let Some((socket, _)) = &self.socket {
                    socket.waiting.register(cx.waker());
                }
                if !room(&self) {
                    return Poll::Pending;
                }
            }
        }
        let polled = self.inner.poll_next_unpin(cx);
        if let Poll::Ready(Some(Ok(chunk))) = &polled {
            self.handed += chunk.len() as u64;
        }
        polled
    }
}

impl<S> Drop for Counted<S> {
    fn drop(&mut self) {
        let accepted = self.accepted();
        if let Some((socket, from)) = self.socket.take() {
            if accepted < self.handed {
                // The rest is still being written: booked as it goes out.
                socket.owe(Owed {
                    app: self.app.clone(),
                    account_id: std::mem::take(&mut self.account_id),
                    from,
                    handed: self.handed,
                });
                return;
            }
        }
        super::bandwidth::count_bandwidth(&self.app, &self.account_id, accepted.min(self.handed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_download_past_the_budget_waits_then_is_refused() {
        let buffers = Buffers::new(2 * BUDGET_SHARE * WINDOW as u64, Duration::from_millis(50));
        assert_eq!(buffers.count(), 2);
        let a = buffers.take().await.unwrap();
        let _b = buffers.take().await.unwrap();
        let refused = buffers.take().await.unwrap_err();
        assert!(matches!(refused, ServiceError::Unavailable(_)), "{refused}");
        drop(a);
        buffers.take().await.unwrap();
    }

    #[tokio::test]
    async fn a_download_that_reads_widens_while_half_the_pool_is_free() {
        let pool = 4 * WIDE as usize;
        let buffers = Buffers::new(
            pool as u64 * BUDGET_SHARE * WINDOW as u64,
            Duration::from_millis(50),
        );
        let mut first = buffers.take().await.unwrap();
        assert_eq!(first.widen(), u64::from(WIDE) * WINDOW as u64);
        assert_eq!(buffers.free.available_permits(), pool - WIDE as usize);
        // Once a second takes its window, widening it would leave half the
        // pool free, no more.
        let mut second = buffers.take().await.unwrap();
        assert_eq!(second.widen(), WINDOW as u64);
        assert_eq!(buffers.free.available_permits(), pool - WIDE as usize - 1);
        // The first done, the second may.
        drop(first);
        assert_eq!(second.widen(), u64::from(WIDE) * WINDOW as u64);
        assert_eq!(buffers.free.available_permits(), pool - WIDE as usize);
        drop(second);
        assert_eq!(buffers.free.available_permits(), pool);
    }
}
