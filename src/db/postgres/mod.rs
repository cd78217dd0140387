//! The metadata store on PostgreSQL, for several stateless `serve` nodes
//! sharing one database. A deadpool of tokio-postgres connections, over TLS
//! as the URL's `sslmode` and `sslrootcert` say (see [`tls`]).
//! Every [`MetaStore`](super::MetaStore) method is one transaction; the
//! rules that SQLite keeps with its single writer are kept here with row
//! locks: a quota check locks the account row first (`SELECT … FOR
//! UPDATE`), counters move with `x = x + $1`, and the collectors claim their
//! rows with `FOR UPDATE SKIP LOCKED` so that every node can run them at once.
//!
//! Every call has a deadline (`database.statement_timeout`): the server
//! cancels a statement that runs longer, and the client gives up on a call
//! (checkout, statements and commit together) that has no answer by then,
//! dropping its connection; TCP keepalives on both ends find a dead peer of
//! an idle connection. See [`settings`].

use crate::db::error::DbError;
use deadpool_postgres::{
    GenericClient, Manager, ManagerConfig, Object, Pool, QueueMode, RecyclingMethod, Runtime,
    Transaction,
};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

/// Every statement's deadline unless `database.statement_timeout` says
/// otherwise: a frozen database answers 503 within it, never a hang.
pub const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs `$body` with `$c` a pooled connection, within the call's deadline
/// (checkout included); past it, the connection is dropped, not pooled.
macro_rules! on_conn {
    ($self:ident, |$c:ident| $body:expr) => {{
        on_conn!($self, tokio::time::Instant::now() + $self.limit, |$c| $body)
    }};
    ($self:ident, $deadline:expr, |$c:ident| $body:expr) => {{
        let deadline = $deadline;
        let client = $crate::db::postgres::checkout(&$self.pool, deadline, $self.limit).await?;
        let outcome = tokio::time::timeout_at(deadline, async {
            let $c = &client;
            $body
        })
        .await;
        $crate::db::postgres::settle(client, outcome, $self.limit)
    }};
}

/// Runs `$body` with `$tx` a transaction of a pooled connection, as
/// [`on_conn`] does; commits when it returns Ok, rolls back otherwise (the
/// transaction dropped). A `return` in `$body` would skip the commit: a
/// body that returns early is a fn of its own, called here.
macro_rules! in_tx {
    ($self:ident, |$tx:ident| $body:expr) => {{
        in_tx!($self, tokio::time::Instant::now() + $self.limit, |$tx| {
            $body
        })
    }};
    ($self:ident, $deadline:expr, |$tx:ident| $body:expr) => {{
        let deadline = $deadline;
        let mut client = $crate::db::postgres::checkout(&$self.pool, deadline, $self.limit).await?;
        let outcome = tokio::time::timeout_at(deadline, async {
            let $tx = client.transaction().await?;
            let out = $body;
            if out.is_ok() {
                $tx.commit().await?;
            }
            out
        })
        .await;
        $crate::db::postgres::settle(client, outcome, $self.limit)
    }};
}

// After the macros: they are in scope in the modules declared below.
mod account_lock;
mod accounts;
mod batch;
mod blobs;
mod bus;
mod commit;
mod console;
mod digests;
mod files;
mod flights;
mod group;
mod integrity;
mod node;
mod ops;
mod outbox;
mod paths;
mod rates;
mod turns;
pub(crate) use node::NODE_LOCK;
use node::{hold_node_lock, NodeSession};
mod plans;
mod rows;
mod s3;
mod s3_buckets;
mod sessions;
mod strangers;
mod tls;
mod tokens;
mod uploads;
mod variants;

