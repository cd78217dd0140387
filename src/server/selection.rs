//! `POST /v1/files/zip`: chosen files as one ZIP archive (the console's
//! "Download zip"; CONTRACT §19), over `service::zip_pick`.

use super::auth::Caller;
use super::error::ApiError;
use super::handlers::{json_object, zip_answer};
use crate::api::ErrorBody;
use crate::service::{zip_pick, App};
use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::response::Response;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;

/// Body of `POST /v1/files/zip`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ZipRequest {
    /// 1-1000 file ids (a repeated one counts once).
    #[schema(min_items = 1, max_items = 1000)]
    pub ids: Vec<String>,
}

/// Download files chosen by id as one ZIP archive (zip64, STORED entries),
/// streamed as it is made.
#[utoipa::path(post, path = "/v1/files/zip", tag = "files", operation_id = "zip_files",
    request_body(content = ZipRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "The archive: entries are the files' paths relative to the deepest folder holding them all, in the order asked (a repeated path gets ` (2)` before its extension)",
            content_type = "application/zip", body = Vec<u8>, headers(
            ("Content-Disposition" = String, description = "attachment; filename=\"<folder>.zip\" (`files.zip` when the files are in several top folders or the root)"),
            ("X-RateLimit-Limit" = u64), ("X-RateLimit-Remaining" = u64), ("X-RateLimit-Reset" = u64))),
        (status = 400, description = "Not a JSON object `{\"ids\": [...]}`, or not 1 to 1000 ids", body = ErrorBody),
        (status = 401, description = "No or unknown key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 404, description = "An id that is no live file of this account", body = ErrorBody),
        (status = 429, description = "Rate limit reached, or 4 archives of this account already being sent", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn zip_files(
    State(app): State<Arc<App>>,
    caller: Caller,
    body: Result<Json<serde_json::Value>, JsonRejection>,
) -> Result<Response, ApiError> {
    let req: ZipRequest = json_object(body, "{\"ids\": [...]}")?;
    let archive = zip_pick::selection(&app, &caller.account.id, req.ids).await?;
    Ok(zip_answer(archive))
}
