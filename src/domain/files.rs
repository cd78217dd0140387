//! A stored file, a resumable upload, and how a page of files is chosen:
//! the values the service speaks in, whichever door (the /v1 API, the CDN,
//! later S3 or the console) renders them.

use std::collections::BTreeMap;

/// A stored file, as the service knows it. Not serializable: each door
/// renders its own record of it (the outbox keeps it in a durable form of
/// its own, `db::model::DurableFile`), so no door can hand out its internal
/// fields (`blob_key`, `inline`) by mistake.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredFile {
    pub id: String,
    pub account_id: String,
    pub name: String,
    pub folder: Option<String>,
    pub size: u64,
    pub content_type: String,
    pub private: bool,
    pub sha256: String,
    /// Hex MD5 of the bytes (lower case), computed in the same pass as
    /// `sha256`; None: not yet known (a file stored before MD5s were kept).
    pub md5: Option<String>,
    pub blob_key: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    /// The bytes are in `inline_blobs` (small files), not in the blob store.
    pub inline: bool,
    /// The client's metadata (`domain::metadata`), empty when none.
    pub metadata: BTreeMap<String, String>,
    /// What S3 gave it beyond that (`domain::object`), empty when none.
    pub attrs: super::object::ObjectAttrs,
    /// When its stored bytes were found missing or not matching `sha256`
    /// (unix ms; CONTRACT §20): never served whole until repaired.
    pub damaged_at: Option<i64>,
    /// The CRC-32 (IEEE) of its bytes, recorded once a whole read of them
    /// matched `sha256`: what a whole download checks them against.
    /// None: not yet known.
    pub crc32: Option<u32>,
}

/// Position in the newest-first order: (created_at, id) of the last file seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageAfter {
    pub created_at: i64,
    pub id: String,
}

/// A rename, move or change of privacy of a file (`PATCH
/// /v1/files/{id}`): a `None` name or privacy stays; with `moves`, the file
/// goes to `folder` (None: the root).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileChange {
    pub name: Option<String>,
    pub moves: bool,
    pub folder: Option<String>,
    pub private: Option<bool>,
}

/// Which files a page lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListFilter {
    pub folder: FolderFilter,
    /// Each `(key, value)` must be in the file's metadata, exactly (keys
    /// already checked by `domain::metadata::valid_key`).
    pub metadata: Vec<(String, String)>,
}

/// Which folders a page covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderFilter {
    /// Every file.
    All,
    /// The files of the root only (no folder).
    Root,
    /// The files of this folder only.
    Exactly(String),
    /// The files of this folder and of every folder under it.
    Under(String),
}

/// A resumable (tus) upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadRow {
    pub id: String,
    pub account_id: String,
    pub file_id: String,
    pub blob_key: String,
    pub length: u64,
    /// Bytes received and durable (tus's offset).
    pub received: u64,
    pub name: String,
    /// As the client gave it; guessed from the name at completion when None.
    pub content_type: Option<String>,
    pub folder: Option<String>,
    pub private: bool,
    /// The file's lifetime (`expires`), from completion.
    pub expires_ms: Option<i64>,
    pub hash_state: String,
    /// The running MD5 (`domain::md5_state`); None for an upload
    /// begun before it was kept (its file's MD5 stays unknown).
    pub md5_state: Option<String>,
    pub store_state: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub completed_at: Option<i64>,
    pub idempotency_key: Option<String>,
    /// The key (`key_…`) that created it: with the account's secret keys,
    /// the only one that may continue, read or end it (None: made before
    /// this was recorded, any key of the account).
    pub created_by: Option<String>,
    /// How long it lives without receiving a byte (`expires_at` moves this
    /// far ahead of each PATCH that brings some).
    pub idle_ms: i64,
    /// The file's metadata (`domain::metadata`), given at creation.
    pub metadata: BTreeMap<String, String>,
    /// What its file does at its path, given at creation.
    pub at_path: super::filepath::AtPath,
}
