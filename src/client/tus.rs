//! Resumable uploads (tus 1.0.0, docs/api.md, "Resumable uploads") for large files: the file goes
//! in PATCHes of `chunk` bytes; a PATCH that fails is picked up where the
//! server's offset says (the server keeps what arrived), and an interrupted
//! run is resumed by the next run for the same file (same path, size and
//! modification time, same server, key and fields): the upload's URL is
//! remembered in the client's data dir until the file is stored. The bytes
//! are hashed as they are sent (the part sent by an earlier run is hashed
//! from disk) and the stored file's `sha256` is checked against it; a
//! mismatch deletes the file and fails with `checksum_mismatch`.

use super::answer::{decode_error, read_json, status_failure, Fetched};
use super::error::ClientError;
use super::http::Client;
use super::retry::{Failure, Retrier, RetryNotice};
use super::upload::UploadMeta;
use super::Meter;
use crate::api::{FileRecord, UploadStatus};
use crate::domain::tus;
use reqwest::{Method, Response, StatusCode};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio_util::io::ReaderStream;

/// Read size of a PATCH body.
const READ: usize = 256 * 1024;

/// The file's bytes hashed so far (from byte 0).
#[derive(Default)]
struct Hashed {
    hasher: Sha256,
    at: u64,
}

type SharedHash = Arc<Mutex<Hashed>>;

