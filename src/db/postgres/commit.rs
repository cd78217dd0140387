//! The one way a file is committed on PostgreSQL: a call of
//! `filestore_commit` (migrations 0018, 0022, 0024, 0029), the only function that inserts
//! into `files`. Every path comes here: the bus's statement of several
//! accounts (`bus`), an account's batch (`batch`), an upload with an
//! idempotency key or one committed alone ([`commit_alone`]), and the
//! commits judged in Rust under the account row's lock (`files`: a
//! resumable upload completing, a stranger's upload). Here: the uploads
//! as the function's arrays ([`Columns`]), the call ([`call`]) and what its
//! rows say ([`outcome_of`]).

use super::{query_opt, rows, signed, DbError, PgStore};
use crate::db::model::{
    event_data, CommitContext, CommitOutcome, Commitments, FileRow, REPLACED_KEPT_MS,
};
use crate::domain::filepath::AtPath;
use crate::domain::metadata;
use crate::domain::quota::{Ask, Quota};
use bytes::Bytes;
use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

/// An upload waiting for its commit.
pub(super) struct Pending {
    pub(super) f: FileRow,
    pub(super) inline: Option<Bytes>,
    pub(super) limits: Quota,
    pub(super) ctx: CommitContext,
}

/// A commit's outcome, and whether it queued webhook events.
pub(super) type Committed = Result<(CommitOutcome, bool), DbError>;

/// How a call of `filestore_commit` goes (see migration 0018).
#[derive(Clone, Copy, Default)]
pub(super) struct How<'a> {
    /// Waits for no lock past 100 ms (the bus's statement).
    pub(super) bounded: bool,
    /// Judged by the caller, in its transaction, under the account row's
    /// lock: no guard, quota or token in the function.
    pub(super) admitted: bool,
    /// Counts in the strangers' share of the period's uploads.
    pub(super) strangers: bool,
    /// The one upload's idempotency key, and since when its uses count.
    pub(super) key: Option<(&'a str, i64)>,
}

/// The uploads of a call as one array per parameter of `filestore_commit`,
/// and its accounts (each once, in byte order) with where each one's
/// uploads end (`ends`, from 1).
#[derive(Default)]
pub(super) struct Columns<'a> {
    pub(super) accounts: Vec<&'a str>,
    pub(super) ends: Vec<i32>,
    id: Vec<&'a str>,
    name: Vec<&'a str>,
    folder: Vec<Option<&'a str>>,
    size: Vec<i64>,
    content_type: Vec<&'a str>,
    private: Vec<bool>,
    sha256: Vec<&'a str>,
    md5: Vec<Option<&'a str>>,
    blob_key: Vec<&'a str>,
    created_at: Vec<i64>,
    expires_at: Vec<Option<i64>>,
    inline: Vec<bool>,
    metadata: Vec<String>,
    attrs: Vec<Option<String>>,
    data: Vec<Option<&'a [u8]>>,
    event: Vec<String>,
    token: Vec<Option<&'a str>>,
    max_storage: Vec<i64>,
    max_uploads: Vec<i64>,
    at_path: Vec<Option<&'static str>>,
}

impl<'a> Columns<'a> {
    /// Adds upload `f` (its bytes `inline` for an inline file; its upload
    /// `token`'s use to take), or says why it cannot be committed (nothing
    /// added then).
    pub(super) fn push(
        &mut self,
        f: &'a FileRow,
        inline: Option<&'a [u8]>,
        limits: Quota,
        token: Option<&'a str>,
    ) -> Result<(), DbError> {
        if f.inline != inline.is_some() {
            return Err(DbError::Invalid(format!(
                "file {} is inline only if its bytes come with it",
                f.id
            )));
        }
        let size = signed(f.size)?;
        let event = event_data(f)?;
        let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.id.push(&f.id);
        self.name.push(&f.name);
        self.folder.push(f.folder.as_deref());
        self.size.push(size);
        self.content_type.push(&f.content_type);
        self.private.push(f.private);
        self.sha256.push(&f.sha256);
        self.md5.push(f.md5.as_deref());
        self.blob_key.push(&f.blob_key);
        self.created_at.push(f.created_at);
        self.expires_at.push(f.expires_at);
        self.inline.push(f.inline);
        self.metadata.push(metadata::to_json(&f.metadata));
        self.attrs.push(f.attrs.stored());
        self.data.push(inline);
        self.event.push(event);
        self.token.push(token);
        self.max_storage.push(clamp(limits.storage));
        self.max_uploads.push(clamp(limits.uploads_per_period));
        self.at_path.push(None);
        Ok(())
    }

    /// What the last upload pushed does at its path (it goes alone when it
    /// does anything: the function refuses a path rule in a statement of
    /// several uploads).
    pub(super) fn at_path(&mut self, rule: AtPath) {
        if let Some(last) = self.at_path.last_mut() {
            *last = rule.stored();
        }
    }

    /// Uploads pushed so far.
    pub(super) fn len(&self) -> usize {
        self.id.len()
    }

    /// Closes account `account`'s run: the uploads pushed since the last
    /// are its own. An account none of whose uploads could be pushed is
    /// left out.
    pub(super) fn end_account(&mut self, account: &'a str) {
        let end = i32::try_from(self.len()).unwrap_or(i32::MAX);
        if end > self.ends.last().copied().unwrap_or(0) {
            self.accounts.push(account);
            self.ends.push(end);
        }
    }
}

