//! `filestore list`: files newest first, a page or all of them (`--all`
//! follows the cursors), as a table or JSON Lines; with `--folder F` (not
//! recursive), F's subfolders first, as `aws s3 ls` shows prefixes.

use super::context::{Ctx, NetArgs};
use super::format;
use super::output::stderr_line;
use crate::api::FileRecord;
use crate::client::ClientError;
use crate::client::Cursors;

/// Largest page the API serves.
const MAX_PAGE: u32 = 100;

/// Largest page of folders the API serves (docs/api.md, "List folders").
const MAX_FOLDER_PAGE: u32 = 1000;

/// List files, newest first
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct ListArgs {
    /// Only files in this folder (exact match; with -r, its subfolders too).
    /// Without -r, its subfolders holding files come first, every one of
    /// them ("PRE sub/" lines; {"folder": "F/sub"} with --json); "" is the
    /// root
    #[arg(long, value_name = "FOLDER")]
    pub folder: Option<String>,

    /// With --folder: the files of its subfolders too (releases/v1.2 under releases)
    #[arg(short, long, requires = "folder")]
    pub recursive: bool,

    /// Only files whose metadata has KEY=VALUE (exact match); repeatable, all must match
    #[arg(long = "metadata", value_name = "KEY=VALUE", value_parser = format::metadata_pair)]
    pub metadata: Vec<(String, String)>,

    /// Show at most this many files [default: 50; with --json, every file, so
    /// that a script never reads a list cut short]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: Option<u32>,

    /// Show every file, following the cursors (ignores --limit)
    #[arg(long)]
    pub all: bool,

    /// Start after this cursor (from a previous listing)
    #[arg(long, value_name = "CURSOR")]
    pub cursor: Option<String>,

    #[command(flatten)]
    pub net: NetArgs,
}

/// Files shown without --limit (and without --json).
const DEFAULT_LIMIT: u32 = 50;

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: ListArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let client = ctx.client(&args.net)?;
    // JSON Lines without --limit are every file: a script piping them on
    // never gets a silently cut list.
    let all = args.all || (ctx.out.is_json() && args.limit.is_none());
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    let now = chrono::Utc::now();
    let mut cursor = args.cursor.clone();
    let mut cursors = Cursors::default();
    // Subfolders head the first page of a folder's own files only: a
    // metadata filter is not theirs, and --cursor continues a listing.
    let folders = match args.folder.as_deref() {
        Some(f) if !args.recursive && args.metadata.is_empty() && cursor.is_none() => {
            show_folders(&client, f, ctx).await?
        }
        _ => 0,
    };
    let mut shown: u64 = 0;
    // Width of the ID column, from the first page (ids have one length).
    let mut id_width: Option<usize> = None;
    loop {
        let page = if all {
            MAX_PAGE
        } else {
            u32::try_from((u64::from(limit) - shown).min(u64::from(MAX_PAGE))).unwrap_or(MAX_PAGE)
        };
        let fetched = client
            .list(
                args.folder.as_deref(),
                args.recursive,
                &args.metadata,
                page,
                cursor.as_deref(),
            )
            .await?;
        let list = &fetched.record;
        for (i, file) in list.files.iter().enumerate() {
            if ctx.out.is_json() {
                let raw = fetched.raw.get("files").and_then(|f| f.get(i));
                ctx.out.record(raw.unwrap_or(&serde_json::Value::Null))?;
            } else {
                let width = if let Some(w) = id_width {
                    w
                } else {
                    let w = list.files.iter().map(|f| f.id.len()).max().unwrap_or(2);
                    let head = ["ID", "SIZE", "AGE", "EXPIRES", "ACCESS", "NAME"];
                    ctx.out.line(&row(w, &head))?;
                    *id_width.insert(w)
                };
                ctx.out.line(&human_row(file, width, now))?;
            }
        }
        shown += list.files.len() as u64;
        cursor = cursors.next(list)?;
        if cursor.is_none() {
            break;
        }
        if !all && shown >= u64::from(limit) {
            if !ctx.globals.quiet {
                stderr_line(&format!(
                    "more files: use --all, or --cursor {}",
                    cursor.as_deref().unwrap_or_default()
                ));
            }
            break;
        }
        if list.files.is_empty() {
            break;
        }
    }
    if shown == 0 && folders == 0 && !ctx.out.is_json() && !ctx.globals.quiet {
        stderr_line("no files");
    }
    Ok(0)
}

/// Prints every immediate subfolder of `parent` that holds a file, by
/// name, following the cursors: `PRE name/`, or `{"folder": path}` (the
/// path as the API gives it). Gives how many.
async fn show_folders(
    client: &crate::client::Client,
    parent: &str,
    ctx: &Ctx,
) -> Result<u64, ClientError> {
    let mut cursor: Option<String> = None;
    let mut shown: u64 = 0;
    loop {
        let page = client
            .folders(Some(parent), MAX_FOLDER_PAGE, cursor.as_deref())
            .await?
            .record;
        for folder in &page.folders {
            if ctx.out.is_json() {
                ctx.out
                    .record(&serde_json::json!({ "folder": folder.path }))?;
            } else {
                ctx.out.line(&format!("PRE {}/", folder.name))?;
            }
        }
        shown += page.folders.len() as u64;
        match page.cursor {
            Some(c) if page.has_more && !page.folders.is_empty() => cursor = Some(c),
            _ => return Ok(shown),
        }
    }
}

/// One table line: ID, SIZE, AGE, EXPIRES, ACCESS, NAME.
fn row<S: AsRef<str>>(id_width: usize, cells: &[S; 6]) -> String {
    let [id, size, age, expires, access, name] = cells.each_ref().map(AsRef::as_ref);
    format!("{id:<id_width$}  {size:>10}  {age:>4}  {expires:>7}  {access:<7}  {name}")
}

fn human_row(f: &FileRecord, id_width: usize, now: chrono::DateTime<chrono::Utc>) -> String {
    let access = if f.private { "private" } else { "public" };
    row(
        id_width,
        &[
            f.id.clone(),
            format::bytes(f.size),
            format::age(&f.created_at, now),
            format::until(f.expires_at.as_deref(), now),
            access.to_string(),
            format::path(f.folder.as_deref(), &f.name),
        ],
    )
}
