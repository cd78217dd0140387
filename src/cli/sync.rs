//! `filestore sync DIR --folder F`: publishes a directory idempotently.
//!
//! One listing pass of the remote tree (`GET /v1/files?folder=F&recursive=true`,
//! every page) maps each relative path to its newest file; the local tree is
//! walked and hashed (through [`HashCache`], so unchanged files are not read).
//! A path absent remotely, or whose SHA-256 differs, is uploaded; the older
//! remote file(s) at a changed path are deleted only once the new one is
//! stored, so a failure never leaves the path empty. With `--delete`, remote
//! files with no local counterpart are deleted. Nothing to do means no
//! upload and no write request at all.

use super::context::{Ctx, NetArgs};
use super::format;
use super::hash_cache::{sha256_file, HashCache, Stamp};
use super::progress::{Progress, Transfer};
use super::walk;
use crate::api::FileRecord;
use crate::client::error::exit;
use crate::client::upload::UploadMeta;
use crate::client::Cursors;
use crate::client::{Client, ClientError, RetryNotice};
use crate::domain::validate;
use futures_util::StreamExt;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest page the API serves.
const PAGE: u32 = 100;

/// Publish a directory to a folder: upload what is new or changed, skip the rest
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct SyncArgs {
    /// The local directory to publish
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// The remote folder it is published to (its subdirectories become subfolders)
    #[arg(long, value_name = "FOLDER")]
    pub folder: String,

    /// Also delete remote files under FOLDER that have no local counterpart
    #[arg(long)]
    pub delete: bool,

    /// Print what would be done; change nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Files uploaded (and deleted) at the same time
    #[arg(short = 'j', long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub concurrency: u16,

    /// Files of at least this size go through resumable (tus) uploads, as with `upload`
    #[arg(long, value_name = "SIZE", default_value = "64MiB",
          value_parser = crate::config::parse_bytes)]
    pub chunk_size: u64,

    #[command(flatten)]
    pub net: NetArgs,
}

/// The remote files at one relative path: the newest, and any older ones.
#[derive(Debug, Default)]
struct Remote {
    newest: Option<FileRecord>,
    older: Vec<FileRecord>,
}

/// A local file to consider.
#[derive(Debug)]
struct Local {
    job: walk::Job,
    /// Path relative to DIR, with `/`.
    rel: String,
}

/// One decision.
#[derive(Debug)]
enum Action {
    /// New or changed: upload with `replace=true`, which removes `replaces`
    /// (the remote files at the path) as it stores the new one. It is
    /// stored under the newest remote file's `spelling` (folder, name) when
    /// there is one, so that the server finds the files it replaces; files
    /// at the path spelled otherwise (the same in NFC, other bytes:
    /// `strays`) are deleted after it.
    Upload {
        local: Local,
        replaces: Vec<String>,
        spelling: Option<(Option<String>, String)>,
        strays: Vec<String>,
    },
    /// The same content is already the newest file at the path.
    Skip { rel: String, id: String },
    /// No local counterpart (`--delete`).
    Delete { rel: String, id: String },
}

/// The counts of a run.
#[derive(Debug, Default)]
struct Tally {
    uploaded: usize,
    skipped: usize,
    deleted: usize,
    failed: usize,
}

