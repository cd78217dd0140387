//! The node's own PostgreSQL session: the advisory lock that tells other
//! nodes this one is alive, held (and taken again after a cut) for as long
//! as the process runs.

use super::tls::MakeTls;
use crate::db::error::DbError;
use std::time::Duration;
use tokio_postgres::types::ToSql;

/// The first key of the session advisory lock each running node holds (its
/// second key is the node's number): "fsnd".
pub(crate) const NODE_LOCK: i32 = 0x6673_6e64;

/// A connection of the node's own, outside the pool, holding the node's
/// session advisory lock for as long as the node runs: PostgreSQL releases
/// it when the process dies, which is how other nodes tell a crashed node's
/// upload guards from live ones. Returns the node's number and the task
/// that keeps the session: should the connection drop (a database restart,
/// a network cut, found by the keepalives), it reconnects and takes the
/// same lock again; aborting it (the store dropped) ends the session.
pub(crate) async fn hold_node_lock(
    pg: tokio_postgres::Config,
    tls: MakeTls,
    limit: Duration,
) -> Result<(i32, NodeSession), DbError> {
    let (client, conn) = pg.connect(tls.clone()).await?;
    let conn = tokio::spawn(conn);
    loop {
        let node = rand::random_range(1..i32::MAX);
        if try_node_lock(&client, node, limit).await? {
            let task = tokio::spawn(keep_node_lock(pg, tls, limit, node, client, conn));
            return Ok((node, NodeSession(task)));
        }
    }
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

/// Holds `client`'s session until its connection ends, then opens a new one
/// holding node `node`'s lock again (every 2 s until it succeeds).
async fn keep_node_lock(
    pg: tokio_postgres::Config,
    tls: MakeTls,
    limit: Duration,
    node: i32,
    client: tokio_postgres::Client,
    conn: Connection,
) {
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
            let c = tokio::spawn(c);
            match try_node_lock(&client, node, limit).await {
                Ok(true) => {
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
