//! An upload's lease: the one request, on any node, that may change it now.
//! One PATCH of an upload runs at a time on one node (`Locks`); the lease,
//! kept in the metadata store, extends that to every node: a
//! request that finds it held elsewhere answers 423 with `Retry-After`, and
//! the client tries again. It lasts [`LEASE`] and is renewed while the
//! request runs; it records its node, and is free at once when that node's
//! database session is gone (a node killed mid-PATCH holds nothing; on
//! SQLite, one node, a restart ends every lease at once). A request whose
//! lease was taken from it (it lapsed, or its node's session dropped while
//! the node lives, or a termination seized it) learns it at its next
//! renewal: it stops at once, even while its client sends nothing (423),
//! and what it wrote is not recorded. So does a request whose renewals
//! failed for as long as its lease lasts (a node cut off from the
//! database): by then another node may hold the upload. While a request
//! holds it, each renewal also keeps the upload from expiring: an upload
//! expires when it receives no byte for its idle time, and a request
//! receiving bytes is still in progress however long it takes.

use crate::service::error::ServiceError;
use crate::service::App;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How long a lease lasts unless renewed.
const LEASE: Duration = Duration::from_secs(10);
/// How often a running request renews its lease.
const RENEW_EVERY: Duration = Duration::from_secs(2);
/// When a client refused for a held lease may try again (`Retry-After`): the
/// holder is usually a PATCH that ends within moments.
const RETRY_AFTER_SECS: u64 = 1;

/// How long a termination waits for a request on this node that it took
/// the upload from to end (it stops at its next renewal).
pub(crate) const STOPS_WITHIN: Duration = LEASE;

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
    /// True once the renewer found that this request holds the lease no more.
    lost: watch::Receiver<bool>,
    renewer: tokio::task::JoinHandle<()>,
}

fn locked(message: &str) -> ServiceError {
    ServiceError::Locked {
        message: message.into(),
        retry_after: RETRY_AFTER_SECS,
    }
}

/// 423 for a PATCH while another request to the same upload runs on this
/// node.
pub(crate) fn busy() -> ServiceError {
    locked(
        "another request to this upload is in progress; retry after Retry-After seconds \
         (ask for its offset with HEAD, then resume)",
    )
}

/// 423 for a request whose lease another request took.
pub(crate) fn taken() -> ServiceError {
    locked("another request took this upload over; ask for its offset (HEAD) and resume")
}

impl Lease {
    /// Takes upload `id`'s lease (then the caller reads the upload afresh:
    /// another node may have moved it just before); 423 while a request on
    /// another node holds it.
    pub(crate) async fn take(app: &Arc<App>, id: &str) -> Result<Lease, ServiceError> {
        let token = hex::encode(rand::random::<[u8; 16]>());
        let now = app.clock.now_ms();
        let until = now + lease_ms();
        if !app.meta.lease_upload(id, &token, now, until).await? {
            return Err(locked(
                "another request is writing to this upload; retry after Retry-After seconds \
                 (ask for its offset with HEAD, then resume)",
            ));
        }
        Ok(Lease::held(app, id, token, until))
    }

    /// Takes upload `id`'s lease whoever holds it (a termination): the
    /// request that held it, on any node, stops at its next renewal. None
    /// when there is no such upload.
    pub(crate) async fn seize(app: &Arc<App>, id: &str) -> Result<Option<Lease>, ServiceError> {
        let token = hex::encode(rand::random::<[u8; 16]>());
        let until = app.clock.now_ms() + lease_ms();
        if !app.meta.seize_upload(id, &token, until).await? {
            return Ok(None);
        }
        Ok(Some(Lease::held(app, id, token, until)))
    }

    fn held(app: &Arc<App>, id: &str, token: String, until: i64) -> Lease {
        let (lose, lost) = watch::channel(false);
        let renewer = tokio::spawn(renew(
            app.clone(),
            id.to_string(),
            token.clone(),
            lose,
            until,
        ));
        Lease {
            app: app.clone(),
            id: id.to_string(),
            token,
            lost,
            renewer,
        }
    }

    /// Whether another request holds the upload now (as of the last renewal).
    pub(crate) fn is_lost(&self) -> bool {
        *self.lost.borrow()
    }

    /// `body`, cut off with 423 as soon as the lease is lost: at once, even
    /// while no byte comes.
    pub(crate) fn guard<S>(
        &self,
        body: S,
    ) -> impl Stream<Item = Result<Bytes, ServiceError>> + Send + 'static
    where
        S: Stream<Item = Result<Bytes, ServiceError>> + Send + 'static,
    {
        let lost = self.lost.clone();
        futures_util::stream::unfold(
            (Box::pin(body), lost, false),
            |(mut body, mut lost, ended)| async move {
                if ended || *lost.borrow() {
                    return (!ended).then(|| (Err(taken()), (body, lost, true)));
                }
                tokio::select! {
                    chunk = body.next() => {
                        if *lost.borrow() {
                            return Some((Err(taken()), (body, lost, true)));
                        }
                        chunk.map(|c| (c, (body, lost, false)))
                    }
                    () = until_lost(&mut lost) => Some((Err(taken()), (body, lost, true))),
                }
            },
        )
    }

    /// Gives the upload back.
    pub(crate) async fn end(self) {
        self.renewer.abort();
        if let Err(e) = self.app.meta.release_upload(&self.id, &self.token).await {
            tracing::warn!(upload = %self.id, error = %e, "an upload's lease was not released (it lapses)");
        }
    }
}

/// Resolves once the lease is lost (never, once its renewer has ended
/// without losing it).
async fn until_lost(lost: &mut watch::Receiver<bool>) {
    if lost.wait_for(|l| *l).await.is_err() {
        std::future::pending::<()>().await;
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.renewer.abort();
    }
}

/// Renews the lease, held until `held_until`, while the request runs; says
/// when it is lost.
async fn renew(
    app: Arc<App>,
    id: String,
    token: String,
    lose: watch::Sender<bool>,
    mut held_until: i64,
) {
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        let now = app.clock.now_ms();
        let until = now + lease_ms();
        match app.meta.lease_upload(&id, &token, now, until).await {
            Ok(true) => held_until = until,
            // Taken (a stall longer than the lease, this node's session
            // dropped, or a termination): this request stops writing; should
            // it record first, its conditional record and the taker's
            // decide, one wins.
            Ok(false) => {
                tracing::warn!(upload = %id, "an upload's lease was taken while a request ran");
                lose.send_replace(true);
                return;
            }
            // Not renewed for as long as the lease lasts: another node may
            // hold the upload now, so this request may not go on.
            Err(e) if app.clock.now_ms() >= held_until => {
                tracing::warn!(upload = %id, error = %e, "an upload's lease lapsed unrenewed: the request stops");
                lose.send_replace(true);
                return;
            }
            Err(e) => tracing::warn!(upload = %id, error = %e, "an upload's lease was not renewed"),
        }
    }
}
