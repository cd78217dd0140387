//! `/v1/uploads`: the tus 1.0.0 protocol (core, creation,
//! creation-with-upload, termination, expiration, checksum) over the
//! resumable upload service (`service::tus`), plus `GET` of an upload's
//! status and of the account's incomplete uploads as JSON. Only this file
//! knows tus's headers.

use super::auth::Caller;
use super::conditional::{httpdate, put};
use super::error::ApiError;
use crate::api::{ErrorBody, OpenUpload, OpenUploads, UploadStatus};
use crate::clock::rfc3339_ms;
use crate::domain::files::UploadRow;
use crate::domain::tus::{self, Metadata};
use crate::service::ServiceError;
use crate::service::{tus as service, App};
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::StreamExt;
use std::sync::Arc;

type AppState = State<Arc<App>>;

const TUS_RESUMABLE: HeaderName = HeaderName::from_static("tus-resumable");
const UPLOAD_OFFSET: HeaderName = HeaderName::from_static("upload-offset");
const UPLOAD_LENGTH: HeaderName = HeaderName::from_static("upload-length");
const UPLOAD_EXPIRES: HeaderName = HeaderName::from_static("upload-expires");
const FILE_ID: HeaderName = HeaderName::from_static("x-file-id");

/// Every answer says `Tus-Resumable` (errors too).
pub(crate) async fn resumable_header(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    response
        .headers_mut()
        .insert(TUS_RESUMABLE, HeaderValue::from_static(tus::VERSION));
    response
}

/// Every request but the JSON `GET` must speak this version, else 412 with
/// `Tus-Version`. Runs after authentication (401 and 403 come first).
pub(crate) async fn require_version(req: Request, next: Next) -> Response {
    let version = req.headers().get(&TUS_RESUMABLE).map(HeaderValue::as_bytes);
    if *req.method() == Method::GET || version == Some(tus::VERSION.as_bytes()) {
        return next.run(req).await;
    }
    let mut r = ApiError(ServiceError::UnsupportedVersion(format!(
        "send Tus-Resumable: {} (the protocol version this server speaks)",
        tus::VERSION
    )))
    .into_response();
    r.headers_mut().insert(
        HeaderName::from_static("tus-version"),
        HeaderValue::from_static(tus::VERSION),
    );
    r
}

/// What the server supports.
#[utoipa::path(options, path = "/v1/uploads", tag = "uploads",
    responses((status = 204, description = "The server's tus capabilities", headers(
        ("Tus-Version" = String), ("Tus-Resumable" = String), ("Tus-Extension" = String),
        ("Tus-Checksum-Algorithm" = String)))))]
pub(crate) async fn options() -> Response {
    let mut r = StatusCode::NO_CONTENT.into_response();
    let h = r.headers_mut();
    for (name, value) in [
        ("tus-version", tus::VERSION),
        ("tus-extension", tus::EXTENSIONS),
        ("tus-checksum-algorithm", tus::CHECKSUM_ALGORITHMS),
    ] {
        h.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    r
}

fn text<'h>(headers: &'h HeaderMap, name: &str) -> Result<Option<&'h str>, ServiceError> {
    headers
        .get(name)
        .map(|v| {
            v.to_str()
                .map_err(|_| ServiceError::BadRequest(format!("{name} is not ASCII")))
        })
        .transpose()
}

fn size(headers: &HeaderMap, name: &str) -> Result<Option<u64>, ServiceError> {
    text(headers, name)?
        .map(|v| tus::parse_size(name, v).map_err(ServiceError::BadRequest))
        .transpose()
}

/// The request body, its errors as the API's (a body that stopped arriving is 408).
fn body_stream(
    body: Body,
) -> impl futures_util::Stream<Item = Result<bytes::Bytes, ServiceError>> + Send + 'static {
    body.into_data_stream().map(|chunk| {
        chunk.map_err(|e| {
            super::form::body_timeout(&e).unwrap_or_else(|| {
                ServiceError::BadRequest(format!("the request body broke off: {e}"))
            })
        })
    })
}

/// Headers of a PATCH (or of a creation with data), checked.
fn patch_of(headers: &HeaderMap, offset: u64) -> Result<service::Patch, ServiceError> {
    let checksum = text(headers, "upload-checksum")?
        .map(|v| tus::parse_checksum(v).map_err(ServiceError::BadRequest))
        .transpose()?;
    Ok(service::Patch {
        offset,
        content_length: size(headers, "content-length")?,
        checksum,
    })
}

