//! What the operator's probes ask of the service: whether the database and
//! the blob store answer, and the gauges the metrics read at scrape time.
//! The doors (the /v1 health route, the metrics listener) only render it.

use super::App;

impl App {
    /// A round trip to the metadata store.
    pub(crate) async fn check_database(&self) -> Result<(), String> {
        self.meta.ping().await.map_err(|e| e.to_string())
    }

    /// The data dir's free space, then a round trip to the blob store.
    pub(crate) async fn check_storage(&self) -> Result<(), String> {
        self.disk.check()?;
        self.store.check().await.map_err(|e| e.to_string())
    }

    /// Files marked damaged (CONTRACT §20; None when the store cannot say).
    pub(crate) async fn damaged_files(&self) -> Option<u64> {
        self.meta.count_damaged().await.ok()
    }

    /// What health's `storage` check says of damaged files, if any.
    pub(crate) async fn damaged_note(&self) -> Option<String> {
        match self.damaged_files().await {
            Some(n) if n > 0 => Some(format!(
                "{n} damaged file(s): stored bytes missing or not matching their SHA-256; \
                 `filestore admin verify --repair-from BACKUP` puts them back"
            )),
            _ => None,
        }
    }

    /// Webhook events not yet delivered (None when the store cannot say).
    pub(crate) async fn pending_events(&self) -> Option<u64> {
        self.meta.pending_events().await.ok()
    }

    /// Stored bytes, files and accounts of the whole store (None when the
    /// store cannot say): counters its account rows keep, not a scan.
    pub(crate) async fn totals(&self) -> Option<crate::db::Totals> {
        self.meta.totals().await.ok()
    }

    /// Free bytes on the data dir's volume: what SQLite, the upload spool
    /// and (on the local store) the blobs grow into. On the S3 store the
    /// blobs are not there, and the bucket's room is not known.
    pub(crate) fn disk_free(&self) -> Option<u64> {
        self.disk.free()
    }

    /// The metadata store's connections.
    pub(crate) fn pool(&self) -> crate::db::PoolStats {
        self.meta.pool_stats()
    }
}
