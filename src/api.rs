//! Wire types shared by the server and the client: exactly the records of the API reference (docs/api.md).

use serde::{Deserialize, Serialize};

/// A stored file, as upload, get and list return it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct FileRecord {
    /// `f_` and 44 hex digits.
    #[schema(pattern = "^f_[0-9a-f]{44}$")]
    pub id: String,
    /// `{cdn_url}/live/<account>/<file>/<name>`; null for a private file.
    #[schema(format = "uri")]
    pub url: Option<String>,
    /// `{cdn_url}/p/<account>/<path>`: the stable link of the file's path,
    /// which serves the newest file there; null for a private file.
    #[serde(default)]
    #[schema(format = "uri")]
    pub path_url: Option<String>,
    pub name: String,
    pub folder: Option<String>,
    pub size: u64,
    /// MIME type.
    #[serde(rename = "type")]
    pub content_type: String,
    pub private: bool,
    /// When the file is deleted; null when permanent.
    #[schema(format = DateTime)]
    pub expires_at: Option<String>,
    #[schema(format = DateTime)]
    pub created_at: String,
    /// Hex SHA-256 of the stored bytes (lower case); the CDN sends it as
    /// `Content-Digest` too.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub sha256: String,
    /// The client's metadata: string values under keys `[a-z0-9_-]{1,64}`,
    /// at most 16 keys, 4 KiB as compact JSON; `{}` when none.
    #[serde(default)]
    pub metadata: std::collections::BTreeMap<String, String>,
}

/// One page of `GET /v1/files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct FileList {
    pub files: Vec<FileRecord>,
    pub has_more: bool,
    pub cursor: Option<String>,
}

/// An immediate subfolder, as `GET /v1/folders` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct Folder {
    /// The whole folder: the parent, `/`, the name (the name alone under the root).
    #[schema(example = "releases/v1.2")]
    pub path: String,
    /// Its last segment.
    #[schema(example = "v1.2")]
    pub name: String,
}

/// One page of `GET /v1/folders`, by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct FolderList {
    pub folders: Vec<Folder>,
    pub has_more: bool,
    pub cursor: Option<String>,
}

/// Answer of `POST /v1/files/{id}/signed-url`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct SignedUrl {
    #[schema(format = "uri")]
    pub url: String,
    #[schema(format = DateTime)]
    pub expires_at: String,
}

/// Body of `POST /v1/files/{id}/signed-url`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct SignedUrlRequest {
    /// Seconds the URL stays valid.
    #[schema(minimum = 1, maximum = 604_800)]
    pub expires_in: u64,
    /// An image variant the URL is for (docs/api.md, "Image variants"): the
    /// signature covers these parameters, which the URL then carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<TransformRequest>,
    /// A stable link (`{cdn_url}/p/<account>/<path>`) whose signature
    /// covers the file's path, not the file: until it expires it serves
    /// whatever file is newest at that path (default false; null is false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_path: Option<bool>,
}

/// The parameters of an image variant, as `?w=&h=&fit=&format=&q=` take them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TransformRequest {
    /// Width in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 4096)]
    pub w: Option<u32>,
    /// Height in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 4096)]
    pub h: Option<u32>,
    /// How the image fits the box (default `inside`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^(cover|contain|inside|fill)$")]
    pub fit: Option<String>,
    /// The output format (default: the source's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^(auto|webp|avif|jpeg|jpg|png)$")]
    pub format: Option<String>,
    /// Quality, 1–100 (default 80).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 100)]
    pub q: Option<u8>,
}

/// Body of `PATCH /v1/files/{id}`: a new name, a new folder, a new privacy,
/// or several.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileUpdate {
    /// The new name (no `/` or `\`, 1–255 bytes, no control characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(
        min_length = 1,
        max_length = 255,
        pattern = r"^([^./\\\x00-\x1f\x7f-\x9f][^/\\\x00-\x1f\x7f-\x9f]*|\.[^./\\\x00-\x1f\x7f-\x9f][^/\\\x00-\x1f\x7f-\x9f]*|\.\.[^/\\\x00-\x1f\x7f-\x9f]+)$"
    )]
    pub name: Option<String>,
    /// The new folder (a string or null); null or `""` moves the file to
    /// the root (kept as JSON: absent and null differ).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>, nullable)]
    pub folder: Option<serde_json::Value>,
    /// Whether the file is private: its `url` and `path_url` become null
    /// (the CDN serves it only signed) or appear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private: Option<bool>,
}

