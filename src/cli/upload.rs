//! `filestore upload PATH...`: files, directories (`-r`) and stdin (`-`),
//! several at a time, each streamed from disk, each printed as it is stored.

use super::context::{Ctx, NetArgs};
use super::format;
use super::progress::{Progress, Transfer};
use super::walk::{self, Job};
use crate::api::FileRecord;
use crate::client::upload::UploadMeta;
use crate::client::{Client, ClientError, Fetched, RetryNotice};
use futures_util::StreamExt;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Upload files, directories (-r) or standard input (-)
// Each bool is one command-line switch, independent of the others (but
// --replace and --no-clobber, which clap keeps apart).
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct UploadArgs {
    /// Files or directories to upload; "-" reads standard input
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,

    /// Upload the contents of directories, keeping their relative paths as folders
    #[arg(short, long)]
    pub recursive: bool,

    /// Folder to store the files in (directory contents go below it)
    #[arg(long, value_name = "FOLDER")]
    pub folder: Option<String>,

    /// Name to store the file under (one input only; default for stdin: "stdin")
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Make the files private (URL null; download through signed URLs)
    #[arg(long)]
    pub private: bool,

    /// Delete the files automatically after this long: 90, 90s, 1m30s, 1.5h, 7d... (at most 365d)
    #[arg(long, value_name = "DURATION")]
    pub expires: Option<String>,

    /// Content type of the files (default: guessed by the server from the name)
    #[arg(long, value_name = "MIME")]
    pub content_type: Option<String>,

    /// Metadata of the files: KEY=VALUE, repeatable (keys a-z 0-9 _ -, at most 16
    /// keys and 4 KiB in all); a key given twice keeps its last value
    #[arg(long = "metadata", value_name = "KEY=VALUE", value_parser = format::metadata_pair)]
    pub metadata: Vec<(String, String)>,

    /// Files uploaded at the same time
    #[arg(short = 'j', long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub concurrency: u16,

    /// Stop starting new uploads after the first failure
    #[arg(long)]
    pub fail_fast: bool,

    /// Replace the files already at each path (folder/name) as the new one is stored
    #[arg(long, conflicts_with = "no_clobber")]
    pub replace: bool,

    /// Refuse a file whose path (folder/name) already holds one (exit 5, error conflict)
    #[arg(long)]
    pub no_clobber: bool,

    /// Check each file's name and folder as the server would and say what would be
    /// uploaded; send nothing (exit 1 when something would be refused)
    #[arg(long)]
    pub dry_run: bool,

    /// Files of at least this size go through resumable (tus) uploads, sent in
    /// pieces of this size; an interrupted upload resumes on the next run of the
    /// same command for the same file (same path, size and modification time).
    /// Bytes, or 64MiB, 500MB, 1GiB...; 0 sends every file in one request
    #[arg(long, value_name = "SIZE", default_value = "64MiB",
          value_parser = crate::config::parse_bytes)]
    pub chunk_size: u64,

    #[command(flatten)]
    pub net: NetArgs,
}

/// What happened to one job.
enum Outcome {
    Stored,
    Failed(ClientError),
    Skipped,
}

