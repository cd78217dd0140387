//! Where an upload's bytes wait until the file commits.
//!
//! A file part is hashed and counted as it arrives. Up to the inline limit it
//! stays in memory (small files are stored in the database with their row, so
//! they never touch the spool directory). Past it, the bytes go to a spool
//! file beside the blob store, written and hashed on the blocking pool in
//! batches ([`Pipe`]): a thread works only while there are bytes to write, so
//! a client that trickles its body holds none, while for a fast one the
//! network and the disk side still run on different cores. The chunks move
//! without a copy, and memory stays at a few megabytes whatever the file size.
//!
//! Dropped before [`Spool::finish`], a spool removes its file.
//!
//! SHA-256 is taken of every byte. MD5 (S3's ETag; /v1 never shows it) only
//! while the bytes fit in memory: past the inline limit it would double the
//! CPU an upload costs (MD5 runs at about a third of SHA-NI's speed), so a
//! spooled file commits without it and `service::md5_fill` fills it in at idle
//! priority (docs/decisions.md, "MD5 after the fact"). A spool made with
//! [`Spool::with_md5`] (the S3 door's, whose PUT answers with the MD5 as its
//! ETag) takes MD5 of every byte too, beside SHA-256, in the same pass.

use crate::storage::flush::EarlyFlush;
use crate::storage::pipe::{Pipe, Sink};
use aws_lc_rs::digest::{Context, SHA256};
use bytes::{Bytes, BytesMut};
use md5::Digest as _;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The bytes of a finished spool.
#[derive(Debug)]
pub(crate) enum Body {
    /// Small enough to keep in the database.
    Inline(Bytes),
    /// A fsynced file in the spool directory.
    File(tempfile::TempPath),
}

#[derive(Debug)]
pub(crate) struct Spooled {
    pub body: Body,
    pub size: u64,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
    /// Hex MD5 of the bytes, when they stayed in memory or the spool was
    /// asked for it ([`Spool::with_md5`]).
    pub md5: Option<String>,
}

/// The hashes of what a spool takes: SHA-256 (aws-lc-rs's assembly) and,
/// until the bytes spill to a file (or to the end, when asked), MD5, each
/// chunk given to both while it is in cache. The MD5 fill (`service::md5_fill`) hashes with it too.
#[derive(Clone)]
pub(super) struct Hashes {
    sha256: Context,
    md5: Option<md5::Md5>,
}

impl Hashes {
    pub(super) fn new() -> Self {
        Hashes {
            sha256: Context::new(&SHA256),
            md5: Some(md5::Md5::new()),
        }
    }

    pub(super) fn update(&mut self, data: &[u8]) {
        self.sha256.update(data);
        if let Some(md5) = &mut self.md5 {
            md5.update(data);
        }
    }

    /// Hex SHA-256 and hex MD5 (when still taken).
    pub(super) fn finish(self) -> (String, Option<String>) {
        (
            hex::encode(self.sha256.finish()),
            self.md5.map(|m| hex::encode(m.finalize())),
        )
    }
}

enum State {
    Memory {
        buf: BytesMut,
        hasher: Hashes,
    },
    File {
        /// Owned here, so that a dropped spool removes its file at once.
        path: tempfile::TempPath,
        pipe: Pipe<Writer>,
    },
}

/// The spool file's side of the pipe: writes and hashes each chunk, and
/// flushes early what a large file has written so far.
struct Writer {
    file: std::fs::File,
    hasher: Hashes,
    /// Bytes at the start of what comes that `hasher` has seen already
    /// (what was held in memory before the spill).
    hashed_ahead: usize,
    flush: EarlyFlush,
}

impl Sink for Writer {
    fn take(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        let hashed = self.hashed_ahead.min(chunk.len());
        self.hashed_ahead -= hashed;
        self.hasher.update(&chunk[hashed..]);
        self.file.write_all(chunk)?;
        self.flush.wrote(&self.file, chunk.len() as u64)
    }
}

pub(crate) struct Spool {
    dir: PathBuf,
    inline_max: u64,
    /// MD5 of every byte, spilled or not.
    md5_always: bool,
    size: u64,
    state: State,
}

impl Spool {
    /// A spool that takes MD5 only while the bytes fit in memory.
    pub(crate) fn new(dir: &Path, inline_max: u64) -> Spool {
        Self::hashing(dir, inline_max, false)
    }

    /// A spool that takes MD5 of every byte, spilled to a file or not: its
    /// [`Spooled::md5`] is always there.
    pub(crate) fn with_md5(dir: &Path, inline_max: u64) -> Spool {
        Self::hashing(dir, inline_max, true)
    }

    fn hashing(dir: &Path, inline_max: u64, md5_always: bool) -> Spool {
        Spool {
            dir: dir.to_path_buf(),
            inline_max,
            md5_always,
            size: 0,
            state: State::Memory {
                buf: BytesMut::new(),
                hasher: Hashes::new(),
            },
        }
    }

    /// A spool for an S3 multipart upload's part: always a file, its MD5
    /// taken with its SHA-256 whatever its size.
    pub(crate) fn part(dir: &Path) -> Spool {
        Spool::with_md5(dir, 0)
    }

