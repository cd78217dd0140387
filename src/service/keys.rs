//! An account's API keys managed by the account itself (`/v1/keys`, the
//! console's Keys screen; CONTRACT §19): listed without secrets, created as
//! `admin key create` creates them (`admin::create_key_worded`, the one
//! home of a new key's rules, with the S3 credential beside a secret key),
//! and revoked. Only a secret key gets here (the door's `Access::Secret`).

use super::admin::{self, KeyAsk, KeyLimits, NewKey, Wording};
use super::caller::Caller;
use super::{s3_keys, App, ServiceError};
use crate::db::KeyRecord;
use crate::domain::ids::KeyKind;

/// The API's names for a new key's fields.
const API_WORDING: Wording = Wording {
    origin: "origins",
    origin_example: "\"origins\": [\"https://app.example.com\"]",
    limits: "upload policies",
};

/// The account's live keys, newest first.
pub(crate) async fn list(app: &App, account_id: &str) -> Result<Vec<KeyRecord>, ServiceError> {
    let mut keys = app.meta.list_keys(Some(account_id)).await?;
    keys.retain(|k| k.revoked_at.is_none());
    keys.reverse();
    Ok(keys)
}

/// A new key of the account: `kind` is `secret` or `public`; a public key
/// needs at least one origin, a secret key takes none.
pub(crate) async fn create(
    app: &App,
    account_id: &str,
    kind: &str,
    name: Option<&str>,
    origins: &[String],
) -> Result<NewKey, ServiceError> {
    let kind = match kind {
        "secret" => KeyKind::Secret,
        "public" => KeyKind::Public,
        other => {
            return Err(ServiceError::BadRequest(format!(
                "kind must be \"secret\" or \"public\", not {other:?}"
            )))
        }
    };
    let limits = KeyLimits::default();
    let ask = KeyAsk {
        kind,
        origins,
        limits: &limits,
        name,
    };
    let now = app.clock.now_ms();
    let key = admin::create_key_worded(&*app.meta, account_id, &ask, &API_WORDING, now).await?;
    Ok(s3_keys::with_credential(&*app.meta, &app.config, key).await?)
}

/// Revokes the account's live key `id` at once (every node refuses it from
/// the next request); whether it was the caller's own key.
pub(crate) async fn revoke(app: &App, caller: &Caller, id: &str) -> Result<bool, ServiceError> {
    let no_such = || ServiceError::NotFound(format!("no key {id:?} in this account"));
    match app.meta.key(id).await? {
        Some(k) if k.account_id == caller.account.id && k.revoked_at.is_none() => {}
        _ => return Err(no_such()),
    }
    if !app.meta.revoke_key(id, app.clock.now_ms()).await? {
        // Revoked by another request meanwhile.
        return Err(no_such());
    }
    Ok(id == caller.key.id)
}