/// One call of `filestore_commit` with `cols`' uploads of `period`: its
/// rows, one per upload sent, in order (`n`, `code`, `detail`, `message`,
/// `queued`, `replayed`, `replaced`).
pub(super) async fn call<C: GenericClient>(
    c: &C,
    period: &str,
    cols: &Columns<'_>,
    how: How<'_>,
) -> Result<Vec<Row>, DbError> {
    let stmt = c
        .prepare_cached(
            "SELECT n, code, detail, message, queued, replayed, replaced FROM filestore_commit(
                 $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                 $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29)",
        )
        .await?;
    let (key, since) = (how.key.map(|k| k.0), how.key.map(|k| k.1));
    let params: [&(dyn ToSql + Sync); 29] = [
        &cols.accounts,
        &cols.ends,
        &cols.id,
        &cols.name,
        &cols.folder,
        &cols.size,
        &cols.content_type,
        &cols.private,
        &cols.sha256,
        &cols.md5,
        &cols.blob_key,
        &cols.created_at,
        &cols.expires_at,
        &cols.inline,
        &cols.metadata,
        &cols.attrs,
        &cols.data,
        &cols.event,
        &period,
        &cols.token,
        &cols.max_storage,
        &cols.max_uploads,
        &key,
        &since,
        &how.admitted,
        &how.strangers,
        &how.bounded,
        &cols.at_path,
        &REPLACED_KEPT_MS,
    ];
    match c.query(&stmt, &params).await {
        Ok(rows) => Ok(rows),
        // Its errors of its own (input out of order, an account gone).
        Err(e) => match e.as_db_error() {
            Some(db) if db.code().code() == "FS003" => Err(DbError::Invalid(db.message().into())),
            _ => Err(e.into()),
        },
    }
}

/// What a row of `filestore_commit` says of upload `f` (with `limits`),
/// its replay aside.
pub(super) fn outcome_of(row: &Row, f: &FileRow, limits: Quota) -> Committed {
    let code: Option<String> = row.get(1);
    let queued: i32 = row.get(4);
    match code {
        None => {
            let replaced: Option<Vec<String>> = row.get(6);
            let outcome = match replaced {
                Some(ids) if !ids.is_empty() => CommitOutcome::Replaced(f.clone(), ids),
                _ => CommitOutcome::Committed(f.clone()),
            };
            Ok((outcome, queued > 0))
        }
        Some(code) => {
            let detail: Option<String> = row.get(2);
            let message: Option<String> = row.get(3);
            let (detail, message) = (detail.unwrap_or_default(), message.unwrap_or_default());
            refusal_of(&code, &detail, &message, limits, f.size)
                .unwrap_or_else(|| Err(DbError::Invalid(format!("{code}: {message}"))))
                .map(|o| (o, false))
        }
    }
}

/// The outcome a refusal of `filestore_commit` stands for, by its SQLSTATE,
/// DETAIL and message: a refusal of the quota (its holdings in the DETAIL,
/// judged again by the one quota rule) or of a spent upload token, or an
/// error of its own (FS003). None: not one of its refusals.
fn refusal_of(
    code: &str,
    detail: &str,
    message: &str,
    limits: Quota,
    size: u64,
) -> Option<Result<CommitOutcome, DbError>> {
    Some(match code {
        "FS002" => Ok(CommitOutcome::TokenSpent),
        "FS004" => Ok(CommitOutcome::PathTaken),
        "FS001" => {
            let held: Vec<u64> = detail.split(' ').filter_map(|n| n.parse().ok()).collect();
            let [stored, upload_count, reserved_bytes, pending_uploads] = held[..] else {
                return Some(Err(DbError::Invalid(format!(
                    "quota refusal without holdings: {message} ({detail})"
                ))));
            };
            let held = Commitments {
                upload_count,
                reserved_bytes,
                pending_uploads,
                stored_bytes: None,
            }
            .holdings(stored);
            match limits.admit(held, Ask::file(size)) {
                Err(refusal) => Ok(CommitOutcome::Refused(refusal)),
                Ok(()) => Err(DbError::Invalid(format!(
                    "the commit refused what the quota admits: {message} ({detail})"
                ))),
            }
        }
        "FS003" => Err(DbError::Invalid(message.to_string())),
        _ => return None,
    })
}

/// An upload's commit in a statement of its own (its own transaction, one
/// round trip), with its idempotency key if it has one. A replayed file
/// deleted before it was read makes the key stale: the upload then commits
/// as a new one.
pub(super) async fn commit_alone(
    store: &PgStore,
    f: &FileRow,
    inline: Option<&[u8]>,
    limits: Quota,
    ctx: &CommitContext,
) -> Committed {
    let mut cols = Columns::default();
    cols.push(f, inline, limits, ctx.token.as_deref())?;
    cols.at_path(ctx.at_path);
    cols.end_account(&f.account_id);
    let how = How {
        key: ctx
            .idempotency_key
            .as_deref()
            .map(|k| (k, ctx.idempotency_since)),
        ..How::default()
    };
    let (_turn, deadline) = store.turn(&f.account_id).await?;
    on_conn!(store, deadline, |c| {
        let mut tries = 0;
        loop {
            let out = call(c, &ctx.period, &cols, how).await?;
            let Some(row) = out.first() else {
                break Err(DbError::Invalid(format!(
                    "the commit of {} gave no outcome",
                    f.id
                )));
            };
            let Some(replayed) = row.get::<_, Option<String>>(5) else {
                break outcome_of(row, f, limits);
            };
            let sql = format!("SELECT {} FROM files WHERE id = $1", rows::FILE);
            if let Some(r) = query_opt(c, &sql, &[&replayed]).await? {
                break Ok((CommitOutcome::Replayed(rows::file(&r)), false));
            }
            if tries == 3 {
                break Err(DbError::Invalid(format!(
                    "idempotency key of {} replays a file deleted, again and again",
                    f.id
                )));
            }
            tries += 1;
        }
    })
}
