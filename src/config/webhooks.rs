//! `[webhooks]`: which addresses the webhook sender may reach.

use crate::domain::webhooks::receivers::Receivers;
use serde::Deserialize;

/// `[webhooks]` as the file has it.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct WebhooksSection {
    /// `"public"`, `"loopback"` (default) or `"any"`.
    pub receivers: Option<String>,
}

impl WebhooksSection {
    pub(crate) fn resolve(&self) -> Result<Receivers, String> {
        match self.receivers.as_deref() {
            None => Ok(Receivers::default()),
            Some(s) => s
                .parse()
                .map_err(|e: String| format!("webhooks.receivers: {e}")),
        }
    }
}