/// Runs the command; gives the exit status (failures already reported).
pub(crate) async fn run(args: SyncArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let folder = validate::folder(&args.folder)
        .map_err(|e| ClientError::usage(format!("--folder: {e}")))?
        .ok_or_else(|| ClientError::usage("--folder must name a folder (not the root)"))?;
    let root =
        std::fs::canonicalize(&args.dir).map_err(|e| ClientError::io(args.dir.display(), e))?;
    if !root.is_dir() {
        return Err(ClientError::usage(format!(
            "{}: not a directory",
            args.dir.display()
        )));
    }
    let client = ctx.client(&args.net)?;
    let progress = ctx.progress();

    let remote = list_remote(&client, &folder).await?;
    let walk::Expansion {
        jobs,
        mut errors,
        notes,
        skipped_dirs,
    } = walk::expand(std::slice::from_ref(&root), true, Some(&folder));
    for note in &notes {
        progress.note(note);
    }
    let mut locals: Vec<Local> = Vec::with_capacity(jobs.len());
    let mut refused = 0usize;
    for job in jobs {
        match relative(&root, &job.source) {
            // The server reads `\` in a name as a path separator: the file
            // would be stored under another name, and sent again every run.
            Some(_) if job.name.contains('\\') => {
                refused += 1;
                errors.push(ClientError::usage(format!(
                    "{}: a name with \\ cannot be published as it is (the server takes \\ as a path separator)",
                    job.label
                )));
            }
            // What the server would refuse is reported, never planned (a
            // dry run included): a folder or name it cannot hold.
            Some(rel) => match walk::refusal(&job) {
                Some(why) => {
                    refused += 1;
                    errors.push(ClientError::usage(format!(
                        "{}: cannot be published: {why}",
                        job.label
                    )));
                }
                None => locals.push(Local { job, rel }),
            },
            None => {}
        }
    }
    let mut first_exit = None;
    for e in &errors {
        progress.error(&format!("error: {e}"));
        first_exit.get_or_insert(e.exit_code());
    }
    // Remote files below a directory that was not walked are not deleted:
    // what is there locally is unknown, not absent.
    let kept: Vec<String> = skipped_dirs
        .iter()
        .filter_map(|d| relative(&root, d))
        .collect();
    if args.delete && locals.is_empty() && errors.is_empty() && !remote.is_empty() {
        return Err(ClientError::usage(format!(
            "{}: no file to publish, and --delete would delete every file under {folder} \
             (is it the right directory, or an unmounted one?)",
            args.dir.display()
        )));
    }

    let mut cache = HashCache::open(&root);
    let deletes = (args.delete && errors.is_empty()).then_some(kept.as_slice());
    let (actions, hash_errors) = decide(locals, &remote, &mut cache, deletes).await;
    for e in &hash_errors {
        progress.error(&format!("error: {e}"));
        first_exit.get_or_insert(e.exit_code());
    }
    if args.delete && !errors.is_empty() {
        progress.note("not deleting anything: some local files could not be read");
    }
    for (rel, r) in &remote {
        if !r.older.is_empty() {
            let ids: Vec<&str> = r.older.iter().map(|f| f.id.as_str()).collect();
            progress.note(&format!(
                "{rel}: {} older remote file(s) at this path ({})",
                ids.len(),
                ids.join(", ")
            ));
        }
    }

    let mut tally = Tally {
        failed: errors.len() + hash_errors.len(),
        ..Tally::default()
    };
    if args.dry_run {
        for a in &actions {
            print_action(ctx, &progress, a, None, true)?;
            tally.count(a);
        }
        print_summary(ctx, &tally, true)?;
        // A dry run that found what the server would refuse fails (exit 1).
        return Ok(if refused > 0 {
            exit::OTHER
        } else {
            first_exit.unwrap_or(0)
        });
    }

    let (uploads, rest): (Vec<Action>, Vec<Action>) = actions
        .into_iter()
        .partition(|a| matches!(a, Action::Upload { .. }));
    for a in &rest {
        if let Action::Skip { .. } = a {
            print_action(ctx, &progress, a, None, false)?;
            tally.skipped += 1;
        }
    }
    let bytes = uploads
        .iter()
        .map(|a| match a {
            Action::Upload { local, .. } => local.job.size,
            _ => 0,
        })
        .sum();
    progress.plan(uploads.len() as u64, bytes);
    let (uploaded, deleted) = {
        let runner = Runner {
            client: &client,
            ctx,
            progress: &progress,
            chunk_size: args.chunk_size,
            cache: std::sync::Mutex::new(&mut cache),
        };
        let jobs = usize::from(args.concurrency);
        let uploaded: Vec<Result<(), ClientError>> = futures_util::stream::iter(uploads)
            .map(|a| runner.upload(a))
            .buffer_unordered(jobs)
            .collect()
            .await;
        let deletes = rest
            .into_iter()
            .filter(|a| matches!(a, Action::Delete { .. }));
        let deleted: Vec<Result<(), ClientError>> = futures_util::stream::iter(deletes)
            .map(|a| runner.delete(a))
            .buffer_unordered(jobs)
            .collect()
            .await;
        (uploaded, deleted)
    };
    progress.finish();
    cache.save();
    for (result, is_upload) in uploaded
        .into_iter()
        .map(|r| (r, true))
        .chain(deleted.into_iter().map(|r| (r, false)))
    {
        match result {
            Ok(()) if is_upload => tally.uploaded += 1,
            Ok(()) => tally.deleted += 1,
            Err(ClientError::BrokenPipe) => return Err(ClientError::BrokenPipe),
            Err(e) => {
                tally.failed += 1;
                first_exit.get_or_insert(e.exit_code());
            }
        }
    }
    print_summary(ctx, &tally, false)?;
    Ok(first_exit.unwrap_or(0))
}

