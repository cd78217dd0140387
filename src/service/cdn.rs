//! What the CDN may serve and how its bytes are had: the file by account, id
//! and name; a private file only with a valid, unexpired signature; its
//! bytes from the row (inline) or the blob store (a download under the
//! memory budget: `service::download`); every byte sent counted into the
//! account's bandwidth. `server::cdn` does the HTTP around it.

pub(crate) use super::download::Counted;
use super::download::{self, Socket};
use super::error::ServiceError;
use super::integrity;
use super::App;
use crate::db::FileRow;
use crate::domain::filepath;
use crate::domain::signing::{Subject, Verdict};
use crate::storage::{BlobStream, StorageError};
use bytes::Bytes;
use futures_util::StreamExt;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// A file the caller may have, with its bytes if the row holds them.
#[derive(Debug)]
pub(crate) struct Found {
    pub(crate) row: FileRow,
    inline: Option<Bytes>,
}

/// How long a file served by this node is answered from memory: a change
/// made on another node (a delete, a rename) is seen within this; one made
/// on this node at once ([`Recent::forget`]).
const RECENT_TTL: Duration = Duration::from_secs(1);
/// Bytes of rows and inline bytes kept, all together.
const RECENT_BYTES: u64 = 64 << 20;

/// A file served lately: its row and, when the row holds them, its bytes.
type Seen = Arc<Kept>;

/// What [`Recent`] keeps of a file.
pub(crate) struct Kept {
    row: FileRow,
    data: Option<Bytes>,
    /// What the HTTP layer made of it, once, for the CDN's hot path (its
    /// ready answer: `server::hot`); it goes with the file.
    pub(crate) made: OnceLock<Arc<dyn Any + Send + Sync>>,
}

impl Kept {
    fn new(row: FileRow, data: Option<Bytes>) -> Kept {
        Kept {
            row,
            data,
            made: OnceLock::new(),
        }
    }

    pub(crate) fn row(&self) -> &FileRow {
        &self.row
    }

    /// The file's bytes (a hot file has them).
    pub(crate) fn data(&self) -> &Bytes {
        static NONE: Bytes = Bytes::from_static(b"");
        self.data.as_ref().unwrap_or(&NONE)
    }
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept")
            .field("row", &self.row)
            .finish_non_exhaustive()
    }
}

/// The files this node served in the last [`RECENT_TTL`], by account and id,
/// so that a hot file costs no metadata lookup (a round trip, on a database
/// server). Only a file found is kept; what the row says is checked on
/// every request as on a lookup (its name, its expiry, a private file's
/// signature), and a name that does not match asks the database.
#[derive(Debug)]
pub(crate) struct Recent {
    /// Hashed with `foldhash`, not SipHash: a key is only stored once a
    /// lookup found its file, so nobody can fill the table with keys of
    /// their choosing, and the hot path hashes one on every request.
    seen: moka::sync::Cache<String, Seen, foldhash::fast::RandomState>,
    /// Changes made on this node so far: a row read before a change and
    /// kept after it is dropped again (see [`Recent::keep`]).
    changes: AtomicU64,
}

impl Default for Recent {
    fn default() -> Recent {
        Recent {
            seen: moka::sync::Cache::builder()
                .max_capacity(RECENT_BYTES)
                .time_to_live(RECENT_TTL)
                .weigher(|k: &String, v: &Seen| {
                    // The ready answer a hot file may get is about its row's size again.
                    let w = 2 * weight(&v.row, None) + v.data.as_ref().map_or(0, Bytes::len);
                    u32::try_from(k.len() + w).unwrap_or(u32::MAX)
                })
                .build_with_hasher(foldhash::fast::RandomState::default()),
            changes: AtomicU64::new(0),
        }
    }
}

