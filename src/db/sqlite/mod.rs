//! The metadata store on SQLite in WAL mode. Reads go through an r2d2 pool
//! of connections on tokio's blocking pool ([`Db::run`]), point lookups on
//! the calling thread when a connection is idle ([`Db::lookup`]); writes go
//! through the single writer thread with group commit ([`Db::write`], see
//! [`writer`]). Every connection runs with `synchronous = FULL`: a commit
//! that answered is on disk, power cut or not. [`SqliteStore`] is the
//! [`MetaStore`](super::MetaStore): each aggregate file (`files`, `blobs`,
//! `accounts`, `tokens`, `uploads`, `outbox`, `rates`, `ops`) implements its trait with
//! the queries inside; `shared` holds the few upload-row effects that other
//! aggregates run inside their own transactions.
//!
//! Each operation runs where it belongs: writes go through the single writer
//! thread ([`Db::write`]: group commit, one fsync for every write waiting);
//! point lookups run on the calling thread when a pooled connection is idle
//! ([`Db::lookup`]: the hot paths of auth, the CDN and file reads); scans run
//! on the blocking pool ([`Db::run`]).

mod accounts;
mod blobs;
mod console;
mod digests;
mod file_rows;
mod files;
mod integrity;
mod ops;
mod outbox;
mod paths;
mod plans;
mod rates;
mod s3;
mod s3_buckets;
mod sessions;
mod shared;
mod tokens;
mod uploads;
mod variants;
pub(crate) mod writer;

use r2d2::PooledConnection;
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::Connection;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub(crate) use crate::db::error::DbError;
use crate::db::keys::{KeyCache, Stamp};
use crate::domain::ratelimit::RateLimiter;
use std::sync::atomic::AtomicBool;

/// The SQLite metadata store.
#[derive(Clone)]
pub(crate) struct SqliteStore {
    db: Db,
    /// The rate windows: in memory, as SQLite serves one node.
    limiter: std::sync::Arc<RateLimiter>,
    /// Keys and their accounts as recently read (`db::keys`), checked
    /// against the stamp that `admin` rewrites when it changes one.
    keys: Arc<KeyCache>,
    stamp: Arc<Stamp>,
    /// Whether a commit since the last look queued webhook events.
    queued_events: Arc<AtomicBool>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SqliteStore")
    }
}

impl SqliteStore {
    pub(crate) fn new(db: Db) -> SqliteStore {
        let stamp = Stamp::new(db.keys_stamp.clone());
        SqliteStore {
            db,
            limiter: Arc::default(),
            keys: Arc::default(),
            stamp: Arc::new(stamp),
            queued_events: Arc::default(),
        }
    }

    /// After a change of a key or an account: this process forgets the keys
    /// it remembers, and any other one (a server, when `admin` made it) does
    /// at its next request.
    fn keys_changed(&self) {
        self.keys.forget();
        self.stamp.touch();
    }
}

/// An argument owned, to move into a closure run on another thread.
fn owned(s: &str) -> String {
    s.to_string()
}

/// A byte count as SQLite's signed integer; refused past `i64::MAX`
/// instead of wrapping (SQLite has no unsigned integers).
pub(crate) fn signed(n: u64) -> Result<i64, DbError> {
    i64::try_from(n).map_err(|_| DbError::Invalid(format!("{n} is too large to store")))
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        match &e {
            rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DiskFull => {
                DbError::DiskFull(Box::new(e))
            }
            _ => DbError::Backend(Box::new(e)),
        }
    }
}

impl From<r2d2::Error> for DbError {
    fn from(e: r2d2::Error) -> Self {
        DbError::Pool(Box::new(e))
    }
}

/// Numbered migrations, applied in order; `PRAGMA user_version` records the last.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_idempotency_by_file.sql"),
    include_str!("migrations/0003_inline_blobs.sql"),
    include_str!("migrations/0004_tus_uploads.sql"),
    include_str!("migrations/0005_upload_leases.sql"),
    include_str!("migrations/0006_webhooks.sql"),
    include_str!("migrations/0007_upload_owners.sql"),
    include_str!("migrations/0008_webhook_fairness.sql"),
    include_str!("migrations/0009_file_metadata.sql"),
    include_str!("migrations/0010_upload_tokens.sql"),
    include_str!("migrations/0011_image_variants.sql"),
    include_str!("migrations/0012_plans.sql"),
    include_str!("migrations/0013_folder_delete.sql"),
    include_str!("migrations/0014_strangers_share.sql"),
    include_str!("migrations/0015_md5.sql"),
    include_str!("migrations/0016_path_index.sql"),
    include_str!("migrations/0017_md5_pending.sql"),
    include_str!("migrations/0018_file_counts.sql"),
    include_str!("migrations/0019_token_replace.sql"),
    include_str!("migrations/0020_s3_multipart.sql"),
    include_str!("migrations/0021_object_attrs.sql"),
    include_str!("migrations/0022_damaged.sql"),
    include_str!("migrations/0023_crc32.sql"),
    include_str!("migrations/0024_console.sql"),
    include_str!("migrations/0025_console_sessions.sql"),
];