/// The PostgreSQL metadata store; each aggregate of
/// [`MetaStore`](super::MetaStore) is implemented in a file of its own
/// (`files`, `blobs`, `accounts`, `tokens`, `uploads`, `outbox`, `rates`, `ops`, `s3`, `s3_buckets`),
/// each method one transaction (or one statement, which is its own), on a
/// pooled connection.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool,
    /// The deadline of every call (`database.statement_timeout`).
    limit: Duration,
    /// This node's number (its upload guards' `owner`, its leases' `lease_node`).
    node: i32,
    /// The session holding the node's advisory lock.
    _node_session: Arc<NodeSession>,
    /// The nodes owning upload guards seen without a session, and since when.
    gone: Arc<Mutex<HashMap<i32, std::time::Instant>>>,
    /// An upload's commit queued webhook events since the sender last asked.
    queued_events: Arc<AtomicBool>,
    /// Keys and their accounts as recently read (`db::keys`).
    keys: Arc<crate::db::keys::KeyCache>,
    /// The accounts with a commit in flight on this node, and the uploads
    /// waiting to go in their next batch (`batch`).
    commits: Arc<batch::CommitGroups>,
    /// The accounts whose uploads' early reads are in flight on this node
    /// (`flights`): their next commit batch waits for them.
    flights: Arc<flights::Flights>,
    /// The keys with a rate window count in flight on this node (`rates`).
    windows: Arc<rates::RateGroups>,
    /// The keys' counts waiting for this node's next count statement.
    counts: Arc<rates::CountBus>,
    /// The accounts with a read of their commitments in flight (`accounts`).
    held: Arc<accounts::HeldGroups>,
    /// The accounts whose turn at their row is taken on this node (`turns`).
    turns: Arc<turns::Turns>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PgStore")
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://…`, TLS as its `sslmode` says) and
    /// migrates, with the default deadline on every call.
    pub async fn connect(url: &str) -> Result<PgStore, DbError> {
        PgStore::connect_with(url, DEFAULT_STATEMENT_TIMEOUT).await
    }

    /// Connects to `url` and migrates; every call gives up after `limit`.
    pub async fn connect_with(url: &str, limit: Duration) -> Result<PgStore, DbError> {
        PgStore::open(url, limit, Migrate::Always).await
    }

    /// Connects to `url`, migrating as `migrate` allows; every call gives up
    /// after `limit`.
    pub async fn open(url: &str, limit: Duration, migrate: Migrate) -> Result<PgStore, DbError> {
        let (pg, tls) = settings(url, limit)?;
        let pool = connect(pg.clone(), tls.clone(), limit, migrate)
            .await
            .map_err(|e| tls::explain(e, tls.settings()))?;
        let keys = Arc::<crate::db::keys::KeyCache>::default();
        let (node, session) = hold_node_lock(pg, tls.clone(), limit, Arc::clone(&keys))
            .await
            .map_err(|e| tls::explain(e, tls.settings()))?;
        let flights = Arc::<flights::Flights>::default();
        let (windows, counts) = rates::rate_groups();
        Ok(PgStore {
            pool,
            limit,
            node,
            _node_session: Arc::new(session),
            gone: Arc::default(),
            queued_events: Arc::default(),
            keys,
            commits: Arc::new(batch::CommitGroups::new(Arc::clone(&flights))),
            flights,
            windows,
            counts: Arc::new(counts),
            held: accounts::held_groups(),
            turns: Arc::default(),
        })
    }

    /// The pool underneath (for tests and tools that read the database).
    pub fn pool(&self) -> &Pool {
        &self.pool
    }
}

/// Numbered migrations, applied in order; `schema_version` records the last.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_guard_owner.sql"),
    include_str!("migrations/0003_leases_and_rate_windows.sql"),
    include_str!("migrations/0004_webhooks.sql"),
    include_str!("migrations/0005_upload_owners.sql"),
    include_str!("migrations/0006_webhook_fairness.sql"),
    include_str!("migrations/0007_file_metadata.sql"),
    include_str!("migrations/0008_upload_tokens.sql"),
    include_str!("migrations/0009_image_variants.sql"),
    include_str!("migrations/0010_plans.sql"),
    include_str!("migrations/0011_event_batches.sql"),
    include_str!("migrations/0012_commit_function.sql"),
    include_str!("migrations/0013_group_commit.sql"),
    include_str!("migrations/0014_commit_accounts.sql"),
    include_str!("migrations/0015_commit_accounts_culprit.sql"),
    include_str!("migrations/0016_commit_accounts_at_once.sql"),
    include_str!("migrations/0017_strangers_share.sql"),
    include_str!("migrations/0018_one_commit.sql"),
    include_str!("migrations/0019_path_index.sql"),
    include_str!("migrations/0020_md5_pending.sql"),
    include_str!("migrations/0021_file_counts.sql"),
    include_str!("migrations/0022_replace.sql"),
    include_str!("migrations/0023_s3_multipart.sql"),
    include_str!("migrations/0024_object_attrs.sql"),
    include_str!("migrations/0025_damaged.sql"),
    include_str!("migrations/0026_crc32.sql"),
    include_str!("migrations/0027_console.sql"),
    include_str!("migrations/0028_console_sessions.sql"),
    include_str!("migrations/0029_commit_lock_late.sql"),
];