/// About what a kept file takes in memory.
fn weight(row: &FileRow, data: Option<&Bytes>) -> usize {
    let strings = [
        &row.id,
        &row.account_id,
        &row.name,
        &row.content_type,
        &row.sha256,
        &row.blob_key,
    ]
    .iter()
    .map(|s| s.len())
    .sum::<usize>();
    let metadata: usize = row
        .metadata
        .iter()
        .map(|(k, v)| k.len() + v.len() + 64)
        .sum();
    let a = &row.attrs;
    let attrs: usize = [
        &a.cache_control,
        &a.content_disposition,
        &a.content_encoding,
        &a.content_language,
        &a.expires,
        &a.etag,
    ]
    .iter()
    .map(|v| v.as_ref().map_or(0, String::len))
    .sum::<usize>()
        + a.checksum.as_ref().map_or(0, |c| c.value.len() + 16)
        + a.parts.len() * 8;
    strings
        + row.folder.as_ref().map_or(0, String::len)
        + metadata
        + attrs
        + data.map_or(0, Bytes::len)
        + 256
}

impl Recent {
    fn key(account_id: &str, file_id: &str) -> String {
        let mut key = String::new();
        Self::key_into(&mut key, account_id, file_id);
        key
    }

    /// Writes the key of `file_id` of `account_id` into `key`.
    fn key_into(key: &mut String, account_id: &str, file_id: &str) {
        key.clear();
        key.push_str(account_id);
        key.push('/');
        key.push_str(file_id);
    }

    /// The kept file `file_id` of `account_id`, looked up without making
    /// its key anew ([`with_key`]).
    fn get(&self, account_id: &str, file_id: &str) -> Option<Seen> {
        with_key(account_id, file_id, |key| self.seen.get(key))
    }

    /// A file changed or went on this node: not answered from memory again.
    /// The count moves first, so a lookup in flight that read the file
    /// before the change drops what it keeps.
    pub(crate) fn forget(&self, account_id: &str, file_id: &str) {
        self.changes.fetch_add(1, Ordering::SeqCst);
        self.seen.invalidate(&Self::key(account_id, file_id));
    }

    /// Files went that are not named one by one (a folder delete).
    pub(crate) fn forget_all(&self) {
        self.changes.fetch_add(1, Ordering::SeqCst);
        self.seen.invalidate_all();
    }

    /// Keeps `found`, read when the change count was `before`; drops it
    /// again when a change was made on this node meanwhile.
    fn keep(&self, key: &str, found: Seen, before: u64) {
        self.seen.insert(key.to_string(), found);
        if self.changes.load(Ordering::SeqCst) != before {
            self.seen.invalidate(key);
        }
    }
}

