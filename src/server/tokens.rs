//! `/v1/upload-tokens`: an app server (secret key) mints, reads and revokes
//! the tokens its pages upload with (`service::tokens`).

use super::auth::Caller;
use super::handlers::optional_object;
use crate::api::{DeleteResult, ErrorBody, UploadToken, UploadTokenRequest};
use crate::service::{tokens, App, ServiceError};
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

type AppState = State<Arc<App>>;

/// Mint an upload token.
#[utoipa::path(post, path = "/v1/upload-tokens", tag = "upload tokens", operation_id = "create_upload_token",
    request_body(content = Option<UploadTokenRequest>, content_type = "application/json",
        description = "Every field optional; no body: a token of the defaults"),
    responses(
        (status = 201, description = "The token, with its secret `token` and upload `url` (shown only now)", body = UploadToken, headers(
            ("Location" = String, description = "/v1/upload-tokens/{id}"),
            ("X-RateLimit-Limit" = u64), ("X-RateLimit-Remaining" = u64), ("X-RateLimit-Reset" = u64))),
        (status = 400, description = "An invalid or out-of-range field", body = ErrorBody),
        (status = 401, description = "No or unknown key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 429, description = "Rate limit reached", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn create(
    State(app): AppState,
    caller: Caller,
    body: axum::body::Bytes,
) -> Result<Response, ServiceError> {
    // Every field is optional, the body too: none is a token of the
    // account's defaults.
    let req: UploadTokenRequest = optional_object(&body, "of upload policy fields")?;
    let token = tokens::create(&app, &caller.account, &caller.key.id, req).await?;
    let location = format!("/v1/upload-tokens/{}", token.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(token),
    )
        .into_response())
}

/// An upload token (without its secret).
#[utoipa::path(get, path = "/v1/upload-tokens/{id}", tag = "upload tokens", operation_id = "get_upload_token",
    params(("id" = String, Path, description = "`ut_…`")),
    responses(
        (status = 200, description = "The token: no `token`, no `url`", body = UploadToken),
        (status = 401, description = "No or unknown key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 404, description = "No such token in this account", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn get(
    State(app): AppState,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<UploadToken>, ServiceError> {
    Ok(Json(tokens::get(&app, &caller.account.id, &id).await?))
}

/// Revoke an upload token at once.
#[utoipa::path(delete, path = "/v1/upload-tokens/{id}", tag = "upload tokens", operation_id = "revoke_upload_token",
    params(("id" = String, Path, description = "`ut_…`")),
    responses(
        (status = 200, description = "Revoked: it is refused (401) from now on, on every node", body = DeleteResult),
        (status = 401, description = "No or unknown key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 404, description = "No such token in this account", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn revoke(
    State(app): AppState,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<DeleteResult>, ServiceError> {
    tokens::revoke(&app, &caller.account.id, &id).await?;
    Ok(Json(DeleteResult { success: true }))
}