/// The advisory lock the migrating transaction holds ("filestore" in ASCII):
/// nodes starting at once migrate one after the other, so once.
const MIGRATION_LOCK: i64 = 0x66_696c_6573_746f;

/// Connections per node.
const POOL_SIZE: usize = 16;

/// TCP keepalives, both ends: an idle connection whose peer is gone (a
/// dead host, a cut network) is found after 10 s idle plus 3 probes 5 s
/// apart, and dropped.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_PROBES: u32 = 3;

impl From<tokio_postgres::Error> for DbError {
    fn from(e: tokio_postgres::Error) -> Self {
        use tokio_postgres::error::SqlState;
        if e.code() == Some(&SqlState::DISK_FULL) {
            DbError::DiskFull(Box::new(e))
        } else if e.code() == Some(&SqlState::T_R_DEADLOCK_DETECTED)
            || e.code() == Some(&SqlState::T_R_SERIALIZATION_FAILURE)
        {
            // PostgreSQL undid the transaction to break a cycle of waits:
            // nothing of it stays, and the same request again goes through.
            DbError::Undone(Box::new(e))
        } else if e.code() == Some(&SqlState::QUERY_CANCELED) {
            // Cancelled by the server's statement_timeout (nothing else
            // cancels ours): a database too slow to answer, unavailable for now.
            DbError::Pool(Box::new(e))
        } else if lost_connection(&e) {
            // The connection went (a restart, a failover, a network cut):
            // unavailable for now.
            DbError::Pool(Box::new(e))
        } else {
            DbError::Backend(Box::new(e))
        }
    }
}

/// Whether `e` says the connection is gone rather than the statement wrong:
/// closed, a socket error, SQLSTATE class 08 (connection exception) or 57P
/// (the server shutting down or refusing connections; not 57014, a
/// cancelled query).
fn lost_connection(e: &tokio_postgres::Error) -> bool {
    match e.code() {
        _ if e.is_closed() => true,
        Some(code) => code.code().starts_with("08") || code.code().starts_with("57P"),
        None => {
            std::error::Error::source(e).is_some_and(<dyn std::error::Error>::is::<std::io::Error>)
        }
    }
}

impl From<deadpool_postgres::PoolError> for DbError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        match e {
            // Connecting failed: the database is unreachable.
            deadpool_postgres::PoolError::Backend(e) => DbError::Pool(Box::new(e)),
            other => DbError::Pool(Box::new(other)),
        }
    }
}

/// A count or size as PostgreSQL's BIGINT; refused past `i64::MAX`.
pub(crate) fn signed(n: u64) -> Result<i64, DbError> {
    i64::try_from(n).map_err(|_| DbError::Invalid(format!("{n} is too large to store")))
}

