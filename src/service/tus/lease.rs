//! An upload's lease: the one request, on any node, that may change it now.
//! PATCHes to one upload on one node already wait for each other (`Locks`);
//! the lease, kept in the metadata store, extends that to every node: a
//! request that finds it held elsewhere answers 423 with `Retry-After`, and
//! the client tries again. It lasts [`LEASE`] and is renewed while the
//! request runs; it records its node, and is free at once when that node's
//! database session is gone (a node killed mid-PATCH holds nothing; on
//! SQLite, one node, a restart ends every lease at once). A request whose
//! lease was taken from it (it lapsed, or its node's session dropped while
//! the node lives) learns it at its next renewal: the rest of its body is
//! refused (423) and what it wrote is not recorded.

use super::App;
use crate::error::ApiError;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long a lease lasts unless renewed.
const LEASE: Duration = Duration::from_secs(10);
/// How often a running request renews its lease.
const RENEW_EVERY: Duration = Duration::from_secs(2);
/// When a client refused for a held lease may try again (`Retry-After`): the
/// holder is usually a PATCH that ends within moments.
const RETRY_AFTER_SECS: u64 = 1;

fn lease_ms() -> i64 {
    crate::clock::millis(LEASE)
}

/// A lease held by this request: ended by [`Lease::end`] (or, should the
/// request's task die first, left to lapse).
#[derive(Debug)]
pub(crate) struct Lease {
    app: Arc<App>,
    id: String,
    token: String,
    /// Set by the renewer when another request holds the lease now.
    lost: Arc<AtomicBool>,
    renewer: tokio::task::JoinHandle<()>,
}

fn locked(message: &str) -> ApiError {
    ApiError::Locked {
        message: message.into(),
        retry_after: RETRY_AFTER_SECS,
    }
}

impl Lease {
    /// Takes upload `id`'s lease (then the caller reads the upload afresh:
    /// another node may have moved it just before); 423 while a request on
    /// another node holds it.
    pub(crate) async fn take(app: &Arc<App>, id: &str) -> Result<Lease, ApiError> {
        let token = hex::encode(rand::random::<[u8; 16]>());
        let now = app.clock.now_ms();
        if !app
            .meta
            .lease_upload(id, &token, now, now + lease_ms())
            .await?
        {
            return Err(locked(
                "another request is writing to this upload; retry after Retry-After seconds \
                 (ask for its offset with HEAD, then resume)",
            ));
        }
        let lost = Arc::new(AtomicBool::new(false));
        let renewer = tokio::spawn(renew(
            app.clone(),
            id.to_string(),
            token.clone(),
            lost.clone(),
        ));
        Ok(Lease {
            app: app.clone(),
            id: id.to_string(),
            token,
            lost,
            renewer,
        })
    }

    /// `body`, cut off with 423 at its first chunk after the lease was lost.
    pub(crate) fn guard<S>(
        &self,
        body: S,
    ) -> impl Stream<Item = Result<Bytes, ApiError>> + Send + 'static
    where
        S: Stream<Item = Result<Bytes, ApiError>> + Send + 'static,
    {
        let lost = self.lost.clone();
        body.map(move |chunk| {
            if lost.load(Ordering::Acquire) {
                return Err(locked(
                    "another request took this upload over; ask for its offset (HEAD) and resume",
                ));
            }
            chunk
        })
    }

    /// Gives the upload back.
    pub(crate) async fn end(self) {
        self.renewer.abort();
        if let Err(e) = self.app.meta.release_upload(&self.id, &self.token).await {
            tracing::warn!(upload = %self.id, error = %e, "an upload's lease was not released (it lapses)");
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.renewer.abort();
    }
}

async fn renew(app: Arc<App>, id: String, token: String, lost: Arc<AtomicBool>) {
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        let now = app.clock.now_ms();
        match app
            .meta
            .lease_upload(&id, &token, now, now + lease_ms())
            .await
        {
            Ok(true) => {}
            // Taken (a stall longer than the lease, or this node's session
            // dropped): this request stops writing; should it record first,
            // its conditional record and the taker's decide, one wins.
            Ok(false) => {
                tracing::warn!(upload = %id, "an upload's lease was taken while a request ran");
                lost.store(true, Ordering::Release);
                return;
            }
            Err(e) => tracing::warn!(upload = %id, error = %e, "an upload's lease was not renewed"),
        }
    }
}
