//! Streaming download from a CDN URL (the file's public URL or a signed one),
//! without the API key. A transfer cut off midway is resumed with `Range`
//! (and `If-Range` on the ETag) rather than started over.

use super::error::ClientError;
use super::http::{status_failure, Client};
use super::retry::{Failure, Retrier, RetryNotice};
use super::Meter;
use futures_util::StreamExt;
use reqwest::header::{ETAG, IF_RANGE, RANGE};
use reqwest::StatusCode;
use std::io::SeekFrom;
use tokio::io::{AsyncSeekExt, AsyncWrite, AsyncWriteExt};

/// Where downloaded bytes go.
pub enum Sink {
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
    /// already there (a download resumed: the rest is asked for with
    /// `Range`); gives the number of bytes the sink then holds.
    pub async fn download(
        &self,
        url: &str,
        sink: &mut Sink,
        start: u64,
        meter: &dyn Meter,
        on_retry: &(dyn Fn(&RetryNotice) + Sync),
    ) -> Result<u64, ClientError> {
        let write_err = |e: std::io::Error| ClientError::io("writing the download", e);
        let mut retrier = Retrier::new(self.policy(), on_retry);
        let mut written = start;
        meter.add(start);
        let mut etag: Option<reqwest::header::HeaderValue> = None;
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
                        meter.reset();
                    }
                    if written == 0 {
                        etag = resp.headers().get(ETAG).cloned();
                    }
                    let mut body = resp.bytes_stream();
                    let mut cut = None;
                    while let Some(chunk) = body.next().await {
                        match chunk {
                            Ok(bytes) => {
                                sink.writer().write_all(&bytes).await.map_err(write_err)?;
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
                            return Ok(written);
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