impl Tally {
    fn count(&mut self, a: &Action) {
        match a {
            Action::Upload { .. } => self.uploaded += 1,
            Action::Skip { .. } => self.skipped += 1,
            Action::Delete { .. } => self.deleted += 1,
        }
    }
}

/// Every file under `folder` (and its subfolders), by path relative to it.
async fn list_remote(
    client: &Client,
    folder: &str,
) -> Result<BTreeMap<String, Remote>, ClientError> {
    let mut files: Vec<FileRecord> = Vec::new();
    let (mut cursor, mut cursors) = (None, Cursors::default());
    loop {
        let page = client
            .list(Some(folder), true, &[], PAGE, cursor.as_deref())
            .await?
            .record;
        cursor = cursors.next(&page)?;
        let empty = page.files.is_empty();
        files.extend(page.files);
        if cursor.is_none() || empty {
            break;
        }
    }
    // Newest first; ties by id, so the choice is stable.
    files.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    let mut map: BTreeMap<String, Remote> = BTreeMap::new();
    for f in files {
        let Some(rel) = remote_relative(folder, f.folder.as_deref(), &f.name) else {
            continue;
        };
        let entry = map.entry(rel).or_default();
        if entry.newest.is_none() {
            entry.newest = Some(f);
        } else {
            entry.older.push(f);
        }
    }
    Ok(map)
}

/// `name` in `file_folder`, relative to `folder`; `None` when outside it.
/// In NFC, as [`relative`]: a path matches whatever normalization its
/// publisher's file system gave it (macOS writes names in NFD, Linux keeps
/// what it is given, mostly NFC).
fn remote_relative(folder: &str, file_folder: Option<&str>, name: &str) -> Option<String> {
    let (folder, name) = (nfc(folder), nfc(name));
    let file_folder = nfc(file_folder.unwrap_or("").trim_matches('/'));
    if file_folder == folder {
        return Some(name);
    }
    let sub = file_folder.strip_prefix(&folder)?.strip_prefix('/')?;
    Some(format!("{sub}/{name}"))
}

/// `path` relative to `root`, joined with `/`, in NFC; `None` when not below
/// it or not UTF-8.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(nfc(&parts?.join("/")))
}

/// `s` in Unicode normalization form C.
fn nfc(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.nfc().collect()
}

