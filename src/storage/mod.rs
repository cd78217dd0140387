//! Blob stores: where file contents live. The metadata store knows each blob by
//! its key (`<account_id>/<file_id>`); a `BlobStore` only moves bytes.

pub(crate) mod flush;
pub(crate) mod local;
pub(crate) mod pipe;
pub(crate) mod s3;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::BoxStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The most bytes of a chunked read's next chunks ([`BlobStore::get_chunked`]),
/// shared by the stream and its reader, which may change it as it goes.
#[derive(Debug, Clone)]
pub struct ChunkSize(Arc<AtomicUsize>);

impl ChunkSize {
    /// Chunks of at most `max` bytes (at least one).
    pub fn new(max: usize) -> ChunkSize {
        ChunkSize(Arc::new(AtomicUsize::new(max.max(1))))
    }

    /// The most bytes of the next chunk.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }

    /// Chunks read from now on hold at most `max` bytes (at least one).
    pub fn set(&self, max: usize) {
        self.0.store(max.max(1), Ordering::Release);
    }
}

/// `stream` in chunks of at most `max`'s bytes (slices of its own: no copy).
pub(crate) fn split<S>(
    stream: S,
    max: ChunkSize,
) -> impl futures_util::Stream<Item = std::io::Result<Bytes>>
where
    S: futures_util::Stream<Item = std::io::Result<Bytes>> + Send + 'static,
{
    use futures_util::StreamExt;
    stream.flat_map(move |item| {
        let max = max.get();
        let pieces: Vec<std::io::Result<Bytes>> = match item {
            Ok(mut chunk) => {
                let mut v = Vec::with_capacity(chunk.len().div_ceil(max));
                while chunk.len() > max {
                    v.push(Ok(chunk.split_to(max)));
                }
                v.push(Ok(chunk));
                v
            }
            Err(e) => vec![Err(e)],
        };
        futures_util::stream::iter(pieces)
    })
}

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("blob not found: {0}")]
    NotFound(String),
    #[error("storage i/o error: {0}")]
    Io(#[from] std::io::Error),
    #[error("storage backend error: {0}")]
    Backend(String),
}

/// A stream of a blob's bytes (or of a range of them).
pub type BlobStream = BoxStream<'static, std::io::Result<Bytes>>;

/// The contract every blob store keeps. Implementations: `local::LocalStore`
/// (a directory) and `s3::S3Store` (any S3-compatible bucket).
#[async_trait]
pub trait BlobStore: Send + Sync + 'static {
    /// Short name for logs and health: "local" or "s3".
    fn kind(&self) -> &'static str;

    /// The file that holds `key`'s bytes, for a store of files on this
    /// machine (an image's source is then linked, not copied); `None` for a
    /// remote store.
    fn local_file(&self, _key: &str) -> Option<std::path::PathBuf> {
        None
    }

    /// Stores the finished, fsynced spool file at `spool` under `key`. The spool
    /// file is consumed: on success it is gone (renamed or uploaded and removed);
    /// on failure nothing is left under `key`. `size` is the spool's length.
    async fn put_file(
        &self,
        key: &str,
        spool: tempfile::TempPath,
        size: u64,
    ) -> Result<(), StorageError>;

    /// Stores under `to` a copy of the blob `from` (`size` bytes) without
    /// its bytes passing through this server: a hard link on the local
    /// store (a byte copy only where links are unsupported), a store-side
    /// copy on S3. Either blob may then be deleted without touching the
    /// other. [`StorageError::NotFound`] when `from` is gone; on failure
    /// nothing is left under `to`.
    async fn copy(&self, from: &str, to: &str, size: u64) -> Result<(), StorageError>;

    /// Streams `len` bytes of the blob starting at `offset`.
    async fn get(&self, key: &str, offset: u64, len: u64) -> Result<BlobStream, StorageError>;

    /// As [`BlobStore::get`], in chunks of at most `chunk`'s bytes as it is
    /// when each is read: a download holds a bounded number of chunks
    /// beyond its socket (`service::download`), and asks for larger ones
    /// once its client shows it reads. A store that reads its own chunks
    /// reads them that size; one whose chunks come off the network (S3)
    /// splits them.
    async fn get_chunked(
        &self,
        key: &str,
        offset: u64,
        len: u64,
        chunk: ChunkSize,
    ) -> Result<BlobStream, StorageError> {
        use futures_util::StreamExt;
        let stream = self.get(key, offset, len).await?;
        Ok(split(stream, chunk).boxed())
    }

    /// Every blob key the store holds (`admin verify`'s orphans are those
    /// the metadata does not name).
    async fn keys(&self) -> Result<Vec<String>, StorageError>;

    /// The blob's size, or None when there is no such blob.
    async fn size(&self, key: &str) -> Result<Option<u64>, StorageError>;

    /// Removes the blob. Removing a blob that does not exist is not an error.
    async fn delete(&self, key: &str) -> Result<(), StorageError>;

    /// A real round trip to the store (for `GET /v1/health`).
    async fn check(&self) -> Result<(), StorageError>;

    /// Removes what interrupted writes older than `older_than` left inside
    /// the store itself (S3: incomplete multipart uploads under the prefix);
    /// returns how many. The local store has nothing of the kind: its partial
    /// writes are spool files, removed when the server starts.
    async fn sweep_incomplete(
        &self,
        _older_than: std::time::Duration,
        _keep: &std::collections::HashSet<String>,
    ) -> Result<usize, StorageError> {
        Ok(0)
    }

    /// The largest blob written across requests this store takes.
    fn max_partial(&self) -> u64 {
        u64::MAX
    }

    /// Starts a blob written across requests (a resumable upload) under
    /// `key`: what the store keeps of it starts empty.
    async fn begin_partial(&self, key: &str) -> Result<Partial, StorageError>;

    /// Appends `chunks` to the partial blob `p` (its first `p.offset` bytes
    /// stored): the answer, once durable, holds `p.offset` plus every byte of
    /// `chunks`. Bytes a failed or unrecorded append left past `p.offset`
    /// are overwritten, never counted. [`StorageError::NotFound`] when the
    /// partial blob is gone (completed, or aborted), here and in
    /// [`BlobStore::complete_partial`].
    async fn append_partial(
        &self,
        key: &str,
        p: Partial,
        chunks: ByteStream,
    ) -> Result<Partial, StorageError>;

    /// The first `len` bytes of the partial blob `p` (`len` at most
    /// `p.offset`, and small: what a type is sniffed from). A store that
    /// holds them where it cannot read them back (S3's uploaded parts, past
    /// its first part) says [`StorageError::NotFound`].
    async fn partial_head(&self, key: &str, p: &Partial, len: u64) -> Result<Bytes, StorageError>;

    /// Makes the partial blob, all of it received, the blob under `key`.
    async fn complete_partial(&self, key: &str, p: Partial) -> Result<(), StorageError>;

    /// Releases at once what the store holds of an abandoned partial blob
    /// (its state as `begin_partial` or `append_partial` gave it). Best
    /// effort: `delete(key)` and the sweep also remove it.
    async fn abort_partial(&self, key: &str, state: &str) -> Result<(), StorageError>;
}