/// Runs the command; gives the exit status (failures already reported).
pub(crate) async fn run(mut args: UploadArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let stdin_count = args.paths.iter().filter(|p| p.as_os_str() == "-").count();
    validate(&args, stdin_count, ctx)?;
    let metadata = format::metadata(&args.metadata).map_err(ClientError::Usage)?;
    // Checked with the server's own rule; bare seconds are sent as `Ns`.
    args.expires = args
        .expires
        .as_deref()
        .map(format::upload_expires)
        .transpose()
        .map_err(ClientError::Usage)?;
    let files: Vec<PathBuf> = args
        .paths
        .iter()
        .filter(|p| p.as_os_str() != "-")
        .cloned()
        .collect();
    let walk::Expansion {
        mut jobs,
        errors: problems,
        notes,
        ..
    } = walk::expand(&files, args.recursive, args.folder.as_deref());
    // Standard input is spooled to a temporary file first: memory stays flat,
    // the size is known (Content-Length) and a retry can send it again.
    let _spool = if stdin_count == 1 {
        let (spool, size) = spool_stdin().await?;
        jobs.insert(
            0,
            Job {
                source: spool.path().to_path_buf(),
                label: "<stdin>".into(),
                name: "stdin".into(),
                folder: walk::join_folder(args.folder.as_deref(), &[]),
                size,
            },
        );
        Some(spool)
    } else {
        None
    };
    if let (Some(name), [job]) = (&args.name, jobs.as_mut_slice()) {
        job.name.clone_from(name);
    }
    if args.dry_run {
        return super::upload_check::dry_run(&jobs, &problems, ctx);
    }
    let client = ctx.client(&args.net)?;
    let progress = ctx.progress();
    for note in &notes {
        progress.note(note);
    }

    let mut first_exit = None;
    for p in &problems {
        progress.error(&format!("error: {p}"));
        first_exit.get_or_insert(p.exit_code());
    }
    let stop = AtomicBool::new(args.fail_fast && !problems.is_empty());
    let total_bytes = jobs.iter().map(|j| j.size).sum();
    let count = jobs.len();
    progress.plan(count as u64, total_bytes);

    let started = Instant::now();
    let template = UploadMeta {
        private: args.private,
        expires: args.expires.clone(),
        content_type: args.content_type.clone(),
        metadata,
        replace: args.replace,
        if_absent: args.no_clobber,
        ..Default::default()
    };
    let shared = Shared {
        client: &client,
        ctx,
        progress: &progress,
        stop: &stop,
        fail_fast: args.fail_fast,
        template: &template,
        chunk_size: args.chunk_size,
    };
    let outcomes: Vec<Outcome> = futures_util::stream::iter(jobs)
        .map(|job| shared.one(job))
        .buffer_unordered(usize::from(args.concurrency))
        .collect()
        .await;

    let mut tally = Tally {
        files: count + problems.len(),
        failed: problems.len(),
        ..Tally::default()
    };
    for o in outcomes {
        match o {
            Outcome::Stored => tally.stored += 1,
            Outcome::Skipped => tally.skipped += 1,
            Outcome::Failed(ClientError::BrokenPipe) => return Err(ClientError::BrokenPipe),
            Outcome::Failed(e) => {
                tally.failed += 1;
                first_exit.get_or_insert(e.exit_code());
            }
        }
    }
    progress.finish();
    // One file's own line says it all; a summary is for batches.
    if tally.files > 1 {
        progress.note(&tally.summary(total_bytes, started.elapsed()));
    }
    Ok(first_exit.unwrap_or(0))
}

/// Counts of a batch, for its summary line.
#[derive(Debug, Default)]
struct Tally {
    files: usize,
    stored: usize,
    failed: usize,
    skipped: usize,
}

impl Tally {
    /// `uploaded 998 of 1000 files (1.02 MB) in 1.1s, 2 failed`.
    fn summary(&self, bytes: u64, took: std::time::Duration) -> String {
        let mut line = format!(
            "uploaded {} of {} files ({}) in {took:.1?}",
            self.stored,
            self.files,
            format::bytes(bytes)
        );
        if self.failed > 0 {
            let _ = write!(line, ", {} failed", self.failed);
        }
        if self.skipped > 0 {
            let _ = write!(line, ", {} not started (--fail-fast)", self.skipped);
        }
        line
    }
}