/// Calls `f` with the key `a/b` made in a buffer of the thread's: a key
/// looked up on every request of a hot path, not allocated anew each time.
pub(crate) fn with_key<T>(a: &str, b: &str, f: impl FnOnce(&str) -> T) -> T {
    thread_local! {
        static KEY: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    KEY.with_borrow_mut(|key| {
        Recent::key_into(key, a, b);
        f(key)
    })
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
/// canonical image parameters of a variant, if one is asked for). One
/// metadata lookup, or none for a file this node read in the last second
/// (a variant's request keeps the row too: a cached variant then costs no
/// lookup at all).
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
    let key = Recent::key(account_id, file_id);
    let seen = app
        .recent
        .seen
        .get(&key)
        .filter(|s| s.row.name == name && s.row.expires_at.is_none_or(|at| at > now));
    let found = if let Some(seen) = seen {
        Some((seen.row.clone(), seen.data.clone()))
    } else {
        let before = app.recent.changes.load(Ordering::SeqCst);
        let found = app.meta.file_with_data(account_id, file_id, now).await?;
        found.map(|(row, data)| {
            let data = data.map(Bytes::from);
            app.recent
                .keep(&key, Arc::new(Kept::new(row.clone(), data.clone())), before);
            (row, data)
        })
    };
    let (row, inline) = found
        .filter(|(r, _)| r.name == name)
        .ok_or_else(ServiceError::not_found)?;
    if row.private {
        let subject = Subject::File(&row.id);
        check_signature(app, &row.account_id, subject, expires, signature, scope)?;
    }
    Ok(Found { row, inline })
}

/// The newest file of `account_id` at `path` (a stable link), if the
/// caller may read it: public, or private with a signature of the path
/// (`POST /v1/files/{id}/signed-url` with `by_path`) that is valid and
/// unexpired and covers `scope`. A private newest without a valid
/// signature is 404 (a stable link does not tell that a private file is
/// there), an expired one 403. One metadata lookup, never answered from
/// memory (a file published there is served at once); a path no file can
/// have is 404.
pub(crate) async fn open_path(
    app: &App,
    account_id: &str,
    path: &str,
    expires: Option<String>,
    signature: Option<String>,
    scope: Option<&str>,
) -> Result<Found, ServiceError> {
    let (folder, name) = filepath::split(path).map_err(|_| ServiceError::not_found())?;
    let now = app.clock.now_ms();
    let (row, inline) = app
        .meta
        .file_at_with_data(account_id, folder.as_deref(), &name, now)
        .await?
        .ok_or_else(ServiceError::not_found)?;
    if row.private {
        let path = filepath::join(folder.as_deref(), &name);
        let subject = Subject::Path(&path);
        match verdict(app, account_id, subject, expires, signature, scope) {
            Some(Verdict::Valid) => {}
            Some(Verdict::Expired) => return Err(denied("the signed URL has expired")),
            Some(Verdict::Invalid) | None => return Err(ServiceError::not_found()),
        }
    }
    Ok(Found {
        row,
        inline: inline.map(Bytes::from),
    })
}

/// The newest file of the caller's own account at `folder/name` (an S3
/// GET or HEAD: the owner reads private files too), with its bytes when
/// its row holds them; 404 when there is none.
pub(crate) async fn open_own(
    app: &App,
    account_id: &str,
    folder: &str,
    name: &str,
) -> Result<Found, ServiceError> {
    let now = app.clock.now_ms();
    let (row, inline) = app
        .meta
        .file_at_with_data(account_id, Some(folder), name, now)
        .await?
        .ok_or_else(ServiceError::not_found)?;
    Ok(Found {
        row,
        inline: inline.map(Bytes::from),
    })
}

/// The file `file_id` of `account_id` named `name`, when this node served
/// it in the last second and may answer it from memory as it is: public,
/// unexpired, its bytes in its row (and all there). None: the full path
/// decides (a lookup, a signature, the blob store). `now`: this clock's
/// milliseconds (`Clock::ms_at`).
pub(crate) fn hot(
    app: &App,
    account_id: &str,
    file_id: &str,
    name: &str,
    now: i64,
) -> Option<Seen> {
    let seen = hot_row(app, account_id, file_id, name, now)?;
    let whole = seen
        .data
        .as_ref()
        .is_some_and(|d| d.len() as u64 == seen.row.size);
    (whole && seen.row.damaged_at.is_none()).then_some(seen)
}

/// The file `file_id` of `account_id` named `name`, when this node served
/// it in the last second and it is public and unexpired, wherever its
/// bytes are: the row a cached variant of it is answered from memory by
/// (`server::hot`). None: the full path decides.
pub(crate) fn hot_row(
    app: &App,
    account_id: &str,
    file_id: &str,
    name: &str,
    now: i64,
) -> Option<Seen> {
    let seen = app.recent.get(account_id, file_id)?;
    let row = &seen.row;
    (row.name == name && !row.private && row.expires_at.is_none_or(|at| at > now)).then_some(seen)
}

/// Books a hot file's `bytes` sent at `now` as its account's bandwidth.
pub(crate) fn count_hot(app: &App, kept: &Kept, bytes: u64, now: i64) {
    super::bandwidth::count_bandwidth_at(app, &kept.row.account_id, bytes, now);
}

impl Found {
    /// The file's bytes in a spool file of their own (an image's source,
    /// read from the blob store at disk speed, not counted as bandwidth).
    pub(crate) async fn spool(&self, app: &App) -> Result<tempfile::TempPath, ServiceError> {
        let io = |e: std::io::Error| ServiceError::Internal(format!("spooling a source: {e}"));
        if self.row.damaged_at.is_some() {
            return Err(integrity::damaged(&self.row));
        }
        if !self.row.inline {
            if let Some(linked) = self.link(app).await {
                // The store's own file, linked: no copy of the source (and
                // the link keeps the bytes if the file is deleted meanwhile).
                return Ok(linked);
            }
        }
        let (file, path) = tempfile::Builder::new()
            .prefix("source-")
            .tempfile_in(&app.spool_dir)
            .map_err(io)?
            .into_parts();
        let mut file = tokio::fs::File::from_std(file);
        if self.row.inline {
            // [`open`] reads an inline file's bytes with its row.
            let data = self.inline.as_ref().ok_or_else(ServiceError::not_found)?;
            file.write_all(data).await.map_err(io)?;
        } else {
            let mut stream = blob(app, &self.row.blob_key, 0, self.row.size).await?;
            while let Some(chunk) = stream.next().await {
                file.write_all(&chunk.map_err(io)?).await.map_err(io)?;
            }
        }
        file.flush().await.map_err(io)?;
        Ok(path)
    }

    /// The blob's own file linked into the spool folder, when the store
    /// keeps its blobs on this file system; `None` to copy instead (another
    /// file system, a remote store).
    async fn link(&self, app: &App) -> Option<tempfile::TempPath> {
        let blob = app.store.local_file(&self.row.blob_key)?;
        let dir = app.spool_dir.clone();
        let linked = tokio::task::spawn_blocking(move || {
            tempfile::Builder::new()
                .prefix("source-")
                .make_in(&dir, |at| std::fs::hard_link(&blob, at))
        })
        .await
        .ok()?;
        // Whatever failed (another file system, no such blob), the copy
        // tells it again, or does the work.
        linked.ok().map(tempfile::NamedTempFile::into_temp_path)
    }

    /// The `len` bytes from `offset` (within the file, as the range allows):
    /// inline bytes are counted at once; a blob's are read a window at a
    /// time through `socket` (the connection's, when it gives one) with a
    /// buffer of the memory budget (`service::download`), and counted as
    /// the socket accepts them.
    pub(crate) async fn content(
        self,
        app: &Arc<App>,
        offset: u64,
        len: u64,
        socket: Option<Arc<Socket>>,
    ) -> Result<Content, ServiceError> {
        let row = self.row;
        if row.damaged_at.is_some() {
            return Err(integrity::damaged(&row));
        }
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
            return Ok(Content::Inline(held_slice(
                app,
                &row.account_id,
                &data,
                offset,
                len,
            )));
        }
        let buffer = app.downloads.take().await?;
        let chunk = download::ChunkSize::new(download::WINDOW);
        let stream = match app
            .store
            .get_chunked(&row.blob_key, offset, len, chunk.clone())
            .await
        {
            Ok(stream) => stream,
            Err(StorageError::NotFound(_)) => return Err(missing(app, &row).await),
            Err(e) => return Err(e.into()),
        };
        // A whole file is checked against its SHA-256 as it goes out.
        let stream = if offset == 0 && len == row.size {
            integrity::Verified::new(stream, app.clone(), row.clone()).boxed()
        } else {
            stream
        };
        Ok(Content::Stream(Counted::bounded(
            stream,
            row.account_id,
            app.clone(),
            socket,
            buffer,
            chunk,
        )))
    }
}

