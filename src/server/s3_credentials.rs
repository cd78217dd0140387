//! `GET /v1/s3/credentials`: the calling secret key's S3 credential and
//! where the S3 door is (what `filestore s3 credentials` prints; CONTRACT
//! §18). The S3 door itself speaks S3, not /v1, and is not in this API.

use super::auth::Caller;
use crate::api::{ErrorBody, S3Credentials};
use crate::service::App;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;

/// The calling key's S3 credential, the S3 door's address and its region.
#[utoipa::path(get, path = "/v1/s3/credentials", tag = "account",
    responses(
        (status = 200, description = "The calling key's S3 credential", body = S3Credentials),
        (status = 401, description = "No, unknown or revoked key, or an upload token", body = ErrorBody),
        (status = 403, description = "A public key (public keys have no S3 access)", body = ErrorBody),
        (status = 429, description = "Rate limit reached", body = ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn credentials(
    State(app): State<Arc<App>>,
    caller: Caller,
) -> Json<S3Credentials> {
    let c = app.s3_credential(&caller.key.id);
    Json(S3Credentials {
        access_key_id: c.access_key_id,
        secret_access_key: c.secret_access_key.expose().to_string(),
        endpoint: app.config.s3.url.clone(),
        region: app.config.s3.region.clone(),
    })
}
