//! The metadata store: accounts, keys, files, usage counters, the blob
//! deletion queue and resumable uploads. The rest of the program sees only
//! the [`MetaStore`] trait, its rows ([`model`]) and [`DbError`]; [`sqlite`]
//! is its implementation on an embedded SQLite file (the default),
//! [`postgres`] on a PostgreSQL server (`database.url`).

pub(crate) mod console;
pub(crate) mod dump;
pub(crate) mod error;
pub(crate) mod integrity;
pub(crate) mod keys;
pub(crate) mod model;
pub(crate) mod postgres;
pub(crate) mod s3;
pub(crate) mod sessions;
pub(crate) mod sqlite;
pub(crate) mod store;

pub(crate) use error::DbError;

/// The SQLite database's file in the data dir (its log and index beside
/// it, with `-wal` and `-shm` after the name).
pub(crate) const SQLITE_FILE: &str = "filestore.db";
pub(crate) use console::{DeliveryRow, DeliveryStatus, UsageDay, DELIVERIES_KEPT};
pub use model::*;
pub use postgres::{Migrate, PgStore};
pub(crate) use s3::{PartOutcome, PartRow, S3Completion, S3UploadRow};
pub(crate) use sqlite::SqliteStore;
pub use store::{
    AccountRepo, BlobRepo, DynMetaStore, FileRepo, MetaStore, OpsRepo, OutboxRepo, PlanRepo,
    RateRepo, TokenRepo, UploadRepo, VariantRepo,
};

/// Opens (creating and migrating if needed) the metadata store: PostgreSQL
/// at `database_url` when one is configured, every call of it bounded by
/// `statement_timeout`, else SQLite at `DATA_DIR/filestore.db`.
pub async fn open(
    data_dir: &std::path::Path,
    database_url: Option<&str>,
    statement_timeout: std::time::Duration,
) -> Result<DynMetaStore, DbError> {
    open_with(data_dir, database_url, statement_timeout, Migrate::Always).await
}

/// [`open`], migrating PostgreSQL as `migrate` allows (SQLite, one node's
/// own file, always migrates).
pub(crate) async fn open_with(
    data_dir: &std::path::Path,
    database_url: Option<&str>,
    statement_timeout: std::time::Duration,
    migrate: Migrate,
) -> Result<DynMetaStore, DbError> {
    if let Some(url) = database_url {
        let store = PgStore::open(url, statement_timeout, migrate).await?;
        return Ok(std::sync::Arc::new(store));
    }
    let db = sqlite::Db::open(&data_dir.join(SQLITE_FILE))?;
    Ok(std::sync::Arc::new(SqliteStore::new(db)))
}
