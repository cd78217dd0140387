//! `/v1/keys`: the account's own API keys, managed with a secret key (the
//! console's Keys screen; CONTRACT §19), over `service::keys`.

use super::auth::Caller;
use super::error::ApiError;
use super::handlers::json_object;
use crate::api::ErrorBody;
use crate::service::admin::{KeyView, NewKey};
use crate::service::{keys, App};
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Answer of `GET /v1/keys`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct KeyList {
    /// The account's live keys, newest first.
    pub keys: Vec<KeyView>,
}

/// Body of `POST /v1/keys`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct KeyCreate {
    /// `secret` or `public`.
    #[schema(pattern = "^(secret|public)$")]
    pub kind: String,
    /// 1-100 characters, no control characters.
    #[schema(min_length = 1, max_length = 100)]
    pub name: Option<String>,
    /// A public key's origins (`scheme://host[:port]`, or
    /// `https://*.example.com`): at least one; none for a secret key.
    pub origins: Option<Vec<String>>,
}

/// Answer of `DELETE /v1/keys/{id}`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct KeyRevoked {
    pub success: bool,
    /// The key revoked.
    pub id: String,
    /// True when it is the key this request was made with: it (and a
    /// console session made with it) is refused from now on.
    pub calling_key: bool,
}

/// The account's live keys (never a secret).
#[utoipa::path(get, path = "/v1/keys", tag = "keys", operation_id = "list_keys",
    responses(
        (status = 200, description = "The account's live keys, newest first", body = KeyList),
        (status = 401, description = "No or unknown key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(app): State<Arc<App>>,
    caller: Caller,
) -> Result<Json<KeyList>, ApiError> {
    let keys = keys::list(&app, &caller.account.id).await?;
    Ok(Json(KeyList {
        keys: keys.iter().map(KeyView::from).collect(),
    }))
}

/// Create a key of the account: the record `filestore admin key create`
/// prints, its secret shown only now.
#[utoipa::path(post, path = "/v1/keys", tag = "keys", operation_id = "create_key",
    request_body(content = KeyCreate, content_type = "application/json"),
    responses(
        (status = 201, description = "The new key, with its secret `key` (and, for a secret key, its S3 credential), shown only now", body = NewKey, headers(
            ("Location" = String, description = "/v1/keys/{id}"),
            ("X-RateLimit-Limit" = u64), ("X-RateLimit-Remaining" = u64), ("X-RateLimit-Reset" = u64))),
        (status = 400, description = "Not a JSON object of these fields, an unknown kind, a public key without origins, a secret key with origins, a bad origin or name", body = ErrorBody),
        (status = 401, description = "No or unknown key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 429, description = "Rate limit reached", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn create(
    State(app): State<Arc<App>>,
    caller: Caller,
    body: Result<Json<serde_json::Value>, JsonRejection>,
) -> Result<Response, ApiError> {
    let req: KeyCreate = json_object(body, "{\"kind\", \"name\"?, \"origins\"?}")?;
    let origins = req.origins.unwrap_or_default();
    let key = keys::create(
        &app,
        &caller.account.id,
        &req.kind,
        req.name.as_deref(),
        &origins,
    )
    .await?;
    let location = format!("/v1/keys/{}", key.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(key),
    )
        .into_response())
}

/// Revoke one of the account's keys at once (the calling key too).
#[utoipa::path(delete, path = "/v1/keys/{id}", tag = "keys", operation_id = "revoke_key",
    params(("id" = String, Path, description = "`key_…`")),
    responses(
        (status = 200, description = "Revoked: refused (401) from now on, on every node", body = KeyRevoked),
        (status = 401, description = "No or unknown key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 404, description = "No such live key in this account", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn revoke(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<KeyRevoked>, ApiError> {
    let calling_key = keys::revoke(&app, &caller, &id).await?;
    Ok(Json(KeyRevoked {
        success: true,
        id,
        calling_key,
    }))
}
