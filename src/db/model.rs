//! The rows and outcomes of the metadata store, the same whichever database
//! holds them (see [`super::MetaStore`]).

pub(crate) use crate::domain::accounts::Commitments;
pub use crate::domain::accounts::{Account, KeyRecord, TokenRow};
pub(crate) use crate::domain::files::FileChange;
pub use crate::domain::files::{
    FolderFilter, ListFilter, PageAfter, StoredFile as FileRow, UploadRow,
};
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

/// How long a replaced file's blob outlives its row: a read that found the
/// row just before the replace (a GET of a stable link, `/p/…`) still
/// reads the old bytes whole; the collector deletes the blob after this.
pub(crate) const REPLACED_KEPT_MS: i64 = 5 * 60 * 1000;

/// How long a completed resumable upload's row is kept (for
/// `GET /v1/uploads/{id}`).
pub(crate) const KEEP_COMPLETED_MS: i64 = 24 * 3600 * 1000;

/// A file row and, for an inline file, its bytes.
/// The `meta` keys of holds on blob deletions (`OpsRepo::hold_blobs`):
/// `blob_hold:<id>`, each value the hold's end in ms; every key of them
/// sorts from [`HOLD_PREFIX`] up to, not including, [`HOLD_END`].
pub(crate) const HOLD_PREFIX: &str = "blob_hold:";
pub(crate) const HOLD_END: &str = "blob_hold;";

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
    /// What the file does to the files already at its path: decided in
    /// the commit's transaction ([`CommitOutcome::Replaced`],
    /// [`CommitOutcome::PathTaken`]).
    pub at_path: crate::domain::filepath::AtPath,
    /// An S3 multipart upload completing (`db::s3`): admitted as a
    /// resumable upload's completion is, marked completed and its parts
    /// removed in the same transaction (else the commit fails and writes
    /// nothing).
    pub s3_upload: Option<super::s3::S3Completion>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitOutcome {
    /// The file is stored and counted.
    Committed(FileRow),
    /// The file is stored and counted, and replaced the files at its path
    /// (these ids): each deleted as a DELETE does it (`file.deleted`, its
    /// bytes given back), its blob queued `REPLACED_KEPT_MS` ahead.
    Replaced(FileRow, Vec<String>),
    /// The upload asked for an empty path (`AtPath::IfAbsent`) and the path
    /// holds a file: nothing stored.
    PathTaken,
    /// The idempotency key was used already: this is that upload's file.
    Replayed(FileRow),
    /// A limit of the plan would be passed (`domain::quota`): nothing stored.
    Refused(Refusal),
    /// The upload token is used up or revoked: nothing stored.
    TokenSpent,
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

/// What the whole store holds (the metrics' gauges), from the counters the
/// account rows keep: no scan of the files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    pub stored_bytes: u64,
    pub files: u64,
    pub accounts: u64,
}

/// What the removal of an account took with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Removed {
    /// Files (their blobs queued for deletion) and their bytes.
    pub files: u64,
    pub bytes: u64,
    /// Incomplete resumable uploads (their partial blobs queued too).
    pub uploads: u64,
    pub keys: u64,
    pub tokens: u64,
    pub webhooks: u64,
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

/// The outbox's durable form of a file (every field defaults: one added
/// later still reads an older event). Its field names are also those the
/// PostgreSQL folder delete writes (`db/postgres/files.rs`).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(remote = "FileRow")]
pub(crate) struct DurableFile {
    #[serde(default)]
    id: String,
    #[serde(default)]
    account_id: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    folder: Option<String>,
    #[serde(default)]
    size: u64,
    #[serde(default)]
    content_type: String,
    #[serde(default)]
    private: bool,
    #[serde(default)]
    sha256: String,
    #[serde(default)]
    md5: Option<String>,
    #[serde(default)]
    blob_key: String,
    #[serde(default)]
    created_at: i64,
    #[serde(default)]
    expires_at: Option<i64>,
    #[serde(default)]
    inline: bool,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
    /// Left out when empty (every /v1 file): its events read as before.
    #[serde(
        default,
        skip_serializing_if = "crate::domain::object::ObjectAttrs::is_empty"
    )]
    attrs: crate::domain::object::ObjectAttrs,
    /// Not part of an event: a file's state, not what it is.
    #[serde(skip)]
    damaged_at: Option<i64>,
    /// Not part of an event: what a read checks the bytes against.
    #[serde(skip)]
    crc32: Option<u32>,
}

