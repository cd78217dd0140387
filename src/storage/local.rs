//! Blobs as files under one directory: `<root>/<account_id>/<file_id>`.
//! A blob arrives as a spool file on the same filesystem (the server spools
//! under `DATA_DIR/tmp`), is fsynced by the caller, renamed into place, and the
//! directory is fsynced so the rename survives a crash.

use super::flush::EarlyFlush;
use super::pipe::{Pipe, Sink};
use super::{valid_key, BlobStore, BlobStream, ByteStream, ChunkSize, Partial, StorageError};
use async_trait::async_trait;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::future::Future;
use std::io::Write as _;
use std::io::{Read as _, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

#[derive(Debug, Clone)]
pub struct LocalStore {
    root: PathBuf,
}

/// Where a resumable upload's bytes gather until it completes: beside the
/// blob it becomes, so that completing it is a rename.
fn partial_path(blob: &Path) -> PathBuf {
    let mut p = blob.as_os_str().to_owned();
    p.push(".partial");
    PathBuf::from(p)
}

/// Creates an account's directory when missing: its entry in the store's
/// root is synced too, or a power cut could take it (and the blobs in it).
fn new_account_dir(dir: &Path) -> Result<(), StorageError> {
    if !dir.exists() {
        crate::private_dir::create(dir)?;
        if let Some(root) = dir.parent() {
            sync_dir(root)?;
        }
    }
    Ok(())
}

/// Opens the partial blob of `blob` for appending at `offset`, dropping
/// what an unrecorded append left past it.
fn open_partial(blob: &Path, offset: u64) -> Result<std::fs::File, StorageError> {
    let path = partial_path(blob);
    if !path.exists() && blob.exists() {
        // Completed in the store, but the file's commit failed: the bytes go
        // back to being a partial blob.
        std::fs::rename(blob, &path)?;
    }
    let mut file = match private_file().open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(StorageError::NotFound(path.display().to_string()))
        }
        Err(e) => return Err(e.into()),
    };
    let len = file.metadata()?.len();
    if len < offset {
        return Err(StorageError::Backend(format!(
            "partial blob {} holds {len} bytes, {offset} recorded",
            path.display()
        )));
    }
    file.set_len(offset)?;
    file.seek(SeekFrom::Start(offset))?;
    Ok(file)
}

/// An append's writes to a partial blob, in batches on the blocking pool.
struct Appender {
    file: std::fs::File,
    written: u64,
    flush: EarlyFlush,
}

impl Sink for Appender {
    fn take(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        self.file.write_all(chunk)?;
        self.written += chunk.len() as u64;
        self.flush.wrote(&self.file, chunk.len() as u64)
    }
}

/// Options opening a file for writing, created 0600.
fn private_file() -> std::fs::OpenOptions {
    let mut o = std::fs::OpenOptions::new();
    o.write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StorageError> + Send + 'static,
) -> Result<T, StorageError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StorageError::Backend(e.to_string()))?
}

impl LocalStore {
    pub fn open(root: impl Into<PathBuf>) -> std::io::Result<Self> {
        let root = root.into();
        crate::private_dir::create(&root)?;
        Ok(Self { root })
    }

    fn path_of(&self, key: &str) -> Result<PathBuf, StorageError> {
        if !valid_key(key) {
            return Err(StorageError::Backend(format!("invalid blob key {key:?}")));
        }
        Ok(self.root.join(key))
    }