/// A BIGINT that holds a count or size (never negative: CHECKs and
/// `GREATEST(0, …)` keep them so).
pub(crate) fn unsigned(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// PostgreSQL's text holds no NUL: a key with one names nothing stored (a
/// lookup answers None instead of the server refusing the parameter).
pub(crate) fn has_nul(keys: &[&str]) -> bool {
    keys.iter().any(|k| k.contains('\0'))
}

/// The connection settings of `url` with the deadline `limit` on every
/// call: a connect timeout, TCP keepalives from this end, and, on the
/// server's end of every session (the startup `options`, before any the
/// URL gives, which win), `statement_timeout` (a statement running longer,
/// or waiting longer for a lock, is cancelled), keepalives (a dead client
/// host's session ends, and with it its locks) and
/// `idle_in_transaction_session_timeout` at twice the deadline (a client
/// that froze inside a transaction does not hold its row locks for longer).
/// With them, the TLS connector of the URL's `sslmode` and `sslrootcert`
/// (its CA certificates read now: a bad one fails here, before connecting).
pub(crate) fn settings(
    url: &str,
    limit: Duration,
) -> Result<(tokio_postgres::Config, tls::MakeTls), DbError> {
    let (url, mut tls_settings) = tls::split_url(url)?;
    let mut pg: tokio_postgres::Config = url
        .parse()
        .map_err(|e| DbError::Invalid(format!("database.url: {e}")))?;
    // No TLS on a Unix socket (the server refuses it there): libpq ignores
    // sslmode for one.
    if !pg.get_hosts().is_empty()
        && pg
            .get_hosts()
            .iter()
            .all(|h| !matches!(h, tokio_postgres::config::Host::Tcp(_)))
    {
        tls_settings.mode = tls::SslMode::Disable;
    }
    pg.ssl_mode(tls::driver_mode(tls_settings.mode));
    let ms = |d: Duration| d.as_millis().max(1);
    let mut options = format!(
        "-c statement_timeout={} -c idle_in_transaction_session_timeout={} \
         -c tcp_keepalives_idle={} -c tcp_keepalives_interval={} -c tcp_keepalives_count={}",
        ms(limit),
        ms(limit * 2),
        KEEPALIVE_IDLE.as_secs(),
        KEEPALIVE_INTERVAL.as_secs(),
        KEEPALIVE_PROBES
    );
    if let Some(given) = pg.get_options() {
        options = format!("{options} {given}");
    }
    pg.options(options)
        .connect_timeout(limit)
        .keepalives(true)
        .keepalives_idle(KEEPALIVE_IDLE)
        .keepalives_interval(KEEPALIVE_INTERVAL)
        .keepalives_retries(KEEPALIVE_PROBES);
    Ok((pg, tls::MakeTls::new(tls_settings)?))
}

/// Checks the TLS settings of `url` (`sslmode`, `sslrootcert`, whose CA
/// certificates are read), as the configuration is read: a bad one is a
/// configuration error at start, before any connection.
pub(crate) fn check_tls(url: &str) -> Result<(), DbError> {
    let (_, settings) = tls::split_url(url)?;
    tls::MakeTls::new(settings).map(drop)
}

/// Connects the pool to `pg` over `tls` and migrates the database. Waiting
/// for a connection, opening one and checking one before reuse each give up
/// after `limit`.
pub(crate) async fn connect(
    pg: tokio_postgres::Config,
    tls: tls::MakeTls,
    limit: Duration,
    policy: Migrate,
) -> Result<Pool, DbError> {
    let manager = Manager::from_config(
        pg,
        tls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        // The connection used last goes next: a node's statements keep to
        // the few connections (and PostgreSQL backends) its load needs, warm
        // in both processes' caches, instead of going round all 16. An idle
        // one at the bottom stays alive and checked (`KEEPALIVE_IDLE`).
        .queue_mode(QueueMode::Lifo)
        .max_size(POOL_SIZE)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(limit))
        .create_timeout(Some(limit))
        .recycle_timeout(Some(limit))
        .build()
        .map_err(|e| DbError::Pool(Box::new(e)))?;
    migrate(&pool, policy).await?;
    Ok(pool)
}

/// A pooled connection, or a timeout at `deadline`.
pub(crate) async fn checkout(
    pool: &Pool,
    deadline: Instant,
    limit: Duration,
) -> Result<Object, DbError> {
    match tokio::time::timeout_at(deadline, pool.get()).await {
        Ok(client) => Ok(client?),
        Err(_) => Err(DbError::timed_out(limit)),
    }
}

/// The outcome of a call made on `client`: when it overran its deadline,
/// the connection is taken out of the pool and closed, since it may still
/// be inside a statement or a transaction; the pool opens a fresh one.
pub(crate) fn settle<T>(
    client: Object,
    outcome: Result<Result<T, DbError>, tokio::time::error::Elapsed>,
    limit: Duration,
) -> Result<T, DbError> {
    if let Ok(result) = outcome {
        result
    } else {
        drop(Object::take(client));
        Err(DbError::timed_out(limit))
    }
}

/// When opening a database may change its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migrate {
    /// Apply whatever migrations the database lacks (`admin migrate`,
    /// `serve --migrate`, tests).
    Always,
    /// Create the schema of an empty database, but refuse to start on an
    /// existing older one, naming the command that migrates it (`serve`
    /// without `--migrate`, other `admin` commands): in a rolling upgrade,
    /// the operator decides when the shared schema moves.
    OnlyEmpty,
}

