//! Streaming multipart upload: the file is read from disk in chunks as the
//! request is sent (memory stays flat whatever the size), every byte passes a
//! progress meter, and an `Idempotency-Key` (random per file, the same on
//! every retry) lets the server answer a retried upload with the file it
//! already stored instead of creating a second one.
//!
//! The file is hashed as it is sent (one read of it, not two), and its
//! SHA-256 goes in a `sha256` form field after the file part: reqwest sends
//! a form's parts in order, so that field's value is taken when the body
//! reaches it, once the file's last byte has been read. The server compares
//! it with what arrived (docs/decisions.md, "Checksums"). Each attempt hashes from zero.

use super::answer::{read_json, Fetched};
use super::error::ClientError;
use super::http::Client;
use super::retry::RetryNotice;
use super::Meter;
use crate::api::FileRecord;
use futures_util::StreamExt;
use reqwest::multipart::{Form, Part};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::io::AsyncReadExt;
use tokio_util::io::ReaderStream;

/// Read size of the upload stream.
const CHUNK: usize = 256 * 1024;

/// The form fields of an upload (docs/api.md, "Upload form").
#[derive(Debug, Clone, Default)]
pub(crate) struct UploadMeta {
    /// File name sent as the part's filename.
    pub name: String,
    /// Folder path; `None` for the root.
    pub folder: Option<String>,
    /// Store as private (needs a secret key).
    pub private: bool,
    /// Automatic deletion after this duration (`1h`, `7d`, …).
    pub expires: Option<String>,
    /// The part's Content-Type; the server guesses from the name when absent.
    pub content_type: Option<String>,
    /// The file's metadata (already checked; empty: none sent).
    pub metadata: crate::domain::metadata::Metadata,
    /// `replace=true`: the new file replaces every file at its path.
    pub replace: bool,
    /// `if_absent=true`: refused (409 `conflict`) when the path holds a file.
    pub if_absent: bool,
}

impl UploadMeta {
    /// The upload fields `replace` and `if_absent` as set.
    pub(crate) fn path_rules(&self) -> Vec<(&'static str, &'static str)> {
        let mut fields = Vec::new();
        if self.replace {
            fields.push(("replace", "true"));
        }
        if self.if_absent {
            fields.push(("if_absent", "true"));
        }
        fields
    }
}

/// A fresh idempotency key: 128 random bits, hex.
pub(crate) fn idempotency_key() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

impl Client {
    /// Uploads `size` bytes of the file at `path` with `meta`, retrying per
    /// the policy with one idempotency key. `meter` sees every byte sent and
    /// is reset when an attempt starts over.
    pub(crate) async fn upload(
        &self,
        path: &Path,
        size: u64,
        meta: &UploadMeta,
        meter: Arc<dyn Meter>,
        on_retry: &(dyn Fn(&RetryNotice) + Sync),
    ) -> Result<Fetched<FileRecord>, ClientError> {
        let key = idempotency_key();
        let url = self.url("upload");
        let started = AtomicBool::new(false);
        let make = || {
            let meter = meter.clone();
            let restart = started.swap(true, Ordering::Relaxed);
            let (url, key) = (&url, &key);
            async move {
                if restart {
                    meter.reset();
                }
                let form = form(path, size, meta, meter).await?;
                // The pool without a read timeout: the answer comes only
                // once the whole body is sent and stored.
                Ok(self
                    .upload_request(url)
                    .header("Idempotency-Key", key.as_str())
                    .multipart(form))
            }
        };
        let resp = self.execute(make, on_retry).await?;
        read_json(resp).await
    }
}