fn lock(h: &SharedHash) -> std::sync::MutexGuard<'_, Hashed> {
    h.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Client {
    /// Uploads the file at `path` (`size` bytes) through tus in PATCHes of
    /// `chunk` bytes; see the module's doc.
    pub(crate) async fn upload_resumable(
        &self,
        path: &Path,
        size: u64,
        meta: &UploadMeta,
        chunk: u64,
        meter: Arc<dyn Meter>,
        on_retry: &(dyn Fn(&RetryNotice) + Sync),
    ) -> Result<Fetched<FileRecord>, ClientError> {
        self.resumable(path, size, meta, chunk, meter, on_retry)
            .await
            .map_err(|e| self.explain(e))
    }

    /// [`Client::upload_resumable`], its errors as the server gave them.
    async fn resumable(
        &self,
        path: &Path,
        size: u64,
        meta: &UploadMeta,
        chunk: u64,
        meter: Arc<dyn Meter>,
        on_retry: &(dyn Fn(&RetryNotice) + Sync),
    ) -> Result<Fetched<FileRecord>, ClientError> {
        let memo = Memo::new(self, path, size, meta)?;
        let (url, mut offset) = if let Some(found) = self.resume(&memo).await? {
            found
        } else {
            let url = self.create(size, meta, on_retry).await?;
            memo.save(&url);
            (url, 0)
        };
        let hashed: SharedHash = Arc::default();
        rehash(&hashed, path, offset).await?;
        meter.resumed(offset);
        let mut retrier = Retrier::new(self.policy(), on_retry);
        let file_id = loop {
            if offset == size {
                // Everything was sent by an earlier run or attempt: the
                // upload is complete, or one empty PATCH completes it.
                if let Some(id) = self.completed(&url).await? {
                    break id;
                }
            }
            let end = size.min(offset + chunk.max(1));
            match self.patch(&url, path, offset, end, &hashed, &meter).await {
                Ok(resp) if resp.status() == StatusCode::NO_CONTENT => {
                    retrier = Retrier::new(self.policy(), on_retry);
                    offset = header_u64(&resp, "upload-offset")?;
                    if let Some(id) = header(&resp, "x-file-id") {
                        break id;
                    }
                    continue;
                }
                Ok(resp)
                    if resp.status() == StatusCode::NOT_FOUND
                        || resp.status() == StatusCode::GONE =>
                {
                    memo.clear();
                    return Err(decode_error(resp).await);
                }
                // Another request moved the offset: ask where it stands.
                Ok(resp) if resp.status() == StatusCode::CONFLICT => {
                    retrier.after(conflict(resp).await).await?;
                }
                Ok(resp) => retrier.after(status_failure(resp).await).await?,
                Err(e) => retrier.after(Failure::transport(&e)).await?,
            }
            offset = self.offset_with_retries(&url, on_retry).await?;
            rehash(&hashed, path, offset).await?;
            meter.reset();
            meter.add(offset);
        };
        // The hash covers the whole file, whoever sent which part of it.
        rehash(&hashed, path, size).await?;
        let expected = hex::encode(std::mem::take(&mut *lock(&hashed)).hasher.finalize());
        let stored = self.status(&url).await?;
        memo.clear();
        let Some(file) = stored.file.filter(|f| f.id == file_id) else {
            return Err(ClientError::Protocol(format!(
                "the upload completed as {file_id}, which the server does not show"
            )));
        };
        if file.sha256 != expected {
            // Never leave bytes that are not the file's behind.
            let _ = self.delete(&file.id).await;
            return Err(ClientError::ChecksumMismatch(format!(
                "the server stored sha256 {}, the file has {expected}; the stored copy was deleted",
                file.sha256
            )));
        }
        let raw = serde_json::to_value(&file)
            .map_err(|e| ClientError::Protocol(format!("record: {e}")))?;
        Ok(Fetched { record: file, raw })
    }

    /// A request with the key on the pool without a read timeout, in tus.
    fn tus(&self, method: Method, url: &str) -> reqwest::RequestBuilder {
        self.upload_request_with(method, url)
            .header("tus-resumable", tus::VERSION)
    }

    /// `POST /v1/uploads`: the new upload's URL.
    async fn create(
        &self,
        size: u64,
        meta: &UploadMeta,
        on_retry: &(dyn Fn(&RetryNotice) + Sync),
    ) -> Result<String, ClientError> {
        let mut fields = vec![("filename", meta.name.as_str())];
        if let Some(folder) = &meta.folder {
            fields.push(("folder", folder));
        }
        if meta.private {
            fields.push(("private", "true"));
        }
        if let Some(expires) = &meta.expires {
            fields.push(("expires", expires));
        }
        if let Some(ct) = &meta.content_type {
            fields.push(("filetype", ct));
        }
        fields.extend(meta.path_rules());
        let json = crate::domain::metadata::to_json(&meta.metadata);
        if !meta.metadata.is_empty() {
            fields.push(("metadata", &json));
        }
        let metadata = tus::encode_metadata(&fields);
        let url = self.url("uploads");
        // One key for every attempt: a retry after a lost answer gets the
        // upload the first attempt made, not a second one holding quota.
        let key = super::upload::idempotency_key();
        let make = || {
            let req = self
                .tus(Method::POST, &url)
                .header("upload-length", size)
                .header("upload-metadata", metadata.as_str())
                .header("idempotency-key", key.as_str());
            async move { Ok(req) }
        };
        let resp = self.execute(make, on_retry).await?;
        let location = header(&resp, "location").ok_or_else(|| {
            ClientError::Protocol("the upload was created without a Location".into())
        })?;
        Ok(location)
    }

    /// The upload a memo names, and its offset; None when there is none
    /// (or the server no longer has it).
    async fn resume(&self, memo: &Memo) -> Result<Option<(String, u64)>, ClientError> {
        let Some(url) = memo.load() else {
            return Ok(None);
        };
        let resp = self
            .tus(Method::HEAD, &url)
            .send()
            .await
            .map_err(|e| ClientError::network(&e))?;
        if resp.status().is_success() {
            return Ok(Some((url, header_u64(&resp, "upload-offset")?)));
        }
        if matches!(resp.status(), StatusCode::NOT_FOUND | StatusCode::GONE) {
            memo.clear();
            return Ok(None);
        }
        Err(decode_error(resp).await)
    }

    /// `HEAD`: the upload's offset, retrying per the policy.
    async fn offset_with_retries(
        &self,
        url: &str,
        on_retry: &(dyn Fn(&RetryNotice) + Sync),
    ) -> Result<u64, ClientError> {
        let make = || {
            let req = self.tus(Method::HEAD, url);
            async move { Ok(req) }
        };
        let resp = self.execute(make, on_retry).await?;
        header_u64(&resp, "upload-offset")
    }

    /// With every byte sent: the file's id if the upload is complete (the
    /// answer to its last PATCH was lost), or None (an empty upload, whose
    /// one empty PATCH is still to come).
    async fn completed(&self, url: &str) -> Result<Option<String>, ClientError> {
        let head = self
            .tus(Method::HEAD, url)
            .send()
            .await
            .map_err(|e| ClientError::network(&e))?;
        if !head.status().is_success() {
            return Err(decode_error(head).await);
        }
        Ok(header(&head, "x-file-id"))
    }

    /// One PATCH of the file's bytes `[offset, end)`, hashed and metered as
    /// they are read.
    async fn patch(
        &self,
        url: &str,
        path: &Path,
        offset: u64,
        end: u64,
        hashed: &SharedHash,
        meter: &Arc<dyn Meter>,
    ) -> Result<Response, reqwest::Error> {
        let body = match region(path, offset, end, hashed.clone(), meter.clone()).await {
            Ok(b) => b,
            // Unreadable now: sent as a body that fails, which ends the
            // attempt like a broken connection (and says why).
            Err(e) => reqwest::Body::wrap_stream(futures_util::stream::once(async move {
                Err::<bytes::Bytes, _>(e)
            })),
        };
        self.tus(Method::PATCH, url)
            .header("content-type", tus::OFFSET_STREAM)
            .header("upload-offset", offset)
            .header("content-length", end - offset)
            .body(body)
            .send()
            .await
    }

    /// `GET /v1/uploads/{id}`: the upload and its file.
    async fn status(&self, url: &str) -> Result<UploadStatus, ClientError> {
        let resp = self
            .request(Method::GET, url)
            .send()
            .await
            .map_err(|e| ClientError::network(&e))?;
        if !resp.status().is_success() {
            return Err(decode_error(resp).await);
        }
        Ok(read_json::<UploadStatus>(resp).await?.record)
    }
}

