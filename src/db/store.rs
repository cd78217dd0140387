//! The metadata store's seam: every operation the rest of the program needs,
//! at the level of its business rules. Each method is one transaction of the
//! implementation (its checks made inside it), so that an implementation on
//! a database server keeps every rule across nodes: SQLite
//! ([`super::sqlite::SqliteStore`], the default) and PostgreSQL
//! ([`super::postgres::PgStore`], for several nodes on one database).

use super::error::DbError;
use super::model::{
    Account, BandwidthCount, CommitContext, CommitOutcome, Commitments, CreateOutcome, FileChange,
    FileRow, KeyRecord, ListFilter, OutboxEvent, PageAfter, PlanUse, PoolStats, Progress, Quota,
    Removed, RowWithData, StoredPlan, TokenRow, Totals, UploadRow, UsageCounters, VariantOutcome,
    VariantRow, WebhookRow,
};
use crate::domain::quota::Share;
use crate::domain::ratelimit::Window;
use async_trait::async_trait;
use bytes::Bytes;

pub type DynMetaStore = std::sync::Arc<dyn MetaStore>;

/// The whole metadata store: the sum of its aggregates (pict-rs's
/// `FullRepo` shape). The program holds it as [`DynMetaStore`]; a backend
/// implements each aggregate in a file of its own (`db/<backend>/<aggregate>.rs`).
pub trait MetaStore:
    FileRepo
    + BlobRepo
    + AccountRepo
    + TokenRepo
    + UploadRepo
    + OutboxRepo
    + RateRepo
    + OpsRepo
    + VariantRepo
    + PlanRepo
    + SlotRepo
    + super::s3::BucketRepo
    + super::s3::MultipartRepo
    + super::integrity::IntegrityRepo
    + super::console::HistoryRepo
    + super::console::DeliveryRepo
    + super::sessions::SessionRepo
{
}

impl<T> MetaStore for T where
    T: FileRepo
        + BlobRepo
        + AccountRepo
        + TokenRepo
        + UploadRepo
        + OutboxRepo
        + RateRepo
        + OpsRepo
        + VariantRepo
        + PlanRepo
        + SlotRepo
        + super::s3::BucketRepo
        + super::s3::MultipartRepo
        + super::integrity::IntegrityRepo
        + super::console::HistoryRepo
        + super::console::DeliveryRepo
        + super::sessions::SessionRepo
{
}

/// Files: commits, reads, pages, deletions and expiry of file rows, and idempotency keys.
#[async_trait]
pub trait FileRepo: std::fmt::Debug + Send + Sync {
    /// Commits an uploaded blob as a file, or refuses it, in one transaction:
    /// the idempotency key is looked up, then the storage quota and the
    /// period's upload count are checked (counting what incomplete resumable
    /// uploads hold) so that concurrent uploads can never pass a quota
    /// together. On success the blob's upload guard is released; a small
    /// file's bytes (`inline`, when `f.inline`) are stored with its row. A
    /// resumable upload completing (`ctx.tus_upload`) gives back its
    /// reservation and is marked complete. With `ctx.token`, the token's
    /// count is taken in the same transaction, exactly across nodes and
    /// concurrent commits: `uploads_used + 1` only while it is unrevoked and
    /// `uploads_used + uploads_open < max_uploads` (a resumable upload's use,
    /// held since its creation, moves from `uploads_open` to `uploads_used`
    /// unconditionally); else [`CommitOutcome::TokenSpent`] and nothing is
    /// written. A multipart upload's token is counted after the replay and
    /// the quota (neither takes a use) and before any other write; a
    /// resumable upload's after its row is marked complete (the lock order
    /// of the termination, which gives the use back).
    async fn commit_upload(
        &self,
        f: FileRow,
        inline: Option<Bytes>,
        limits: Quota,
        ctx: CommitContext,
    ) -> Result<CommitOutcome, DbError>;

    /// A file of `account_id` that exists and has not expired at `now`.
    async fn file(&self, account_id: &str, id: &str, now: i64) -> Result<Option<FileRow>, DbError>;

