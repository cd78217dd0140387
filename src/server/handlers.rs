//! The `/v1` handlers: each parses its input, calls the service, and shapes
//! the answer. Every rejection of axum's extractors becomes a 400 envelope.

use super::auth::{Caller, EarlyCommitments};
use super::error::ApiError;
use super::records;
use crate::api::{
    BulkDeleteRequest, BulkDeleteResult, DeleteResult, ErrorBody, FileCopy, FileList, FileRecord,
    FileUpdate, FolderDeleteResult, FolderList, FolderParams, FolderTarget, Health, HealthCheck,
    ListParams, SignedUrl, SignedUrlRequest, Usage,
};
use crate::domain::transform::Transform;
use crate::domain::{metadata, validate};
use crate::service::ServiceError;
use crate::service::{copy, files, upload, usage, zip, App};
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Multipart, Path, Query, RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

type AppState = State<Arc<App>>;

/// Store a file.
#[utoipa::path(post, path = "/v1/upload", tag = "files",
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$",
        description = "1-255 visible ASCII characters: a retry with the same key within 24 h answers the same file"),
        ("token" = Option<String>, Query, pattern = "^upt_[0-9a-f]{64}$",
        description = "An upload token (instead of an Authorization header): the url `POST /v1/upload-tokens` returns")),
    responses(
        (status = 201, description = "Stored", body = FileRecord, headers(
            ("Location" = String, description = "/v1/files/{id}"),
            ("X-RateLimit-Limit" = u64), ("X-RateLimit-Remaining" = u64), ("X-RateLimit-Reset" = u64))),
        (status = 400, description = "No file part, an invalid field, or a field that contradicts the upload policy", body = ErrorBody),
        (status = 401, description = "No or unknown key; an upload token unknown, expired, revoked or used up", body = ErrorBody),
        (status = 403, description = "Origin not allowed, private upload with a public key, or grace period", body = ErrorBody),
        (status = 408, description = "The body stopped arriving, or arrived slower than min_upload_rate", body = ErrorBody),
        (status = 409, description = "if_absent=true and the path already holds a file: nothing stored", body = ErrorBody),
        (status = 413, description = "File too large (for the plan or the upload policy), or storage quota exceeded", body = ErrorBody),
        (status = 415, description = "The upload policy does not allow the type sniffed from the file's bytes", body = ErrorBody),
        (status = 429, description = "Rate limit, monthly uploads or the plan's concurrent uploads reached", body = ErrorBody),
        (status = 503, description = "Blob store unavailable", body = ErrorBody),
        (status = 507, description = "The server's disk is full", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn upload(
    State(app): AppState,
    caller: Caller,
    held: Option<Extension<EarlyCommitments>>,
    headers: HeaderMap,
    form: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<Response, ApiError> {
    let form = form.map_err(|e| {
        ServiceError::BadRequest(format!(
            "expected a multipart/form-data body: {}",
            e.body_text()
        ))
    })?;
    let req = upload::UploadRequest {
        caller,
        content_length: headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok()),
        // Checked by the upload service (non-ASCII turns into characters it refuses).
        idempotency_key: headers
            .get("idempotency-key")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
        content_digest: super::form::content_digest(&headers)?,
        held: held.map(|Extension(EarlyCommitments(held))| held),
        // MD5 after the fact for a spooled file (docs/decisions.md).
        md5_now: false,
    };
    let upload = upload::Upload::start(&app, req).await?;
    let (file, fields) = super::form::read(&upload, form).await?;
    let record = records::record(&app, &upload.finish(file, fields).await?);
    let location = format!("/v1/files/{}", record.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(record),
    )
        .into_response())
}

/// List files, newest first.
#[utoipa::path(get, path = "/v1/files", tag = "files",
    params(ListParams),
    responses(
        (status = 200, description = "One page", body = FileList),
        (status = 400, description = "Invalid folder, limit, cursor or metadata filter", body = ErrorBody),
        (status = 401, description = "No or unknown key", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(app): AppState,
    caller: Caller,
    params: Result<Query<ListParams>, QueryRejection>,
    RawQuery(query): RawQuery,
) -> Result<Json<FileList>, ApiError> {
    let Query(params) = params.map_err(|e| ServiceError::BadRequest(e.body_text()))?;
    let metadata = metadata::filters(query.as_deref()).map_err(ServiceError::BadRequest)?;
    let q = super::query::list(&params, metadata)?;
    let page = files::list(&app, &caller.account.id, q).await?;
    Ok(Json(records::file_list(&app, page)))
}

/// List the immediate subfolders of a folder that hold a file at any depth, by name.
#[utoipa::path(get, path = "/v1/folders", tag = "files",
    params(FolderParams),
    responses(
        (status = 200, description = "One page", body = FolderList),
        (status = 400, description = "Invalid parent, limit or cursor", body = ErrorBody),
        (status = 401, description = "No or unknown key", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn folders(
    State(app): AppState,
    caller: Caller,
    params: Result<Query<FolderParams>, QueryRejection>,
) -> Result<Json<FolderList>, ApiError> {
    let Query(params) = params.map_err(|e| ServiceError::BadRequest(e.body_text()))?;
    let q = super::query::folders(&params)?;
    let page = files::folders(&app, &caller.account.id, q).await?;
    Ok(Json(records::folder_list(page)))
}

/// A file's record.
#[utoipa::path(get, path = "/v1/files/{id}", tag = "files",
    params(("id" = String, Path, description = "The file's id")),
    responses(
        (status = 200, description = "The file", body = FileRecord),
        (status = 401, description = "No or unknown key", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 404, description = "No such file (or deleted, or expired)", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn get(
    State(app): AppState,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<FileRecord>, ApiError> {
    let row = files::get(&app, &caller.account.id, &id).await?;
    Ok(Json(records::record(&app, &row)))
}

/// Delete a file, at once and for good.
#[utoipa::path(delete, path = "/v1/files/{id}", tag = "files",
    params(("id" = String, Path, description = "The file's id")),
    responses(
        (status = 200, description = "Deleted", body = DeleteResult),
        (status = 401, description = "No or unknown key", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 404, description = "No such file (or already deleted)", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn delete(
    State(app): AppState,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<DeleteResult>, ApiError> {
    files::delete(&app, &caller.account.id, &id).await?;
    Ok(Json(DeleteResult { success: true }))
}

/// Rename or move a file, or make it private or public; its id, bytes,
/// sha256 and created_at stay, its url follows the new name (the old one
/// is 404); `url` and `path_url` are null while it is private.
#[utoipa::path(patch, path = "/v1/files/{id}", tag = "files",
    params(("id" = String, Path, description = "The file's id")),
    request_body(content = FileUpdate, content_type = "application/json"),
    responses(
        (status = 200, description = "The file as it is now", body = FileRecord),
        (status = 400, description = "No name, folder or private, an invalid one (private not a boolean), or an unknown field", body = ErrorBody),
        (status = 401, description = "No or unknown key", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 404, description = "No such file", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn update(
    State(app): AppState,
    caller: Caller,
    Path(id): Path<String>,
    body: Result<Json<serde_json::Value>, JsonRejection>,
) -> Result<Json<FileRecord>, ApiError> {
    let req: FileUpdate = json_object(body, "{\"name\", \"folder\", \"private\"}")?;
    let folder = folder_field(req.folder)?;
    let file = files::update(
        &app,
        &caller.account.id,
        &id,
        req.name.as_deref(),
        folder.as_deref(),
        req.private,
    )
    .await?;
    Ok(Json(records::record(&app, &file)))
}

/// The `folder` field of a rename or copy: absent (None), `null` (the
/// root, `""`) or a string, unchecked; anything else is 400.
fn folder_field(field: Option<serde_json::Value>) -> Result<Option<String>, ServiceError> {
    match field {
        None => Ok(None),
        Some(serde_json::Value::Null) => Ok(Some(String::new())),
        Some(serde_json::Value::String(f)) => Ok(Some(f)),
        Some(_) => Err(ServiceError::bad_request("folder must be a string or null")),
    }
}

/// Copy a file: a new file (id, url) with the same bytes, sha256, type,
/// metadata and expiry, counted and refused as an upload is; the blob store
/// copies the bytes itself.
#[utoipa::path(post, path = "/v1/files/{id}/copy", tag = "files",
    params(("id" = String, Path, description = "The file's id"),
        ("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$",
        description = "1-255 visible ASCII characters: a retry with the same key within 24 h answers the same copy")),
    request_body(content = Option<FileCopy>, content_type = "application/json",
        description = "Optional: what the copy changes (no body keeps the source's name, folder and privacy)"),
    responses(
        (status = 201, description = "The new file", body = FileRecord, headers(
            ("Location" = String, description = "/v1/files/{id} of the copy"),
            ("X-RateLimit-Limit" = u64), ("X-RateLimit-Remaining" = u64), ("X-RateLimit-Reset" = u64))),
        (status = 400, description = "An invalid name or folder, an unknown field, or a body that is not a JSON object", body = ErrorBody),
        (status = 401, description = "No or unknown key; an upload token", body = ErrorBody),
        (status = 403, description = "A public key, or grace period", body = ErrorBody),
        (status = 404, description = "No such file (or another account's)", body = ErrorBody),
        (status = 413, description = "The file is over the plan's maximum size, or the copy would pass the storage quota", body = ErrorBody),
        (status = 429, description = "Rate limit or monthly uploads reached", body = ErrorBody),
        (status = 503, description = "Blob store unavailable", body = ErrorBody),
        (status = 507, description = "The server's disk is full", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn copy(
    State(app): AppState,
    caller: Caller,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    // The body is optional: none copies as it is.
    let req: FileCopy = optional_object(&body, "{\"name\", \"folder\", \"private\"}")?;
    let folder = folder_field(req.folder)?;
    let req = copy::CopyRequest {
        caller,
        // Checked by the service (non-ASCII turns into characters it refuses).
        idempotency_key: headers
            .get("idempotency-key")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
        name: req.name,
        folder,
        private: req.private,
        at_path: crate::domain::filepath::AtPath::Add,
        replaced: None,
    };
    let record = records::record(&app, &copy::copy(&app, &id, req).await?);
    let location = format!("/v1/files/{}", record.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(record),
    )
        .into_response())
}

/// Delete up to 1000 files at once (in one transaction).
#[utoipa::path(post, path = "/v1/files/delete", tag = "files",
    request_body(content = BulkDeleteRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Which ids were deleted, which were not found", body = BulkDeleteResult),
        (status = 400, description = "Not 1 to 1000 ids, or an unknown field", body = ErrorBody),
        (status = 401, description = "No or unknown key", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn delete_many(
    State(app): AppState,
    caller: Caller,
    body: Result<Json<serde_json::Value>, JsonRejection>,
) -> Result<Json<BulkDeleteResult>, ApiError> {
    let req: BulkDeleteRequest = json_object(body, "{\"ids\": [...]}")?;
    let done = files::delete_many(&app, &caller.account.id, req.ids).await?;
    Ok(Json(records::bulk_deleted(done)))
}

/// Delete a folder: every file in it and below, at once.
#[utoipa::path(delete, path = "/v1/folders", tag = "files",
    params(FolderTarget),
    responses(
        (status = 200, description = "Deleted; the blobs go in the background", body = FolderDeleteResult),
        (status = 400, description = "No folder, the root, or an invalid folder", body = ErrorBody),
        (status = 401, description = "No or unknown key", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn delete_folder(
    State(app): AppState,
    caller: Caller,
    params: Result<Query<FolderTarget>, QueryRejection>,
) -> Result<Json<FolderDeleteResult>, ApiError> {
    let Query(params) = params.map_err(|e| ServiceError::BadRequest(e.body_text()))?;
    let deleted = files::delete_folder(&app, &caller.account.id, params.folder.as_deref()).await?;
    Ok(Json(FolderDeleteResult {
        success: true,
        deleted,
    }))
}

/// Download a folder and everything below it as one ZIP archive (zip64,
/// STORED entries), streamed as it is made.
#[utoipa::path(get, path = "/v1/folders/zip", tag = "files",
    params(FolderTarget),
    responses(
        (status = 200, description = "The archive: entries `sub/dir/name` relative to the folder, \
a repeated path numbered ` (2)`, ` (3)`... before its extension; counted as bandwidth",
            content_type = "application/zip", body = Vec<u8>, headers(
            ("Content-Disposition" = String, description = "attachment; filename=\"<last segment of the folder, ASCII>.zip\"; filename*=UTF-8''<it, percent-encoded>.zip"))),
        (status = 400, description = "No folder, the root, or an invalid folder", body = ErrorBody),
        (status = 401, description = "No or unknown key", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 404, description = "No file in the folder or below", body = ErrorBody),
        (status = 429, description = "The key's rate limit, or 4 archives of the account \
being sent at once (`Retry-After`)", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn folder_zip(
    State(app): AppState,
    caller: Caller,
    params: Result<Query<FolderTarget>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(params) = params.map_err(|e| ServiceError::BadRequest(e.body_text()))?;
    let archive = zip::folder(&app, &caller.account.id, params.folder.as_deref()).await?;
    Ok(zip_answer(archive))
}

/// A zip's answer (a folder's or a selection's): streamed, as an attachment
/// named after it.
pub(super) fn zip_answer(archive: zip::FolderZip) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/zip".to_string()),
            (
                header::CONTENT_DISPOSITION,
                super::conditional::content_disposition("attachment", &archive.file_name),
            ),
        ],
        axum::body::Body::from_stream(archive.body),
    )
        .into_response()
}

/// A JSON object body (`shape` names its fields in the error): serde would
/// also read a struct from an array.
pub(crate) fn json_object<T: serde::de::DeserializeOwned>(
    body: Result<Json<serde_json::Value>, JsonRejection>,
    shape: &str,
) -> Result<T, ServiceError> {
    let Json(value) = body.map_err(|e| {
        ServiceError::BadRequest(format!("expected a JSON body {shape}: {}", e.body_text()))
    })?;
    object_of(value, shape)
}

/// An optional JSON object as `T`: no body (or only whitespace, or JSON
/// `null`) is `T::default()`.
pub(crate) fn optional_object<T: serde::de::DeserializeOwned + Default>(
    body: &[u8],
    shape: &str,
) -> Result<T, ServiceError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ServiceError::BadRequest(format!("expected a JSON body {shape}: {e}")))?;
    if value.is_null() {
        return Ok(T::default());
    }
    object_of(value, shape)
}

/// A JSON object as `T` (serde would also read a struct from an array).
fn object_of<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
    shape: &str,
) -> Result<T, ServiceError> {
    let expected =
        |why: &str| ServiceError::BadRequest(format!("expected a JSON body {shape}: {why}"));
    if !value.is_object() {
        return Err(expected("not an object"));
    }
    serde_json::from_value(value).map_err(|e| expected(&e.to_string()))
}

/// A signed URL of a file on the CDN routes.
#[utoipa::path(post, path = "/v1/files/{id}/signed-url", tag = "files",
    params(("id" = String, Path, description = "The file's id")),
    request_body(content = SignedUrlRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "The URL", body = SignedUrl, headers(
            ("X-RateLimit-Limit" = u64), ("X-RateLimit-Remaining" = u64), ("X-RateLimit-Reset" = u64))),
        (status = 400, description = "A missing or invalid expires_in", body = ErrorBody),
        (status = 401, description = "No or unknown key", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 404, description = "No such file", body = ErrorBody),
        (status = 429, description = "Rate limit reached", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn signed_url(
    State(app): AppState,
    caller: Caller,
    Path(id): Path<String>,
    body: Result<Json<serde_json::Value>, JsonRejection>,
) -> Result<Json<SignedUrl>, ApiError> {
    let Json(body) = body.map_err(|e| {
        ServiceError::BadRequest(format!(
            "expected a JSON body {{\"expires_in\": seconds}}: {}",
            e.body_text()
        ))
    })?;
    let expires_in = body
        .get("expires_in")
        .ok_or_else(|| ServiceError::bad_request("expires_in is required"))?;
    let expires_in = validate::json_integer(expires_in).ok_or_else(|| {
        ServiceError::bad_request("expires_in must be an integer from 1 to 604800")
    })?;
    let expires_in = validate::expires_in(expires_in).map_err(ServiceError::BadRequest)?;
    let transform = match body.get("transform") {
        None | Some(serde_json::Value::Null) => None,
        Some(t) => Some(Transform::from_json(t).map_err(|e| ServiceError::BadRequest(e.0))?),
    };
    let by_path = match body.get("by_path") {
        None | Some(serde_json::Value::Null) => false,
        Some(serde_json::Value::Bool(b)) => *b,
        Some(_) => return Err(ServiceError::bad_request("by_path must be true or false").into()),
    };
    let link = files::sign(
        &app,
        &caller.account.id,
        &id,
        expires_in,
        transform,
        by_path,
    )
    .await?;
    Ok(Json(records::signed_url(link)))
}

/// The account's usage this billing period.
#[utoipa::path(get, path = "/v1/usage", tag = "account",
    responses(
        (status = 200, description = "Usage", body = Usage, headers(
            ("X-RateLimit-Limit" = u64), ("X-RateLimit-Remaining" = u64), ("X-RateLimit-Reset" = u64))),
        (status = 401, description = "No or unknown key", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 429, description = "Rate limit reached", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn usage(State(app): AppState, caller: Caller) -> Result<Json<Usage>, ApiError> {
    let s = usage::standing(&app, &caller.account).await?;
    Ok(Json(super::records::usage(s)))
}

const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

async fn timed<F, E>(check: F) -> HealthCheck
where
    F: std::future::Future<Output = Result<(), E>>,
    E: std::fmt::Display,
{
    let started = Instant::now();
    let result = tokio::time::timeout(CHECK_TIMEOUT, check).await;
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    // The detail goes to the log only: health needs no key, and a store's
    // error text can name hosts and buckets.
    let error = match result {
        Ok(Ok(())) => None,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "health check failed");
            Some("check failed (see the server log)".to_string())
        }
        Err(_) => Some(format!("no answer within {}s", CHECK_TIMEOUT.as_secs())),
    };
    HealthCheck {
        status: if error.is_some() { "error" } else { "ok" }.to_string(),
        latency_ms,
        error,
    }
}

/// The server's health; needs no key.
#[utoipa::path(get, path = "/v1/health", tag = "operating",
    responses(
        (status = 200, description = "Every check ok, or `storage` degraded by damaged files", body = Health),
        (status = 503, description = "Some check failed (degraded)", body = Health),
    ))]
pub(crate) async fn health(State(app): AppState) -> Response {
    let (database, mut storage, damaged) = tokio::join!(
        timed(app.check_database()),
        timed(app.check_storage()),
        app.damaged_note()
    );
    // Damaged files degrade the store, not the node: it serves (200), and
    // every node of the database says the same.
    if let Some(note) = damaged.filter(|_| storage.status == "ok") {
        storage.status = "degraded".to_string();
        storage.error = Some(note);
    }
    let checks = BTreeMap::from([
        ("database".to_string(), database),
        ("storage".to_string(), storage),
    ]);
    let ok = checks.values().all(|c| c.status == "ok");
    let failing = checks.values().any(|c| c.status == "error");
    let body = Health {
        status: if ok { "ok" } else { "degraded" }.to_string(),
        timestamp: crate::clock::rfc3339_ms(app.clock.now_ms()),
        checks,
    };
    let status = if failing {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    (status, [(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}

pub(crate) async fn not_found() -> ApiError {
    ApiError(ServiceError::NotFound("no such route".into()))
}

pub(crate) async fn method_not_allowed() -> ApiError {
    ApiError(ServiceError::MethodNotAllowed(
        "method not allowed on this route".into(),
    ))
}