/// Checks the flags before anything is read or sent.
fn validate(args: &UploadArgs, stdin_count: usize, ctx: &Ctx) -> Result<(), ClientError> {
    if stdin_count > 1 {
        return Err(ClientError::usage(
            "\"-\" (standard input) may be given once",
        ));
    }
    if stdin_count == 1 && ctx.key_from_stdin {
        return Err(ClientError::usage(
            "standard input cannot carry both the API key (--api-key -) and the upload (-)",
        ));
    }
    if args.name.is_some() && (args.paths.len() != 1 || args.recursive) {
        return Err(ClientError::usage(
            "--name needs exactly one file (or \"-\")",
        ));
    }
    if let Some(ct) = &args.content_type {
        if ct.parse::<mime_guess::mime::Mime>().is_err() {
            return Err(ClientError::usage(format!("invalid --content-type {ct:?}")));
        }
    }
    Ok(())
}

/// Copies standard input into a temporary file; gives it and its size.
async fn spool_stdin() -> Result<(tempfile::NamedTempFile, u64), ClientError> {
    let spool = tempfile::NamedTempFile::new()
        .map_err(|e| ClientError::io("creating a temporary file for standard input", e))?;
    let file = spool
        .reopen()
        .map_err(|e| ClientError::io("opening the temporary file", e))?;
    let mut out = tokio::fs::File::from_std(file);
    let size = tokio::io::copy(&mut tokio::io::stdin(), &mut out)
        .await
        .map_err(|e| ClientError::io("reading standard input", e))?;
    Ok((spool, size))
}

/// What every upload task shares.
struct Shared<'a> {
    client: &'a Client,
    ctx: &'a Ctx,
    progress: &'a Arc<dyn Progress>,
    stop: &'a AtomicBool,
    fail_fast: bool,
    template: &'a UploadMeta,
    /// Files this size and larger go through tus (0: none).
    chunk_size: u64,
}

impl Shared<'_> {
    /// Uploads one job, printing its record or its error.
    async fn one(&self, job: Job) -> Outcome {
        if self.stop.load(Ordering::Relaxed) {
            return Outcome::Skipped;
        }
        let transfer: Arc<dyn Transfer> = self.progress.start(&job.label, job.size);
        let meta = UploadMeta {
            name: job.name.clone(),
            folder: job.folder.clone(),
            ..self.template.clone()
        };
        let progress = self.progress.clone();
        let label = job.label.clone();
        let on_retry = move |n: &RetryNotice| progress.note(&n.describe(&label));
        let resumable = self.chunk_size > 0 && job.size >= self.chunk_size;
        let result = if resumable {
            let chunk = self.chunk_size;
            self.client
                .upload_resumable(
                    &job.source,
                    job.size,
                    &meta,
                    chunk,
                    transfer.clone(),
                    &on_retry,
                )
                .await
        } else {
            self.client
                .upload(&job.source, job.size, &meta, transfer.clone(), &on_retry)
                .await
        };
        match result.and_then(|f| self.print(&f).map(|()| f)) {
            Ok(f) => {
                // Without --json, the result line on stdout says it all.
                transfer.done(&if self.ctx.out.is_json() {
                    super::upload_check::done_line(&f.record)
                } else {
                    String::new()
                });
                Outcome::Stored
            }
            Err(ClientError::BrokenPipe) => {
                self.stop.store(true, Ordering::Relaxed);
                Outcome::Failed(ClientError::BrokenPipe)
            }
            Err(e) => {
                transfer.failed();
                let e = e.context(&job.label);
                self.progress.error(&format!("error: {e}"));
                if self.fail_fast {
                    self.stop.store(true, Ordering::Relaxed);
                }
                Outcome::Failed(e)
            }
        }
    }

    /// The result line of a stored file: the record under `--json`, else
    /// one short line (`upload_check::done_line`).
    fn print(&self, f: &Fetched<FileRecord>) -> Result<(), ClientError> {
        let mut result = Ok(());
        self.progress.suspend(&mut || {
            result = if self.ctx.out.is_json() {
                self.ctx.out.record(&f.raw)
            } else {
                self.ctx
                    .out
                    .line(&super::upload_check::done_line(&f.record))
            };
        });
        result
    }
}
