//! The node's own PostgreSQL session: the advisory lock that tells other
//! nodes this one is alive, held (and taken again after a cut) for as long
//! as the process runs; and the ear for changes to keys and accounts made
//! elsewhere ([`KEYS_CHANNEL`]), on which the node forgets the keys it
//! remembers (`db::keys`) at once.

use super::tls::MakeTls;
use crate::db::error::DbError;
use crate::db::keys::KeyCache;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_postgres::types::ToSql;
use tokio_postgres::AsyncMessage;

/// The channel on which a store that changed keys or accounts (a key
/// revoked, an account's plan or grace period set) says so, after it
/// committed (`NOTIFY`): every node's session listens, and forgets the keys
/// it remembers when it hears it. While a session is down, and until it
/// listens again, its node sees such changes within `keys::KEY_FRESH`.
pub(crate) const KEYS_CHANNEL: &str = "filestore_keys";

/// The first key of the session advisory lock each running node holds (its
/// second key is the node's number): "fsnd".
pub(crate) const NODE_LOCK: i32 = 0x6673_6e64;

/// A connection of the node's own, outside the pool, holding the node's
/// session advisory lock for as long as the node runs: PostgreSQL releases
/// it when the process dies, which is how other nodes tell a crashed node's
/// upload guards from live ones. Returns the node's number and the task
/// that keeps the session: should the connection drop (a database restart,
/// a network cut, found by the keepalives), it reconnects and takes the
/// same lock again; aborting it (the store dropped) ends the session. The
/// session listens on [`KEYS_CHANNEL`] and forgets `keys` on every notice.
pub(crate) async fn hold_node_lock(
    pg: tokio_postgres::Config,
    tls: MakeTls,
    limit: Duration,
    keys: Arc<KeyCache>,
) -> Result<(i32, NodeSession), DbError> {
    let (client, conn) = pg.connect(tls.clone()).await?;
    let conn = run_session(conn, Arc::clone(&keys));
    listen(&client, limit).await?;
    loop {
        let node = rand::random_range(1..i32::MAX);
        if try_node_lock(&client, node, limit).await? {
            let session = Session {
                pg,
                tls,
                limit,
                keys,
            };
            let task = tokio::spawn(keep_node_lock(session, node, client, conn));
            return Ok((node, NodeSession(task)));
        }
    }
}

/// Drives the session's connection until it ends (its outcome then, as the
/// connection's own future gives it), forgetting `keys` on every notice on
/// [`KEYS_CHANNEL`].
fn run_session<S, T>(mut conn: tokio_postgres::Connection<S, T>, keys: Arc<KeyCache>) -> Connection
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| conn.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) if n.channel() == KEYS_CHANNEL => {
                    keys.forget();
                }
                Some(Ok(AsyncMessage::Notice(n))) => {
                    tracing::info!(notice = %n, "from the node's PostgreSQL session");
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            }
        }
    })
}

/// Has the session hear [`KEYS_CHANNEL`].
async fn listen(client: &tokio_postgres::Client, limit: Duration) -> Result<(), DbError> {
    let sql = format!("LISTEN {KEYS_CHANNEL}");
    let listen = client.batch_execute(&sql);
    tokio::time::timeout(limit, listen)
        .await
        .map_err(|_| DbError::timed_out(limit))??;
    Ok(())
}

async fn try_node_lock(
    client: &tokio_postgres::Client,
    node: i32,
    limit: Duration,
) -> Result<bool, DbError> {
    let params: [&(dyn ToSql + Sync); 2] = [&NODE_LOCK, &node];
    let lock = client.query_one("SELECT pg_try_advisory_lock($1, $2)", &params);
    let row = tokio::time::timeout(limit, lock)
        .await
        .map_err(|_| DbError::timed_out(limit))??;
    Ok(row.get::<_, bool>(0))
}

type Connection = tokio::task::JoinHandle<Result<(), tokio_postgres::Error>>;

/// What a session is opened again with.
struct Session {
    pg: tokio_postgres::Config,
    tls: MakeTls,
    limit: Duration,
    keys: Arc<KeyCache>,
}

/// Holds `client`'s session until its connection ends, then opens a new one
/// listening and holding node `node`'s lock again (every 2 s until it
/// succeeds); the keys are forgotten then, as changes made meanwhile went
/// unheard.
async fn keep_node_lock(
    session: Session,
    node: i32,
    client: tokio_postgres::Client,
    conn: Connection,
) {
    let Session {
        pg,
        tls,
        limit,
        keys,
    } = session;
    let (mut _client, mut conn) = (client, conn);
    loop {
        match conn.await {
            Ok(Ok(())) => tracing::warn!("the node's PostgreSQL session ended; reconnecting"),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "the node's PostgreSQL session failed; reconnecting");
            }
            Err(e) => {
                tracing::warn!(error = %e, "the node's PostgreSQL session ended; reconnecting");
            }
        }
        loop {
            tokio::time::sleep(Duration::from_secs(2)).await;
            let Ok((client, c)) = pg.connect(tls.clone()).await else {
                continue;
            };
            let c = run_session(c, Arc::clone(&keys));
            if let Err(e) = listen(&client, limit).await {
                tracing::warn!(error = %e, "the node's session did not listen again");
                continue;
            }
            match try_node_lock(&client, node, limit).await {
                Ok(true) => {
                    keys.forget();
                    tracing::info!(node, "the node's PostgreSQL session is back");
                    (_client, conn) = (client, c);
                    break;
                }
                Ok(false) => tracing::error!(node, "another session holds this node's lock"),
                Err(e) => tracing::warn!(error = %e, "the node's lock was not taken again"),
            }
        }
    }
}

/// The task keeping the node's session; ending it ends the session.
#[derive(Debug)]
pub(crate) struct NodeSession(tokio::task::JoinHandle<()>);

impl Drop for NodeSession {
    fn drop(&mut self) {
        self.0.abort();
    }
}