#[derive(Clone)]
pub struct Db {
    pool: r2d2::Pool<SqliteConnectionManager>,
    writer: writer::Writer,
    /// `<database>-keys`, the stamp of its keys and accounts (`db::keys::Stamp`).
    keys_stamp: std::path::PathBuf,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Db")
    }
}

/// How many files the SQLite database at `path` holds, read only (0 when
/// there is no such file or it has no files table): `serve` on PostgreSQL
/// refuses a data dir whose own database still holds files.
pub(crate) fn files_in(path: &Path) -> Result<u64, DbError> {
    if !path.exists() {
        return Ok(0);
    }
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let table: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'files')",
        [],
        |r| r.get(0),
    )?;
    if !table {
        return Ok(0);
    }
    Ok(conn.query_row("SELECT COUNT(*) FROM files", [], |r| r.get::<_, u64>(0))?)
}

impl Db {
    /// Opens (creating if needed) the database at `path` and migrates it.
    /// The file (and its -wal and -shm, which SQLite creates with the main
    /// file's mode) is readable by this user only: it holds the signing secret.
    pub fn open(path: &Path) -> Result<Db, DbError> {
        owner_only(path).map_err(|e| DbError::Invalid(format!("{}: {e}", path.display())))?;
        let manager = SqliteConnectionManager::file(path).with_init(|c| {
            init(c)?;
            // Readers do point lookups and short pages: the OS page cache
            // holds the database, a small cache of its own per reader keeps
            // memory flat (8 readers × 512 KiB at most).
            c.execute_batch("PRAGMA cache_size = -512;")
        });
        // The writer's connection first: it turns WAL on and migrates before
        // the pool opens its readers (which would otherwise race it for the
        // lock on a new file, and log "database is locked").
        let mut conn = Connection::open(path)?;
        init(&mut conn)?;
        Self::migrate(&mut conn)?;
        let pool = r2d2::Pool::builder()
            .max_size(8)
            // A local file does not go stale: no test query per checkout.
            .test_on_check_out(false)
            .connection_timeout(Duration::from_secs(10))
            .build(manager)?;
        let writer = writer::Writer::spawn(conn).map_err(|e| DbError::Task(e.to_string()))?;
        let mut keys_stamp = path.as_os_str().to_owned();
        keys_stamp.push("-keys");
        Ok(Db {
            pool,
            writer,
            keys_stamp: keys_stamp.into(),
        })
    }