/// The file row as the outbox keeps it.
pub(crate) fn event_data(row: &FileRow) -> Result<String, super::error::DbError> {
    let mut out = Vec::new();
    DurableFile::serialize(row, &mut serde_json::Serializer::new(&mut out))
        .map_err(|e| super::error::DbError::Invalid(e.to_string()))?;
    String::from_utf8(out).map_err(|e| super::error::DbError::Invalid(e.to_string()))
}

/// The file row of outbox event `seq`'s `data`, or None (logged) when it
/// cannot be read: such an event can never be sent, and the claim drops it
/// rather than holding up the others.
pub(crate) fn event_file(seq: i64, data: &str) -> Option<FileRow> {
    match DurableFile::deserialize(&mut serde_json::Deserializer::from_str(data)) {
        Ok(f) => Some(f),
        Err(e) => {
            tracing::error!(seq, error = %e, "an outbox event's data is unreadable; dropped");
            None
        }
    }
}

#[cfg(test)]
mod tests {

    use super::{event_data, event_file};

    #[test]
    fn an_outbox_file_from_before_metadata_still_reads() {
        let old = r#"{"id":"f_1","account_id":"a_1","name":"x","folder":null,"size":1,
            "content_type":"text/plain","private":false,"sha256":"","blob_key":"a_1/f_1",
            "created_at":5,"expires_at":null,"inline":true}"#;
        let f = event_file(1, old).unwrap();
        assert_eq!(
            (f.id.as_str(), f.metadata.len(), f.md5.as_deref()),
            ("f_1", 0, None)
        );
        let mut g = f.clone();
        g.metadata.insert("k".into(), "v".into());
        g.md5 = Some("d41d8cd98f00b204e9800998ecf8427e".into());
        let back = event_file(2, &event_data(&g).unwrap()).unwrap();
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
/// Bytewise, a subfolder `s` holds `P/s` and `P/s/…`, but `P/s-x`,
/// `P/s.x`, `P/s x`, `P/s+x`… (every character from space to `.` sorts
/// before `/`) lie between the two. So from `s` the next folder is looked
/// for first in (`P/s`, `P/s/`), then from `P/s0` (`0` follows `/`); and
/// its segment `g` is not yet the answer: a name `h` that `g` extends with
/// such a character (`h` < `g`) may hold only deeper folders (`P/h/…`,
/// after `P/g`), so each such `h` > `s` is probed first; likewise a name
/// that `s` extends is met after `s` and skipped.
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
            // Past every folder, whatever its characters.
            None => (String::new(), crate::domain::filepath::past_prefix("")),
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
                    .filter(|&(i, c)| i > 0 && c < '/')
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
    fn names_of_any_characters_in_order() {
        let folders = [
            "my docs/x",
            "my",
            "my+/y",
            "my docs+/z",
            "my%/a/b",
            "é/ü",
            "~",
            "{",
            "m y",
            "my!",
            "\u{10FFFF}/a",
        ];
        assert_eq!(names(&folders, None, None, 100), naive(&folders, None));
        assert_eq!(names(&folders, Some("my docs"), None, 9), ["x"]);
        assert_eq!(names(&folders, Some("my%"), None, 9), ["a"]);
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
            folders in proptest::collection::vec("(p/)?[ab. +%é~-]{1,3}(/[ab. +%é-]{1,2}){0,2}", 0..30),
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