    /// Bytes taken so far.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    pub(crate) async fn push(&mut self, chunk: Bytes) -> std::io::Result<()> {
        self.size += chunk.len() as u64;
        match &mut self.state {
            State::Memory { buf, hasher } if self.size <= self.inline_max => {
                hasher.update(&chunk);
                buf.extend_from_slice(&chunk);
                Ok(())
            }
            State::Memory { buf, hasher } => {
                let (held, mut hasher) = (std::mem::take(buf).freeze(), hasher.clone());
                // Spilled: the MD5 is left to the idle-priority fill, unless
                // it is wanted now.
                if !self.md5_always {
                    hasher.md5 = None;
                }
                let (file, path) = tempfile::Builder::new()
                    .prefix("upload-")
                    .tempfile_in(&self.dir)?
                    .into_parts();
                let mut pipe = Pipe::new(Writer {
                    file,
                    hasher,
                    hashed_ahead: held.len(),
                    flush: EarlyFlush::default(),
                });
                // `held` is hashed already: it is written first.
                let pushed = pipe.push(held).await;
                self.state = State::File { path, pipe };
                pushed?;
                self.push_to_file(chunk).await
            }
            State::File { .. } => self.push_to_file(chunk).await,
        }
    }

    async fn push_to_file(&mut self, chunk: Bytes) -> std::io::Result<()> {
        let State::File { pipe, .. } = &mut self.state else {
            unreachable!("only called once spilled to a file")
        };
        pipe.push(chunk).await
    }

    /// The bytes, hashed, and (for a file) written and fsynced.
    pub(crate) async fn finish(self) -> std::io::Result<Spooled> {
        let size = self.size;
        match self.state {
            State::Memory { buf, hasher } => {
                let (sha256, md5) = hasher.finish();
                Ok(Spooled {
                    body: Body::Inline(buf.freeze()),
                    size,
                    sha256,
                    md5,
                })
            }
            State::File { path, pipe } => {
                let (sha256, md5) = pipe
                    .finish(|w| {
                        w.flush.finish(&w.file)?;
                        Ok(w.hasher.finish())
                    })
                    .await?;
                Ok(Spooled {
                    body: Body::File(path),
                    size,
                    sha256,
                    md5,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    async fn spool(chunks: &[&[u8]], inline_max: u64) -> (tempfile::TempDir, Spooled) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spool::new(dir.path(), inline_max);
        for c in chunks {
            s.push(Bytes::copy_from_slice(c)).await.unwrap();
        }
        let done = s.finish().await.unwrap();
        (dir, done)
    }

    #[tokio::test]
    async fn small_stays_in_memory_large_goes_to_a_file_same_hash() {
        let expected = hex::encode(Sha256::digest(b"hello world"));
        let (_d, small) = spool(&[b"hello ", b"world"], 11).await;
        assert!(matches!(&small.body, Body::Inline(b) if &b[..] == b"hello world"));
        assert_eq!((small.size, small.sha256.as_str()), (11, expected.as_str()));
        let (_d, large) = spool(&[b"hello ", b"wor", b"ld"], 8).await;
        let Body::File(path) = &large.body else {
            panic!("expected a file")
        };
        assert_eq!(std::fs::read(path).unwrap(), b"hello world");
        assert_eq!(large.sha256, expected);
        // The MD5 while the bytes stay in memory; none once they spill.
        let md5 = hex::encode(<md5::Md5 as md5::Digest>::digest(b"hello world"));
        assert_eq!((small.md5, large.md5), (Some(md5), None));
        let (_d, off) = spool(&[b"x"], 0).await;
        assert!(matches!(off.body, Body::File(_)));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_file_past_the_flush_interval_is_whole_and_hashed() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spool::new(dir.path(), 0);
        let mut expected = Sha256::new();
        let n = usize::try_from(crate::storage::flush::FLUSH_EVERY * 2 + 12_345).unwrap();
        for i in 0..n.div_ceil(1 << 20) {
            let len = (1 << 20).min(n - i * (1 << 20));
            let chunk = Bytes::from(vec![u8::try_from(i % 251).unwrap(); len]);
            expected.update(&chunk);
            s.push(chunk).await.unwrap();
        }
        let done = s.finish().await.unwrap();
        assert_eq!(done.size, n as u64);
        assert_eq!(done.sha256, hex::encode(expected.finalize()));
        assert_eq!(done.md5, None);
        let Body::File(path) = &done.body else {
            panic!("expected a file")
        };
        assert_eq!(std::fs::metadata(path).unwrap().len(), n as u64);
    }

    /// Asked for MD5, a spool takes it of every byte, spilled or not, and
    /// the same SHA-256 as without.
    #[tokio::test]
    async fn a_spool_asked_for_md5_takes_it_past_the_inline_limit() {
        let md5 = hex::encode(<md5::Md5 as md5::Digest>::digest(b"hello world"));
        let sha = hex::encode(Sha256::digest(b"hello world"));
        for inline_max in [0, 3, 8, 11] {
            let dir = tempfile::tempdir().unwrap();
            let mut s = Spool::with_md5(dir.path(), inline_max);
            for c in [&b"hello "[..], b"wor", b"ld"] {
                s.push(Bytes::copy_from_slice(c)).await.unwrap();
            }
            let done = s.finish().await.unwrap();
            assert_eq!(
                matches!(done.body, Body::File(_)),
                inline_max < 11,
                "{inline_max}"
            );
            assert_eq!(done.md5.as_deref(), Some(md5.as_str()), "{inline_max}");
            assert_eq!(done.sha256, sha, "{inline_max}");
        }
        // Nothing at all: the MD5 of no bytes.
        let dir = tempfile::tempdir().unwrap();
        let empty = Spool::with_md5(dir.path(), 0).finish().await.unwrap();
        assert_eq!(
            empty.md5.as_deref(),
            Some("d41d8cd98f00b204e9800998ecf8427e")
        );
    }

    #[tokio::test]
    async fn a_dropped_spool_leaves_no_file_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spool::new(dir.path(), 0);
        s.push(Bytes::from_static(b"partial")).await.unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        drop(s);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
