//! The rows and outcomes of the metadata store, the same whichever database
//! holds them (see [`super::MetaStore`]).

use crate::domain::ids::KeyKind;
pub(crate) use crate::domain::policy::UploadPolicy;
pub use crate::domain::quota::{Quota, Refusal};
use std::collections::BTreeMap;

/// How long an upload may take between registering its blob and committing.
pub(crate) const UPLOAD_GUARD_MS: i64 = 24 * 3600 * 1000;

/// A claim on a blob's deletion: a collector's claim on a due blob, and the
/// queue entry of a blob that the request that freed it deletes at once
/// (a file's DELETE, a tus termination) are this far ahead, so no other
/// collector deletes it meanwhile; only if that request's node dies does a
/// collector take it, after this.
pub(crate) const DELETION_LEASE_MS: i64 = 5 * 60 * 1000;

/// How long a completed resumable upload's row is kept (for
/// `GET /v1/uploads/{id}`).
pub(crate) const KEEP_COMPLETED_MS: i64 = 24 * 3600 * 1000;

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

/// (Also the outbox's durable form of a file: fields added later need
/// `#[serde(default)]`, which the struct-level one gives them.)
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct FileRow {
    pub id: String,
    pub account_id: String,
    pub name: String,
    pub folder: Option<String>,
    pub size: u64,
    pub content_type: String,
    pub private: bool,
    pub sha256: String,
    /// Hex MD5 of the bytes (lower case), computed in the same pass as
    /// `sha256`; None: not yet known (a file stored before MD5s were kept).
    pub md5: Option<String>,
    pub blob_key: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    /// The bytes are in `inline_blobs` (small files), not in the blob store.
    pub inline: bool,
    /// The client's metadata (`domain::metadata`), empty when none.
    pub metadata: BTreeMap<String, String>,
}

/// A file row and, for an inline file, its bytes.
pub(crate) type RowWithData = (FileRow, Option<Vec<u8>>);

/// Where a commit happens: the billing period, the request's idempotency
/// key, and (for a resumable upload completing) the upload it completes.
#[derive(Debug, Clone, Default)]
pub struct CommitContext {
    pub period: String,
    pub idempotency_key: Option<String>,
    /// Keys used before this are forgotten.
    pub idempotency_since: i64,
    pub tus_upload: Option<String>,
    /// The upload token (`ut_…`) the file is uploaded with: the commit
    /// counts one of its uploads, exactly (a used-up or revoked token
    /// commits nothing: [`CommitOutcome::TokenSpent`]). A resumable
    /// upload's use was held at its creation by its creator (`created_by`),
    /// and that one is converted whatever this says.
    pub token: Option<String>,
    /// Some when the file is uploaded by a stranger of the account (a
    /// public key or an upload token; not a resumable upload's completion,
    /// whose creator decides): the strangers' share it is held to
    /// (`domain::quota::Quota::admit_stranger`), and the upload counts as
    /// theirs.
    pub share: Option<crate::domain::quota::Share>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitOutcome {
    /// The file is stored and counted.
    Committed(FileRow),
    /// The idempotency key was used already: this is that upload's file.
    Replayed(FileRow),
    /// A limit of the plan would be passed (`domain::quota`): nothing stored.
    Refused(Refusal),
    /// The upload token is used up or revoked: nothing stored.
    TokenSpent,
}

/// Position in the newest-first order: (created_at, id) of the last file seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageAfter {
    pub created_at: i64,
    pub id: String,
}

/// A rename or move of a file (`PATCH /v1/files/{id}`): a `None` name
/// stays; with `moves`, the file goes to `folder` (None: the root).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileChange {
    pub name: Option<String>,
    pub moves: bool,
    pub folder: Option<String>,
}

/// Which files a page lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListFilter {
    pub folder: FolderFilter,
    /// Each `(key, value)` must be in the file's metadata, exactly (keys
    /// already checked by `domain::metadata::valid_key`).
    pub metadata: Vec<(String, String)>,
}

/// Which folders a page covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderFilter {
    /// Every file.
    All,
    /// The files of this folder only.
    Exactly(String),
    /// The files of this folder and of every folder under it.
    Under(String),
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

/// The counters of the usage record (bandwidth as flushed so far).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UsageCounters {
    pub storage_bytes: u64,
    pub upload_count: u64,
    pub bandwidth_bytes: u64,
}

/// Bytes sent from an account's files in a billing period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BandwidthCount {
    pub account_id: String,
    pub period: String,
    pub bytes: u64,
}

