//! Blocking work on a stream's chunks (writing them to a file, hashing
//! them) without a thread that waits on the network.
//!
//! A [`Pipe`] owns a [`Sink`] (a file and its hasher, say). Chunks pushed
//! from the async side are gathered; a batch goes to the blocking pool only
//! when there is data, with the sink moved into the closure and given back
//! when the batch is done. So a thread is held only while there is work for
//! it: a client trickling a byte every few seconds costs a few microseconds
//! of a thread per byte, not a thread for the life of its upload.
//!
//! At most one batch per pipe is in flight, and at most [`MAX_QUEUED`] bytes
//! wait behind it: while the disk takes one batch the network fills the
//! next, so the two still overlap for a large upload arriving fast, and
//! memory stays flat whatever the file size. When both are full, `push`
//! waits for the batch under way (back-pressure on the client).

use bytes::Bytes;
use std::io;
use tokio::task::JoinHandle;

/// Bytes gathered behind the batch in flight before `push` waits for it:
/// about 1 MiB per upload at most with the batch in flight, however many
/// uploads run (a 512 KiB batch is already large for the page cache).
pub(crate) const MAX_QUEUED: usize = 512 << 10;

/// What a pipe's batches do with each chunk, on a blocking thread.
pub(crate) trait Sink: Send + 'static {
    fn take(&mut self, chunk: &[u8]) -> io::Result<()>;
}

type Batch<S> = JoinHandle<(S, io::Result<()>)>;

pub(crate) struct Pipe<S: Sink> {
    /// The sink, when no batch has it.
    idle: Option<S>,
    /// The batch under way, with the sink.
    running: Option<Batch<S>>,
    queued: Vec<Bytes>,
    queued_bytes: usize,
}

impl<S: Sink> Pipe<S> {
    pub(crate) fn new(sink: S) -> Pipe<S> {
        Pipe {
            idle: Some(sink),
            running: None,
            queued: Vec::new(),
            queued_bytes: 0,
        }
    }

    /// Takes `chunk`: it starts a batch when none is under way, else waits
    /// behind the batch in flight (and, when [`MAX_QUEUED`] bytes already
    /// wait, `push` waits for that batch first). An error of an earlier
    /// batch comes out here; the pipe is then spent.
    pub(crate) async fn push(&mut self, chunk: Bytes) -> io::Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        self.queued_bytes += chunk.len();
        self.queued.push(chunk);
        if self.running.as_ref().is_some_and(JoinHandle::is_finished)
            || self.queued_bytes >= MAX_QUEUED
        {
            self.settle().await?;
        }
        if self.running.is_none() {
            if self.idle.is_none() {
                return Err(spent());
            }
            self.start();
        }
        Ok(())
    }

    /// Waits for the batch under way, if any, taking back its sink.
    async fn settle(&mut self) -> io::Result<()> {
        if let Some(running) = self.running.as_mut() {
            let done = running.await;
            self.running = None;
            let (sink, result) = done.map_err(io::Error::other)?;
            result?;
            self.idle = Some(sink);
        }
        Ok(())
    }

    fn start(&mut self) {
        let Some(mut sink) = self.idle.take() else {
            return;
        };
        let batch = std::mem::take(&mut self.queued);
        self.queued_bytes = 0;
        self.running = Some(tokio::task::spawn_blocking(move || {
            let result = batch.iter().try_for_each(|c| sink.take(c));
            (sink, result)
        }));
    }

    /// Every chunk pushed, taken; then `last` runs on the sink (on the same
    /// blocking thread as the last chunks) and its answer is the pipe's.
    pub(crate) async fn finish<T: Send + 'static>(
        mut self,
        last: impl FnOnce(S) -> io::Result<T> + Send + 'static,
    ) -> io::Result<T> {
        self.settle().await?;
        let mut sink = self.idle.take().ok_or_else(spent)?;
        let batch = std::mem::take(&mut self.queued);
        tokio::task::spawn_blocking(move || {
            batch.iter().try_for_each(|c| sink.take(c))?;
            last(sink)
        })
        .await
        .map_err(io::Error::other)?
    }
}

fn spent() -> io::Error {
    io::Error::other("the pipe failed earlier")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects what it takes; fails on a chunk starting with `!`.
    #[derive(Default)]
    struct Collect(Vec<u8>, usize);

    impl Sink for Collect {
        fn take(&mut self, chunk: &[u8]) -> io::Result<()> {
            if chunk.first() == Some(&b'!') {
                return Err(io::Error::other("refused"));
            }
            self.0.extend_from_slice(chunk);
            self.1 += 1;
            Ok(())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_chunk_arrives_in_order_and_finish_gives_the_sink_back() {
        let mut pipe = Pipe::new(Collect::default());
        let mut expected = Vec::new();
        for i in 0..2000u32 {
            let chunk = i.to_string().into_bytes();
            expected.extend_from_slice(&chunk);
            pipe.push(Bytes::from(chunk)).await.unwrap();
        }
        pipe.push(Bytes::new()).await.unwrap();
        let (bytes, chunks) = pipe.finish(|c| Ok((c.0, c.1))).await.unwrap();
        assert_eq!(bytes, expected);
        assert_eq!(chunks, 2000, "an empty chunk is not taken");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn large_chunks_wait_for_the_batch_in_flight() {
        let mut pipe = Pipe::new(Collect::default());
        for _ in 0..8 {
            pipe.push(Bytes::from(vec![7u8; MAX_QUEUED])).await.unwrap();
            assert!(
                pipe.queued_bytes < MAX_QUEUED,
                "never more than a batch waits"
            );
        }
        let n = pipe.finish(|c| Ok(c.0.len())).await.unwrap();
        assert_eq!(n, 8 * MAX_QUEUED);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_error_comes_out_of_a_later_push_or_of_finish() {
        let mut pipe = Pipe::new(Collect::default());
        pipe.push(Bytes::from_static(b"!bad")).await.unwrap();
        // The failed batch is found by the push that waits for it.
        let mut failed = None;
        for _ in 0..3 {
            if let Err(e) = pipe.push(Bytes::from(vec![1u8; MAX_QUEUED])).await {
                failed = Some(e);
                break;
            }
        }
        assert_eq!(failed.expect("the error surfaces").to_string(), "refused");
        let e = pipe.push(Bytes::from_static(b"more")).await.unwrap_err();
        assert_eq!(e.to_string(), "the pipe failed earlier");
        assert!(pipe.finish(|_| Ok(())).await.is_err(), "the pipe is spent");

        let mut pipe = Pipe::new(Collect::default());
        pipe.push(Bytes::from_static(b"!bad")).await.unwrap();
        let e = pipe.finish(|_| Ok(())).await.unwrap_err();
        assert_eq!(e.to_string(), "refused");

        let pipe = Pipe::new(Collect::default());
        let e = pipe
            .finish(|_| -> io::Result<()> { Err(io::Error::other("last failed")) })
            .await
            .unwrap_err();
        assert_eq!(e.to_string(), "last failed");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiting_pipe_holds_no_thread() {
        // Far more pipes than the blocking pool has threads, each with a
        // chunk taken and then waiting: all of them finish.
        let mut pipes = Vec::new();
        for i in 0..2000u32 {
            let mut pipe = Pipe::new(Collect::default());
            pipe.push(Bytes::from(i.to_string())).await.unwrap();
            pipes.push(pipe);
        }
        tokio::task::yield_now().await;
        for (i, pipe) in pipes.into_iter().enumerate() {
            assert_eq!(
                pipe.finish(|c| Ok(c.0)).await.unwrap(),
                i.to_string().into_bytes()
            );
        }
    }
}
