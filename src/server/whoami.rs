//! `GET /v1/whoami`: the calling key and its account (what `filestore
//! whoami` shows; CONTRACT §22).

use super::auth::Caller;
use super::error::ApiError;
use crate::api::{ErrorBody, WhoAmI, WhoAmIAccount, WhoAmIKey};
use axum::Json;

/// The calling key, its account and the account's plan.
#[utoipa::path(get, path = "/v1/whoami", tag = "account",
    responses(
        (status = 200, description = "The calling key and its account", body = WhoAmI),
        (status = 401, description = "No or unknown key", body = ErrorBody),
        (status = 403, description = "A public key", body = ErrorBody),
        (status = 429, description = "Rate limit reached", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn whoami(caller: Caller) -> Result<Json<WhoAmI>, ApiError> {
    Ok(Json(WhoAmI {
        account: WhoAmIAccount {
            id: caller.account.id,
            name: caller.account.name,
        },
        key: WhoAmIKey {
            id: caller.key.id,
            kind: caller.key.kind.to_string(),
        },
        plan: caller.account.plan,
    }))
}