/// A resumable (tus) upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadRow {
    pub id: String,
    pub account_id: String,
    pub file_id: String,
    pub blob_key: String,
    pub length: u64,
    /// Bytes received and durable (tus's offset).
    pub received: u64,
    pub name: String,
    /// As the client gave it; guessed from the name at completion when None.
    pub content_type: Option<String>,
    pub folder: Option<String>,
    pub private: bool,
    /// The file's lifetime (`expires`), from completion.
    pub expires_ms: Option<i64>,
    pub hash_state: String,
    /// The running MD5 (`domain::md5_state`); None for an upload
    /// begun before it was kept (its file's MD5 stays unknown).
    pub md5_state: Option<String>,
    pub store_state: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub completed_at: Option<i64>,
    pub idempotency_key: Option<String>,
    /// The key (`key_…`) that created it: with the account's secret keys,
    /// the only one that may continue, read or end it (None: made before
    /// this was recorded, any key of the account).
    pub created_by: Option<String>,
    /// How long it lives without receiving a byte (`expires_at` moves this
    /// far ahead of each PATCH that brings some).
    pub idle_ms: i64,
    /// The file's metadata (`domain::metadata`), given at creation.
    pub metadata: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateOutcome {
    Created,
    /// The idempotency key was used already: this is that upload.
    Replayed(Box<UploadRow>),
    /// A limit of the plan would be passed (`domain::quota`): nothing created.
    Refused(Refusal),
    /// The upload token that creates it (its `created_by`) is used up,
    /// revoked or expired: nothing created.
    TokenSpent,
}

/// Progress of one PATCH, recorded only if the upload is still at `from`.
#[derive(Debug)]
pub struct Progress {
    /// An upload expired by now is not moved any more.
    pub now: i64,
    pub from: u64,
    pub received: u64,
    pub hash_state: String,
    pub md5_state: Option<String>,
    pub store_state: String,
    pub tail: Option<Vec<u8>>,
    pub expires_at: i64,
}

/// The connections of the store's pool (for the metrics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolStats {
    pub connections: u32,
    pub idle_connections: u32,
}

/// A webhook subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRow {
    pub id: String,
    pub account_id: String,
    pub url: String,
    /// Event names (`domain::webhooks::EVENTS`).
    pub events: Vec<String>,
    /// `whsec_…`: what signs its deliveries (redacted in `Debug`).
    pub secret: crate::domain::secret::Secret,
    pub created_at: i64,
}

/// An event of the outbox, claimed for an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEvent {
    /// Its place in the outbox (a file's events go in this order).
    pub seq: i64,
    /// `webhook-id`: the same on every attempt.
    pub id: String,
    pub webhook_id: String,
    pub url: String,
    pub secret: crate::domain::secret::Secret,
    /// `file.created`, `file.deleted`, `file.expired` or `file.updated`.
    pub kind: String,
    /// The file as it was at the event.
    pub file: FileRow,
    /// When the change was committed (unix ms).
    pub created_at: i64,
    /// Attempts so far, this one included.
    pub attempts: u32,
}

/// The file row as the outbox keeps it.
pub(crate) fn event_data(row: &FileRow) -> Result<String, super::error::DbError> {
    serde_json::to_string(row).map_err(|e| super::error::DbError::Invalid(e.to_string()))
}

/// The file row of outbox event `seq`'s `data`, or None (logged) when it
/// cannot be read: such an event can never be sent, and the claim drops it
/// rather than holding up the others.
pub(crate) fn event_file(seq: i64, data: &str) -> Option<FileRow> {
    match serde_json::from_str(data) {
        Ok(f) => Some(f),
        Err(e) => {
            tracing::error!(seq, error = %e, "an outbox event's data is unreadable; dropped");
            None
        }
    }
}

#[cfg(test)]
mod tests {

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
    use super::{FileRow, TokenRow, UploadPolicy};

    #[test]
    fn an_outbox_file_from_before_metadata_still_reads() {
        let old = r#"{"id":"f_1","account_id":"a_1","name":"x","folder":null,"size":1,
            "content_type":"text/plain","private":false,"sha256":"","blob_key":"a_1/f_1",
            "created_at":5,"expires_at":null,"inline":true}"#;
        let f: FileRow = serde_json::from_str(old).unwrap();
        assert_eq!((f.id.as_str(), f.metadata.len()), ("f_1", 0));
        let mut g = f.clone();
        g.metadata.insert("k".into(), "v".into());
        let back: FileRow = serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
        assert_eq!(back, g);
    }
}

/// A range of folders: from `lo` (itself included or not) up to `hi`
/// (excluded), bytewise.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct FolderRange {
    pub(crate) lo: String,
    pub(crate) inclusive: bool,
    pub(crate) hi: String,
}

/// What [`SubfolderSeek`] asks or finds next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SeekStep {
    /// The smallest live folder in this range, please.
    Probe(FolderRange),
    /// The next subfolder's name.
    Found(String),
    /// No subfolder follows.
    End,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    Within,
    Beyond,
    Shorter { found: String, left: Vec<String> },
}

