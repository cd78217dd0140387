//! `filestore list`: files newest first, a page or all of them (`--all`
//! follows the cursors), as a table or JSON Lines; with `--folder F` (not
//! recursive), F's subfolders first, as `aws s3 ls` shows prefixes.
//! `--folder ""` and `--folder /` are the root: its files and top-level
//! folders. The table fits 80 columns: name and size first, the id last
//! (shortened unless `--long`).

use super::context::{Ctx, NetArgs};
use super::format;
use super::output::stderr_line;
use crate::api::FileRecord;
use crate::client::ClientError;
use crate::client::Cursors;
use crate::domain::validate;

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
    /// them ("PRE sub/" lines; {"folder": "F/sub"} with --json); "" or / is the
    /// root (its own files only)
    #[arg(long, value_name = "FOLDER", value_parser = list_folder)]
    pub folder: Option<String>,

    /// Full ids and names, however wide the table gets
    #[arg(short, long)]
    pub long: bool,

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
    let mut header = false;
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
                if !std::mem::replace(&mut header, true) {
                    let head = ["NAME", "SIZE", "AGE", "EXPIRES", "ACCESS", "ID"];
                    ctx.out.line(&row(&head, args.long))?;
                }
                ctx.out.line(&human_row(file, now, args.long))?;
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
    let parent = (parent != "/").then_some(parent);
    loop {
        let page = client
            .folders(parent, MAX_FOLDER_PAGE, cursor.as_deref())
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

/// The `--folder` value: "" and `/` are the root (sent as `/`, the root's
/// own files); anything else must be a folder a file can have
/// (`domain::validate`, the server's rule), else a usage error.
fn list_folder(raw: &str) -> Result<String, String> {
    if raw.is_empty() || raw.bytes().all(|b| b == b'/') {
        return Ok("/".into());
    }
    validate::folder(raw)?.ok_or_else(|| "not a folder".into())
}

/// The width of a table line, but for `--long`.
const WIDTH: usize = 80;
/// The columns between NAME and ID: two spaces, then SIZE, AGE, EXPIRES,
/// ACCESS each followed by two spaces.
const MIDDLE: usize = 2 + (10 + 2) + (4 + 2) + (7 + 2) + (7 + 2);
/// A shortened id: `f_` and this many characters, then `…`.
const SHORT_ID: usize = 8;
/// The NAME column, so that a line with a shortened id fits [`WIDTH`].
const NAME_WIDTH: usize = WIDTH - MIDDLE - (SHORT_ID + 1);

/// One table line: NAME, SIZE, AGE, EXPIRES, ACCESS, ID.
fn row<S: AsRef<str>>(cells: &[S; 6], long: bool) -> String {
    let [name, size, age, expires, access, id] = cells.each_ref().map(AsRef::as_ref);
    let name = if long {
        name.to_string()
    } else {
        let cut = cut(name, NAME_WIDTH);
        format!("{cut:<NAME_WIDTH$}")
    };
    format!("{name}  {size:>10}  {age:>4}  {expires:>7}  {access:<7}  {id}")
}

/// `text` in at most `width` characters: its start, `…`, and its end (a
/// name's extension stays visible).
fn cut(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_string();
    }
    let tail = width / 3;
    let head = width - 1 - tail;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// An id as the table shows it: whole with `--long`, else its first
/// characters and `…` (`--long` or `--json` give it whole).
fn shown_id(id: &str, long: bool) -> String {
    if long || id.chars().count() <= SHORT_ID + 1 {
        id.to_string()
    } else {
        let start: String = id.chars().take(SHORT_ID).collect();
        format!("{start}…")
    }
}

fn human_row(f: &FileRecord, now: chrono::DateTime<chrono::Utc>, long: bool) -> String {
    let access = if f.private { "private" } else { "public" };
    row(
        &[
            format::path(f.folder.as_deref(), &f.name),
            format::bytes(f.size),
            format::age(&f.created_at, now),
            format::until(f.expires_at.as_deref(), now),
            access.to_string(),
            shown_id(&f.id, long),
        ],
        long,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_fit_80_columns_and_the_root_is_a_folder() {
        let long_name = "a".repeat(100) + ".txt";
        let line = row(
            &[
                &long_name,
                "999.99 MB",
                "52w",
                "in 52w",
                "private",
                &shown_id(&"f_".repeat(12), false),
            ],
            false,
        );
        assert_eq!(line.chars().count(), WIDTH, "{line}");
        assert!(line.contains("…aaaaaaa.txt  "), "{line}");
        assert_eq!(shown_id("f_abcdefghijklmnop", true), "f_abcdefghijklmnop");
        assert_eq!(shown_id("f_abcdefghijklmnop", false), "f_abcdef…");
        assert_eq!(list_folder("").unwrap(), "/");
        assert_eq!(list_folder("//").unwrap(), "/");
        assert_eq!(list_folder("/a/b/").unwrap(), "a/b");
        assert!(list_folder("a//b").is_err());
        assert!(list_folder("a/../b").is_err());
    }
}
