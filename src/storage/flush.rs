//! Durable writes of large files without a long wait at the end: while a
//! writer appends, a thread of its own syncs what is written so far every
//! [`FLUSH_EVERY`] bytes, so the fsync that must precede an answer finds only
//! the last few megabytes dirty. Used by the upload spool and by the local
//! store's partial blobs (resumable uploads).

/// Counts what a writer wrote, nudging a [`Flusher`] every [`FLUSH_EVERY`]
/// bytes; [`EarlyFlush::finish`] makes it all durable.
#[derive(Default)]
pub(crate) struct EarlyFlush {
    flusher: Option<Flusher>,
    unflushed: u64,
}

impl EarlyFlush {
    /// `n` more bytes were written to `file`.
    pub(crate) fn wrote(&mut self, file: &std::fs::File, n: u64) -> std::io::Result<()> {
        self.unflushed += n;
        if self.unflushed >= FLUSH_EVERY {
            self.unflushed = 0;
            match &self.flusher {
                Some(f) => f.nudge(),
                None => self.flusher = Some(Flusher::start(file)?),
            }
        }
        Ok(())
    }

    /// Waits for the flush under way, then syncs the rest.
    pub(crate) fn finish(self, file: &std::fs::File) -> std::io::Result<()> {
        if let Some(f) = self.flusher {
            f.stop()?;
        }
        file.sync_data()
    }
}

/// Bytes written between two nudges of the flusher.
pub(crate) const FLUSH_EVERY: u64 = 32 << 20;

/// A large file's early flushes: a thread of its own syncs what is written so
/// far while the writer goes on writing, so that the fsync that must
/// precede the answer finds only the last few megabytes to write (without it,
/// a 256 MiB upload waited for all of it at the end).
struct Flusher {
    nudges: std::sync::mpsc::SyncSender<()>,
    thread: std::thread::JoinHandle<std::io::Result<()>>,
}

impl Flusher {
    fn start(file: &std::fs::File) -> std::io::Result<Flusher> {
        let file = file.try_clone()?;
        let (nudges, rx) = std::sync::mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("filestore-flush".into())
            .spawn(move || {
                file.sync_data()?;
                while rx.recv().is_ok() {
                    file.sync_data()?;
                }
                Ok(())
            })?;
        Ok(Flusher { nudges, thread })
    }

    /// Asks for one more flush; never waits (one already asked is enough).
    fn nudge(&self) {
        let _ = self.nudges.try_send(());
    }

    /// Waits for the flush under way; its error, if it failed.
    fn stop(self) -> std::io::Result<()> {
        drop(self.nudges);
        self.thread
            .join()
            .map_err(|_| std::io::Error::other("the flusher panicked"))?
    }
}
