//! `/v1/webhooks`: the account's own webhook subscriptions and their
//! deliveries, managed with a secret key (the console's Webhooks screen;
//! CONTRACT §19), over `service::subscriptions`.

use super::auth::Caller;
use super::error::ApiError;
use super::handlers::json_object;
use crate::api::{DeleteResult, ErrorBody};
use crate::clock::rfc3339_ms;
use crate::db::DeliveryRow;
use crate::service::admin::{NewWebhook, WebhookView};
use crate::service::{subscriptions, App};
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Answer of `GET /v1/webhooks`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct WebhookList {
    /// Oldest first; never a secret.
    pub webhooks: Vec<WebhookView>,
}

/// Body of `POST /v1/webhooks`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebhookCreate {
    /// Absolute http(s), a host, no credentials, no fragment, at most 2048 bytes.
    #[schema(format = "uri")]
    pub url: String,
    /// `file.created`, `file.deleted`, `file.expired`, `file.updated`;
    /// absent or empty: all.
    pub events: Option<Vec<String>>,
}

/// One delivery: an event's latest attempt to the subscription.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct Delivery {
    /// `webhook-id` (the same on every attempt).
    pub event_id: String,
    /// The event's type, `file.created`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// `delivered`, `retrying` (the last attempt failed; another is due) or
    /// `failed` (given up after 24 h).
    #[schema(pattern = "^(delivered|retrying|failed)$")]
    pub status: String,
    /// The receiver's answer to the latest attempt; null when none came.
    pub http_status: Option<u16>,
    pub attempts: u32,
    /// When the latest attempt ended.
    #[schema(format = DateTime)]
    pub at: String,
}

/// Answer of `GET /v1/webhooks/{id}/deliveries`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct DeliveryList {
    /// Newest first, the latest 100.
    pub deliveries: Vec<Delivery>,
}

/// The account's webhook subscriptions (never a secret).
#[utoipa::path(get, path = "/v1/webhooks", tag = "webhooks", operation_id = "list_webhooks",
    responses(
        (status = 200, description = "The account's subscriptions, oldest first", body = WebhookList),
        (status = 401, description = "No or unknown key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(app): State<Arc<App>>,
    caller: Caller,
) -> Result<Json<WebhookList>, ApiError> {
    let rows = subscriptions::list(&app, &caller.account.id).await?;
    Ok(Json(WebhookList {
        webhooks: rows.iter().map(WebhookView::from).collect(),
    }))
}

/// Subscribe a receiver: the record `filestore admin webhook create`
/// prints, its secret shown only now.
#[utoipa::path(post, path = "/v1/webhooks", tag = "webhooks", operation_id = "create_webhook",
    request_body(content = WebhookCreate, content_type = "application/json"),
    responses(
        (status = 201, description = "The subscription, with its signing `secret` (shown only now)", body = NewWebhook, headers(
            ("Location" = String, description = "/v1/webhooks/{id}"),
            ("X-RateLimit-Limit" = u64), ("X-RateLimit-Remaining" = u64), ("X-RateLimit-Reset" = u64))),
        (status = 400, description = "Not a JSON object of these fields, a bad url, an unknown event, or 25 webhooks already", body = ErrorBody),
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
    let req: WebhookCreate = json_object(body, "{\"url\", \"events\"?}")?;
    let events = req.events.unwrap_or_default();
    let hook = subscriptions::create(&app, &caller.account.id, &req.url, &events).await?;
    let location = format!("/v1/webhooks/{}", hook.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(hook),
    )
        .into_response())
}

/// Delete a subscription (its undelivered events are dropped).
#[utoipa::path(delete, path = "/v1/webhooks/{id}", tag = "webhooks", operation_id = "delete_webhook",
    params(("id" = String, Path, description = "`wh_…`")),
    responses(
        (status = 200, description = "Deleted: nothing more is sent to it", body = DeleteResult),
        (status = 401, description = "No or unknown key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 404, description = "No such webhook in this account", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn delete(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<DeleteResult>, ApiError> {
    subscriptions::delete(&app, &caller.account.id, &id).await?;
    Ok(Json(DeleteResult { success: true }))
}

/// A subscription's latest deliveries.
#[utoipa::path(get, path = "/v1/webhooks/{id}/deliveries", tag = "webhooks", operation_id = "list_webhook_deliveries",
    params(("id" = String, Path, description = "`wh_…`")),
    responses(
        (status = 200, description = "Each event's latest attempt, newest first (the latest 100)", body = DeliveryList),
        (status = 401, description = "No or unknown key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 404, description = "No such webhook in this account", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn deliveries(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<DeliveryList>, ApiError> {
    let rows = subscriptions::deliveries(&app, &caller.account.id, &id).await?;
    Ok(Json(DeliveryList {
        deliveries: rows.into_iter().map(delivery).collect(),
    }))
}

/// `WebhookCreate.events` in the OpenAPI document: the events there are (a
/// repeated one counts once; the annotations can only say "strings").
pub(crate) fn events_schema() -> utoipa::openapi::schema::Array {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, SchemaType, Type};
    ArrayBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
        .items(
            ObjectBuilder::new()
                .schema_type(SchemaType::new(Type::String))
                .enum_values(Some(crate::domain::webhooks::EVENTS)),
        )
        .description(Some("The events sent to it; absent or empty: all"))
        .build()
}

fn delivery(d: DeliveryRow) -> Delivery {
    Delivery {
        event_id: d.event_id,
        kind: d.kind,
        status: d.status.as_str().to_string(),
        http_status: d.http_status,
        attempts: d.attempts,
        at: rfc3339_ms(d.at),
    }
}
