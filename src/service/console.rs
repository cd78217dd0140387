//! The console's sessions (CONTRACT §19): a secret key exchanged for a
//! session, which then stands for that key. The session's id lives only in
//! the page's HttpOnly cookie; the database keeps its SHA-256
//! (`db::sessions`). A session ends on sign-out, after `[console]
//! session_idle` without a request, and at once when its key is revoked:
//! every request looks its key up as a `Bearer` key is looked up
//! (`AccountRepo::key_by_hash`).

use super::caller::{Access, Caller, Presented};
use super::{App, ServiceError};
use crate::domain::ids;

/// A session id's prefix (`cs_` + 256 random bits in hex).
pub(crate) const SESSION_PREFIX: &str = "cs_";

/// A session is marked seen at most this often (unix ms): a page's burst of
/// requests writes once.
const TOUCH_EVERY_MS: i64 = 60_000;

/// The error of a session that is not (or no longer) one.
fn ended() -> ServiceError {
    ServiceError::Unauthorized("the console session has ended: sign in again".into())
}

impl App {
    /// The idle time that ends a session, in ms.
    fn session_idle_ms(&self) -> i64 {
        i64::try_from(self.config.console.session_idle.as_millis()).unwrap_or(i64::MAX)
    }

    /// Signs in with `secret` (a secret key): a new session's id and the
    /// key's caller. A public key or an upload token cannot sign in (400);
    /// a key that is no live key is 401.
    pub(crate) async fn console_sign_in(
        &self,
        secret: &str,
    ) -> Result<(String, Caller), ServiceError> {
        let secret = secret.trim();
        if secret.is_empty() {
            return Err(ServiceError::BadRequest(
                "send the secret key (sk_…) as `key`".into(),
            ));
        }
        if secret.starts_with("pk_") || secret.starts_with("upt_") {
            return Err(ServiceError::BadRequest(
                "only a secret key (sk_…) can sign in to the console: a public key or an upload \
                 token cannot"
                    .into(),
            ));
        }
        let presented = Presented {
            secret,
            origin: None,
            retry: false,
            session: false,
        };
        let caller = self.authenticate(presented, Access::Secret).await?;
        if !caller.is_secret() {
            return Err(ServiceError::BadRequest(
                "only a secret key (sk_…) can sign in to the console".into(),
            ));
        }
        let id = format!("{SESSION_PREFIX}{}", ids::random_hex(32));
        let now = self.clock.now_ms();
        let idle_before = now.saturating_sub(self.session_idle_ms());
        self.meta
            .create_session(ids::key_hash(&id), &caller.key.id, now, idle_before)
            .await?;
        Ok((id, caller))
    }

    /// The caller a session stands for: its key's, looked up as a `Bearer`
    /// key is; 401 when the session is unknown, idle too long, or its key
    /// revoked (the session is then removed).
    pub(crate) async fn console_caller(&self, id: &str) -> Result<Caller, ServiceError> {
        if !id.starts_with(SESSION_PREFIX) || id.len() > 100 {
            return Err(ended());
        }
        let hash = ids::key_hash(id);
        let row = self.meta.session(hash).await?.ok_or_else(ended)?;
        let now = self.clock.now_ms();
        let idle = now.saturating_sub(row.last_seen_at) > self.session_idle_ms();
        let found = match row.key_hash {
            Some(key_hash) if !idle => self.meta.key_by_hash(key_hash).await?,
            _ => None,
        };
        let Some((key, account)) = found.filter(|(k, _)| k.id == row.key_id) else {
            self.meta.end_session(hash).await?;
            return Err(ended());
        };
        if now - row.last_seen_at >= TOUCH_EVERY_MS {
            self.meta.touch_session(hash, now).await?;
        }
        Ok(Caller { key, account })
    }

    /// Ends the session `id` (sign-out); false when there was none.
    pub(crate) async fn console_sign_out(&self, id: &str) -> Result<bool, ServiceError> {
        if !id.starts_with(SESSION_PREFIX) || id.len() > 100 {
            return Ok(false);
        }
        Ok(self.meta.end_session(ids::key_hash(id)).await?)
    }
}
