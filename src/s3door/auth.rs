//! Who signs a request: the secret key whose id is the access key id, its
//! S3 secret derived from the signing secret (`Signer::s3_secret`), looked
//! up for every request so that a revoked key stops at once on every node.

use crate::service::App;
use s3s::auth::{S3Auth, SecretKey};
use s3s::{s3_error, S3Result};
use std::sync::Arc;

pub(crate) struct Credentials {
    pub(crate) app: Arc<App>,
}

#[async_trait::async_trait]
impl S3Auth for Credentials {
    async fn get_secret_key(&self, access_key: &str) -> S3Result<SecretKey> {
        match self.app.s3_caller(access_key).await {
            Ok(Some(_)) => Ok(SecretKey::from(self.app.signer.s3_secret(access_key))),
            Ok(None) => Err(s3_error!(
                InvalidAccessKeyId,
                "The AWS Access Key Id you provided does not exist in our records."
            )),
            Err(e) => Err(s3_error!(InternalError, "{e}")),
        }
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
        let caller = match self.app.s3_caller(&creds.access_key).await {
            Ok(Some(caller)) => caller,
            Ok(None) => return Err(s3_error!(InvalidAccessKeyId)),
            Err(e) => return Err(s3_error!(InternalError, "{e}")),
        };
        if let Some(slot) = cx.extensions_mut().get::<super::AccountSlot>() {
            let _ = slot.0.set(caller.account.id.clone());
        }
        cx.extensions_mut().insert(caller);
        Ok(())
    }
}