/// Body of `POST /v1/files/{id}/copy` (optional: no body copies the file
/// as it is): what the copy changes from its source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileCopy {
    /// The copy's name (no `/` or `\`, 1–255 bytes, no control
    /// characters); the source's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(
        min_length = 1,
        max_length = 255,
        pattern = r"^([^./\\\x00-\x1f\x7f-\x9f][^/\\\x00-\x1f\x7f-\x9f]*|\.[^./\\\x00-\x1f\x7f-\x9f][^/\\\x00-\x1f\x7f-\x9f]*|\.\.[^/\\\x00-\x1f\x7f-\x9f]+)$"
    )]
    pub name: Option<String>,
    /// The copy's folder (a string or null); null or `""` is the root; the
    /// source's when absent (kept as JSON: absent and null differ).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>, nullable)]
    pub folder: Option<serde_json::Value>,
    /// Whether the copy is private; the source's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private: Option<bool>,
}

/// A field that is there, null included (serde reads a null `Option` as
/// absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

/// Body of `POST /v1/files/delete`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BulkDeleteRequest {
    /// 1–1000 file ids.
    #[schema(min_items = 1, max_items = 1000)]
    pub ids: Vec<String>,
}

/// Answer of `POST /v1/files/delete`: each id asked for once, in the
/// order asked (another account's file is `not_found`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct BulkDeleteResult {
    pub deleted: Vec<String>,
    pub not_found: Vec<String>,
}

/// Query of `DELETE /v1/folders` and `GET /v1/folders/zip`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct FolderTarget {
    /// The folder (required, not the root): its files and its subfolders'.
    pub folder: Option<String>,
}

/// Answer of `DELETE /v1/folders`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct FolderDeleteResult {
    pub success: bool,
    /// How many files went.
    pub deleted: u64,
}

/// Answer of `DELETE /v1/files/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct DeleteResult {
    pub success: bool,
}

/// Answer of `GET /v1/whoami`: the calling key, its account and the
/// account's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct WhoAmI {
    pub account: WhoAmIAccount,
    pub key: WhoAmIKey,
    /// The account's plan.
    pub plan: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct WhoAmIAccount {
    /// `acc_…`
    pub id: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct WhoAmIKey {
    /// The key's id (never its secret).
    pub id: String,
    /// `secret` (the only kind that may ask).
    pub kind: String,
}

/// Answer of `GET /v1/s3/credentials`: the calling secret key's S3
/// credential (CONTRACT §18) and the S3 door clients sign for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct S3Credentials {
    /// The key's id (`key_…`).
    pub access_key_id: String,
    /// Derived from the server's signing secret; valid until the key is revoked.
    pub secret_access_key: String,
    /// The S3 door's address (`[s3] url`).
    pub endpoint: String,
    /// The region requests are signed for (`[s3] region`).
    pub region: String,
}

/// Answer of `GET /v1/usage`: the four fields of the API reference, plus (an addition, so
/// that clients can show "used of quota") the plan's name and its limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct Usage {
    pub storage_bytes: u64,
    /// Bytes reserved against the storage quota by incomplete resumable
    /// uploads (their declared lengths), on top of `storage_bytes`.
    #[serde(default)]
    pub reserved_bytes: u64,
    pub bandwidth_bytes: u64,
    pub upload_count: u64,
    /// First day of the billing period (calendar month, UTC).
    #[schema(format = Date)]
    pub period_start: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<UsageLimits>,
}

/// The plan's limits, in the units of the usage counters they bound:
/// storage quota, monthly bandwidth (fair use), monthly uploads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct UsageLimits {
    pub storage_bytes: u64,
    pub bandwidth_bytes: u64,
    pub upload_count: u64,
}

/// One dependency of the health report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct HealthCheck {
    /// `ok`, `error`, or `degraded` (storage: damaged files, named in `error`).
    #[schema(pattern = "^(ok|degraded|error)$")]
    pub status: String,
    pub latency_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Answer of `GET /v1/health`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct Health {
    /// `ok` or `degraded`.
    #[schema(pattern = "^(ok|degraded)$")]
    pub status: String,
    #[schema(format = DateTime)]
    pub timestamp: String,
    pub checks: std::collections::BTreeMap<String, HealthCheck>,
}

/// The envelope of every error response: `{"error": {"code", "message"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct ErrorBody {
    pub error: ErrorDetail,
}

/// On a refusal, which limit refused (beside the envelope's `code`, which
/// several limits share): the client says how each can be raised.
pub(crate) const LIMIT_HEADER: &str = "filestore-limit";
/// [`LIMIT_HEADER`] of a 413 `file_too_large` for the plan's
/// `max_file_size` (an operator moves the account to another plan), not an
/// upload policy's `max_size`.
pub(crate) const PLAN_MAX_FILE_SIZE: &str = "plan.max_file_size";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct ErrorDetail {
    pub code: String,
    pub message: String,
}

/// Answer of `GET /v1/uploads/{id}`: a resumable upload's progress, and its
/// file once complete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct UploadStatus {
    #[schema(pattern = "^u_[0-9a-f]{32}$")]
    pub id: String,
    /// Bytes received.
    pub offset: u64,
    /// Bytes declared at creation.
    pub length: u64,
    /// When an incomplete upload is removed (24 h after its last PATCH;
    /// 10 minutes after its creation or last bytes when a public key created
    /// it); null once complete.
    #[schema(format = DateTime)]
    pub expires_at: Option<String>,
    /// The file the upload became; null while incomplete (or deleted since).
    pub file: Option<FileRecord>,
}

