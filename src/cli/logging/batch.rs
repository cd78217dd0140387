//! The server's log writer: lines gather in one buffer that a thread of its
//! own writes to stderr, as nginx's `access_log … buffer= flush=` does. A
//! request never waits on a write, and never wakes that thread either: the
//! thread writes what has gathered once it holds [`FLUSH_AT`] bytes or its
//! first line is [`FLUSH_EVERY`] old. A `WARN` or `ERROR` line is written at
//! once, with every line before it. At tens of thousands of requests a
//! second that is a handful of `write`s a second, where a line-by-line
//! writer costs a wake-up, a context switch and a `write` per request.
//!
//! Nothing is lost: when the buffer holds [`MOST`] bytes (stderr is a pipe
//! nobody reads, or a full disk) a line waits for room; the lines left when
//! the server stops are written by [`Flusher`]'s drop, and a line of the
//! process's own (`notice`) first writes every line before it ([`flush`]).

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tracing_subscriber::fmt::MakeWriter;

/// A batch as large as this is written at once.
const FLUSH_AT: usize = 64 * 1024;
/// A line waits at most this long for others to share its write.
pub(crate) const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// Lines wait for room beyond this (the writer is stuck).
const MOST: usize = 8 * 1024 * 1024;

#[derive(Default)]
struct Gathered {
    lines: Vec<u8>,
    /// A line is to be written now (a warning, an error, a flush).
    urgent: bool,
    closed: bool,
}

struct Shared {
    gathered: Mutex<Gathered>,
    /// The writer's: lines came (first of a batch, urgent, or a full batch).
    came: Condvar,
    /// The lines': room was made.
    room: Condvar,
    /// Held while a batch is written, so batches reach stderr in order.
    out: Mutex<Box<dyn Write + Send>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding it leaves plain bytes: still usable.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Adds one formatted line (or part of one).
    fn add(&self, bytes: &[u8], urgent: bool) {
        let mut g = lock(&self.gathered);
        while g.lines.len() >= MOST && !g.closed {
            g = self.room.wait(g).unwrap_or_else(PoisonError::into_inner);
        }
        let first = g.lines.is_empty();
        let was_full = g.lines.len() >= FLUSH_AT;
        g.lines.extend_from_slice(bytes);
        let full = !was_full && g.lines.len() >= FLUSH_AT;
        let wake = first || full || (urgent && !g.urgent);
        g.urgent |= urgent;
        if g.closed {
            // The writer is gone: write it ourselves.
            drop(g);
            self.write_gathered();
        } else if wake {
            drop(g);
            self.came.notify_one();
        }
    }

    /// Takes what has gathered and writes it.
    fn write_gathered(&self) {
        self.write_taken(lock(&self.out), lock(&self.gathered));
    }

    /// [`Shared::write_gathered`], unless a lock is held.
    fn try_write_gathered(&self) {
        if let (Ok(out), Ok(gathered)) = (self.out.try_lock(), self.gathered.try_lock()) {
            self.write_taken(out, gathered);
        }
    }

    /// Takes the gathered lines (freeing room) and writes them, holding
    /// `out` so that batches reach stderr in order.
    fn write_taken(
        &self,
        mut out: MutexGuard<'_, Box<dyn Write + Send>>,
        mut gathered: MutexGuard<'_, Gathered>,
    ) {
        gathered.urgent = false;
        let batch = std::mem::take(&mut gathered.lines);
        drop(gathered);
        self.room.notify_all();
        if !batch.is_empty() {
            // stderr gone: nowhere left to say it.
            let _ = out.write_all(&batch).and_then(|()| out.flush());
        }
    }

