//! A folder as a ZIP archive (docs/api.md, "Folder zip"): its live
//! files and its subfolders', paged through the metadata store, each one's
//! bytes from the row (inline) or streamed from the blob store, written as
//! STORED zip64 entries (`domain::zip`) to a small queue the response body
//! reads. Memory stays flat whatever the sizes: a page of rows, a few
//! chunks in the queue, and one small record per entry for the central
//! directory. The bytes sent count as the account's bandwidth, as the
//! CDN's do. The client going away ends the work at the next chunk.

use super::cdn::Counted;
use super::error::ServiceError;
use super::App;
use crate::db::{FileRow, FolderFilter, ListFilter, PageAfter};
use crate::domain::paths::{self, Unique};
use crate::domain::validate;
use crate::domain::zip::ZipWriter;
use crate::storage::{BlobStream, StorageError};
use bytes::{Bytes, BytesMut};
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use std::io;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Rows read from the metadata store at a time.
const PAGE: u32 = 500;
/// Chunks written ahead of the connection.
const QUEUE: usize = 4;

/// The archive of a folder: its file name and its bytes, as they are made.
pub(crate) struct FolderZip {
    /// `<last segment of the folder>.zip`.
    pub(crate) file_name: String,
    pub(crate) body: Counted<BoxStream<'static, io::Result<Bytes>>>,
}

/// Starts the archive of `folder` (required, not the root) and below: a
/// 400 for no folder or an invalid one, a 404 when no live file is in it
/// or below. The first page of files is read before answering.
pub(crate) async fn folder(
    app: &Arc<App>,
    account_id: &str,
    folder: Option<&str>,
) -> Result<FolderZip, ServiceError> {
    let folder = validate::folder(folder.unwrap_or(""))
        .map_err(ServiceError::BadRequest)?
        .ok_or_else(|| {
            ServiceError::bad_request("folder is required (the root cannot be zipped)")
        })?;
    let filter = ListFilter {
        folder: FolderFilter::Under(folder.clone()),
        metadata: Vec::new(),
    };
    let first = app
        .meta
        .page(account_id, &filter, None, PAGE, app.clock.now_ms())
        .await?;
    if first.is_empty() {
        return Err(ServiceError::NotFound(format!(
            "no file in folder {folder:?} or below"
        )));
    }
    let file_name = format!("{}.zip", folder.rsplit('/').next().unwrap_or(&folder));
    let (tx, rx) = mpsc::channel(QUEUE);
    let job = Job {
        app: app.clone(),
        account_id: account_id.to_string(),
        folder,
        filter,
    };
    tokio::spawn(async move {
        if let Err(Stop::Failed(e)) = job.run(first, &tx).await {
            tracing::warn!(folder = %job.folder, error = %e, "folder zip cut off");
            // The connection is then cut: the client sees an incomplete body.
            let _ = tx.send(Err(e)).await;
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
    .boxed();
    Ok(FolderZip {
        file_name,
        body: Counted::new(stream, account_id.to_string(), app.clone()),
    })
}

/// Why the archive stopped before its end.
enum Stop {
    /// The client went away.
    Gone,
    /// A store failed, or a blob is not the length of its file.
    Failed(io::Error),
}

fn failed(e: impl std::fmt::Display) -> Stop {
    Stop::Failed(io::Error::other(e.to_string()))
}

type Sender = mpsc::Sender<io::Result<Bytes>>;

async fn send(tx: &Sender, chunk: Bytes) -> Result<(), Stop> {
    if chunk.is_empty() {
        return Ok(());
    }
    tx.send(Ok(chunk)).await.map_err(|_| Stop::Gone)
}

/// Where an entry's bytes come from.
enum Source {
    Inline(Bytes),
    Blob(BlobStream),
}

struct Job {
    app: Arc<App>,
    account_id: String,
    folder: String,
    filter: ListFilter,
}

impl Job {
    /// Writes every file, page after page (newest first, as `GET /v1/files`
    /// lists them), then the central directory.
    async fn run(&self, mut rows: Vec<FileRow>, tx: &Sender) -> Result<(), Stop> {
        let mut zip = ZipWriter::new();
        let mut names = Unique::new();
        loop {
            let more = rows.len() > PAGE as usize;
            rows.truncate(PAGE as usize);
            let after = rows.last().map(|r| PageAfter {
                created_at: r.created_at,
                id: r.id.clone(),
            });
            for row in rows {
                self.entry(&mut zip, &mut names, &row, tx).await?;
            }
            if !more {
                break;
            }
            rows = self
                .app
                .meta
                .page(
                    &self.account_id,
                    &self.filter,
                    after,
                    PAGE,
                    self.app.clock.now_ms(),
                )
                .await
                .map_err(failed)?;
        }
        for chunk in zip.finish() {
            send(tx, chunk).await?;
        }
        Ok(())
    }

    /// Writes one file's entry; a file deleted since it was listed is skipped.
    async fn entry(
        &self,
        zip: &mut ZipWriter,
        names: &mut Unique,
        row: &FileRow,
        tx: &Sender,
    ) -> Result<(), Stop> {
        let Some(path) = paths::relative(&self.folder, row.folder.as_deref(), &row.name) else {
            return Ok(());
        };
        let Some(source) = self.open(row).await? else {
            return Ok(());
        };
        let name = names.claim(&path);
        let header = zip.start(&name, row.created_at);
        match source {
            Source::Inline(data) => {
                // Header, bytes and data descriptor in one chunk.
                zip.data(&data);
                let end = zip.end();
                let mut all = BytesMut::with_capacity(header.len() + data.len() + end.len());
                for part in [header, data, end] {
                    all.extend_from_slice(&part);
                }
                send(tx, all.freeze()).await
            }
            Source::Blob(mut stream) => {
                send(tx, header).await?;
                let mut sent = 0u64;
                while let Some(chunk) = stream.next().await {
                    let chunk = chunk.map_err(Stop::Failed)?;
                    sent += chunk.len() as u64;
                    zip.data(&chunk);
                    send(tx, chunk).await?;
                }
                if sent != row.size {
                    return Err(failed(format!(
                        "blob of {} gave {sent} bytes, not {}",
                        row.id, row.size
                    )));
                }
                send(tx, zip.end()).await
            }
        }
    }

    /// The bytes of `row`, or None when the file (or its blob) is gone.
    async fn open(&self, row: &FileRow) -> Result<Option<Source>, Stop> {
        let now = self.app.clock.now_ms();
        if row.inline {
            let found = self
                .app
                .meta
                .file_with_data(&self.account_id, &row.id, now)
                .await
                .map_err(failed)?;
            return Ok(match found {
                Some((_, Some(data))) => Some(Source::Inline(Bytes::from(data))),
                _ => None,
            });
        }
        if row.size == 0 {
            return Ok(Some(Source::Inline(Bytes::new())));
        }
        match self.app.store.get(&row.blob_key, 0, row.size).await {
            Ok(stream) => Ok(Some(Source::Blob(stream))),
            Err(StorageError::NotFound(_)) => Ok(None),
            Err(e) => Err(failed(e)),
        }
    }
}
