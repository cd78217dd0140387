//! A PATCH's body on its way to the store: counted against the upload's
//! length, hashed (the upload's resumable SHA-256 and MD5, and the chunk's
//! `Upload-Checksum`) on the blocking pool in batches beside the network and
//! the store, and one PATCH at a time per upload. No thread waits for the
//! client's next byte: a batch runs only when bytes have come
//! (`storage::pipe`).

use crate::domain::resumable::ResumableHashes;
use crate::domain::tus::Algorithm;
use crate::service::error::ServiceError;
use crate::storage::pipe::{Pipe, Sink};
use crate::storage::ByteStream;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use sha2::Digest;

use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// What a PATCH's body may still bring, and why it ended early.
pub(super) struct Feed {
    /// Bytes the upload may still take.
    pub(super) room: u64,
    pub(super) error: Option<ServiceError>,
}

/// The hashes a PATCH's bytes update.
struct Hashes {
    hash: ResumableHashes,
    check: Option<Checker>,
}

impl Sink for Hashes {
    fn take(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        self.hash.update(chunk);
        if let Some(c) = &mut self.check {
            c.update(chunk);
        }
        Ok(())
    }
}

/// The way into the hashes (held by [`fed`]'s stream); when the stream ends
/// or is dropped, the hashes of everything it passed go to the receiver.
pub(super) struct ToHasher {
    pipe: Option<Pipe<Hashes>>,
    done: Option<oneshot::Sender<(ResumableHashes, Option<Checker>)>>,
}

impl ToHasher {
    async fn push(&mut self, chunk: Bytes) -> std::io::Result<()> {
        match self.pipe.as_mut() {
            Some(pipe) => pipe.push(chunk).await,
            None => Err(std::io::Error::other("the hasher has ended")),
        }
    }

    /// Every byte pushed hashed, the hashes go to the receiver.
    async fn end(&mut self) {
        if let (Some(pipe), Some(done)) = (self.pipe.take(), self.done.take()) {
            deliver(pipe, done).await;
        }
    }
}

async fn deliver(pipe: Pipe<Hashes>, done: oneshot::Sender<(ResumableHashes, Option<Checker>)>) {
    // A failed pipe (a panic) drops `done`: the receiver sees the error.
    if let Ok(hashes) = pipe.finish(|h| Ok((h.hash, h.check))).await {
        let _ = done.send(hashes);
    }
}

impl Drop for ToHasher {
    /// A stream dropped before its end (the store stopped reading it) still
    /// gives the hashes of what it passed.
    fn drop(&mut self) {
        if let (Some(pipe), Some(done)) = (self.pipe.take(), self.done.take()) {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(deliver(pipe, done));
            }
        }
    }
}

/// The hashes of a PATCH's bytes, updated as [`fed`] passes them on (a chunk
/// is passed on, not copied); the receiver gives them back once the stream
/// has ended.
pub(super) fn hasher(
    hash: ResumableHashes,
    check: Option<Checker>,
) -> (
    ToHasher,
    oneshot::Receiver<(ResumableHashes, Option<Checker>)>,
) {
    let (done, rx) = oneshot::channel();
    let to = ToHasher {
        pipe: Some(Pipe::new(Hashes { hash, check })),
        done: Some(done),
    };
    (to, rx)
}

/// The body as the store sees it: counted and handed to the hasher as it
/// passes; it ends at the first error (kept in `feed`) or past the upload's
/// length. Every chunk the store gets, the hasher got first.
pub(super) fn fed<S>(body: S, feed: Arc<Mutex<Feed>>, hasher: ToHasher) -> ByteStream
where
    S: Stream<Item = Result<Bytes, ServiceError>> + Send + 'static,
{
    futures_util::stream::unfold(
        (Box::pin(body), feed, hasher),
        |(mut body, feed, mut hasher)| async move {
            loop {
                let stop = |feed: &Mutex<Feed>, e: ServiceError| {
                    feed.lock().expect("feed lock").error = Some(e);
                };
                let chunk = match body.next().await {
                    None => {
                        hasher.end().await;
                        return None;
                    }
                    Some(Err(e)) => {
                        stop(&feed, e);
                        hasher.end().await;
                        return None;
                    }
                    Some(Ok(chunk)) => chunk,
                };
                let n = chunk.len() as u64;
                let over = {
                    let mut f = feed.lock().expect("feed lock");
                    if n > f.room {
                        f.error = Some(length_exceeded(f.room));
                    } else {
                        f.room -= n;
                    }
                    f.error.is_some()
                };
                if over {
                    hasher.end().await;
                    return None;
                }
                if n == 0 {
                    continue;
                }
                if let Err(e) = hasher.push(chunk.clone()).await {
                    stop(
                        &feed,
                        ServiceError::internal(format!("the hasher stopped: {e}")),
                    );
                    hasher.end().await;
                    return None;
                }
                return Some((chunk, (body, feed, hasher)));
            }
        },
    )
    .boxed()
}