/// Builds the multipart form: the text fields first (so a server can refuse
/// a bad folder before reading the content), then the streamed file part,
/// then its `sha256`.
async fn form(
    path: &Path,
    size: u64,
    meta: &UploadMeta,
    meter: Arc<dyn Meter>,
) -> Result<Form, ClientError> {
    let file = tokio::fs::File::open(path)
        .await
        .map_err(|e| ClientError::io(format!("opening {}", path.display()), e))?;
    // The hash of the bytes read so far, and their count.
    let hashed = Arc::new(Mutex::new((Sha256::new(), 0u64)));
    let feed = hashed.clone();
    let stream = ReaderStream::with_capacity(file.take(size), CHUNK).map(move |chunk| {
        if let Ok(bytes) = &chunk {
            meter.add(bytes.len() as u64);
            let mut h = feed.lock().unwrap_or_else(PoisonError::into_inner);
            h.0.update(bytes);
            h.1 += bytes.len() as u64;
        }
        chunk
    });
    // Polled only once the file part has ended (see the module docs).
    let shown = path.display().to_string();
    let digest = futures_util::stream::once(async move {
        let (hasher, read) =
            std::mem::take(&mut *hashed.lock().unwrap_or_else(PoisonError::into_inner));
        if read != size {
            return Err(std::io::Error::other(format!(
                "{shown} changed while it was read ({read} bytes, not {size})"
            )));
        }
        Ok(hex::encode(hasher.finalize()))
    });
    let mut part = Part::stream_with_length(reqwest::Body::wrap_stream(stream), size)
        .file_name(meta.name.clone());
    if let Some(ct) = &meta.content_type {
        part = part
            .mime_str(ct)
            .map_err(|e| ClientError::usage(format!("invalid --content-type {ct:?}: {e}")))?;
    }
    let mut form = Form::new();
    for (field, value) in meta.path_rules() {
        form = form.text(field, value);
    }
    if let Some(folder) = &meta.folder {
        form = form.text("folder", folder.clone());
    }
    if meta.private {
        form = form.text("private", "true");
    }
    if let Some(expires) = &meta.expires {
        form = form.text("expires", expires.clone());
    }
    if !meta.metadata.is_empty() {
        form = form.text("metadata", crate::domain::metadata::to_json(&meta.metadata));
    }
    Ok(form.part("file", part).part(
        "sha256",
        Part::stream_with_length(reqwest::Body::wrap_stream(digest), 64),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idempotency_keys_are_random_128_bit_hex() {
        let (a, b) = (idempotency_key(), idempotency_key());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    async fn body(path: &Path, size: u64) -> Result<Vec<u8>, String> {
        let meta = UploadMeta {
            name: "a.bin".into(),
            folder: Some("f".into()),
            metadata: [("user".to_string(), "u1".to_string())].into(),
            ..Default::default()
        };
        let form = form(path, size, &meta, Arc::new(super::super::NoMeter))
            .await
            .unwrap();
        let mut out = Vec::new();
        let mut stream = std::pin::pin!(form.into_stream());
        while let Some(chunk) = stream.next().await {
            out.extend_from_slice(&chunk.map_err(|e| format!("{e:?}"))?);
        }
        Ok(out)
    }

    #[tokio::test]
    async fn the_sha256_field_follows_the_file_part_and_hashes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        let content: Vec<u8> = (0..600_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let sent = body(&path, content.len() as u64).await.unwrap();
        let at = |needle: &[u8]| sent.windows(needle.len()).position(|w| w == needle);
        let file_end = at(&content[content.len() - 64..]).unwrap();
        let field = format!(
            "name=\"sha256\"\r\n\r\n{}\r\n",
            hex::encode(Sha256::digest(&content))
        );
        let field_at = at(field.as_bytes()).expect("a sha256 field with the file's hash");
        assert!(field_at > file_end, "after the file part");
        assert!(at(b"name=\"folder\"").unwrap() < file_end, "fields first");
        let metadata = at(b"name=\"metadata\"\r\n\r\n{\"user\":\"u1\"}\r\n");
        assert!(
            metadata.unwrap() < file_end,
            "metadata as compact JSON, first"
        );
    }

    #[tokio::test]
    async fn a_file_that_shrinks_while_sent_fails_the_body() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        std::fs::write(&path, b"short").unwrap();
        let err = body(&path, 10).await.unwrap_err();
        assert!(err.contains("changed while it was read"), "{err}");
    }
}