    /// `len` bytes of `key` from `offset`, read `size`'s bytes at a time
    /// (at most [`READ_CHUNK`]).
    async fn chunks(
        &self,
        key: &str,
        offset: u64,
        len: u64,
        size: ChunkSize,
    ) -> Result<BlobStream, StorageError> {
        let path = self.path_of(key)?;
        let first = chunk_len(len, read_size(&size));
        // The open and the first read in one trip to the blocking pool.
        let opened = bounded_read(move || {
            let mut file = std::fs::File::open(&path)?;
            if offset > 0 {
                file.seek(SeekFrom::Start(offset))?;
            }
            read_chunk(file, first)
        })
        .await;
        match opened {
            Ok((file, chunk)) => Ok(Chunks {
                left: len - chunk.len() as u64,
                first: Some(chunk),
                file: Some(file),
                reading: None,
                size,
            }
            .boxed()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(StorageError::NotFound(key.to_string()))
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// The blob keys under `root`: `<account>/<file>` files (a partial blob,
/// `….partial`, is its upload's, not a key of its own).
fn keys_under(root: &Path) -> std::io::Result<Vec<String>> {
    let mut keys = Vec::new();
    for dir in std::fs::read_dir(root)? {
        let dir = dir?;
        if !dir.file_type()?.is_dir() {
            continue;
        }
        let account = dir.file_name().to_string_lossy().into_owned();
        for file in std::fs::read_dir(dir.path())? {
            let file = file?;
            let key = format!("{account}/{}", file.file_name().to_string_lossy());
            if file.file_type()?.is_file() && valid_key(&key) {
                keys.push(key);
            }
        }
    }
    Ok(keys)
}

/// Bytes read per trip to the blocking pool by [`BlobStore::get`]: large
/// chunks keep the number of trips (and their hand-offs) per read small.
/// hyper takes a body's next chunk while under 400 KiB are queued on the
/// connection, so a client that stops reading such a body holds that plus a
/// chunk (two chunks: 620–860 KB each were measured under 4,090 of them);
/// a download to a client (the CDN's) reads through
/// [`BlobStore::get_chunked`] instead, a window at a time.
const READ_CHUNK: u64 = READ_CHUNK_BYTES as u64;
const READ_CHUNK_BYTES: usize = 512 * 1024;

/// The bytes of a chunked read's next read: `size`'s, at most [`READ_CHUNK`].
fn read_size(size: &ChunkSize) -> u64 {
    u64::try_from(size.get()).map_or(READ_CHUNK, |n| n.clamp(1, READ_CHUNK))
}

/// Bytes of the next read when `left` remain: at most `max`.
fn chunk_len(left: u64, max: u64) -> usize {
    usize::try_from(max.min(left)).expect("a chunk fits in memory")
}

/// The blob reads on the blocking pool at once, across all downloads: a
/// burst of downloads queues here (holding no thread) instead of filling the
/// pool that database reads, health's disk check and uploads also need.
fn read_slots() -> &'static Arc<tokio::sync::Semaphore> {
    static SLOTS: std::sync::OnceLock<Arc<tokio::sync::Semaphore>> = std::sync::OnceLock::new();
    SLOTS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        Arc::new(tokio::sync::Semaphore::new((4 * cores).max(16)))
    })
}

/// Runs `read` on the blocking pool once one of the [`read_slots`] is free;
/// the slot is the read's until it ends, even when the download is dropped.
async fn bounded_read<T: Send + 'static>(
    read: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    let slot = read_slots()
        .clone()
        .acquire_owned()
        .await
        .map_err(std::io::Error::other)?;
    tokio::task::spawn_blocking(move || {
        let _slot = slot;
        read()
    })
    .await
    .map_err(std::io::Error::other)?
}

type Read = std::io::Result<(std::fs::File, Bytes)>;

/// Reads exactly `n` bytes (a shorter file is an error: the blob was cut).
fn read_chunk(file: std::fs::File, n: usize) -> Read {
    let mut buf = Vec::with_capacity(n);
    (&file).take(n as u64).read_to_end(&mut buf)?;
    if buf.len() < n {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok((file, Bytes::from(buf)))
}

/// A blob's bytes, one chunk at a time: the next read starts when the
/// connection asks for it (while it still has the bytes it queued before to
/// send), on the blocking pool within [`read_slots`]. No thread waits on a
/// slow client, and a client that stops reading holds no chunk here.
struct Chunks {
    /// The first chunk, read when the blob was opened.
    first: Option<Bytes>,
    /// The file, while no read has it.
    file: Option<std::fs::File>,
    reading: Option<Pin<Box<dyn Future<Output = Read> + Send>>>,
    /// Bytes neither read nor being read.
    left: u64,
    /// The most read at once.
    size: ChunkSize,
}

impl Stream for Chunks {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(chunk) = self.first.take() {
            return Poll::Ready(Some(Ok(chunk)));
        }
        if self.reading.is_none() {
            let Some(file) = self.file.take().filter(|_| self.left > 0) else {
                return Poll::Ready(None);
            };
            let n = chunk_len(self.left, read_size(&self.size));
            self.left -= n as u64;
            self.reading = Some(Box::pin(bounded_read(move || read_chunk(file, n))));
        }
        let read = ready!(self.reading.as_mut().expect("set above").as_mut().poll(cx));
        self.reading = None;
        Poll::Ready(Some(read.map(|(file, chunk)| {
            self.file = Some(file);
            chunk
        })))
    }
}