/// The running digest of `Upload-Checksum`'s algorithm over one PATCH body.
pub(super) enum Checker {
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
}

impl Checker {
    pub(super) fn new(a: Algorithm) -> Checker {
        match a {
            Algorithm::Sha1 => Checker::Sha1(sha1::Sha1::new()),
            Algorithm::Sha256 => Checker::Sha256(sha2::Sha256::new()),
        }
    }

    fn update(&mut self, data: &[u8]) {
        match self {
            Checker::Sha1(h) => h.update(data),
            Checker::Sha256(h) => h.update(data),
        }
    }

    pub(super) fn finish(self) -> Vec<u8> {
        match self {
            Checker::Sha1(h) => h.finalize().to_vec(),
            Checker::Sha256(h) => h.finalize().to_vec(),
        }
    }
}

/// 413 for a PATCH that would pass the upload's declared length.
pub(super) fn length_exceeded(room: u64) -> ServiceError {
    ServiceError::LengthExceeded(format!(
        "the PATCH would pass the upload's length ({room} bytes left)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(chunks: &[&'static [u8]]) -> impl Stream<Item = Result<Bytes, ServiceError>> + Send {
        let chunks: Vec<_> = chunks.iter().map(|c| Ok(Bytes::from_static(c))).collect();
        futures_util::stream::iter(chunks)
    }

    fn sha(data: &[u8]) -> String {
        let mut h = ResumableHashes::new();
        h.update(data);
        let (sha256, md5) = h.hex();
        assert_eq!(md5, None, "an upload begun now keeps no MD5");
        sha256
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_hashes_cover_every_byte_passed_on() {
        let check = Some(Checker::new(Algorithm::Sha256));
        // An upload an earlier release began keeps its MD5 state going.
        let begun = ResumableHashes {
            md5: Some(crate::domain::md5_state::ResumableMd5::new()),
            ..ResumableHashes::new()
        };
        let (to, done) = hasher(begun, check);
        let feed = Arc::new(Mutex::new(Feed {
            room: 100,
            error: None,
        }));
        let passed: Vec<Bytes> = fed(body(&[b"hello ", b"", b"world"]), feed.clone(), to)
            .collect()
            .await;
        assert_eq!(passed.concat(), b"hello world");
        let (hash, check) = done.await.unwrap();
        assert_eq!(hash.hex().0, sha(b"hello world"));
        assert_eq!(
            hash.hex().1.unwrap(),
            hex::encode(<md5::Md5 as md5::Digest>::digest(b"hello world"))
        );
        assert_eq!(
            check.unwrap().finish(),
            sha2::Sha256::digest(b"hello world").to_vec()
        );
        let f = feed.lock().unwrap();
        assert_eq!((f.room, f.error.is_none()), (89, true));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn past_the_room_the_stream_ends_and_the_hashes_stop_before_it() {
        let (to, done) = hasher(ResumableHashes::new(), None);
        let feed = Arc::new(Mutex::new(Feed {
            room: 8,
            error: None,
        }));
        let passed: Vec<Bytes> = fed(body(&[b"hello ", b"world"]), feed.clone(), to)
            .collect()
            .await;
        assert_eq!(passed.concat(), b"hello ");
        assert_eq!(done.await.unwrap().0.hex().0, sha(b"hello "));
        let error = feed.lock().unwrap().error.take();
        assert!(matches!(error, Some(ServiceError::LengthExceeded(_))));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stream_dropped_early_still_gives_the_hashes_of_what_it_passed() {
        let (to, done) = hasher(ResumableHashes::new(), None);
        let feed = Arc::new(Mutex::new(Feed {
            room: 100,
            error: None,
        }));
        let mut stream = fed(body(&[b"first", b"second"]), feed, to);
        assert_eq!(stream.next().await.unwrap(), Bytes::from_static(b"first"));
        drop(stream);
        assert_eq!(done.await.unwrap().0.hex().0, sha(b"first"));
    }
}