/// A loose index scan for the next immediate subfolder of a parent, by
/// name, after `after`: a few "smallest live folder in a range" probes
/// (one index seek each), however many files the folders hold.
///
/// Bytewise, a subfolder `s` holds `P/s` and `P/s/…`, but `P/s-x` and
/// `P/s.x` (`-` and `.` sort before `/`) lie between the two. So from `s`
/// the next folder is looked for first in (`P/s`, `P/s/`), then from `P/s0`
/// (`0` follows `/`); and its segment `g` is not yet the answer: a name `h`
/// that `g` extends with `-` or `.` (`h` < `g`) may hold only deeper
/// folders (`P/h/…`, after `P/g`), so each such `h` > `s` is probed first;
/// likewise a name that `s` extends is met after `s` and skipped.
#[derive(Debug, Clone)]
pub(crate) struct SubfolderSeek {
    prefix: String,
    hi: String,
    after: Option<String>,
    stage: Stage,
}

impl SubfolderSeek {
    /// The subfolders of `parent` (None: the root) after the name `after`.
    #[must_use]
    pub(crate) fn new(parent: Option<&str>, after: Option<String>) -> Self {
        let (prefix, hi) = match parent {
            // Every folder starts with a character up to 'z'; '{' follows it.
            None => (String::new(), "{".to_string()),
            Some(p) => (format!("{p}/"), format!("{p}0")),
        };
        Self {
            prefix,
            hi,
            after,
            stage: Stage::Within,
        }
    }

    /// The parent's prefix (`P/`, empty at the root) and the end of its
    /// range: every probe lies within them.
    #[must_use]
    pub(crate) fn bounds(&self) -> (&str, &str) {
        (&self.prefix, &self.hi)
    }

    /// The first probe.
    #[must_use]
    pub(crate) fn start(&self) -> FolderRange {
        match &self.after {
            None => FolderRange {
                lo: self.prefix.clone(),
                inclusive: true,
                hi: self.hi.clone(),
            },
            Some(s) => FolderRange {
                lo: format!("{}{s}", self.prefix),
                inclusive: false,
                hi: format!("{}{s}/", self.prefix),
            },
        }
    }

    /// Takes the answer of the last probe (the smallest live folder in its
    /// range, if any) and says what comes next.
    pub(crate) fn answer(&mut self, first: Option<String>) -> SeekStep {
        match (std::mem::replace(&mut self.stage, Stage::Beyond), first) {
            (Stage::Within, None) => match &self.after {
                None => SeekStep::End,
                Some(s) => SeekStep::Probe(FolderRange {
                    lo: format!("{}{s}0", self.prefix),
                    inclusive: true,
                    hi: self.hi.clone(),
                }),
            },
            (Stage::Beyond, None) => SeekStep::End,
            (Stage::Within | Stage::Beyond, Some(folder)) => {
                let rest = folder.get(self.prefix.len()..).unwrap_or_default();
                let found = rest.split('/').next().unwrap_or_default().to_string();
                if self.after.as_ref().is_some_and(|s| found <= *s) {
                    // A name `s` extends (`s` = `found` + `-`/`.`…): its
                    // deeper folders follow `s`'s; past them.
                    return SeekStep::Probe(FolderRange {
                        lo: format!("{}{found}0", self.prefix),
                        inclusive: true,
                        hi: self.hi.clone(),
                    });
                }
                let mut left: Vec<String> = found
                    .char_indices()
                    .filter(|&(i, c)| i > 0 && (c == '-' || c == '.'))
                    .map(|(i, _)| found[..i].to_string())
                    .filter(|h| self.after.as_ref().is_none_or(|s| h > s))
                    .collect();
                left.reverse();
                self.shorter(found, left)
            }
            (Stage::Shorter { found, left }, None) => self.shorter(found, left),
            (Stage::Shorter { .. }, Some(folder)) => {
                let rest = folder.get(self.prefix.len()..).unwrap_or_default();
                SeekStep::Found(rest.split('/').next().unwrap_or_default().to_string())
            }
        }
    }

    /// Probes the next shorter name (`left` is in reverse order), or gives `found`.
    fn shorter(&mut self, found: String, mut left: Vec<String>) -> SeekStep {
        match left.pop() {
            None => SeekStep::Found(found),
            Some(h) => {
                let range = FolderRange {
                    lo: format!("{}{h}/", self.prefix),
                    inclusive: true,
                    hi: format!("{}{h}0", self.prefix),
                };
                self.stage = Stage::Shorter { found, left };
                SeekStep::Probe(range)
            }
        }
    }
}