/// Compares the local files with the remote ones: what to upload, skip and
/// (with `delete`: the relative directories whose remote files are kept)
/// delete, and the local files that could not be read.
async fn decide(
    locals: Vec<Local>,
    remote: &BTreeMap<String, Remote>,
    cache: &mut HashCache,
    delete: Option<&[String]>,
) -> (Vec<Action>, Vec<ClientError>) {
    let mut actions = Vec::new();
    let mut errors = Vec::new();
    let mut to_hash: Vec<(Local, Stamp, String)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for local in locals {
        seen.insert(local.rel.clone());
        let newest = remote.get(&local.rel).and_then(|r| r.newest.as_ref());
        let meta = match std::fs::metadata(&local.job.source) {
            Ok(m) => m,
            Err(e) => {
                errors.push(ClientError::io(&local.job.label, e));
                continue;
            }
        };
        let stamp = Stamp::of(&meta);
        let abs = local.job.source.to_string_lossy().into_owned();
        let Some(newest) = newest else {
            actions.push(upload(local, remote));
            continue;
        };
        // A different size is a different content: no need to read it.
        if newest.size != meta.len() {
            actions.push(upload(local, remote));
            continue;
        }
        let cached = stamp.and_then(|s| cache.get(&abs, s));
        match (cached, stamp) {
            (Some(sha), Some(s)) => {
                cache.put(abs, s, sha.clone());
                actions.push(compare(local, &sha, remote));
            }
            (_, s) => to_hash.push((
                local,
                s.unwrap_or(Stamp {
                    size: 0,
                    mtime_ns: 0,
                    ctime_ns: 0,
                    ino: 0,
                }),
                abs,
            )),
        }
    }

    let threads = std::thread::available_parallelism().map_or(4, std::num::NonZero::get);
    let hashed: Vec<_> = futures_util::stream::iter(to_hash)
        .map(|(local, stamp, abs)| async move {
            let path = local.job.source.clone();
            let sha = tokio::task::spawn_blocking(move || sha256_file(&path))
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e)));
            (local, stamp, abs, sha)
        })
        .buffer_unordered(threads * 2)
        .collect()
        .await;
    for (local, stamp, abs, sha) in hashed {
        match sha {
            Ok(sha) => {
                if stamp.mtime_ns != 0 {
                    cache.put(abs, stamp, sha.clone());
                }
                actions.push(compare(local, &sha, remote));
            }
            Err(e) => errors.push(ClientError::io(&local.job.label, e)),
        }
    }

    if let Some(kept) = delete {
        for (rel, r) in remote {
            if seen.contains(rel) || kept.iter().any(|k| below(rel, k)) {
                continue;
            }
            for f in r.newest.iter().chain(&r.older) {
                actions.push(Action::Delete {
                    rel: rel.clone(),
                    id: f.id.clone(),
                });
            }
        }
    }
    actions.sort_by(|a, b| a.rel().cmp(b.rel()));
    (actions, errors)
}

