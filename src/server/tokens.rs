//! `/v1/upload-tokens`: an app server (secret key) mints, reads and revokes
//! the tokens its pages upload with (`service::tokens`).

use super::auth::Caller;
use super::error::ApiError;
use super::handlers::optional_object;
use crate::api::{
    DeleteResult, ErrorBody, UploadToken, UploadTokenList, UploadTokenPolicy, UploadTokenRequest,
};
use crate::clock::rfc3339_ms;
use crate::domain::accounts::TokenRow;
use crate::service::tokens::{self, TokenAsk};
use crate::service::App;
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
) -> Result<Response, ApiError> {
    // Every field is optional, the body too: none is a token of the
    // account's defaults.
    let req: UploadTokenRequest = optional_object(&body, "of upload policy fields")?;
    let minted = tokens::create(&app, &caller.account, &caller.key.id, ask(req)).await?;
    let token = UploadToken {
        token: Some(minted.secret),
        url: Some(minted.url),
        ..record(&minted.token)
    };
    let location = format!("/v1/upload-tokens/{}", token.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(token),
    )
        .into_response())
}

/// The account's active upload tokens (unrevoked, unexpired), newest first.
#[utoipa::path(get, path = "/v1/upload-tokens", tag = "upload tokens", operation_id = "list_upload_tokens",
    responses(
        (status = 200, description = "The active tokens, newest first (at most 1000), without `token` and `url`", body = UploadTokenList),
        (status = 401, description = "No or unknown key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(app): AppState,
    caller: Caller,
) -> Result<Json<UploadTokenList>, ApiError> {
    let rows = tokens::list(&app, &caller.account.id).await?;
    Ok(Json(UploadTokenList {
        tokens: rows.iter().map(record).collect(),
    }))
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
) -> Result<Json<UploadToken>, ApiError> {
    Ok(Json(record(
        &tokens::get(&app, &caller.account.id, &id).await?,
    )))
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
) -> Result<Json<DeleteResult>, ApiError> {
    tokens::revoke(&app, &caller.account.id, &id).await?;
    Ok(Json(DeleteResult { success: true }))
}

/// The request as the service takes it.
fn ask(r: UploadTokenRequest) -> TokenAsk {
    TokenAsk {
        folder: r.folder,
        max_size: r.max_size,
        types: r.types,
        max_uploads: r.max_uploads,
        expires_in: r.expires_in,
        private: r.private,
        file_expires: r.file_expires,
        metadata: r.metadata,
        replace: r.replace,
    }
}

/// The token as the API shows it, without its secret.
fn record(row: &TokenRow) -> UploadToken {
    let p = &row.policy;
    UploadToken {
        id: row.id.clone(),
        token: None,
        url: None,
        created_at: rfc3339_ms(row.created_at),
        expires_at: rfc3339_ms(row.expires_at),
        max_uploads: row.max_uploads,
        uploads_left: row.uploads_left(),
        policy: UploadTokenPolicy {
            folder: p.folder.clone(),
            max_size: p.max_size,
            types: p.types.clone(),
            private: p.private.unwrap_or(false),
            file_expires: p.file_expires.map(|d| d.as_secs()),
            metadata: p.metadata.clone(),
            replace: p.replace,
        },
    }
}
