//! A PATCH's body on its way to the store: counted against the upload's
//! length, hashed on a thread of its own (the upload's resumable SHA-256 and
//! the chunk's `Upload-Checksum`), and one PATCH at a time per upload.

use super::length_exceeded;
use crate::domain::sha256_state::ResumableSha256;
use crate::domain::tus::Algorithm;
use crate::error::ApiError;
use crate::storage::ByteStream;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use sha2::Digest;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

/// What a PATCH's body may still bring, and why it ended early.
pub(super) struct Feed {
    /// Bytes the upload may still take.
    pub(super) room: u64,
    pub(super) error: Option<ApiError>,
}

/// The hashes of a PATCH's bytes, computed on a thread of their own beside
/// the network and the store (a chunk is passed on, not copied); the thread
/// ends with the stream and gives them back.
pub(super) fn hasher(
    mut hash: ResumableSha256,
    mut check: Option<Checker>,
) -> (
    tokio::sync::mpsc::Sender<Bytes>,
    tokio::task::JoinHandle<(ResumableSha256, Option<Checker>)>,
) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    let done = tokio::task::spawn_blocking(move || {
        while let Some(chunk) = rx.blocking_recv() {
            hash.update(&chunk);
            if let Some(c) = &mut check {
                c.update(&chunk);
            }
        }
        (hash, check)
    });
    (tx, done)
}

/// The body as the store sees it: counted and handed to the hasher as it
/// passes; it ends at the first error (kept in `feed`) or past the upload's
/// length. Every chunk the store gets, the hasher got first.
pub(super) fn fed<S>(
    body: S,
    feed: Arc<Mutex<Feed>>,
    hasher: tokio::sync::mpsc::Sender<Bytes>,
) -> ByteStream
where
    S: Stream<Item = Result<Bytes, ApiError>> + Send + 'static,
{
    futures_util::stream::unfold(
        (Box::pin(body), feed, hasher),
        |(mut body, feed, hasher)| async move {
            loop {
                let chunk = match body.next().await {
                    None => return None,
                    Some(Err(e)) => {
                        feed.lock().expect("feed lock").error = Some(e);
                        return None;
                    }
                    Some(Ok(chunk)) => chunk,
                };
                let n = chunk.len() as u64;
                {
                    let mut f = feed.lock().expect("feed lock");
                    if n > f.room {
                        f.error = Some(length_exceeded(f.room));
                        return None;
                    }
                    f.room -= n;
                }
                if n == 0 {
                    continue;
                }
                if hasher.send(chunk.clone()).await.is_err() {
                    let e = ApiError::internal("the hasher stopped");
                    feed.lock().expect("feed lock").error = Some(e);
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

/// One turn at a time per upload, on this node.
#[derive(Debug, Default)]
pub(crate) struct Locks {
    held: Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>,
}

impl Locks {
    pub(crate) async fn lock(&self, id: &str) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut held = self.held.lock().expect("locks");
            held.retain(|_, l| l.strong_count() > 0);
            match held.get(id).and_then(Weak::upgrade) {
                Some(l) => l,
                None => {
                    let l = Arc::new(tokio::sync::Mutex::new(()));
                    held.insert(id.to_string(), Arc::downgrade(&l));
                    l
                }
            }
        };
        lock.lock_owned().await
    }
}
