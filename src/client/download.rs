//! Streaming download from a CDN URL (the file's public URL or a signed one),
//! without the API key. A transfer cut off midway is resumed with `Range`
//! (and `If-Range` on the ETag) rather than started over. Every byte is
//! hashed on its way to the sink, so that the whole can be checked against
//! the file's SHA-256 (docs/decisions.md, "Checksums") without reading it again.

use super::answer::status_failure;
use super::error::ClientError;
use super::http::Client;
use super::retry::{Failure, Retrier, RetryNotice};
use super::Meter;
use crate::domain::digest::{self, Sha256Digest};
use futures_util::StreamExt;
use reqwest::header::{ETAG, IF_RANGE, RANGE};
use reqwest::StatusCode;
use sha2::{Digest, Sha256};
use std::io::SeekFrom;
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWrite, AsyncWriteExt};

/// What a download received.
#[derive(Debug, Clone)]
pub(crate) struct Downloaded {
    /// Bytes the sink holds.
    pub size: u64,
    /// Their SHA-256.
    pub sha256: Sha256Digest,
    /// The `Content-Digest` of the whole-file answer, if there was one.
    pub announced: Option<Sha256Digest>,
}

impl Downloaded {
    /// `size` bytes whose hash is `hasher`'s: a download with nothing left to fetch.
    pub(crate) fn already(size: u64, hasher: Sha256) -> Downloaded {
        Downloaded {
            size,
            sha256: hasher.finalize().into(),
            announced: None,
        }
    }

    /// Checks the bytes against the File record's `sha256` (hex) and any
    /// `Content-Digest` the server sent: a `checksum_mismatch` error if
    /// either differs.
    pub(crate) fn verify(&self, record_sha256: &str) -> Result<(), ClientError> {
        let expected = digest::parse_hex(record_sha256).map_err(|e| {
            ClientError::Protocol(format!("the file record's sha256 is unusable: {e}"))
        })?;
        let got = hex::encode(self.sha256);
        for (want, source) in [
            (Some(expected), "the file record"),
            (self.announced, "the Content-Digest header"),
        ] {
            if let Some(want) = want.filter(|w| *w != self.sha256) {
                return Err(ClientError::ChecksumMismatch(format!(
                    "the downloaded bytes have SHA-256 {got}, {source} says {}",
                    hex::encode(want)
                )));
            }
        }
        Ok(())
    }
}

/// Hashes the first `len` bytes of `file` (a partial download being
/// resumed) and leaves it positioned at `len`.
pub(crate) async fn hash_prefix(file: &mut tokio::fs::File, len: u64) -> std::io::Result<Sha256> {
    file.seek(SeekFrom::Start(0)).await?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut left = len;
    while left > 0 {
        let want = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
        let n = file.read(&mut buf[..want]).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        hasher.update(&buf[..n]);
        left -= n as u64;
    }
    file.seek(SeekFrom::Start(len)).await?;
    Ok(hasher)
}

/// Where downloaded bytes go.
pub(crate) enum Sink {
    /// Standard output: cannot start over once bytes are out.
    Stdout(tokio::io::Stdout),
    /// A (temporary) file: can be truncated and started over.
    File(tokio::fs::File),
}

impl Sink {
    fn writer(&mut self) -> &mut (dyn AsyncWrite + Unpin + Send) {
        match self {
            Sink::Stdout(w) => w,
            Sink::File(w) => w,
        }
    }

    /// Empties the sink to receive the whole body again; false when it can't.
    async fn restart(&mut self) -> std::io::Result<bool> {
        match self {
            Sink::Stdout(_) => Ok(false),
            Sink::File(f) => {
                f.set_len(0).await?;
                f.seek(SeekFrom::Start(0)).await?;
                Ok(true)
            }
        }
    }
}

impl Client {
    /// Streams the body at `url` into `sink`, whose first `start` bytes are
    /// already there, hashed by `hasher` (a download resumed: the rest is
    /// asked for with `Range`); gives what the sink then holds. A body past
    /// the file's `size` is a protocol error at once: a server that sends
    /// more than the record says does not fill the disk.
    pub(crate) async fn download(
        &self,
        url: &str,
        sink: &mut Sink,
        (start, size): (u64, u64),
        mut hasher: Sha256,
        meter: &dyn Meter,
        on_retry: &(dyn Fn(&RetryNotice) + Sync),
    ) -> Result<Downloaded, ClientError> {
        let write_err = |e: std::io::Error| ClientError::io("writing the download", e);
        let mut retrier = Retrier::new(self.policy(), on_retry);
        let mut written = start;
        meter.resumed(start);
        let mut etag: Option<reqwest::header::HeaderValue> = None;
        let mut announced = None;
        loop {
            let mut req = self.anonymous(url);
            if written > 0 {
                req = req.header(RANGE, format!("bytes={written}-"));
                if let Some(tag) = &etag {
                    req = req.header(IF_RANGE, tag.clone());
                }
            }
            let failure = match req.send().await {
                Ok(resp) if resp.status().is_success() => {
                    if written > 0 && resp.status() != StatusCode::PARTIAL_CONTENT {
                        if !sink.restart().await.map_err(write_err)? {
                            return Err(retrier.give_up(ClientError::Network(
                                "transfer interrupted and the server cannot resume it".into(),
                            )));
                        }
                        written = 0;
                        hasher = Sha256::new();
                        meter.reset();
                    }
                    if written == 0 {
                        etag = resp.headers().get(ETAG).cloned();
                        // A malformed one is ignored: the record's sha256 still checks.
                        announced = resp
                            .headers()
                            .get(digest::HEADER)
                            .and_then(|v| v.to_str().ok())
                            .and_then(|v| digest::parse_content_digest(v).ok().flatten());
                    }
                    let mut body = resp.bytes_stream();
                    let mut cut = None;
                    while let Some(chunk) = body.next().await {
                        match chunk {
                            Ok(bytes) => {
                                if written + bytes.len() as u64 > size {
                                    return Err(ClientError::Protocol(format!(
                                        "the server sent more than the file's {size} bytes"
                                    )));
                                }
                                sink.writer().write_all(&bytes).await.map_err(write_err)?;
                                hasher.update(&bytes);
                                written += bytes.len() as u64;
                                meter.add(bytes.len() as u64);
                            }
                            Err(e) => {
                                cut = Some(e);
                                break;
                            }
                        }
                    }
                    match cut {
                        None => {
                            sink.writer().flush().await.map_err(write_err)?;
                            return Ok(Downloaded {
                                size: written,
                                sha256: hasher.finalize().into(),
                                announced,
                            });
                        }
                        // Cut off midway: resumed from `written`.
                        Some(e) => Failure {
                            retryable: true,
                            ..Failure::transport(&e)
                        },
                    }
                }
                Ok(resp) => status_failure(resp).await,
                Err(e) => Failure::transport(&e),
            };
            retrier.after(failure).await?;
        }
    }
}