    /// The writer thread: waits for a batch's first line, lets the batch
    /// fill for up to [`FLUSH_EVERY`], writes it.
    fn run(&self) {
        loop {
            let mut g = lock(&self.gathered);
            while g.lines.is_empty() && !g.closed {
                g = self.came.wait(g).unwrap_or_else(PoisonError::into_inner);
            }
            if g.lines.is_empty() {
                return;
            }
            let due = Instant::now() + FLUSH_EVERY;
            while !g.urgent && !g.closed && g.lines.len() < FLUSH_AT {
                let left = due.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                g = self
                    .came
                    .wait_timeout(g, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            drop(g);
            self.write_gathered();
        }
    }
}

/// The process's batching writer, once [`start`] has made it.
static WRITER: OnceLock<Arc<Shared>> = OnceLock::new();

/// Writes every line gathered so far, now (before a line of the process's
/// own goes straight to stderr). Nothing when no batching writer runs.
pub(crate) fn flush() {
    if let Some(shared) = WRITER.get() {
        shared.write_gathered();
    }
}

/// [`flush`] for a panic: gives up rather than wait for a lock (the panic
/// may have come while one was held).
pub(crate) fn try_flush() {
    if let Some(shared) = WRITER.get() {
        shared.try_write_gathered();
    }
}

/// The writer a subscriber formats its lines into.
#[derive(Clone)]
pub(crate) struct Batched(Arc<Shared>);

impl Batched {
    /// Adds whole lines, not urgent.
    pub(crate) fn add(&self, lines: &[u8]) {
        self.0.add(lines, false);
    }
}

/// One line's writer: urgent for `WARN` and `ERROR`.
pub(crate) struct Line {
    shared: Arc<Shared>,
    urgent: bool,
}

impl Write for Line {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.shared.add(buf, self.urgent);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Batched {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line {
            shared: self.0.clone(),
            urgent: false,
        }
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Line {
        Line {
            shared: self.0.clone(),
            urgent: *meta.level() <= tracing::Level::WARN,
        }
    }
}

/// Stops the writer thread once every line is written (on drop).
pub(crate) struct Flusher {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Flusher {
    fn drop(&mut self) {
        lock(&self.shared.gathered).closed = true;
        self.shared.came.notify_all();
        self.shared.room.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // Lines added while the thread was ending.
        self.shared.write_gathered();
    }
}

/// Starts a batching writer into `out`: the process's (what [`flush`]
/// writes) unless one runs already.
pub(crate) fn start(out: Box<dyn Write + Send>) -> (Batched, Flusher) {
    let shared = Arc::new(Shared {
        gathered: Mutex::new(Gathered::default()),
        came: Condvar::new(),
        room: Condvar::new(),
        out: Mutex::new(out),
    });
    let _ = WRITER.set(shared.clone());
    let runner = shared.clone();
    let thread = std::thread::Builder::new()
        .name("log-writer".into())
        .spawn(move || runner.run())
        .ok();
    if thread.is_none() {
        // No thread: every line writes itself.
        lock(&shared.gathered).closed = true;
    }
    (Batched(shared.clone()), Flusher { shared, thread })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Write` whose bytes and write calls the test reads.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<(Vec<u8>, usize)>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let mut s = self.0.lock().unwrap();
            s.0.extend_from_slice(buf);
            s.1 += 1;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Sink {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().0.clone()).unwrap()
        }
        fn writes(&self) -> usize {
            self.0.lock().unwrap().1
        }
    }

    fn line(b: &Batched, text: &str, urgent: bool) {
        let mut w = Line {
            shared: b.0.clone(),
            urgent,
        };
        w.write_all(text.as_bytes()).unwrap();
    }

    #[test]
    fn lines_gather_into_one_write_and_arrive_within_the_interval() {
        let sink = Sink::default();
        let (b, _f) = start(Box::new(sink.clone()));
        for i in 0..1000 {
            line(&b, &format!("line {i}\n"), false);
        }
        let begun = Instant::now();
        while sink.text().lines().count() < 1000 {
            assert!(begun.elapsed() < Duration::from_secs(5), "lines never came");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            sink.writes() <= 2,
            "{} writes for 1000 lines",
            sink.writes()
        );
        let expected: Vec<String> = (0..1000).map(|i| format!("line {i}")).collect();
        assert_eq!(sink.text(), expected.join("\n") + "\n");
    }

    #[test]
    fn a_warning_goes_at_once_with_the_lines_before_it() {
        let sink = Sink::default();
        let (b, _f) = start(Box::new(sink.clone()));
        line(&b, "info\n", false);
        line(&b, "warn\n", true);
        let begun = Instant::now();
        while sink.text() != "info\nwarn\n" {
            // Well under the interval: written when the warning came.
            assert!(begun.elapsed() < FLUSH_EVERY * 5, "got {:?}", sink.text());
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_panics_flush_writes_at_once_and_never_waits_for_a_lock() {
        let sink = Sink::default();
        // No writer thread: only the flush can write.
        let shared = Shared {
            gathered: Mutex::new(Gathered::default()),
            came: Condvar::new(),
            room: Condvar::new(),
            out: Mutex::new(Box::new(sink.clone())),
        };
        lock(&shared.gathered)
            .lines
            .extend_from_slice(b"before the panic\n");
        {
            // A lock held (as by a thread that panicked while writing):
            // nothing is written, and nothing waits.
            let _held = lock(&shared.out);
            shared.try_write_gathered();
        }
        assert_eq!(sink.text(), "");
        shared.try_write_gathered();
        assert_eq!(sink.text(), "before the panic\n");
    }

    #[test]
    fn dropping_the_flusher_writes_every_line_left() {
        let sink = Sink::default();
        let (b, f) = start(Box::new(sink.clone()));
        line(&b, "one\n", false);
        line(&b, "two\n", false);
        drop(f);
        assert_eq!(sink.text(), "one\ntwo\n");
        // After the stop, a line writes itself.
        line(&b, "three\n", false);
        assert_eq!(sink.text(), "one\ntwo\nthree\n");
    }

    #[test]
    fn a_full_buffer_makes_lines_wait_not_vanish() {
        /// A sink that blocks until released.
        struct Gate(Arc<(Mutex<bool>, Condvar)>, Sink);
        impl Write for Gate {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                let (open, cv) = &*self.0;
                let mut o = open.lock().unwrap();
                while !*o {
                    o = cv.wait(o).unwrap();
                }
                self.1.write(buf)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let sink = Sink::default();
        let (b, f) = start(Box::new(Gate(gate.clone(), sink.clone())));
        let chunk = "x".repeat(1024 * 1024 - 1) + "\n";
        let writer = {
            let b = b.clone();
            let chunk = chunk.clone();
            std::thread::spawn(move || {
                for _ in 0..20 {
                    line(&b, &chunk, false);
                }
            })
        };
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            !writer.is_finished(),
            "20 MiB gathered behind a stuck writer"
        );
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
        writer.join().unwrap();
        drop(f);
        assert_eq!(sink.text().len(), chunk.len() * 20);
    }
}
