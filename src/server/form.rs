//! `POST /v1/files`' multipart form, read into the upload service: text
//! fields validated as they come, the `file` part streamed into
//! [`Upload::receive`]. Only this file knows the body is multipart. Also
//! the upload's `Content-Digest` header, the other way to give its digest.

use crate::domain::digest::{self, Sha256Digest};
use crate::domain::{metadata, validate};
use crate::service::upload::{FilePart, Upload, UploadFields};
use crate::service::ServiceError;
use axum::extract::multipart::{Field, Multipart, MultipartError};
use axum::http::HeaderMap;
use futures_util::StreamExt;

/// Longest text field (`folder`, `private`, `expires`, `sha256`).
const MAX_TEXT_FIELD: usize = 4096;
/// Longest `metadata` field: its limit is on the compact JSON
/// (`domain::metadata::MAX_BYTES`), so room for the sender's whitespace and
/// escapes; what passes this is judged by that rule.
const MAX_METADATA_FIELD: usize = 4 * metadata::MAX_BYTES;

/// Whether a part's Content-Disposition gives a `filename` that is not
/// UTF-8 (which multer reads as no name at all: the refusal would then
/// say the name is missing).
fn name_not_utf8(headers: &HeaderMap) -> bool {
    headers
        .get(axum::http::header::CONTENT_DISPOSITION)
        .is_some_and(|v| std::str::from_utf8(v.as_bytes()).is_err())
}

/// Reads the whole form: the fields, and the one file part streamed into
/// `upload`. Unknown fields are read and ignored.
pub(crate) async fn read(
    upload: &Upload,
    mut form: Multipart,
) -> Result<(FilePart, UploadFields), ServiceError> {
    let mut fields = UploadFields::default();
    let mut file: Option<FilePart> = None;
    while let Some(field) = form.next_field().await.map_err(|e| bad_multipart(&e))? {
        match field.name().unwrap_or("") {
            "file" if file.is_some() => {
                return Err(ServiceError::bad_request("more than one file part"))
            }
            "file" => {
                let name = match field.file_name() {
                    Some(name) => name.to_string(),
                    None if name_not_utf8(field.headers()) => {
                        return Err(ServiceError::bad_request(
                            "the file part's filename is not valid UTF-8",
                        ))
                    }
                    None => String::new(),
                };
                let part_type = field.content_type().map(str::to_string);
                let bytes = field.map(|chunk| chunk.map_err(|e| bad_multipart(&e)));
                let bytes = std::pin::pin!(bytes);
                file = Some(upload.receive(&name, part_type.as_deref(), bytes).await?);
            }
            "folder" => {
                fields.folder =
                    validate::folder(&text(field).await?).map_err(ServiceError::BadRequest)?;
            }
            "private" => {
                fields.private =
                    Some(validate::boolean(&text(field).await?).map_err(ServiceError::BadRequest)?);
            }
            "replace" => fields.replace = Some(flag("replace", &text(field).await?)?),
            "if_absent" => fields.if_absent = flag("if_absent", &text(field).await?)?,
            // Before or after the file part: checked when the file is.
            "sha256" => {
                // Empty, like `expires`: none.
                let raw = text(field).await?;
                fields.sha256 = if raw.is_empty() {
                    None
                } else {
                    Some(digest::parse_hex(&raw).map_err(ServiceError::BadRequest)?)
                };
            }
            "metadata" => {
                // Empty, like `expires`: none.
                let raw = text_up_to(field, MAX_METADATA_FIELD).await?;
                fields.metadata = if raw.is_empty() {
                    metadata::Metadata::new()
                } else {
                    metadata::parse(&raw).map_err(ServiceError::BadRequest)?
                };
            }
            "expires" => {
                let raw = text(field).await?;
                fields.expires = if raw.is_empty() {
                    None
                } else {
                    Some(validate::expires(&raw).map_err(ServiceError::BadRequest)?)
                };
            }
            _ => drain(field).await?,
        }
        // Refused as soon as it shows, not after the file has been read.
        upload.check(&fields)?;
    }
    let file = file.ok_or_else(|| {
        ServiceError::bad_request("missing file part (a form field named \"file\")")
    })?;
    Ok((file, fields))
}

/// The SHA-256 the upload's `Content-Digest` header names (RFC 9530; for the
/// file part, not the multipart body); several field lines are one list.
pub(crate) fn content_digest(headers: &HeaderMap) -> Result<Option<Sha256Digest>, ServiceError> {
    let mut value = String::new();
    for line in &headers.get_all(digest::HEADER) {
        let line = line
            .to_str()
            .map_err(|_| ServiceError::bad_request("Content-Digest is not ASCII"))?;
        if line.trim().is_empty() {
            continue;
        }
        if !value.is_empty() {
            value.push_str(", ");
        }
        value.push_str(line);
    }
    digest::parse_content_digest(&value).map_err(ServiceError::BadRequest)
}

fn bad_multipart(e: &MultipartError) -> ServiceError {
    // A body that stopped arriving is the client's timeout, not a bad form.
    body_timeout(e).unwrap_or_else(|| {
        ServiceError::BadRequest(format!("malformed multipart body: {}", e.body_text()))
    })
}

/// The 408 of a request body that stopped arriving (`server.body_timeout`)
/// or arrived too slowly (`server.min_upload_rate`), if that is what `e`
/// comes from.
pub(crate) fn body_timeout(e: &(dyn std::error::Error + 'static)) -> Option<ServiceError> {
    let mut source = Some(e);
    while let Some(err) = source {
        if let Some(t) = err.downcast_ref::<super::conn::BodyTimeout>() {
            return Some(ServiceError::Timeout(t.to_string()));
        }
        source = err.source();
    }
    None
}

/// A true/false field (`replace`, `if_absent`).
pub(crate) fn flag(name: &str, raw: &str) -> Result<bool, ServiceError> {
    validate::boolean(raw)
        .map_err(|_| ServiceError::BadRequest(format!("{name} {raw:?}: use true or false")))
}

async fn text(field: Field<'_>) -> Result<String, ServiceError> {
    text_up_to(field, MAX_TEXT_FIELD).await
}

async fn text_up_to(mut field: Field<'_>, max: usize) -> Result<String, ServiceError> {
    let name = field.name().unwrap_or("").to_string();
    let mut buf = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(|e| bad_multipart(&e))? {
        if buf.len() + chunk.len() > max {
            return Err(ServiceError::BadRequest(format!(
                "field {name:?} is longer than {max} bytes"
            )));
        }
        buf.extend_from_slice(&chunk);
    }
    String::from_utf8(buf)
        .map_err(|_| ServiceError::BadRequest(format!("field {name:?} is not UTF-8")))
}

async fn drain(mut field: Field<'_>) -> Result<(), ServiceError> {
    while field
        .chunk()
        .await
        .map_err(|e| bad_multipart(&e))?
        .is_some()
    {}
    Ok(())
}