/// The blob of `row` is not in the store: its file went while the request
/// was under way (404), or, still there, its bytes are lost: marked
/// damaged (500), never a 404 while the file is listed.
async fn missing(app: &App, row: &FileRow) -> ServiceError {
    match app.meta.file(&row.account_id, &row.id, i64::MIN).await {
        Ok(Some(_)) => {
            integrity::mark(app, row, "its blob is missing").await;
            integrity::damaged(row)
        }
        Ok(None) => ServiceError::not_found(),
        Err(e) => e.into(),
    }
}

/// The 403 of a private file the request may not read.
fn denied(why: &str) -> ServiceError {
    ServiceError::Forbidden(format!("private file: {why}"))
}

/// A private file's `/live/` URL: 403 without a valid, unexpired signature.
fn check_signature(
    app: &App,
    account_id: &str,
    subject: Subject<'_>,
    expires: Option<String>,
    signature: Option<String>,
    scope: Option<&str>,
) -> Result<(), ServiceError> {
    match verdict(app, account_id, subject, expires, signature, scope) {
        Some(Verdict::Valid) => Ok(()),
        Some(Verdict::Expired) => Err(denied("the signed URL has expired")),
        Some(Verdict::Invalid) => Err(denied("invalid signature")),
        None => Err(denied("a signed URL is required")),
    }
}