/// Whether the relative path `rel` is in the relative directory `dir` or below.
fn below(rel: &str, dir: &str) -> bool {
    rel.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// Upload or skip, as the local hash and the newest remote one compare.
fn compare(local: Local, sha: &str, remote: &BTreeMap<String, Remote>) -> Action {
    match remote.get(&local.rel).and_then(|r| r.newest.as_ref()) {
        Some(newest) if newest.sha256 == sha => Action::Skip {
            rel: local.rel,
            id: newest.id.clone(),
        },
        _ => upload(local, remote),
    }
}

/// An upload replacing every remote file at its path.
fn upload(local: Local, remote: &BTreeMap<String, Remote>) -> Action {
    let at = remote.get(&local.rel);
    let files: Vec<&FileRecord> = at
        .map(|r| r.newest.iter().chain(&r.older).collect())
        .unwrap_or_default();
    let spelling = at
        .and_then(|r| r.newest.as_ref())
        .map(|f| (f.folder.clone(), f.name.clone()));
    let strays = files
        .iter()
        .filter(|f| spelling.as_ref() != Some(&(f.folder.clone(), f.name.clone())))
        .map(|f| f.id.clone())
        .collect();
    Action::Upload {
        replaces: files.iter().map(|f| f.id.clone()).collect(),
        local,
        spelling,
        strays,
    }
}

impl Action {
    fn rel(&self) -> &str {
        match self {
            Action::Upload { local, .. } => &local.rel,
            Action::Skip { rel, .. } | Action::Delete { rel, .. } => rel,
        }
    }
}

/// One action's line: a JSON record under `--json`, else (dry run only) a
/// human line; a real run's human output is its summary.
fn print_action(
    ctx: &Ctx,
    progress: &Arc<dyn Progress>,
    action: &Action,
    stored: Option<&str>,
    dry_run: bool,
) -> Result<(), ClientError> {
    let (kind, id) = match action {
        Action::Upload { .. } => ("upload", stored),
        Action::Skip { id, .. } => ("skip", Some(id.as_str())),
        Action::Delete { id, .. } => ("delete", Some(id.as_str())),
    };
    let mut result = Ok(());
    progress.suspend(&mut || {
        result = if ctx.out.is_json() {
            let mut record = serde_json::json!({
                "action": kind,
                "path": action.rel(),
                "id": id,
            });
            if let Action::Upload { replaces, .. } = action {
                record["replaces"] = serde_json::json!(replaces);
            }
            if dry_run {
                record["dry_run"] = serde_json::json!(true);
            }
            ctx.out.record(&record)
        } else if dry_run && !matches!(action, Action::Skip { .. }) {
            let suffix = id.map(|i| format!("\t{i}")).unwrap_or_default();
            ctx.out
                .line(&format!("would {kind}\t{}{suffix}", action.rel()))
        } else {
            Ok(())
        };
    });
    result
}

/// The last line: `uploaded N, skipped N, deleted N`, or its JSON form.
fn print_summary(ctx: &Ctx, t: &Tally, dry_run: bool) -> Result<(), ClientError> {
    if ctx.out.is_json() {
        return ctx.out.record(&serde_json::json!({
            "action": "summary",
            "uploaded": t.uploaded,
            "skipped": t.skipped,
            "deleted": t.deleted,
            "failed": t.failed,
            "dry_run": dry_run,
        }));
    }
    let mut line = if dry_run {
        format!(
            "dry run: would upload {}, skip {}, delete {}",
            t.uploaded, t.skipped, t.deleted
        )
    } else {
        format!(
            "uploaded {}, skipped {}, deleted {}",
            t.uploaded, t.skipped, t.deleted
        )
    };
    if t.failed > 0 {
        let _ = write!(line, ", failed {}", t.failed);
    }
    ctx.out.line(&line)
}

/// What the upload and delete tasks share.
struct Runner<'a> {
    client: &'a Client,
    ctx: &'a Ctx,
    progress: &'a Arc<dyn Progress>,
    chunk_size: u64,
    cache: std::sync::Mutex<&'a mut HashCache>,
}

