//! Who signs a request: the secret key whose id is the access key id, its
//! S3 secret derived from the signing secret (`Signer::s3_secret`), looked
//! up for every request (one lookup, shared by s3s's two questions through
//! [`SEEN`]) so that a revoked key stops at once on every node.

use super::errors;
use crate::service::caller::Caller;
use crate::service::App;
use s3s::auth::{S3Auth, SecretKey};
use s3s::{s3_error, S3Result};
use std::sync::{Arc, Mutex};

tokio::task_local! {
    /// The caller the signature check found, for the access check of the
    /// same request (s3s asks for the secret, then for the permission).
    pub(crate) static SEEN: Mutex<Option<Caller>>;
}

pub(crate) struct Credentials {
    pub(crate) app: Arc<App>,
}

fn unknown() -> s3s::S3Error {
    s3_error!(
        InvalidAccessKeyId,
        "The AWS Access Key Id you provided does not exist in our records."
    )
}

#[async_trait::async_trait]
impl S3Auth for Credentials {
    async fn get_secret_key(&self, access_key: &str) -> S3Result<SecretKey> {
        let caller = self
            .app
            .s3_caller(access_key)
            .await
            .map_err(errors::key)?
            .ok_or_else(unknown)?;
        let _ = SEEN.try_with(|seen| *seen.lock().expect("seen lock") = Some(caller));
        Ok(SecretKey::from(self.app.signer.s3_secret(access_key)))
    }
}

pub(crate) struct Admission {
    pub(crate) app: Arc<App>,
}

#[async_trait::async_trait]
impl s3s::access::S3Access for Admission {
    async fn check(&self, cx: &mut s3s::access::S3AccessContext<'_>) -> S3Result<()> {
        let Some(creds) = cx.credentials() else {
            return Err(s3_error!(
                AccessDenied,
                "Anonymous requests are not allowed"
            ));
        };
        let seen = SEEN
            .try_with(|seen| seen.lock().expect("seen lock").take())
            .ok()
            .flatten()
            .filter(|c| c.key.id == creds.access_key);
        let caller = match seen {
            Some(c) => c,
            None => self
                .app
                .s3_caller(&creds.access_key)
                .await
                .map_err(errors::key)?
                .ok_or_else(unknown)?,
        };
        if let Some(slot) = cx.extensions_mut().get::<super::AccountSlot>() {
            let _ = slot.0.set(caller.account.id.clone());
        }
        cx.extensions_mut().insert(caller);
        Ok(())
    }
}
