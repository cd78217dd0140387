//! What the CDN may serve and how its bytes are had: the file by account, id
//! and name; a private file only with a valid, unexpired signature; its
//! bytes from the row (inline) or the blob store; every byte sent counted
//! into the account's bandwidth. `server::cdn` does the HTTP around it.

use super::error::ServiceError;
use super::App;
use crate::clock::period_of;
use crate::db::FileRow;
use crate::domain::signing::Verdict;
use crate::storage::{BlobStream, StorageError};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::AsyncWriteExt;

/// A file the caller may have, with its bytes if the row holds them.
#[derive(Debug)]
pub(crate) struct Found {
    pub(crate) row: FileRow,
    inline: Option<Vec<u8>>,
}

/// The bytes to send: a slice of the row's inline bytes, or the blob store's
/// stream (counted as it is sent).
pub(crate) enum Content {
    Inline(Bytes),
    Stream(Counted<BlobStream>),
}

/// The file `file_id` of `account_id`, if it is named `name` and the caller
/// may read it: public, or private with a signature (`expires`, `signature`
/// from the signed URL) that is valid and unexpired and covers `scope` (the
/// canonical image parameters of a variant, if one is asked for: then only
/// the row is read, as a variant's request needs the file's bytes only to
/// render). One metadata lookup.
pub(crate) async fn open(
    app: &App,
    account_id: &str,
    file_id: &str,
    name: &str,
    expires: Option<String>,
    signature: Option<String>,
    scope: Option<&str>,
) -> Result<Found, ServiceError> {
    let now = app.clock.now_ms();
    let found = if scope.is_some() {
        app.meta
            .file(account_id, file_id, now)
            .await?
            .map(|row| (row, None))
    } else {
        app.meta.file_with_data(account_id, file_id, now).await?
    };
    let (row, inline) = found
        .filter(|(r, _)| r.name == name)
        .ok_or_else(ServiceError::not_found)?;
    if row.private {
        check_signature(app, &row, expires, signature, scope)?;
    }
    Ok(Found { row, inline })
}

impl Found {
    /// The file's bytes in a spool file of their own (an image's source,
    /// read from the blob store at disk speed, not counted as bandwidth).
    pub(crate) async fn spool(&self, app: &App) -> Result<tempfile::TempPath, ServiceError> {
        let io = |e: std::io::Error| ServiceError::Internal(format!("spooling a source: {e}"));
        let (file, path) = tempfile::Builder::new()
            .prefix("source-")
            .tempfile_in(&app.spool_dir)
            .map_err(io)?
            .into_parts();
        let mut file = tokio::fs::File::from_std(file);
        if self.row.inline {
            // Opened for a variant: the row only, the bytes now.
            let data = match &self.inline {
                Some(data) => data.clone(),
                None => app
                    .meta
                    .file_with_data(&self.row.account_id, &self.row.id, app.clock.now_ms())
                    .await?
                    .and_then(|(_, data)| data)
                    .ok_or_else(ServiceError::not_found)?,
            };
            file.write_all(&data).await.map_err(io)?;
        } else {
            let mut stream = blob(app, &self.row.blob_key, 0, self.row.size).await?;
            while let Some(chunk) = stream.next().await {
                file.write_all(&chunk.map_err(io)?).await.map_err(io)?;
            }
        }
        file.flush().await.map_err(io)?;
        Ok(path)
    }

    /// The `len` bytes from `offset` (within the file, as the range allows):
    /// inline bytes are counted at once, a blob's as they are sent.
    pub(crate) async fn content(
        self,
        app: &Arc<App>,
        offset: u64,
        len: u64,
    ) -> Result<Content, ServiceError> {
        let row = self.row;
        if let Some(data) = self.inline {
            if data.len() as u64 != row.size {
                return Err(ServiceError::Internal(format!(
                    "inline bytes of {} are {} long, not {}",
                    row.id,
                    data.len(),
                    row.size
                )));
            }
            // Both ends are within `data`, whose length is the row's size.
            let at = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
            let body = Bytes::from(data).slice(at(offset)..at(offset + len));
            count_bandwidth(app, &row.account_id, len);
            return Ok(Content::Inline(body));
        }
        let stream = blob(app, &row.blob_key, offset, len).await?;
        Ok(Content::Stream(Counted::new(
            stream,
            row.account_id,
            app.clone(),
        )))
    }
}

fn check_signature(
    app: &App,
    row: &FileRow,
    expires: Option<String>,
    signature: Option<String>,
    scope: Option<&str>,
) -> Result<(), ServiceError> {
    let denied = |why: &str| ServiceError::Forbidden(format!("private file: {why}"));
    let (Some(expires), Some(sig)) = (expires, signature) else {
        return Err(denied("a signed URL is required"));
    };
    let expires: i64 = expires.parse().map_err(|_| denied("invalid signature"))?;
    match app.signer.verify(
        &row.account_id,
        &row.id,
        expires,
        scope,
        &sig,
        app.clock.now().timestamp(),
    ) {
        Verdict::Valid => Ok(()),
        Verdict::Expired => Err(denied("the signed URL has expired")),
        Verdict::Invalid => Err(denied("invalid signature")),
    }
}

/// `len` bytes from `offset` of the blob `key`; a blob the store does not
/// have is a 404 (its file went while the request was under way).
pub(crate) async fn blob(
    app: &App,
    key: &str,
    offset: u64,
    len: u64,
) -> Result<BlobStream, ServiceError> {
    app.store.get(key, offset, len).await.map_err(|e| match e {
        StorageError::NotFound(_) => ServiceError::not_found(),
        other => other.into(),
    })
}

/// A body stream that counts the bytes it hands to the connection and books
/// them as the account's bandwidth when it ends or is dropped.
pub(crate) struct Counted<S> {
    inner: S,
    sent: u64,
    account_id: String,
    app: Arc<App>,
}

impl<S> Counted<S> {
    /// `inner`, its bytes counted as `account_id`'s bandwidth.
    pub(crate) fn new(inner: S, account_id: String, app: Arc<App>) -> Counted<S> {
        Counted {
            inner,
            sent: 0,
            account_id,
            app,
        }
    }
}

impl<S: Stream<Item = std::io::Result<Bytes>> + Unpin> Stream for Counted<S> {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.inner.poll_next_unpin(cx);
        if let Poll::Ready(Some(Ok(chunk))) = &polled {
            self.sent += chunk.len() as u64;
        }
        polled
    }
}

impl<S> Drop for Counted<S> {
    fn drop(&mut self) {
        count_bandwidth(&self.app, &self.account_id, self.sent);
    }
}

/// Books `bytes` sent as `account_id`'s bandwidth.
pub(crate) fn count_bandwidth(app: &App, account_id: &str, bytes: u64) {
    let period = period_of(app.clock.now()).key;
    app.bandwidth.add(account_id, &period, bytes);
}
