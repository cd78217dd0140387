//! The metadata of data safety (CONTRACT §20): the `damaged` mark of a file
//! whose stored bytes are missing or no longer match its SHA-256, the
//! files in id order for the scrub and `admin verify`, the blob keys the
//! metadata refers to (an orphan is a blob none does), and the scrub's
//! turn and place ([`IntegrityRepo`]).

use super::error::DbError;
use super::model::FileRow;
use async_trait::async_trait;

#[async_trait]
pub trait IntegrityRepo: std::fmt::Debug + Send + Sync {
    /// Marks file `id` damaged at `now` (a mark already there keeps its
    /// time); false when there is no such file or it was marked already.
    async fn mark_damaged(&self, id: &str, now: i64) -> Result<bool, DbError>;

    /// Clears file `id`'s mark (its bytes were put back); false when it had none.
    async fn clear_damaged(&self, id: &str) -> Result<bool, DbError>;

    /// Records file `id`'s CRC-32, read from bytes that matched its SHA-256
    /// (a file's bytes never change: one already there stays).
    async fn record_crc32(&self, id: &str, crc32: u32) -> Result<(), DbError>;

    /// How many files are marked damaged.
    async fn count_damaged(&self) -> Result<u64, DbError>;

    /// Up to `max` files (live or expired, not yet reaped) in id order
    /// after `after`.
    async fn files_after(&self, after: &str, max: u32) -> Result<Vec<FileRow>, DbError>;

    /// Every blob key the metadata refers to: files' (not inline), image
    /// variants', resumable uploads' not completed, S3 parts', and those
    /// queued for deletion (upload guards among them).
    async fn known_blobs(&self) -> Result<Vec<String>, DbError>;

    /// The scrub's turn for this node until `now + lease_ms`: its place
    /// (the last file id checked, "" from the start) when this node has it
    /// (it had it, no node had it, or its holder's lease ran out or its
    /// node is gone), None when another node scrubs.
    async fn scrub_turn(&self, now: i64, lease_ms: i64) -> Result<Option<String>, DbError>;

    /// Records the scrub's place `after` and renews this node's turn until
    /// `now + lease_ms`; false when another node took the turn meanwhile.
    async fn scrub_moved(&self, after: &str, now: i64, lease_ms: i64) -> Result<bool, DbError>;
}