/// A blob's bytes copied to `dest` by way of its partial blob (fsynced,
/// then renamed into place): a copy cut short leaves nothing under `dest`,
/// and what a crash leaves goes with `dest` when the collector deletes it.
fn copy_bytes(src: &Path, dest: &Path) -> Result<(), StorageError> {
    let mut from = match std::fs::File::open(src) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(StorageError::NotFound(src.display().to_string()))
        }
        Err(e) => return Err(e.into()),
    };
    let partial = partial_path(dest);
    let mut to = private_file().create_new(true).open(&partial)?;
    let copied = std::io::copy(&mut from, &mut to)
        .and_then(|_| to.sync_all())
        .and_then(|()| std::fs::rename(&partial, dest));
    if copied.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    Ok(copied?)
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[async_trait]
impl BlobStore for LocalStore {
    fn kind(&self) -> &'static str {
        "local"
    }

    fn local_file(&self, key: &str) -> Option<PathBuf> {
        self.path_of(key).ok()
    }

    async fn put_file(
        &self,
        key: &str,
        spool: tempfile::TempPath,
        _size: u64,
    ) -> Result<(), StorageError> {
        let dest = self.path_of(key)?;
        tokio::task::spawn_blocking(move || -> Result<(), StorageError> {
            let dir = dest
                .parent()
                .expect("key has a directory part")
                .to_path_buf();
            new_account_dir(&dir)?;
            spool
                .persist(&dest)
                .map_err(|e| StorageError::Io(e.error))?;
            sync_dir(&dir)?;
            Ok(())
        })
        .await
        .map_err(|e| StorageError::Backend(e.to_string()))?
    }

    /// A hard link: instant, no second copy on disk, and a blob's bytes
    /// are never written in place, so the two stay equal whichever is
    /// deleted. A filesystem without hard links gets a byte copy instead.
    async fn copy(&self, from: &str, to: &str, _size: u64) -> Result<(), StorageError> {
        let (src, dest) = (self.path_of(from)?, self.path_of(to)?);
        blocking(move || {
            let dir = dest.parent().expect("key has a directory part");
            new_account_dir(dir)?;
            match std::fs::hard_link(&src, &dest) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(StorageError::NotFound(src.display().to_string()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(e.into()),
                Err(e) => {
                    tracing::debug!(error = %e, "no hard link; copying the blob's bytes");
                    copy_bytes(&src, &dest)?;
                }
            }
            sync_dir(dir)?;
            Ok(())
        })
        .await
    }

    async fn get(&self, key: &str, offset: u64, len: u64) -> Result<BlobStream, StorageError> {
        self.chunks(key, offset, len, ChunkSize::new(READ_CHUNK_BYTES))
            .await
    }

    async fn get_chunked(
        &self,
        key: &str,
        offset: u64,
        len: u64,
        chunk: ChunkSize,
    ) -> Result<BlobStream, StorageError> {
        self.chunks(key, offset, len, chunk).await
    }

    async fn keys(&self) -> Result<Vec<String>, StorageError> {
        let root = self.root.clone();
        blocking(move || Ok(keys_under(&root)?)).await
    }

    async fn delete(&self, key: &str) -> Result<(), StorageError> {
        let path = self.path_of(key)?;
        // The blob, and the partial blob of a resumable upload never completed.
        for path in [partial_path(&path), path] {
            match tokio::fs::remove_file(&path).await {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
        // The account's directory stays, even when empty: removing it here
        // could race an upload renaming a new blob into it.
        Ok(())
    }

    async fn begin_partial(&self, key: &str) -> Result<Partial, StorageError> {
        let path = partial_path(&self.path_of(key)?);
        blocking(move || {
            let dir = path.parent().expect("key has a directory part");
            new_account_dir(dir)?;
            let file = private_file().create_new(true).open(&path)?;
            file.sync_all()?;
            sync_dir(dir)?;
            Ok(Partial::default())
        })
        .await
    }

    async fn append_partial(
        &self,
        key: &str,
        p: Partial,
        mut chunks: ByteStream,
    ) -> Result<Partial, StorageError> {
        let blob = self.path_of(key)?;
        let offset = p.offset;
        let file = blocking(move || open_partial(&blob, offset)).await?;
        // Written in batches on the blocking pool while the next chunks
        // arrive: no thread waits on the client, no chunk is copied.
        let mut pipe = Pipe::new(Appender {
            file,
            written: 0,
            flush: EarlyFlush::default(),
        });
        while let Some(chunk) = chunks.next().await {
            pipe.push(chunk).await?;
        }
        let written = pipe
            .finish(|a| {
                a.flush.finish(&a.file)?;
                Ok(a.written)
            })
            .await?;
        Ok(Partial {
            offset: offset + written,
            ..p
        })
    }

    async fn partial_head(&self, key: &str, _: &Partial, len: u64) -> Result<Bytes, StorageError> {
        let path = partial_path(&self.path_of(key)?);
        blocking(move || {
            let file = match std::fs::File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(StorageError::NotFound(path.display().to_string()))
                }
                Err(e) => return Err(e.into()),
            };
            let mut head = Vec::new();
            file.take(len).read_to_end(&mut head)?;
            Ok(Bytes::from(head))
        })
        .await
    }

    async fn complete_partial(&self, key: &str, p: Partial) -> Result<(), StorageError> {
        let dest = self.path_of(key)?;
        blocking(move || {
            let partial = partial_path(&dest);
            let len = std::fs::metadata(&partial)?.len();
            if len < p.offset {
                return Err(StorageError::Backend(format!(
                    "partial blob {} holds {len} bytes, {} recorded",
                    partial.display(),
                    p.offset
                )));
            }
            let file = private_file().open(&partial)?;
            file.set_len(p.offset)?;
            file.sync_all()?;
            std::fs::rename(&partial, &dest)?;
            sync_dir(dest.parent().expect("key has a directory part"))?;
            Ok(())
        })
        .await
    }

    async fn abort_partial(&self, key: &str, _state: &str) -> Result<(), StorageError> {
        let path = partial_path(&self.path_of(key)?);
        match tokio::fs::remove_file(&path).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    async fn size(&self, key: &str) -> Result<Option<u64>, StorageError> {
        match tokio::fs::metadata(self.path_of(key)?).await {
            Ok(m) => Ok(Some(m.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    async fn check(&self) -> Result<(), StorageError> {
        let root = self.root.clone();
        tokio::task::spawn_blocking(move || -> Result<(), StorageError> {
            // A real write, read back and removal in the store's own directory.
            let mut probe = tempfile::Builder::new()
                .prefix(".health-")
                .tempfile_in(&root)?;
            std::io::Write::write_all(&mut probe, b"ok")?;
            let back = std::fs::read(probe.path())?;
            if back != b"ok" {
                return Err(StorageError::Backend(
                    "health probe read back wrong bytes".into(),
                ));
            }
            Ok(())
        })
        .await
        .map_err(|e| StorageError::Backend(e.to_string()))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte copy of a filesystem without hard links: the same bytes,
    /// no partial blob left, a missing source `NotFound`.
    #[test]
    fn byte_copies_leave_no_partial_blob() {
        let root = tempfile::tempdir().unwrap();
        let store = LocalStore::open(root.path()).unwrap();
        let (src, dest) = (
            store.path_of("acc_1/f_1").unwrap(),
            store.path_of("acc_1/f_2").unwrap(),
        );
        new_account_dir(src.parent().unwrap()).unwrap();
        std::fs::write(&src, b"bytes").unwrap();
        copy_bytes(&src, &dest).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"bytes");
        assert!(!partial_path(&dest).exists());
        std::fs::remove_file(&src).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"bytes");
        let other = store.path_of("acc_1/f_3").unwrap();
        assert!(matches!(
            copy_bytes(&src, &other),
            Err(StorageError::NotFound(_))
        ));
        assert!(!other.exists() && !partial_path(&other).exists());
    }
}
