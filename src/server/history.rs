//! `GET /v1/usage/history`: the account's usage per day (the console's
//! Usage chart; CONTRACT §19), over `service::history`.

use super::auth::Caller;
use super::error::ApiError;
use crate::api::ErrorBody;
use crate::service::history::{self, Day};
use crate::service::App;
use axum::extract::{Query, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

/// One day of `GET /v1/usage/history`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct UsageDay {
    /// `YYYY-MM-DD`, UTC.
    #[schema(format = Date)]
    pub date: String,
    /// Stored at the day's end (today: now).
    pub storage_bytes: u64,
    /// Sent by the CDN (and archives) that day.
    pub bandwidth_bytes: u64,
    /// Files created that day.
    pub upload_count: u64,
}

/// Answer of `GET /v1/usage/history`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct UsageHistory {
    /// One entry per day, the oldest first, today last; a day with nothing
    /// is zeros (its stored bytes those of the day before).
    pub days: Vec<UsageDay>,
}

/// The account's usage per day.
#[utoipa::path(get, path = "/v1/usage/history", tag = "account", operation_id = "usage_history",
    params(("days" = Option<u32>, Query, minimum = 1, maximum = 366,
        description = "How many days, today included (default 30)")),
    responses(
        (status = 200, description = "One entry per day, oldest first", body = UsageHistory, headers(
            ("X-RateLimit-Limit" = u64), ("X-RateLimit-Remaining" = u64), ("X-RateLimit-Reset" = u64))),
        (status = 400, description = "days is not an integer from 1 to 366", body = ErrorBody),
        (status = 401, description = "No or unknown key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 429, description = "Rate limit reached", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn usage_history(
    State(app): State<Arc<App>>,
    caller: Caller,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<UsageHistory>, ApiError> {
    let days = history::days_param(params.get("days").map(String::as_str))?;
    let days = history::history(&app, &caller.account.id, days).await?;
    Ok(Json(UsageHistory {
        days: days.into_iter().map(day).collect(),
    }))
}

fn day(d: Day) -> UsageDay {
    UsageDay {
        date: d.date,
        storage_bytes: d.storage_bytes,
        bandwidth_bytes: d.bandwidth_bytes,
        upload_count: d.upload_count,
    }
}