fn is_offset_stream(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(tus::OFFSET_STREAM))
}

/// Starts an upload (and takes its first bytes, when the request has them).
#[utoipa::path(post, path = "/v1/uploads", tag = "uploads",
    params(
        ("Tus-Resumable" = String, Header, pattern = r"^1\.0\.0$", description = "The protocol version: 1.0.0"),
        ("Upload-Length" = u64, Header, description = "The file's size in bytes"),
        ("Upload-Metadata" = Option<String>, Header,
            description = "Comma-separated `key base64(value)`: filename (or name), filetype (or type), folder, private, expires, metadata (a JSON object of strings, as the upload form's `metadata` field)"),
        ("Upload-Checksum" = Option<String>, Header,
            description = "`sha1|sha256 <base64>` of the body, when it has data"),
        ("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$",
            description = "1-255 visible ASCII characters: a retried creation with the same key answers the same upload"),
    ),
    request_body(content = Vec<u8>, content_type = "application/offset+octet-stream",
        description = "Optional: the first bytes (creation-with-upload)"),
    responses(
        (status = 201, description = "Created", headers(
            ("Location" = String, description = "{base_url}/v1/uploads/{id}"),
            ("Upload-Expires" = String), ("Upload-Offset" = u64), ("Tus-Resumable" = String))),
        (status = 400, description = "A missing or invalid header", body = ErrorBody),
        (status = 401, description = "No or unknown key, or upload token", body = ErrorBody),
        (status = 403, description = "Origin not allowed, private upload with a public key, or grace period", body = ErrorBody),
        (status = 409, description = "if_absent and the path already holds a file", body = ErrorBody),
        (status = 412, description = "Another tus version", body = ErrorBody),
        (status = 413, description = "Longer than the plan's file size or the upload policy's max_size, or past the storage quota", body = ErrorBody),
        (status = 415, description = "Creation with upload: the upload policy does not allow the type sniffed from the first bytes (the upload is ended)", body = ErrorBody),
        (status = 429, description = "Rate limit, monthly uploads, or the plan's incomplete uploads at once (`open_uploads`) reached; `Retry-After` in seconds", body = ErrorBody),
        (status = 503, description = "Blob store unavailable", body = ErrorBody),
        (status = 507, description = "The server's disk is full", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn create(
    State(app): AppState,
    who: Caller,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    if headers.contains_key("upload-defer-length") {
        return Err(ServiceError::bad_request(
            "Upload-Defer-Length is not supported: send Upload-Length",
        )
        .into());
    }
    let length = size(&headers, "upload-length")?
        .ok_or_else(|| ServiceError::bad_request("Upload-Length is required"))?;
    let meta = match text(&headers, "upload-metadata")? {
        Some(raw) => tus::parse_metadata(raw).map_err(ServiceError::BadRequest)?,
        None => Metadata::default(),
    };
    let with_data = is_offset_stream(&headers);
    let patch = with_data.then(|| patch_of(&headers, 0)).transpose()?;

    let key = headers
        .get("idempotency-key")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let (row, file) = service::create(&app, &who, length, meta, key).await?;
    let mut offset = offset_of(&row);
    let mut expires_at = row.completed_at.is_none().then_some(row.expires_at);
    let mut file_id = file.map(|f| f.id);
    if file_id.is_some() {
        expires_at = None;
    }
    if let Some(patch) = patch.filter(|_| file_id.is_none()) {
        // The upload exists whatever its first bytes meet: the answer says
        // how many were kept, and the client goes on from there.
        // As for any PATCH: only a key that may use the upload continues it.
        let patched = async {
            service::owned(&app, &who, &row.id).await?;
            service::patch(&app, &who, &row.id, patch, body_stream(body)).await
        };
        match patched.await {
            Ok(p) => {
                offset = p.offset;
                expires_at = p.expires_at;
                file_id = p.file.map(|f| f.id);
            }
            // The upload is gone: the policy refused what the file is, the
            // plan shrank below its length while it came, or the store
            // lost its bytes.
            Err(
                e @ (ServiceError::UnsupportedMediaType(_)
                | ServiceError::FileTooLarge(_)
                | ServiceError::OverPlanFileSize(_)
                | ServiceError::Gone(_)),
            ) => return Err(e.into()),
            Err(e) => {
                tracing::info!(upload = %row.id, error = %e, "first bytes of a new upload refused");
                if let Ok((now, _)) = service::status(&app, &who, &row.id).await {
                    offset = now.received;
                }
            }
        }
    }
    let mut r = StatusCode::CREATED.into_response();
    let h = r.headers_mut();
    put(
        h,
        header::LOCATION,
        &format!("{}/v1/uploads/{}", app.config.base_url, row.id),
    );
    put(h, UPLOAD_OFFSET, &offset.to_string());
    if let Some(at) = expires_at {
        put(h, UPLOAD_EXPIRES, &httpdate(at));
    }
    if let Some(id) = file_id {
        put(h, FILE_ID, &id);
    }
    Ok(r)
}

/// Where an upload stands.
#[utoipa::path(head, path = "/v1/uploads/{id}", tag = "uploads",
    params(("id" = String, Path), ("Tus-Resumable" = String, Header, pattern = r"^1\.0\.0$", description = "The protocol version: 1.0.0")),
    responses(
        (status = 200, description = "The upload", headers(
            ("Upload-Offset" = u64), ("Upload-Length" = u64), ("Upload-Expires" = String),
            ("Cache-Control" = String, description = "no-store"))),
        (status = 401, description = "No or unknown key, or upload token"),
        (status = 403, description = "Origin not allowed"),
        (status = 404, description = "No such upload (or another account's, or one another non-secret key created)"),
        (status = 410, description = "Expired"),
        (status = 412, description = "Another tus version"),
    ),
    security(("bearer" = [])))]