    /// A live file with its bytes when they are inline: what the CDN serves
    /// (a hot path: no more than a point lookup).
    async fn file_with_data(
        &self,
        account_id: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<RowWithData>, DbError>;

    /// The live file an idempotency key (used since `since`) points to.
    async fn replayed_file(
        &self,
        account_id: &str,
        key: &str,
        since: i64,
        now: i64,
    ) -> Result<Option<FileRow>, DbError>;

    /// Up to `limit + 1` live files, newest first, strictly after `after`.
    async fn page(
        &self,
        account_id: &str,
        filter: &ListFilter,
        after: Option<PageAfter>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError>;

    /// The live files of `account_id` at path `folder/name` (`folder` None:
    /// the root), newest first (created_at, then id): one seek of the path
    /// index (`files_by_path`, docs/decisions.md "Paths").
    async fn files_at(
        &self,
        account_id: &str,
        folder: Option<&str>,
        name: &str,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError>;

    /// The newest live file of `account_id` at `folder/name`, with its
    /// bytes when they are inline: what a stable link serves (one seek of
    /// the path index, the row and its bytes read together).
    async fn file_at_with_data(
        &self,
        account_id: &str,
        folder: Option<&str>,
        name: &str,
        now: i64,
    ) -> Result<Option<RowWithData>, DbError>;

    /// Up to `limit` live files of `account_id`, the newest at each path,
    /// in byte order of the path (`domain::filepath`): the paths that start
    /// with `prefix` and sort strictly after `start_after` (either absent).
    /// One range scan of the path index, whatever the key. A listing skips
    /// every path below a common prefix by starting after
    /// `domain::filepath::past_prefix` of it.
    async fn list_paths(
        &self,
        account_id: &str,
        prefix: Option<&str>,
        start_after: Option<&str>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError>;

    /// Renames or moves a live file in one statement (its id, bytes,
    /// sha256 and created_at stay) and queues `file.updated` in the same
    /// transaction. None when absent.
    async fn update_file(
        &self,
        account_id: &str,
        id: &str,
        change: FileChange,
        now: i64,
    ) -> Result<Option<FileRow>, DbError>;
    /// Up to `limit + 1` names of the immediate subfolders of `parent` (None:
    /// the root) that hold a live file at any depth, by name, after `after`:
    /// a loose index scan (`db::model::SubfolderSeek`), one index seek
    /// per probe, in one read.
    async fn subfolders(
        &self,
        account_id: &str,
        parent: Option<&str>,
        after: Option<String>,
        limit: u32,
        now: i64,
    ) -> Result<Vec<String>, DbError>;

    /// Removes a live file: its row goes, its bytes are given back and its
    /// blob is queued for deletion (due now). None when absent.
    async fn delete_file(
        &self,
        account_id: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<FileRow>, DbError>;

    /// Removes the live files of `account_id` among `ids` (each once) in one
    /// transaction, each as `delete_file` does; returns those removed.
    async fn delete_files(
        &self,
        account_id: &str,
        ids: Vec<String>,
        now: i64,
    ) -> Result<Vec<FileRow>, DbError>;

    /// Removes every live file of `account_id` in `folder` and below, set
    /// by set (no statement per file) in one transaction: `file.deleted`
    /// for each, their bytes given back, inline bytes gone, blobs queued
    /// for the collector (due now). Returns how many went.
    async fn delete_folder(&self, account_id: &str, folder: &str, now: i64)
        -> Result<u64, DbError>;

    /// Removes up to `max` files whose time has come, as `delete_file` does.
    async fn reap_expired_files(&self, now: i64, max: u32) -> Result<Vec<FileRow>, DbError>;

    /// Forgets idempotency keys used before `before`.
    async fn prune_idempotency(&self, before: i64) -> Result<usize, DbError>;

    /// Up to `max` files (live or not) whose MD5 is not known, in id order
    /// after `after` (`service::md5_fill`).
    async fn md5_pending(&self, after: &str, max: u32) -> Result<Vec<FileRow>, DbError>;

    /// Records the MD5 of the file `id` when it has none and its SHA-256 is
    /// still `sha256`; false when there was nothing to set.
    async fn md5_found(&self, id: &str, sha256: &str, md5: &str) -> Result<bool, DbError>;
}

/// The blob deletion queue and the upload guards that keep a blob being written from it.
#[async_trait]
pub trait BlobRepo: std::fmt::Debug + Send + Sync {
    /// Registers a blob an upload is about to write: collected after
    /// `UPLOAD_GUARD_MS` unless the upload's commit releases it first.
    async fn guard_upload(&self, blob_key: &str, now: i64) -> Result<(), DbError>;

    /// Queues a blob for deletion, due at `due` (or earlier if queued so).
    async fn schedule_blob_deletion(&self, blob_key: &str, due: i64) -> Result<(), DbError>;

    /// Blobs due for deletion at `now`, with their failed attempts; a queued
    /// blob that a file still references is dropped from the queue instead.
    async fn due_blobs(&self, now: i64, max: u32) -> Result<Vec<(String, u32)>, DbError>;

    /// Forgets a queued blob (deleted); false when it was not queued.
    async fn blob_deleted(&self, blob_key: &str) -> Result<bool, DbError>;

    /// A deletion failed: try again at `retry_at`.
    async fn blob_deletion_failed(
        &self,
        blob_key: &str,
        retry_at: i64,
        error: &str,
    ) -> Result<(), DbError>;

    /// At start, the requests of the nodes that are gone are over (on
    /// SQLite, every request: one node): makes their upload guards due now
    /// and the webhook events they had claimed due now; SQLite also ends
    /// every upload's lease (on PostgreSQL a gone node's leases are free
    /// at once: `lease_upload` sees that its session is gone).
    async fn expire_upload_guards(&self, now: i64) -> Result<usize, DbError>;

    /// While running, each collector pass: makes due now the upload guards
    /// of nodes that died since (on PostgreSQL: whose database session has
    /// been gone for a while), so that their blobs, and what the blob store
    /// holds of their writes in flight (S3 multipart uploads), are deleted.
    /// SQLite has one node, whose restart does this: nothing to do.
    async fn expire_dead_node_guards(&self, _now: i64) -> Result<usize, DbError> {
        Ok(0)
    }
}

/// Accounts, their keys and their usage counters.
#[async_trait]
pub trait AccountRepo: std::fmt::Debug + Send + Sync {
    /// The period's uploads and what incomplete resumable uploads hold, for
    /// the checks an upload makes before reading its body.
    async fn commitments(
        &self,
        account_id: &str,
        period: &str,
        now: i64,
    ) -> Result<Commitments, DbError>;

    /// [`commitments`](Self::commitments), read for the early checks of an
    /// upload that then commits in its account's next batch: a store that
    /// batches commits may hold that batch for this read, whose upload then
    /// joins it (PostgreSQL, `db/postgres/flights.rs`).
    async fn upload_commitments(
        &self,
        account_id: &str,
        period: &str,
        now: i64,
    ) -> Result<Commitments, DbError> {
        self.commitments(account_id, period, now).await
    }

    /// What the account's strangers (its public keys and upload tokens, all
    /// together) hold at `now` in `period`, for the early checks of a
    /// stranger's upload: the bytes their incomplete resumable uploads
    /// reserve, their uploads in the period (those incomplete ones counted)
    /// and those incomplete ones. The transaction that admits the upload
    /// reads them again.
    async fn strangers(
        &self,
        account_id: &str,
        period: &str,
        now: i64,
    ) -> Result<crate::domain::quota::Holdings, DbError>;

    /// The account's stored bytes and the period's counters, read together.
    async fn usage(&self, account_id: &str, period: &str) -> Result<UsageCounters, DbError>;

    /// Adds the bytes the CDN sent, all in one transaction.
    async fn add_bandwidth(&self, counts: Vec<BandwidthCount>) -> Result<(), DbError>;

    /// The live key whose secret hashes to `hash`, with its account (the
    /// hot path of every request: no more than two point lookups).
    async fn key_by_hash(&self, hash: [u8; 32]) -> Result<Option<(KeyRecord, Account)>, DbError>;

    /// Origins of every live public key (CORS preflights carry no key).
    async fn public_origins(&self) -> Result<Vec<String>, DbError>;

    async fn account(&self, id: &str) -> Result<Option<Account>, DbError>;

    /// An account by its id or its (unique) name.
    async fn find_account(&self, id_or_name: &str) -> Result<Option<Account>, DbError>;

    async fn count_accounts(&self) -> Result<u64, DbError>;

    async fn list_accounts(&self) -> Result<Vec<Account>, DbError>;

    /// Creates the account unless its name is an existing account's name or
    /// id (false then), in one transaction.
    async fn create_account(&self, account: Account) -> Result<bool, DbError>;

    /// Changes what is given of an account's plan and grace period; the
    /// account as it is then (None when absent).
    async fn set_account(
        &self,
        id: &str,
        plan: Option<String>,
        grace_period: Option<bool>,
    ) -> Result<Option<Account>, DbError>;

    /// Stores a key; only the SHA-256 of its secret is kept.
    async fn create_key(&self, key: KeyRecord, hash: [u8; 32]) -> Result<(), DbError>;

    async fn key(&self, id: &str) -> Result<Option<KeyRecord>, DbError>;

    /// Every key, or those of one account, oldest first.
    async fn list_keys(&self, account_id: Option<&str>) -> Result<Vec<KeyRecord>, DbError>;

    /// Revokes a key; true when it was live.
    async fn revoke_key(&self, id: &str, now: i64) -> Result<bool, DbError>;
}

/// Upload tokens: made, read and revoked here; their uses are counted inside
/// the transactions that create files and resumable uploads
/// ([`CommitContext::token`], [`FileRepo::commit_upload`],
/// [`UploadRepo::create_upload`], and the removal and expiry of an
/// incomplete upload, which give its use back).
#[async_trait]
pub trait TokenRepo: std::fmt::Debug + Send + Sync {
    /// Stores a new token under the hash of its secret.
    async fn create_token(&self, token: TokenRow, hash: [u8; 32]) -> Result<(), DbError>;
    /// The account's token `id` (revoked and expired ones too).
    async fn token(&self, account_id: &str, id: &str) -> Result<Option<TokenRow>, DbError>;
    /// The account's active tokens at `now` (unrevoked, unexpired), newest
    /// first, at most `limit`.
    async fn active_tokens(
        &self,
        account_id: &str,
        now: i64,
        limit: u32,
    ) -> Result<Vec<TokenRow>, DbError>;
    /// The token whose secret hashes to `hash`, with its account (whatever
    /// its state: the caller decides with [`TokenRow::refusal`]).
    async fn token_by_hash(&self, hash: [u8; 32]) -> Result<Option<(TokenRow, Account)>, DbError>;
    /// Revokes the account's token `id` at `now`: false when there is none.
    /// Revoking a revoked token is true and keeps the first time.
    async fn revoke_token(&self, account_id: &str, id: &str, now: i64) -> Result<bool, DbError>;
    /// Forgets tokens that expired before `before` and hold no open
    /// resumable upload; returns how many.
    async fn prune_tokens(&self, before: i64) -> Result<usize, DbError>;
}

/// Resumable (tus) uploads and their leases.
#[async_trait]
pub trait UploadRepo: std::fmt::Debug + Send + Sync {
    /// The upload an earlier creation with this idempotency key made.
    async fn replayed_upload(
        &self,
        account_id: &str,
        key: &str,
    ) -> Result<Option<UploadRow>, DbError>;

    /// Creates the upload if the account has room for its declared length,
    /// one more upload this period (counting what other incomplete uploads
    /// hold) and one more incomplete upload, and releases its blob's upload
    /// guard, in one transaction. An upload created by an upload token
    /// (`created_by` is a `ut_…` id) also takes one of the token's uploads
    /// (`uploads_open + 1`, only if it is unrevoked, unexpired at the
    /// upload's `created_at` and has one left: else
    /// [`CreateOutcome::TokenSpent`]). With a `share` (a stranger, a public
    /// key or an upload token, creates it), the account's strangers together
    /// must also stay within that share of the reservations, the period's
    /// uploads and the incomplete uploads, this one counted
    /// (`Quota::admit_stranger`; else [`CreateOutcome::Refused`]).
    async fn create_upload(
        &self,
        upload: UploadRow,
        limits: Quota,
        share: Option<Share>,
        period: &str,
    ) -> Result<CreateOutcome, DbError>;

    /// The upload `id` of `account_id` (expired or not; the caller decides).
    async fn upload(&self, account_id: &str, id: &str) -> Result<Option<UploadRow>, DbError>;

    /// The account's incomplete, unexpired uploads, newest first, at most `max`.
    async fn open_uploads(
        &self,
        account_id: &str,
        now: i64,
        max: u32,
    ) -> Result<Vec<UploadRow>, DbError>;

    /// When the first of the account's incomplete uploads (of those its
    /// strangers created, with `strangers`) expires (`now` when it has
    /// none): when one more may be created.
    async fn next_upload_expiry(
        &self,
        account_id: &str,
        now: i64,
        strangers: bool,
    ) -> Result<i64, DbError>;

    /// The bytes of the upload not yet in the blob store.
    async fn upload_tail(&self, id: &str) -> Result<Option<Vec<u8>>, DbError>;

    /// Records a PATCH's progress; false when another request moved the
    /// upload first (or it is gone, complete or expired).
    async fn advance_upload(&self, id: &str, progress: Progress) -> Result<bool, DbError>;

    /// Removes an upload (an incomplete one's blob queued for deletion):
    /// None when it was not there, else whether it was incomplete when it
    /// was removed (read in the same statement: a completion on another
    /// node just before makes it a file's blob, which stays). An incomplete
    /// upload of an upload token gives the token's use back.
    async fn remove_upload(&self, id: &str, now: i64) -> Result<Option<bool>, DbError>;

    /// Removes up to `max` uploads whose time is up; returns the blob keys
    /// and store states of the incomplete ones (for an early abort). An
    /// incomplete upload of an upload token gives the token's use back.
    async fn reap_expired_uploads(
        &self,
        now: i64,
        max: u32,
    ) -> Result<Vec<(String, String)>, DbError>;

    /// Blob keys of the incomplete uploads (never swept from the store).
    async fn live_upload_keys(&self) -> Result<Vec<String>, DbError>;

    /// Gives upload `id` to one request (a PATCH or a termination, on any
    /// node) until `until`: true when it was free (no lease, one that ended
    /// by `now`, or one of a node whose database session is gone) or already
    /// this `token`'s (a renewal), false when another request holds it. A
    /// renewal also keeps an incomplete, unexpired upload alive: its expiry
    /// becomes at least `now` plus its `idle_ms` (a PATCH receiving bytes
    /// for longer than that does not see its upload expire under it).
    async fn lease_upload(
        &self,
        id: &str,
        token: &str,
        now: i64,
        until: i64,
    ) -> Result<bool, DbError>;

    /// Gives upload `id` to `token` (a termination) until `until`, whoever
    /// holds it: the request that held it finds, at its next renewal, that
    /// it lost it. False when there is no such upload.
    async fn seize_upload(&self, id: &str, token: &str, until: i64) -> Result<bool, DbError>;

    /// Ends `token`'s lease of upload `id` (nothing when it holds none).
    async fn release_upload(&self, id: &str, token: &str) -> Result<(), DbError>;
}

/// Webhook subscriptions and the outbox of their events.
#[async_trait]
pub trait OutboxRepo: std::fmt::Debug + Send + Sync {
    /// Whether an upload committed since the last call queued events, so
    /// that the sender should look for them now: a commit with no
    /// subscriber costs the sender no poll.
    fn take_queued_events(&self) -> bool;

    async fn create_webhook(&self, webhook: WebhookRow) -> Result<(), DbError>;

    /// Every subscription, or one account's, oldest first.
    async fn list_webhooks(&self, account_id: Option<&str>) -> Result<Vec<WebhookRow>, DbError>;

    /// Removes a subscription and its undelivered events; the subscription
    /// as it was (None when absent).
    async fn delete_webhook(&self, id: &str) -> Result<Option<WebhookRow>, DbError>;

    /// Claims outbox events due at `now` for an attempt, within `budget`:
    /// `budget.max` in all, of each subscription at most what the budget
    /// gives it, and of its failing subscriptions at most
    /// `budget.failing_max` together, taken round-robin across subscriptions
    /// (`webhooks::fair_pick`), so one subscription's backlog never crowds
    /// out another's events. Each is the oldest undelivered event of its
    /// file for its subscription (so a file's events arrive in order); none
    /// is handed out again before `lease_until`, on any node. (The events
    /// themselves are written by `commit_upload`, `delete_file` and
    /// `reap_expired_files`, in their transactions.)
    async fn claim_events(
        &self,
        now: i64,
        lease_until: i64,
        budget: &crate::domain::webhooks::Budget,
    ) -> Result<Vec<OutboxEvent>, DbError>;

    /// An event was delivered, or given up: it leaves the outbox.
    async fn event_done(&self, seq: i64) -> Result<(), DbError>;

    /// An attempt failed: the next is due at `retry_at`.
    async fn event_failed(&self, seq: i64, retry_at: i64, error: &str) -> Result<(), DbError>;

    /// Whether a claim at `now` within `budget` would take any event (a
    /// read, before a claim).
    async fn any_due_events(
        &self,
        now: i64,
        budget: &crate::domain::webhooks::Budget,
    ) -> Result<bool, DbError>;

    /// Events not delivered yet (all subscriptions).
    async fn pending_events(&self) -> Result<u64, DbError>;
}

/// The API keys' rate windows.
#[async_trait]
pub trait RateRepo: std::fmt::Debug + Send + Sync {
    /// The current window of API key `key_id` at `now`, with this request
    /// counted when `count` (the rule is `domain::ratelimit::Window`). SQLite
    /// keeps the windows in this process's memory (one node); PostgreSQL in
    /// a table, so that a key gets its plan's budget once across all nodes.
    async fn rate_window(
        &self,
        key_id: &str,
        window_ms: i64,
        now: i64,
        count: bool,
    ) -> Result<Window, DbError>;

    /// Counts a request of `key_id`, an upload of `account_id`, as
    /// `rate_window(.., true)` does. A store whose every read is a round
    /// trip (PostgreSQL) also reads the account's commitments at `now` in
    /// `period` in the same one, which the upload's early checks then use
    /// (`AccountRepo::commitments`); None: the caller reads them itself.
    async fn count_upload(
        &self,
        key_id: &str,
        window_ms: i64,
        now: i64,
        account_id: &str,
        period: &str,
    ) -> Result<(Window, Option<Commitments>), DbError> {
        let _ = (account_id, period);
        Ok((self.rate_window(key_id, window_ms, now, true).await?, None))
    }

    /// Forgets the rate windows that ended before `now`; returns how many.
    async fn prune_rate_windows(&self, now: i64) -> Result<usize, DbError>;
}

/// Operating the store: its own settings, health and pool figures.
#[async_trait]
pub trait OpsRepo: std::fmt::Debug + Send + Sync {
    /// The value of `key` in the server's own settings, or `value` stored
    /// now when there is none (in one transaction: every node gets the same).
    async fn meta_get_or_insert(&self, key: &str, value: String) -> Result<String, DbError>;

    /// Holds every blob deletion until `until` (ms) under the name `id`
    /// (`admin backup`: the blobs of its snapshot stay until it has copied
    /// them); again with a later `until` extends it. A row of `meta`, so
    /// that every node's deletions honour it.
    async fn hold_blobs(&self, id: &str, until: i64) -> Result<(), DbError>;

    /// Ends the hold `id` (absent: nothing to do), and removes the rows of
    /// holds that ended before `now` (a backup killed leaves its own).
    async fn release_blobs(&self, id: &str, now: i64) -> Result<(), DbError>;

    /// Whether a hold on blob deletions is in force at `now`: read fresh,
    /// after the deletion's own row was committed (`service::blobs`).
    async fn blobs_held(&self, now: i64) -> Result<bool, DbError>;

    /// A round trip to the database, for health.
    async fn ping(&self) -> Result<(), DbError>;

    /// The pool's connections, for the metrics.
    fn pool_stats(&self) -> PoolStats;

    /// The store's stored bytes, files and accounts, from the counters of
    /// the account rows (one row an account, never a scan of the files).
    async fn totals(&self) -> Result<Totals, DbError>;

    /// Removes account `id` and everything of it in one transaction: its
    /// files (their blobs, their variants' and those of its incomplete
    /// resumable uploads queued for the collector, due at `now`), uploads,
    /// keys, upload tokens, webhooks with their undelivered events, usage
    /// counters and idempotency keys. None when there is no such account.
    /// A commit of the account racing it either lands before (and goes
    /// with it) or finds no account.
    async fn delete_account(&self, id: &str, now: i64) -> Result<Option<Removed>, DbError>;
}

/// Image variants: renders of a file kept in the blob store. They go with
/// their file in the transaction that removes it (a trigger of the schema
/// queues their blobs), so no deletion path has to know of them.
#[async_trait]
pub trait VariantRepo: std::fmt::Debug + Send + Sync {
    /// The variant `key` of file `file_id`, and how many variants the file
    /// has (to refuse a new one past the cap before rendering it).
    async fn variant(&self, file_id: &str, key: &str)
        -> Result<(Option<VariantRow>, u32), DbError>;

    /// Records a rendered variant whose blob `upload_guard` registered, in
    /// one transaction, exactly across nodes: only while its file exists and
    /// has fewer than `cap` variants, the file's row held against a delete
    /// until the commit. On [`VariantOutcome::Stored`] the blob's guard is
    /// released; otherwise the guard stays and the collector takes the blob.
    async fn put_variant(&self, v: VariantRow, cap: u32) -> Result<VariantOutcome, DbError>;
}

/// Plans: the limits every node enforces, kept in the database so that all
/// nodes read the same (docs/decisions.md, "Plans in the database").
#[async_trait]
pub trait PlanRepo: std::fmt::Debug + Send + Sync {
    /// Every stored plan.
    async fn plans(&self) -> Result<Vec<StoredPlan>, DbError>;

    /// Stores `spec` as plan `name`'s limits (only when it has none, with
    /// `only_new`); the spec it had before, if any and different. One
    /// statement: nodes starting at once each write whole plans.
    async fn put_plan(
        &self,
        name: &str,
        spec: &str,
        only_new: bool,
        now: i64,
    ) -> Result<Option<String>, DbError>;

    /// The plans accounts are on: each with its number of accounts and the
    /// name of one of them.
    async fn plan_uses(&self) -> Result<Vec<PlanUse>, DbError>;
}

/// The upload bodies of an account's strangers (its public keys and upload
/// tokens, all together) arriving at once, against their share of the
/// plan's `concurrent_uploads`, for a store that several nodes share
/// (PostgreSQL: a row each, taken under the account row's lock, those of
/// dead nodes not counted). A store of one node (SQLite) leaves them to the
/// node's memory (`service::inflight`), as the account's own bodies are.
#[async_trait]
pub trait SlotRepo: std::fmt::Debug + Send + Sync {
    /// Whether this store counts the strangers' bodies (else the node does).
    fn counts_slots(&self) -> bool {
        false
    }

    /// Takes slot `id` (a new id) of `account_id` if its strangers have
    /// fewer than `max` bodies arriving on every live node; false if not.
    async fn take_slot(
        &self,
        _account_id: &str,
        _id: &str,
        _max: u64,
        _now: i64,
    ) -> Result<bool, DbError> {
        Ok(true)
    }

    /// Gives slot `id` back (the body has arrived, or its request ended).
    async fn free_slot(&self, _id: &str) -> Result<(), DbError> {
        Ok(())
    }
}