/// Refuses to set up a new schema in a database whose encoding cannot hold
/// every name and metadata value the API accepts (any UTF-8): in LATIN1,
/// say, a `€` in a file name would fail its commit. UTF8 holds them, and
/// SQL_ASCII stores the bytes as they come. A database set up before this
/// check (`version` > 0) runs on, with a warning at each start: it holds
/// what it held, and moves to UTF8 by a dump and a restore.
async fn check_encoding(tx: &Transaction<'_>, version: usize) -> Result<(), DbError> {
    let encoding: String = tx
        .query_one("SELECT current_setting('server_encoding')", &[])
        .await?
        .get(0);
    if matches!(encoding.as_str(), "UTF8" | "SQL_ASCII") {
        return Ok(());
    }
    let why = format!(
        "the database's encoding is {encoding}, which cannot hold every file name and \
         metadata value: filestore needs a database in UTF8"
    );
    if version > 0 {
        tracing::warn!(
            "{why}; an upload whose name or metadata it cannot hold fails (dump it, and restore into a database \
             created with ENCODING 'UTF8')"
        );
        return Ok(());
    }
    Err(DbError::Invalid(format!(
        "{why} (CREATE DATABASE … ENCODING 'UTF8' LOCALE 'C' TEMPLATE template0)"
    )))
}