/// Up to `limit + 1` immediate subfolder names of `parent` after `after`,
/// by name, with `probe` answering each range probe.
///
/// # Errors
///
/// What `probe` returns.
pub(crate) fn subfolder_names<E>(
    parent: Option<&str>,
    mut after: Option<String>,
    limit: u32,
    mut probe: impl FnMut(&FolderRange) -> Result<Option<String>, E>,
) -> Result<Vec<String>, E> {
    let mut names = Vec::new();
    while names.len() <= limit as usize {
        let mut seek = SubfolderSeek::new(parent, after.clone());
        let mut range = seek.start();
        let name = loop {
            match seek.answer(probe(&range)?) {
                SeekStep::Probe(r) => range = r,
                SeekStep::Found(n) => break Some(n),
                SeekStep::End => break None,
            }
        };
        let Some(name) = name else { break };
        after = Some(name.clone());
        names.push(name);
    }
    Ok(names)
}

#[cfg(test)]
mod subfolder_tests {
    use super::*;

    fn names(
        folders: &[&str],
        parent: Option<&str>,
        after: Option<&str>,
        limit: u32,
    ) -> Vec<String> {
        let mut sorted: Vec<&str> = folders.to_vec();
        sorted.sort_unstable();
        subfolder_names::<()>(parent, after.map(str::to_string), limit, |r| {
            Ok(sorted
                .iter()
                .find(|f| {
                    (if r.inclusive {
                        **f >= r.lo.as_str()
                    } else {
                        **f > r.lo.as_str()
                    }) && **f < r.hi.as_str()
                })
                .map(|f| (*f).to_string()))
        })
        .unwrap()
    }

    /// What a scan of every folder gives.
    fn naive(folders: &[&str], parent: Option<&str>) -> Vec<String> {
        let prefix = parent.map_or(String::new(), |p| format!("{p}/"));
        let mut out: Vec<String> = folders
            .iter()
            .filter_map(|f| f.strip_prefix(prefix.as_str()))
            .filter(|rest| !rest.is_empty())
            .map(|rest| rest.split('/').next().unwrap().to_string())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    #[test]
    fn names_in_order_whatever_the_byte_order_of_their_folders() {
        let folders = [
            "a/x", "a-b", "a.c/d", "a0", "ab/c/d", "b", "a-b-c/q", "a-b.d", "z/y", "a-/k",
        ];
        assert_eq!(names(&folders, None, None, 100), naive(&folders, None));
        assert_eq!(
            names(&folders, None, None, 100),
            ["a", "a-", "a-b", "a-b-c", "a-b.d", "a.c", "a0", "ab", "b", "z"]
        );
        assert_eq!(
            names(&folders, None, Some("a-b"), 2),
            ["a-b-c", "a-b.d", "a.c"]
        );
        assert_eq!(names(&folders, Some("a"), None, 10), ["x"]);
        assert_eq!(names(&folders, Some("ab"), None, 10), ["c"]);
        assert_eq!(names(&folders, Some("b"), None, 10), Vec::<String>::new());
    }

    proptest::proptest! {
        #[test]
        fn the_seek_finds_what_a_scan_finds(
            folders in proptest::collection::vec("(p/)?[ab.-]{1,3}(/[ab.-]{1,2}){0,2}", 0..30),
            limit in 1u32..5,
        ) {
            let folders: Vec<&str> = folders.iter().map(String::as_str).collect();
            for parent in [None, Some("p")] {
                let want = naive(&folders, parent);
                // Page by page, as the cursor does.
                let mut got = Vec::new();
                let mut after: Option<String> = None;
                loop {
                    let mut page = names(&folders, parent, after.as_deref(), limit);
                    let more = page.len() > limit as usize;
                    page.truncate(limit as usize);
                    after = page.last().cloned();
                    got.extend(page);
                    if !more { break; }
                }
                proptest::prop_assert_eq!(got, want);
            }
        }
    }
}

/// A stored image variant of a file: its blob and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantRow {
    pub file_id: String,
    /// The settled parameters (`Transform::variant_key`).
    pub key: String,
    pub blob_key: String,
    pub size: u64,
    pub content_type: String,
    pub created_at: i64,
}

/// What recording a rendered variant came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VariantOutcome {
    /// Recorded; its blob's guard is released.
    Stored,
    /// Another render of the same variant was recorded first: that one.
    Exists(VariantRow),
    /// The file has its cap of variants already: nothing recorded.
    Full,
    /// The file is gone: nothing recorded.
    FileGone,
}

/// A plan as the database keeps it: its name and its limits as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPlan {
    pub name: String,
    pub spec: String,
    pub updated_at: i64,
}

/// A plan some accounts are on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanUse {
    pub plan: String,
    pub accounts: u64,
    /// One of those accounts, by name.
    pub example: String,
}
