//! An account and who may act for it: its keys and upload tokens, and
//! what it has committed to of its plan. The metadata store keeps these; the
//! service decides with them; every door sees them only through the service.

use crate::domain::ids::KeyKind;
use crate::domain::policy::UploadPolicy;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub id: String,
    pub name: String,
    pub plan: String,
    pub grace_period: bool,
    pub storage_bytes: u64,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    pub id: String,
    pub account_id: String,
    pub kind: KeyKind,
    pub name: Option<String>,
    pub origins: Vec<String>,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    /// A public key's upload policy (`folder`, `max_size`, `types` only;
    /// empty for secret keys). For an upload token's caller, the token's.
    pub policy: UploadPolicy,
}

/// An upload token (`upt_…`, stored only as its hash): a narrow, short-lived,
/// counted permission to upload into one account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    /// `ut_…`: how it is managed and how its uploads name their creator.
    pub id: String,
    pub account_id: String,
    /// The secret key that made it.
    pub created_by: String,
    pub policy: UploadPolicy,
    /// 1–1000.
    pub max_uploads: u32,
    /// Files created with it.
    pub uploads_used: u32,
    /// Resumable uploads created with it and not yet complete: each holds
    /// one of its uploads until it completes (then counted in
    /// `uploads_used`), is ended, or expires (then given back).
    pub uploads_open: u32,
    pub created_at: i64,
    pub expires_at: i64,
    pub revoked_at: Option<i64>,
}

impl TokenRow {
    /// How many more uploads it may start.
    pub fn uploads_left(&self) -> u32 {
        self.max_uploads
            .saturating_sub(self.uploads_used)
            .saturating_sub(self.uploads_open)
    }

    /// Why it may not be used at `now`, if it may not: it must be
    /// unrevoked and unexpired, and for a new upload have one left (not for
    /// the rest of a resumable upload it made, `continuing`, which holds its
    /// use; nor for a `retry` with an `Idempotency-Key`, which may be
    /// answered with what an earlier request stored: the commit counts
    /// exactly). So nothing outlives a token's expiry by more than a
    /// resumable upload's idle time.
    pub fn refusal(&self, now: i64, continuing: bool, retry: bool) -> Option<&'static str> {
        if self.revoked_at.is_some() {
            Some("this upload token was revoked")
        } else if now >= self.expires_at {
            Some("this upload token has expired")
        } else if continuing {
            None
        } else if self.uploads_left() == 0 && !retry {
            Some("this upload token is used up")
        } else {
            None
        }
    }
}

/// What an account has used of its plan, as an upload's early check needs
/// it: this period's uploads, and what incomplete resumable uploads hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Commitments {
    /// Uploads committed this period.
    pub upload_count: u64,
    /// Bytes reserved by incomplete, unexpired resumable uploads.
    pub reserved_bytes: u64,
    /// Incomplete, unexpired resumable uploads (each counts as one upload).
    pub pending_uploads: u64,
    /// The account's stored bytes, when read with the rest (PostgreSQL,
    /// whose nodes may hold an account row read up to a second ago); None:
    /// the caller's account row is as fresh.
    pub stored_bytes: Option<u64>,
}

impl Commitments {
    /// What the account holds, as the quota rule reads it, with its stored
    /// bytes (`stored`, unless these were read with the rest).
    pub fn holdings(&self, stored: u64) -> crate::domain::quota::Holdings {
        let stored = self.stored_bytes.unwrap_or(stored);
        crate::domain::quota::Holdings {
            used: stored.saturating_add(self.reserved_bytes),
            uploads: self.upload_count.saturating_add(self.pending_uploads),
            open: self.pending_uploads,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{TokenRow, UploadPolicy};

    #[test]
    fn an_upload_tokens_refusals() {
        let t = TokenRow {
            id: "ut_1".into(),
            account_id: "acc".into(),
            created_by: "key_1".into(),
            policy: UploadPolicy::default(),
            max_uploads: 2,
            uploads_used: 1,
            uploads_open: 1,
            created_at: 0,
            expires_at: 100,
            revoked_at: None,
        };
        assert_eq!(t.uploads_left(), 0);
        assert_eq!(
            t.refusal(50, false, false),
            Some("this upload token is used up")
        );
        // A retry may be answered with what an earlier request stored.
        assert_eq!(t.refusal(50, false, true), None);
        // Its own resumable upload goes on, used up; not once it expired.
        assert_eq!(t.refusal(50, true, false), None);
        assert_eq!(
            t.refusal(500, true, false),
            Some("this upload token has expired")
        );
        assert_eq!(
            t.refusal(100, false, true),
            Some("this upload token has expired")
        );
        let revoked = TokenRow {
            revoked_at: Some(60),
            ..t
        };
        assert_eq!(
            revoked.refusal(70, true, false),
            Some("this upload token was revoked")
        );
    }
}