/// One incomplete resumable upload of `GET /v1/uploads`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct OpenUpload {
    #[schema(pattern = "^u_[0-9a-f]{32}$")]
    pub id: String,
    /// Bytes received.
    pub offset: u64,
    /// Bytes declared at creation (reserved against the storage quota).
    pub length: u64,
    /// When it is removed unless it receives bytes first.
    #[schema(format = DateTime)]
    pub expires_at: String,
    /// The id (`key_…`) of the key that created it; null for an upload made
    /// before creators were recorded.
    pub created_by: Option<String>,
}

/// Answer of `GET /v1/uploads`: the account's incomplete resumable uploads,
/// newest first (at most 1,000).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct OpenUploads {
    pub uploads: Vec<OpenUpload>,
}

/// Raw list parameters as the query string gave them.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ListParams {
    /// Only the files of this folder (exact match); empty: every folder.
    // Its pattern is `validate::FOLDER_PATTERN`, set in `server::openapi`.
    pub folder: Option<String>,
    /// Page size.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    pub limit: Option<String>,
    /// The `cursor` of the previous page.
    pub cursor: Option<String>,
    /// With `folder`: the files of its subfolders too (`true`/`false`, also
    /// 1/0, yes/no, on/off; its pattern is set in `server::openapi`).
    pub recursive: Option<String>,
}

/// Raw parameters of `GET /v1/folders`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct FolderParams {
    /// The folder whose subfolders are listed; empty or absent: the root.
    // Its pattern is `validate::FOLDER_PATTERN`, set in `server::openapi`.
    pub parent: Option<String>,
    /// Page size.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
    /// The `cursor` of the previous page.
    pub cursor: Option<String>,
}

/// Body of `POST /v1/upload-tokens`: every field optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UploadTokenRequest {
    /// The folder of the files it uploads (a request may repeat it, not
    /// change it).
    pub folder: Option<String>,
    /// Bytes per file, at most the plan's (default: the plan's).
    #[schema(minimum = 1)]
    pub max_size: Option<u64>,
    /// Allowed types (`type/subtype` or `type/*`), checked against the
    /// type sniffed from the bytes; `image/*` excludes SVG. Default: any.
    pub types: Option<Vec<String>>,
    /// How many files it may create (default 1).
    #[schema(minimum = 1, maximum = 1000)]
    pub max_uploads: Option<u32>,
    /// Seconds it stays usable (default 3600).
    #[schema(minimum = 1, maximum = 86_400)]
    pub expires_in: Option<u64>,
    /// Whether its files are private (default false).
    pub private: Option<bool>,
    /// The `expires` of the files it creates: seconds, or a duration such
    /// as `"7d"` (default: the upload's own `expires`).
    #[schema(value_type = Option<String>, example = "7d")]
    pub file_expires: Option<serde_json::Value>,
    /// Metadata merged into every file's (its keys win).
    pub metadata: Option<std::collections::BTreeMap<String, String>>,
    /// Whether each file it uploads replaces the files at its path
    /// (default false; as the upload field `replace=true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace: Option<bool>,
}

/// The policy an upload token carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct UploadTokenPolicy {
    pub folder: Option<String>,
    /// Null: the plan's.
    pub max_size: Option<u64>,
    /// Empty: any type.
    pub types: Vec<String>,
    pub private: bool,
    /// Seconds; null: each upload's own `expires`.
    pub file_expires: Option<u64>,
    pub metadata: std::collections::BTreeMap<String, String>,
    /// Whether its files replace the files at their paths.
    #[serde(default)]
    pub replace: bool,
}

/// `GET /v1/upload-tokens`: the account's active upload tokens (unrevoked,
/// unexpired), newest first, without their secrets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct UploadTokenList {
    pub tokens: Vec<UploadToken>,
}

/// An upload token, as `POST /v1/upload-tokens` (with `token` and `url`,
/// the only time the secret is shown) and `GET /v1/upload-tokens/{id}`
/// (without them) return it. A revoked token is gone from the API (404).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct UploadToken {
    /// `ut_` and 24 hex digits: how it is read and revoked.
    #[schema(pattern = "^ut_[0-9a-f]{24}$")]
    pub id: String,
    /// `upt_` and 64 hex digits: the secret a browser uploads with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^upt_[0-9a-f]{64}$")]
    pub token: Option<String>,
    /// `{base_url}/v1/upload?token=upt_…`: a multipart upload URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = "uri")]
    pub url: Option<String>,
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(format = DateTime)]
    pub expires_at: String,
    pub max_uploads: u32,
    /// Uploads it may still start: `max_uploads` less the files it created
    /// and its incomplete resumable uploads.
    pub uploads_left: u32,
    pub policy: UploadTokenPolicy,
}
