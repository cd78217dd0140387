//! An account's webhook subscriptions managed by the account itself
//! (`/v1/webhooks`, the console's Webhooks screen; CONTRACT §19): created
//! and deleted as `admin webhook create` and `delete` do (`admin`, the one
//! home of their rules), listed without secrets, and the log of their
//! deliveries (`db::console::DeliveryRepo`, written by the sender).

use super::admin::{self, NewWebhook};
use super::{App, ServiceError};
use crate::db::{DeliveryRow, WebhookRow, DELIVERIES_KEPT};

/// The most subscriptions an account makes itself: each one multiplies
/// every event of the account in the outbox.
pub(crate) const MAX_WEBHOOKS: usize = 25;

/// The account's subscriptions, oldest first.
pub(crate) async fn list(app: &App, account_id: &str) -> Result<Vec<WebhookRow>, ServiceError> {
    Ok(app.meta.list_webhooks(Some(account_id)).await?)
}

/// A new subscription to `url` for `events` (empty: all).
pub(crate) async fn create(
    app: &App,
    account_id: &str,
    url: &str,
    events: &[String],
) -> Result<NewWebhook, ServiceError> {
    if list(app, account_id).await?.len() >= MAX_WEBHOOKS {
        return Err(ServiceError::BadRequest(format!(
            "an account has at most {MAX_WEBHOOKS} webhooks: delete one first"
        )));
    }
    // A receiver written as an address is judged now; a name when the
    // sender connects (what it resolves to may change).
    super::webhook_guard::check_literal(app.config.webhook_receivers, url)
        .map_err(ServiceError::BadRequest)?;
    let now = app.clock.now_ms();
    Ok(admin::create_webhook(&*app.meta, account_id, url, events, now).await?)
}

/// The account's subscription `id`: 404 for none, another account's too.
async fn owned(app: &App, account_id: &str, id: &str) -> Result<WebhookRow, ServiceError> {
    list(app, account_id)
        .await?
        .into_iter()
        .find(|w| w.id == id)
        .ok_or_else(|| ServiceError::NotFound(format!("no webhook {id:?} in this account")))
}

/// Deletes the account's subscription `id` (its undelivered events go too).
pub(crate) async fn delete(app: &App, account_id: &str, id: &str) -> Result<(), ServiceError> {
    owned(app, account_id, id).await?;
    admin::delete_webhook(&*app.meta, id).await?;
    Ok(())
}

/// The latest deliveries of the account's subscription `id`, newest first.
pub(crate) async fn deliveries(
    app: &App,
    account_id: &str,
    id: &str,
) -> Result<Vec<DeliveryRow>, ServiceError> {
    owned(app, account_id, id).await?;
    Ok(app.meta.deliveries(id, DELIVERIES_KEPT).await?)
}