/// A 409 as a failed attempt worth another (after a `HEAD`).
async fn conflict(resp: Response) -> Failure {
    let mut f = status_failure(resp).await;
    f.retryable = true;
    f
}

/// The bytes `[offset, end)` of the file, hashed into `hashed` (which is at
/// `offset`) and counted by `meter` as they are read.
async fn region(
    path: &Path,
    offset: u64,
    end: u64,
    hashed: SharedHash,
    meter: Arc<dyn Meter>,
) -> std::io::Result<reqwest::Body> {
    let mut file = tokio::fs::File::open(path).await?;
    file.seek(std::io::SeekFrom::Start(offset)).await?;
    let stream = ReaderStream::with_capacity(file.take(end - offset), READ);
    let stream = futures_util::StreamExt::map(stream, move |chunk| {
        if let Ok(bytes) = &chunk {
            meter.add(bytes.len() as u64);
            let mut h = lock(&hashed);
            h.hasher.update(bytes);
            h.at += bytes.len() as u64;
        }
        chunk
    });
    Ok(reqwest::Body::wrap_stream(stream))
}

/// Makes `hashed` the hash of the file's first `offset` bytes (reading them
/// again when it has gone past them, or is short of them).
async fn rehash(hashed: &SharedHash, path: &Path, offset: u64) -> Result<(), ClientError> {
    if lock(hashed).at == offset {
        return Ok(());
    }
    let mut file = tokio::fs::File::open(path)
        .await
        .map_err(|e| ClientError::io(format!("opening {}", path.display()), e))?;
    let mut h = Hashed::default();
    let mut buf = vec![0u8; READ];
    while h.at < offset {
        let want = usize::try_from((offset - h.at).min(READ as u64)).unwrap_or(READ);
        let n = file
            .read(&mut buf[..want])
            .await
            .map_err(|e| ClientError::io(format!("reading {}", path.display()), e))?;
        if n == 0 {
            return Err(ClientError::io(
                format!("reading {}", path.display()),
                std::io::Error::other("the file is shorter than when its upload began"),
            ));
        }
        h.hasher.update(&buf[..n]);
        h.at += n as u64;
    }
    *lock(hashed) = h;
    Ok(())
}

fn header(resp: &Response, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn header_u64(resp: &Response, name: &str) -> Result<u64, ClientError> {
    header(resp, name)
        .and_then(|v| tus::parse_size(name, &v).ok())
        .ok_or_else(|| ClientError::Protocol(format!("the server sent no valid {name}")))
}

/// Where the URL of an upload in progress is remembered between runs: a file
/// named by the hash of everything that makes it the same upload.
struct Memo {
    path: Option<PathBuf>,
}

impl Memo {
    fn new(
        client: &Client,
        file: &Path,
        size: u64,
        meta: &UploadMeta,
    ) -> Result<Memo, ClientError> {
        let Some(dir) = directories::ProjectDirs::from("", "", "filestore")
            .map(|d| d.data_local_dir().join("uploads"))
        else {
            // No home directory: uploads still work, they just cannot resume.
            return Ok(Memo { path: None });
        };
        let abs = std::fs::canonicalize(file)
            .map_err(|e| ClientError::io(format!("reading {}", file.display()), e))?;
        let mtime = std::fs::metadata(&abs)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let mut h = Sha256::new();
        // Empty when there is none, so memos written before metadata existed still match.
        let file_metadata = if meta.metadata.is_empty() {
            String::new()
        } else {
            crate::domain::metadata::to_json(&meta.metadata)
        };
        for part in [
            client.server(),
            &abs.to_string_lossy(),
            &size.to_string(),
            &mtime.to_string(),
            &client.key_fingerprint(),
            &meta.name,
            meta.folder.as_deref().unwrap_or(""),
            if meta.private { "private" } else { "" },
            meta.expires.as_deref().unwrap_or(""),
            meta.content_type.as_deref().unwrap_or(""),
            if meta.replace { "replace" } else { "" },
            if meta.if_absent { "if_absent" } else { "" },
            &file_metadata,
        ] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        let name = hex::encode(&h.finalize()[..16]);
        Ok(Memo {
            path: Some(dir.join(name)),
        })
    }

    fn load(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.path.as_ref()?).ok()?;
        let url = text.trim();
        url.starts_with("http").then(|| url.to_string())
    }

    /// Best effort: an upload whose URL could not be kept still works.
    fn save(&self, url: &str) {
        let Some(path) = &self.path else { return };
        if let Some(dir) = path.parent() {
            let _ = crate::private_dir::create(dir);
        }
        let _ = std::fs::write(path, url);
    }

    fn clear(&self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}