    fn migrate(conn: &mut Connection) -> Result<(), DbError> {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let version = tx.query_row("PRAGMA user_version", [], |r| r.get::<_, usize>(0))?;
        if version > MIGRATIONS.len() {
            return Err(DbError::Invalid(format!(
                "database schema version {version} is newer than this binary ({})",
                MIGRATIONS.len()
            )));
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
            tx.execute_batch(sql)?;
            tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The read pool's connections and idle ones (for the metrics).
    pub(crate) fn pool_state(&self) -> r2d2::State {
        self.pool.state()
    }

    /// A pooled connection (reads of tests and tools that know the file).
    pub fn conn(&self) -> Result<PooledConnection<SqliteConnectionManager>, DbError> {
        Ok(self.pool.get()?)
    }

    /// Runs `f` in the writer's next group commit; answers once it is durable.
    /// `f` runs inside a transaction (in a savepoint of its own): what it
    /// writes commits with the batch, or not at all when it returns an error.
    pub async fn write<T, F>(&self, f: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, DbError> + Send + 'static,
    {
        self.writer.write(false, f).await
    }

    /// [`Db::write`] for a job that changes a few rows only (an upload's
    /// commit): its savepoint's journal may stay in memory (`writer`).
    pub async fn write_small<T, F>(&self, f: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, DbError> + Send + 'static,
    {
        self.writer.write(true, f).await
    }

    /// Runs a point lookup (a few microseconds, by key, never a scan) right
    /// here on the calling thread when a pooled connection is idle, else on
    /// the blocking pool. WAL readers take no lock a writer holds, so this does
    /// not wait on writes; the trip to another thread and back would cost
    /// more than the lookup itself on the hot paths (auth, CDN, file GET).
    pub async fn lookup<T, F>(&self, f: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, DbError> + Send + 'static,
    {
        match self.pool.try_get() {
            Some(mut conn) => f(&mut conn),
            None => self.run(f).await,
        }
    }

    /// Runs `f` with a pooled connection on the blocking pool (reads).
    pub async fn run<T, F>(&self, f: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, DbError> + Send + 'static,
    {
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = pool.get()?;
            f(&mut conn)
        })
        .await
        .map_err(|e| DbError::Task(e.to_string()))?
    }

    /// `SELECT 1` through the pool, for health.
    pub async fn ping(&self) -> Result<(), DbError> {
        self.run(|c| Ok(c.query_row("SELECT 1", [], |r| r.get::<_, i64>(0))?))
            .await
            .map(|_| ())
    }
}

/// Creates the database file 0600 when missing, and narrows an existing one
/// (and its -wal/-shm) to 0600.
fn owner_only(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        for suffix in ["", "-wal", "-shm"] {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            if let Ok(meta) = std::fs::metadata(&p) {
                if meta.permissions().mode() & 0o077 != 0 {
                    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600))?;
                }
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// The pragmas of every connection.
fn init(c: &mut Connection) -> rusqlite::Result<()> {
    c.busy_timeout(Duration::from_secs(10))?;
    c.set_prepared_statement_cache_capacity(64);
    // Plans that never depend on bound values. Without it SQLite reads a
    // bound `LIMIT ?` while planning, marks the parameter, and expires the
    // cached statement whenever that parameter is bound again: every
    // execution of a listing re-parsed and re-planned its SQL (a listing
    // page's probes spent most of their time in sqlite3Reprepare). Nothing
    // here plans on a bound value on purpose: no ANALYZE statistics, no
    // LIKE with a bound pattern, no partial index on a constant.
    c.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    c.execute_batch(
        "PRAGMA journal_mode = WAL;
         PRAGMA synchronous = FULL;
         PRAGMA foreign_keys = ON;",
    )
}

/// A write transaction: its own, taking the write lock at once so that the
/// checks made inside it (quota, monthly uploads) cannot race another writer;
/// or, inside the writer's batch (which holds that lock already), a savepoint.
pub(crate) enum WriteTx<'c> {
    Own(rusqlite::Transaction<'c>),
    Nested(rusqlite::Savepoint<'c>),
}

impl std::ops::Deref for WriteTx<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        match self {
            WriteTx::Own(t) => t,
            WriteTx::Nested(s) => s,
        }
    }
}

impl WriteTx<'_> {
    pub(crate) fn commit(self) -> Result<(), DbError> {
        match self {
            WriteTx::Own(t) => t.commit()?,
            WriteTx::Nested(s) => s.commit()?,
        }
        Ok(())
    }
}

/// Starts a [`WriteTx`]; dropped without `commit`, it rolls back.
pub(crate) fn write_tx(conn: &mut Connection) -> Result<WriteTx<'_>, DbError> {
    Ok(if conn.is_autocommit() {
        WriteTx::Own(conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?)
    } else {
        WriteTx::Nested(conn.savepoint()?)
    })
}

pub(crate) use rusqlite::OptionalExtension;

#[cfg(test)]
pub(crate) fn test_db() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&dir.path().join("t.db")).unwrap();
    (dir, db)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_once_and_reopens() {
        let (dir, db) = test_db();
        let v: usize = db
            .conn()
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, MIGRATIONS.len());
        drop(db);
        let again = Db::open(&dir.path().join("t.db")).unwrap();
        let mode: String = again
            .conn()
            .unwrap()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn a_full_disk_stays_a_full_disk_in_the_neutral_error() {
        let full = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            None,
        );
        let e = DbError::from(full);
        assert!(matches!(e, DbError::DiskFull(_)), "{e:?}");
        // Through a group commit too (its other writers fail alike).
        assert!(matches!(e.shared("batch"), DbError::DiskFull(_)));
        let other = DbError::from(rusqlite::Error::QueryReturnedNoRows);
        assert!(matches!(other, DbError::Backend(_)), "{other:?}");
    }

    #[tokio::test]
    async fn every_connection_commits_durably() {
        let (_dir, db) = test_db();
        let sync = |c: &mut Connection| -> Result<i64, DbError> {
            Ok(c.query_row("PRAGMA synchronous", [], |r| r.get(0))?)
        };
        assert_eq!(sync(&mut db.conn().unwrap()).unwrap(), 2, "pool: FULL");
        assert_eq!(db.write(sync).await.unwrap(), 2, "writer: FULL");
    }
}