pub(crate) async fn head(
    State(app): AppState,
    who: Caller,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let (row, _) = service::status(&app, &who, &id).await?;
    let mut r = StatusCode::OK.into_response();
    let h = r.headers_mut();
    put(h, UPLOAD_OFFSET, &offset_of(&row).to_string());
    put(h, UPLOAD_LENGTH, &row.length.to_string());
    put(h, header::CACHE_CONTROL, "no-store");
    if row.completed_at.is_none() {
        put(h, UPLOAD_EXPIRES, &httpdate(row.expires_at));
    } else {
        put(h, FILE_ID, &row.file_id);
    }
    Ok(r)
}

fn offset_of(row: &UploadRow) -> u64 {
    if row.completed_at.is_some() {
        row.length
    } else {
        row.received
    }
}

/// An upload's progress and, once complete, its file.
#[utoipa::path(get, path = "/v1/uploads/{id}", tag = "uploads",
    params(("id" = String, Path)),
    responses(
        (status = 200, description = "The upload", body = UploadStatus),
        (status = 401, description = "No or unknown key, or upload token", body = ErrorBody),
        (status = 403, description = "Origin not allowed", body = ErrorBody),
        (status = 404, description = "No such upload (or another account's, or one another non-secret key created)", body = ErrorBody),
        (status = 410, description = "Expired", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn status(
    State(app): AppState,
    who: Caller,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let (row, file) = service::status(&app, &who, &id).await?;
    let body = UploadStatus {
        offset: offset_of(&row),
        id: row.id,
        length: row.length,
        expires_at: row
            .completed_at
            .is_none()
            .then(|| rfc3339_ms(row.expires_at)),
        file: file.map(|f| super::records::record(&app, &f)),
    };
    Ok(([(header::CACHE_CONTROL, "no-store")], Json(body)).into_response())
}

/// Appends bytes at the upload's offset.
#[utoipa::path(patch, path = "/v1/uploads/{id}", tag = "uploads",
    params(
        ("id" = String, Path),
        ("Tus-Resumable" = String, Header, pattern = r"^1\.0\.0$", description = "The protocol version: 1.0.0"),
        ("Upload-Offset" = u64, Header, description = "The upload's current offset"),
        ("Upload-Checksum" = Option<String>, Header,
            description = "`sha1|sha256 <base64>` of the body"),
    ),
    request_body(content = Vec<u8>, content_type = "application/offset+octet-stream"),
    responses(
        (status = 204, description = "Stored", headers(
            ("Upload-Offset" = u64), ("Upload-Expires" = String),
            ("X-File-Id" = String, description = "The file's id, when this PATCH completed the upload"))),
        (status = 400, description = "A missing or invalid header", body = ErrorBody),
        (status = 401, description = "No or unknown key, or upload token", body = ErrorBody),
        (status = 403, description = "Origin not allowed (an upload admitted before a grace period goes on)", body = ErrorBody),
        (status = 404, description = "No such upload (or another account's, or one another non-secret key created)", body = ErrorBody),
        (status = 408, description = "The body stopped arriving, or arrived slower than `server.min_upload_rate`", body = ErrorBody),
        (status = 409, description = "Upload-Offset is not the upload's offset; or the last bytes' file has if_absent and its path holds a file now (nothing stored)", body = ErrorBody),
        (status = 410, description = "Expired", body = ErrorBody),
        (status = 412, description = "Another tus version", body = ErrorBody),
        (status = 413, description = "Past the upload's length", body = ErrorBody),
        (status = 415, description = "Not application/offset+octet-stream; or the upload policy does not allow the type sniffed from the file's first bytes (the upload is ended)", body = ErrorBody),
        (status = 423, description = "Another request (on this node or another) is writing to the upload, or took it over from this PATCH; retry after `Retry-After` seconds", body = ErrorBody),
        (status = 429, description = "The account already has its plan's `concurrent_uploads` bodies arriving; `Retry-After` in seconds", body = ErrorBody),
        (status = 460, description = "Upload-Checksum does not match the body", body = ErrorBody),
        (status = 503, description = "Blob store unavailable", body = ErrorBody),
        (status = 507, description = "The server's disk is full", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn patch(
    State(app): AppState,
    who: Caller,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    if !is_offset_stream(&headers) {
        return Err(ServiceError::UnsupportedMediaType(format!(
            "a PATCH body must be Content-Type: {}",
            tus::OFFSET_STREAM
        ))
        .into());
    }
    let offset = size(&headers, "upload-offset")?
        .ok_or_else(|| ServiceError::bad_request("Upload-Offset is required"))?;
    let patch = patch_of(&headers, offset)?;

    // Only its creating key or a secret key of its account may continue it.
    service::owned(&app, &who, &id).await?;
    let done = service::patch(&app, &who, &id, patch, body_stream(body)).await?;
    let mut r = StatusCode::NO_CONTENT.into_response();
    let h = r.headers_mut();
    put(h, UPLOAD_OFFSET, &done.offset.to_string());
    if let Some(at) = done.expires_at {
        put(h, UPLOAD_EXPIRES, &httpdate(at));
    }
    if let Some(file) = done.file {
        put(h, FILE_ID, &file.id);
    }
    Ok(r)
}

/// Ends an upload: an incomplete one's bytes and reservation are gone (a
/// PATCH in progress stops).
#[utoipa::path(delete, path = "/v1/uploads/{id}", tag = "uploads",
    params(("id" = String, Path), ("Tus-Resumable" = String, Header, pattern = r"^1\.0\.0$", description = "The protocol version: 1.0.0")),
    responses(
        (status = 204, description = "Terminated"),
        (status = 401, description = "No or unknown key, or upload token", body = ErrorBody),
        (status = 403, description = "Origin not allowed", body = ErrorBody),
        (status = 404, description = "No such upload (or another account's, or one another non-secret key created)", body = ErrorBody),
        (status = 412, description = "Another tus version", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn terminate(
    State(app): AppState,
    who: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    service::terminate(&app, &who, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The account's incomplete uploads, newest first.
#[utoipa::path(get, path = "/v1/uploads", tag = "uploads", operation_id = "list_uploads",
    responses(
        (status = 200, description = "Incomplete, unexpired uploads, newest first (at most 1,000)",
            body = OpenUploads),
        (status = 401, description = "No or unknown key, or upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn list(State(app): AppState, who: Caller) -> Result<Response, ApiError> {
    let rows = service::list(&app, &who).await?;
    let uploads = rows
        .into_iter()
        .map(|row| OpenUpload {
            offset: row.received,
            length: row.length,
            expires_at: rfc3339_ms(row.expires_at),
            created_by: row.created_by,
            id: row.id,
        })
        .collect();
    let body = OpenUploads { uploads };
    Ok(([(header::CACHE_CONTROL, "no-store")], Json(body)).into_response())
}