/// Applies the migrations this database lacks, in one transaction that
/// holds an advisory lock: of several nodes starting at once, the first
/// migrates and the others then find nothing to do. A migration may take
/// long on a big database: no statement_timeout in it.
async fn migrate(pool: &Pool, policy: Migrate) -> Result<(), DbError> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    tx.batch_execute("SET LOCAL statement_timeout = 0").await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_version (
             version    INTEGER PRIMARY KEY,
             applied_at BIGINT NOT NULL
         )",
    )
    .await?;
    let version: i32 = tx
        .query_one("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])
        .await?
        .get(0);
    let version = usize::try_from(version).unwrap_or(0);
    check_encoding(&tx, version).await?;
    if version > MIGRATIONS.len() {
        // A newer release migrated: this node runs on only if that release
        // says its schema is still readable by this one (expand, then
        // contract a release later).
        let readable_from: Option<i32> = tx
            .query_opt("SELECT readable_from FROM schema_compat", &[])
            .await
            .ok()
            .flatten()
            .map(|r| r.get(0));
        let readable_from = readable_from.and_then(|v| usize::try_from(v).ok());
        if readable_from.is_some_and(|from| from <= MIGRATIONS.len()) {
            tx.commit().await?;
            return Ok(());
        }
        return Err(DbError::Invalid(format!(
            "database schema version {version} is newer than this binary's ({}) and not \
             readable by it: run the newer release",
            MIGRATIONS.len()
        )));
    }
    if policy == Migrate::OnlyEmpty && version > 0 && version < MIGRATIONS.len() {
        return Err(DbError::Invalid(format!(
            "the database's schema is at version {version} and this binary's at {}: \
             migrate it with `filestore admin migrate` (or start one node with \
             `filestore serve --migrate`) when the rollout allows (README, \"Upgrades\")",
            MIGRATIONS.len()
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        tx.batch_execute(sql).await?;
        let v = i32::try_from(i + 1).unwrap_or(i32::MAX);
        tx.execute(
            "INSERT INTO schema_version (version, applied_at)
             VALUES ($1, (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT)",
            &[&v],
        )
        .await?;
    }
    tx.batch_execute(&format!(
        "CREATE TABLE IF NOT EXISTS schema_compat (readable_from INTEGER NOT NULL);
         DELETE FROM schema_compat;
         INSERT INTO schema_compat (readable_from) VALUES ({READABLE_FROM})"
    ))
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The oldest schema version whose binaries still work on this binary's
/// schema, recorded with it (`schema_compat`) for them to read: migrations 9
/// (image variants: a table and a trigger on files), 10 (plans: a table),
/// 11 (a folder delete's event batches: a table, which a newer node
/// expands), 12, 13 and 14 (the upload's commit, a batch's and several
/// accounts' as functions, which a node of schema 8 never calls) only add,
/// and 15 and 16 replace 14's function with the same signature, outcomes
/// and errors; 17 adds the strangers' share (a column and a table) and 18
/// nullable MD5 columns, which a node of schema 8 leaves NULL, and replaces
/// the commit functions with one, `filestore_commit` (those it drops came
/// after the last release, schema 10, and no released node calls them), so
/// a node of schema 8 runs on. 23 adds a nullable column, `files.attrs`,
/// which a node of schema 8 never reads and leaves NULL (no attributes);
/// 25 a nullable column, `files.damaged_at` (a node of schema 8 serves a
/// damaged file as before, and leaves it NULL), and a table; 26 a
/// nullable column, `files.crc32`, which a node of schema 8 never reads
/// (it leaves it NULL: a newer node then checks by SHA-256 and records it); 27 (the
/// console's views) two tables, which a node of schema 8 neither reads nor
/// writes (its sender logs no delivery, its collector takes no reading),
/// their rows going with their account or webhook (ON DELETE CASCADE)
/// when such a node deletes one; 28 a table,
/// `console_sessions`, which a node of schema 8 never reads (it serves no
/// console); 29 replaces `filestore_commit` (same signature and outcomes;
/// a node of schema 8 never calls it, and while one waits to lock an
/// account's row `FOR UPDATE` for its commit, calls take the rows in the
/// old order, behind it) and the file-count triggers, which still count
/// every statement of a node that does not set `filestore.uncounted` (none
/// of schema 8 does).
const READABLE_FROM: usize = 8;

/// A statement's rows (the statement prepared once per connection).
pub(crate) async fn query<C: GenericClient>(
    c: &C,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>, DbError> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.query(&stmt, params).await?)
}

/// A statement's one row or none.
pub(crate) async fn query_opt<C: GenericClient>(
    c: &C,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Option<Row>, DbError> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.query_opt(&stmt, params).await?)
}

/// A statement's one row.
pub(crate) async fn query_one<C: GenericClient>(
    c: &C,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Row, DbError> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.query_one(&stmt, params).await?)
}

/// Runs a statement; the rows it changed.
pub(crate) async fn execute<C: GenericClient>(
    c: &C,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<u64, DbError> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.execute(&stmt, params).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_session_gets_the_deadline_and_keepalives() {
        let url = "postgres://u@db/app?options=-c%20search_path%3Dother";
        let (pg, _) = settings(url, Duration::from_millis(1500)).unwrap();
        let options = pg.get_options().unwrap();
        assert!(
            options.starts_with("-c statement_timeout=1500 "),
            "{options}"
        );
        assert!(
            options.contains("-c idle_in_transaction_session_timeout=3000 "),
            "{options}"
        );
        assert!(options.contains("-c tcp_keepalives_idle=10 "), "{options}");
        // What the URL sets comes last, so it wins.
        assert!(options.ends_with(" -c search_path=other"), "{options}");
        assert_eq!(pg.get_connect_timeout(), Some(&Duration::from_millis(1500)));
        assert!(pg.get_keepalives());
        assert_eq!(pg.get_keepalives_idle(), KEEPALIVE_IDLE);
    }
}
