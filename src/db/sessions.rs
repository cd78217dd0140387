//! Console sessions (CONTRACT §19): a signed-in page's session, kept by the
//! hash of its id and pointing at the key it was made from, so that it works
//! on every node of a shared database ([`SessionRepo`]). The key is checked
//! at every request as a `Bearer` key is (`AccountRepo::key_by_hash`, by the
//! key's hash read here): revoking it ends its sessions at once.

use super::error::DbError;
use async_trait::async_trait;

/// A session as found: its key's id and hash (None when the key row is
/// gone), and when it was last seen (unix ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub key_id: String,
    pub key_hash: Option<[u8; 32]>,
    pub created_at: i64,
    pub last_seen_at: i64,
}

#[async_trait]
pub trait SessionRepo: std::fmt::Debug + Send + Sync {
    /// Records a session (the hash of its id) of key `key_id`, made and seen
    /// at `now`; first removes every session last seen before
    /// `idle_before` (ended by idle time).
    async fn create_session(
        &self,
        hash: [u8; 32],
        key_id: &str,
        now: i64,
        idle_before: i64,
    ) -> Result<(), DbError>;

    /// The session of `hash`, with its key's hash.
    async fn session(&self, hash: [u8; 32]) -> Result<Option<SessionRow>, DbError>;

    /// Records that the session of `hash` was seen at `now`.
    async fn touch_session(&self, hash: [u8; 32], now: i64) -> Result<(), DbError>;

    /// Removes the session of `hash`; false when there was none.
    async fn end_session(&self, hash: [u8; 32]) -> Result<bool, DbError>;
}