/// What the URL's signature says of `subject` now (None: it has none).
fn verdict(
    app: &App,
    account_id: &str,
    subject: Subject<'_>,
    expires: Option<String>,
    signature: Option<String>,
    scope: Option<&str>,
) -> Option<Verdict> {
    let (Some(expires), Some(sig)) = (expires, signature) else {
        return None;
    };
    let Ok(expires) = expires.parse::<i64>() else {
        return Some(Verdict::Invalid);
    };
    let now = app.clock.now().timestamp();
    Some(
        app.signer
            .verify_subject(account_id, subject, expires, scope, &sig, now),
    )
}

/// `len` bytes from `offset` of the blob `key`; a blob the store does not
/// have is a 404 (its file went while the request was under way).
pub(crate) async fn blob(
    app: &App,
    key: &str,
    offset: u64,
    len: u64,
) -> Result<BlobStream, ServiceError> {
    app.store.get(key, offset, len).await.map_err(not_found)
}

/// A blob the store does not have as a 404.
fn not_found(e: StorageError) -> ServiceError {
    match e {
        StorageError::NotFound(_) => ServiceError::not_found(),
        other => other.into(),
    }
}

/// The `len` bytes from `offset` of bytes held in memory (a file's inline
/// bytes, a kept variant), booked at once as `account_id`'s bandwidth. The
/// caller has checked both ends are within `data`.
pub(crate) fn held_slice(
    app: &App,
    account_id: &str,
    data: &Bytes,
    offset: u64,
    len: u64,
) -> Bytes {
    let at = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    super::bandwidth::count_bandwidth(app, account_id, len);
    data.slice(at(offset)..at(offset + len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(name: &str) -> Seen {
        Arc::new(Kept::new(
            FileRow {
                name: name.into(),
                ..FileRow::default()
            },
            Some(Bytes::from_static(b"abc")),
        ))
    }

    /// A row read before a change on this node, kept after it, is dropped:
    /// whatever the interleaving, a delete or rename here is seen at once.
    #[test]
    fn a_row_read_before_a_change_is_not_kept() {
        let r = Recent::default();
        let before = r.changes.load(Ordering::SeqCst);
        r.keep("acc/f", seen("a.txt"), before);
        assert!(r.seen.get("acc/f").is_some());
        let before = r.changes.load(Ordering::SeqCst);
        r.forget("acc", "f");
        assert!(r.seen.get("acc/f").is_none());
        // The lookup that started before the forget stores its (old) row late.
        r.keep("acc/f", seen("a.txt"), before);
        assert!(r.seen.get("acc/f").is_none());
        let before = r.changes.load(Ordering::SeqCst);
        r.forget_all();
        r.keep("acc/g", seen("b.txt"), before);
        assert!(r.seen.get("acc/g").is_none());
    }

    #[test]
    fn a_kept_file_weighs_its_strings_and_bytes() {
        let mut row = FileRow {
            name: "n".repeat(200),
            ..FileRow::default()
        };
        row.metadata.insert("k".repeat(40), "v".repeat(500));
        let w = weight(&row, Some(&Bytes::from(vec![0; 1000])));
        assert!(w >= 200 + 540 + 1000, "{w}");
    }
}