/// A byte stream fed to the store (errors are the caller's business: it ends
/// the stream early).
pub(crate) type ByteStream = BoxStream<'static, Bytes>;

/// What the store holds of a blob written across requests, recorded with
/// the upload in the metadata store after every append: `offset` bytes,
/// the store's own `state` (S3: the multipart upload's id and parts) and a
/// `tail` of bytes not yet in the store (S3: less than a part).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Partial {
    pub offset: u64,
    pub state: String,
    pub tail: Option<Bytes>,
}

pub type DynBlobStore = Arc<dyn BlobStore>;

impl std::fmt::Debug for dyn BlobStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlobStore({})", self.kind())
    }
}

/// Checks that a blob key is what the service generates, so that no key can
/// ever name a path outside the store: `acc_<hex>/f_<hex>` (or the probe key).
pub(crate) fn valid_key(key: &str) -> bool {
    let ok_part = |p: &str| {
        !p.is_empty()
            && p.len() <= 64
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let mut parts = key.split('/');
    matches!((parts.next(), parts.next(), parts.next()), (Some(a), Some(b), None) if ok_part(a) && ok_part(b))
}

#[cfg(test)]
mod tests {
    use super::{split, valid_key, ChunkSize};
    use bytes::Bytes;
    use futures_util::StreamExt;

    #[tokio::test]
    async fn split_keeps_the_bytes_in_pieces_no_larger_than_asked_as_it_goes() {
        let size = ChunkSize::new(64 * 1024);
        let chunks = vec![
            Ok(Bytes::from(vec![1u8; 150_000])),
            Ok(Bytes::from(vec![2u8; 300_000])),
        ];
        let mut pieces = split(futures_util::stream::iter(chunks), size.clone()).boxed();
        let mut lens = Vec::new();
        while let Some(p) = pieces.next().await {
            lens.push(p.unwrap().len());
            // Larger from the next chunk of the source on.
            size.set(256 * 1024);
        }
        assert_eq!(lens, [65_536, 65_536, 18_928, 262_144, 37_856]);
    }

    #[test]
    fn keys_cannot_escape() {
        assert!(valid_key("acc_12ab/f_34cd"));
        assert!(!valid_key("../etc/passwd"));
        assert!(!valid_key("acc/../../x"));
        assert!(!valid_key("acc_1/f_2/extra"));
        assert!(!valid_key("/abs"));
        assert!(!valid_key("acc_1/"));
    }
}
