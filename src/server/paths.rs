//! `GET /v1/files/at?path=P`: the file at a path (docs/api.md, "Paths"):
//! the newest file whose `folder/name` is P.

use super::auth::Caller;
use super::error::ApiError;
use super::records;
use crate::api::{ErrorBody, FileRecord};
use crate::service::{paths, App, ServiceError};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::Json;
use std::sync::Arc;

/// Raw parameters of `GET /v1/files/at`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct AtParams {
    /// The file's path: `folder/name`, or `name` in the root (a leading `/`
    /// is dropped).
    // Its pattern is `filepath::PATH_PATTERN`, set in `server::openapi`.
    #[param(min_length = 1)]
    pub path: Option<String>,
}

/// The file at a path: the newest of the files whose `folder/name` is `path`.
#[utoipa::path(get, path = "/v1/files/at", tag = "files",
    params(AtParams),
    responses(
        (status = 200, description = "The newest file at the path", body = FileRecord),
        (status = 400, description = "No path, or one no file can have", body = ErrorBody),
        (status = 401, description = "No or unknown key", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 404, description = "No file at the path (or deleted, or expired)", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn file_at(
    State(app): State<Arc<App>>,
    caller: Caller,
    params: Result<Query<AtParams>, QueryRejection>,
) -> Result<Json<FileRecord>, ApiError> {
    let Query(params) = params.map_err(|e| ServiceError::BadRequest(e.body_text()))?;
    let path = params
        .path
        .filter(|p| !p.is_empty())
        .ok_or_else(|| ServiceError::bad_request("path is required"))?;
    let row = paths::file_at(&app, &caller.account.id, &path).await?;
    Ok(Json(records::record(&app, &row)))
}