impl Runner<'_> {
    /// Uploads one file, replacing the remote files at its path.
    async fn upload(&self, action: Action) -> Result<(), ClientError> {
        let Action::Upload {
            local,
            spelling,
            strays,
            ..
        } = &action
        else {
            return Ok(());
        };
        let job = &local.job;
        let before = std::fs::metadata(&job.source)
            .ok()
            .and_then(|m| Stamp::of(&m));
        // Its size decides how many bytes are sent: a file that changed size
        // since it was listed would be stored cut (or fail mid-way).
        if let Some(now) = before.filter(|b| b.size != job.size) {
            return Err(self.report(ClientError::io(
                &local.rel,
                std::io::Error::other(format!(
                    "changed during the run ({} bytes, then {}): run sync again",
                    job.size, now.size
                )),
            )));
        }
        let transfer: Arc<dyn Transfer> = self.progress.start(&local.rel, job.size);
        // Replaced in the transaction that stores it: the path never
        // shows two files, nor none.
        let (folder, name) = spelling
            .clone()
            .unwrap_or_else(|| (job.folder.clone(), job.name.clone()));
        let meta = UploadMeta {
            name,
            folder,
            replace: true,
            ..UploadMeta::default()
        };
        let progress = self.progress.clone();
        let label = local.rel.clone();
        let on_retry = move |n: &RetryNotice| progress.note(&n.describe(&label));
        let result = if self.chunk_size > 0 && job.size >= self.chunk_size {
            self.client
                .upload_resumable(
                    &job.source,
                    job.size,
                    &meta,
                    self.chunk_size,
                    transfer.clone(),
                    &on_retry,
                )
                .await
        } else {
            self.client
                .upload(&job.source, job.size, &meta, transfer.clone(), &on_retry)
                .await
        };
        let stored = match result {
            Ok(f) => f.record,
            Err(e) => {
                transfer.failed();
                return Err(self.report(e.context(&local.rel)));
            }
        };
        transfer.done(&format!(
            "uploaded {} ({}) as {}",
            local.rel,
            format::bytes(job.size),
            stored.id
        ));
        // Remember the hash of what was sent, if the file did not change meanwhile.
        let after = std::fs::metadata(&job.source)
            .ok()
            .and_then(|m| Stamp::of(&m));
        if let (Some(b), true) = (before, before == after && stored.size == job.size) {
            if let Ok(mut cache) = self.cache.lock() {
                cache.put(
                    job.source.to_string_lossy().into_owned(),
                    b,
                    stored.sha256.clone(),
                );
            }
        }
        // The server replaced the files at the path spelled as this one
        // as it stored it; those spelled otherwise go now (a 404: gone
        // already).
        for id in strays {
            match self.client.delete(id).await {
                Ok(_) => {}
                Err(e) if e.code() == "not_found" => {}
                Err(e) => return Err(self.report(e.context(&local.rel))),
            }
        }
        print_action(self.ctx, self.progress, &action, Some(&stored.id), false)
    }

    /// Deletes one remote file without a local counterpart.
    async fn delete(&self, action: Action) -> Result<(), ClientError> {
        let Action::Delete { rel, id } = &action else {
            return Ok(());
        };
        match self.client.delete(id).await {
            Ok(_) => {
                self.progress.note(&format!("deleted {rel} ({id})"));
                print_action(self.ctx, self.progress, &action, None, false)
            }
            Err(e) => Err(self.report(e.context(rel))),
        }
    }

    fn report(&self, e: ClientError) -> ClientError {
        if !matches!(e, ClientError::BrokenPipe) {
            self.progress.error(&format!("error: {e}"));
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::walk::refusal;

    #[test]
    fn what_the_server_refuses_is_not_planned() {
        let job = |folder: &str, name: &str| walk::Job {
            source: PathBuf::from("x"),
            label: "x".into(),
            name: name.into(),
            folder: Some(folder.into()),
            size: 0,
        };
        assert_eq!(refusal(&job("site/my docs/ünï+%", "a b.txt")), None);
        assert!(refusal(&job("site/a\u{1}b", "a.txt")).is_some());
        assert!(refusal(&job("site/a\u{202e}b", "a.txt")).is_some());
        assert!(refusal(&job(&format!("site/{}", "d".repeat(256)), "a.txt")).is_some());
        assert!(refusal(&job(&vec!["d".repeat(200); 6].join("/"), "a.txt")).is_some());
        assert!(refusal(&job("site", "a\nb")).is_some());
    }

    #[test]
    fn remote_paths_are_relative_to_the_folder() {
        assert_eq!(
            remote_relative("site", Some("site"), "a.txt"),
            Some("a.txt".into())
        );
        assert_eq!(
            remote_relative("site", Some("site/x/y"), "a.txt"),
            Some("x/y/a.txt".into())
        );
        assert_eq!(remote_relative("site", Some("site2"), "a.txt"), None);
        assert_eq!(remote_relative("site", None, "a.txt"), None);
    }

    #[test]
    fn paths_compare_in_nfc_whatever_the_publisher_wrote() {
        let (composed, decomposed) = ("caf\u{e9}", "cafe\u{301}");
        let want = Some(format!("{composed}/menu.txt"));
        assert_eq!(
            remote_relative("m", Some(&format!("m/{decomposed}")), "menu.txt"),
            want
        );
        assert_eq!(
            remote_relative("m", Some(&format!("m/{composed}")), "menu.txt"),
            want
        );
        assert_eq!(
            remote_relative(decomposed, Some(composed), decomposed),
            Some(composed.to_string())
        );
        let root = Path::new("/r");
        assert_eq!(
            relative(root, &root.join(decomposed).join("menu.txt")),
            want
        );
    }

    #[test]
    fn local_paths_are_relative_to_the_root() {
        let root = Path::new("/r/dist");
        assert_eq!(
            relative(root, Path::new("/r/dist/a/b.txt")),
            Some("a/b.txt".into())
        );
        assert_eq!(relative(root, Path::new("/elsewhere")), None);
    }
}
