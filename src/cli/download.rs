//! `filestore download ID [-o FILE|DIR|-]`: streams the bytes from the file's
//! URL (a signed URL for a private file) into `.filestore-<id>.part` beside
//! the target, checks the length and the SHA-256, then renames it into
//! place. A download cut off keeps that file, and the next run resumes from
//! its end (hashing what it holds first). Bytes whose SHA-256 is not the
//! file's are an error (`checksum_mismatch`, exit 6) and leave no file, not
//! even the partial one. To standard output the check comes at the end, when
//! the bytes are already written: the exit status is then the only sign.
//!
//! `filestore download --folder F -o DIR`: every file of F and below into
//! DIR, the tree recreated (`sub/dir/name`, named as the folder's zip names
//! it, `domain::paths::Unique`: safe on every OS, a repeated path numbered
//! ` (2)`, docs/api.md, "Folder zip"), each
//! file downloaded as above, so a rerun resumes each one cut off and skips
//! each one already there (same size and SHA-256).

use super::context::{Ctx, NetArgs};
use super::format;
use super::progress::Progress;
use crate::api::FileRecord;
use crate::client::download::{hash_prefix, Downloaded, Sink};
use crate::client::Cursors;
use crate::client::{Client, ClientError, RetryNotice};
use crate::domain::paths::{self, Unique};
use crate::domain::validate;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Validity asked for the signed URL of a private file's download.
const SIGNED_DOWNLOAD_SECS: u64 = 3600;

/// Download a file's content
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct DownloadArgs {
    /// File id (f_…) or path (folder/name; a leading / forces a path): a path means its
    /// newest file
    #[arg(
        value_name = "FILE",
        required_unless_present = "folder",
        conflicts_with = "folder"
    )]
    pub id: Option<String>,

    /// Download every file of this folder and below into -o DIR, the tree
    /// recreated; a rerun resumes what was cut off and skips what is complete
    #[arg(long, value_name = "FOLDER", requires = "output")]
    pub folder: Option<String>,

    /// Where to write: a file (replaced), a directory (the file's name in it,
    /// never replaced without --force), or "-" for standard output [default:
    /// the file's name in the current directory]; with --folder, the
    /// directory to recreate the tree in
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Replace an existing file of the same name (in the current directory
    /// or -o DIR; with --folder, a file in the tree whose bytes differ)
    #[arg(short, long)]
    pub force: bool,

    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: DownloadArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    if let Some(folder) = &args.folder {
        return download_folder(&args, folder, ctx).await;
    }
    let id = args
        .id
        .as_deref()
        .ok_or_else(|| ClientError::usage("a file id or path, or --folder, is required"))?;
    if let Some(out) = args.output.as_deref().filter(|p| *p != Path::new("-")) {
        target_dir_exists(out)?;
    }
    let client = ctx.client(&args.net)?;
    let fetched = super::target::record(&client, id).await?;
    let file = &fetched.record;
    let url = file_url(&client, file).await?;
    let progress = ctx.progress();
    let on_retry = |n: &RetryNotice| progress.note(&n.describe(&file.id));

    if args.output.as_deref() == Some(Path::new("-")) {
        let transfer = progress.start(&file.name, file.size);
        let mut sink = Sink::Stdout(tokio::io::stdout());
        let got = client
            .download(
                &url,
                &mut sink,
                (0, file.size),
                Sha256::new(),
                transfer.as_ref(),
                &on_retry,
            )
            .await?;
        check_length(got.size, file.size)?;
        got.verify(&file.sha256)?;
        transfer.done(&format!(
            "downloaded {} ({})",
            file.name,
            format::bytes(got.size)
        ));
        return Ok(0);
    }

    let dest = destination(args.output.as_deref(), &file.name, args.force)?;
    fetch(&client, file, &url, &dest, progress.as_ref()).await?;
    if ctx.out.is_json() {
        ctx.out.record(&fetched.raw)?;
    }
    Ok(0)
}

/// The URL of a file's bytes: its public URL, or a signed one.
async fn file_url(client: &Client, file: &FileRecord) -> Result<String, ClientError> {
    Ok(match &file.url {
        Some(u) => u.clone(),
        None => {
            client
                .sign(&file.id, SIGNED_DOWNLOAD_SECS, None)
                .await?
                .record
                .url
        }
    })
}

/// Downloads `file` from `url` to `dest` through its partial file beside
/// it (resumed if there), checked, then renamed into place; gives its size.
async fn fetch(
    client: &Client,
    file: &FileRecord,
    url: &str,
    dest: &Path,
    progress: &dyn Progress,
) -> Result<u64, ClientError> {
    let on_retry = |n: &RetryNotice| progress.note(&n.describe(&file.id));
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // A partial file named after the file's id: a download cut off (Ctrl-C,
    // a network failure past the retries) keeps what it received there, and
    // the next run resumes from its end (an id's bytes never change).
    let part = dir.join(part_name(&file.id)?);
    let mut handle = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&part)
        .map_err(|e| ClientError::io(format!("opening {}", part.display()), e))?;
    // One download of a file into one directory at a time: two would write
    // the same partial file. The lock goes with the file handle.
    rustix::fs::flock(
        &handle,
        rustix::fs::FlockOperation::NonBlockingLockExclusive,
    )
    .map_err(|_| {
        ClientError::Io(format!(
            "another download of {} is writing {}",
            file.id,
            part.display()
        ))
    })?;
    let held = handle
        .metadata()
        .map_err(|e| ClientError::io(format!("reading {}", part.display()), e))?
        .len();
    // Longer than the file: not ours to trust; start over.
    let start = if held > file.size { 0 } else { held };
    handle
        .set_len(start)
        .and_then(|()| std::io::Seek::seek(&mut handle, std::io::SeekFrom::Start(start)))
        .map_err(|e| ClientError::io(format!("preparing {}", part.display()), e))?;
    let mut held_file = tokio::fs::File::from_std(handle);
    let hasher = hash_prefix(&mut held_file, start)
        .await
        .map_err(|e| ClientError::io(format!("reading {}", part.display()), e))?;
    let mut sink = Sink::File(held_file);
    let transfer = progress.start(&file.name, file.size);
    if start > 0 {
        progress.note(&format!(
            "resuming {} at {} of {}",
            file.id,
            format::bytes(start),
            format::bytes(file.size)
        ));
    }
    // Everything already there (an earlier run stopped before the rename):
    // nothing to ask for (a range from the end would be a 416).
    let received = if start == file.size {
        transfer.resumed(start);
        Ok(Downloaded::already(start, hasher))
    } else {
        client
            .download(
                url,
                &mut sink,
                (start, file.size),
                hasher,
                transfer.as_ref(),
                &on_retry,
            )
            .await
    }
    .and_then(|got| check_length(got.size, file.size).map(|()| got));
    let n = match received {
        Ok(got) => {
            if let Err(e) = got.verify(&file.sha256) {
                // Which bytes are wrong is unknown: none are kept.
                drop(sink);
                let _ = std::fs::remove_file(&part);
                return Err(e);
            }
            got.size
        }
        // Bytes the record does not account for: none are kept.
        Err(e @ ClientError::Protocol(_)) => {
            drop(sink);
            let _ = std::fs::remove_file(&part);
            return Err(e);
        }
        Err(e) => {
            drop(sink);
            keep_or_remove(&part, progress);
            return Err(e);
        }
    };
    if let Sink::File(f) = &sink {
        f.sync_all()
            .await
            .map_err(|e| ClientError::io("writing the download", e))?;
    }
    drop(sink);
    std::fs::rename(&part, dest)
        .map_err(|e| ClientError::io(format!("renaming into {}", dest.display()), e))?;
    transfer.done(&format!(
        "downloaded {} ({}) to {}",
        file.id,
        format::bytes(n),
        dest.display()
    ));
    Ok(n)
}

/// Files listed per request.
const LIST_PAGE: u32 = 100;

/// `--folder F -o DIR`: lists F and below, then downloads each file to its
/// path under DIR; a failure does not stop the others (the exit status is
/// the first one's).
async fn download_folder(args: &DownloadArgs, folder: &str, ctx: &Ctx) -> Result<u8, ClientError> {
    let top = validate::folder(folder)
        .map_err(ClientError::usage)?
        .ok_or_else(|| ClientError::usage("--folder needs a folder (the root is not one)"))?;
    let out_dir = args
        .output
        .as_deref()
        .filter(|p| *p != Path::new("-"))
        .ok_or_else(|| ClientError::usage("--folder needs -o DIR (a directory)"))?;
    if out_dir.exists() && !out_dir.is_dir() {
        return Err(ClientError::usage(format!(
            "{} is not a directory",
            out_dir.display()
        )));
    }
    let client = ctx.client(&args.net)?;
    // The whole listing first (newest first, as the server's zip takes it):
    // the paths, and the progress's total.
    let mut files = Vec::new();
    let (mut cursor, mut cursors) = (None, Cursors::default());
    loop {
        let page = client
            .list(Some(&top), true, &[], LIST_PAGE, cursor.as_deref())
            .await?
            .record;
        cursor = cursors.next(&page)?;
        files.extend(page.files);
        if cursor.is_none() {
            break;
        }
    }
    // Folders exist through their files: none listed, no such folder.
    if files.is_empty() {
        return Err(super::delete::no_such_folder(&top));
    }
    let mut names = Unique::new();
    let mut planned = Vec::with_capacity(files.len());
    for file in files {
        let Some(rel) = paths::relative(&top, file.folder.as_deref(), &file.name) else {
            return Err(ClientError::Protocol(format!(
                "the listing of {top} holds {} of folder {:?}",
                file.id, file.folder
            )));
        };
        let rel = names.claim(&rel);
        planned.push((safe_relative(&rel)?, rel, file));
    }
    let progress = ctx.progress();
    progress.plan(
        planned.len() as u64,
        planned.iter().map(|(_, _, f)| f.size).sum(),
    );
    let (mut fetched, mut complete, mut status) = (0u64, 0u64, 0u8);
    for (path, rel, file) in &planned {
        let dest = out_dir.join(path);
        match fetch_into_tree(&client, file, &dest, args.force, progress.as_ref()).await {
            Ok(downloaded) => {
                if downloaded {
                    fetched += 1;
                } else {
                    complete += 1;
                }
                if ctx.out.is_json() {
                    let mut line = serde_json::to_value(file)
                        .map_err(|e| ClientError::Protocol(e.to_string()))?;
                    line["path"] = rel.as_str().into();
                    line["downloaded"] = downloaded.into();
                    let mut printed = Ok(());
                    progress.suspend(&mut || printed = ctx.out.record(&line));
                    printed?;
                }
            }
            Err(e) => {
                let e = e.context(rel);
                progress.error(&format!("error: {e}"));
                if status == 0 {
                    status = e.exit_code();
                }
            }
        }
    }
    progress.finish();
    if !ctx.out.is_json() {
        ctx.out.line(&format!(
            "downloaded {fetched} of {} files to {} ({complete} already complete)",
            planned.len(),
            out_dir.display()
        ))?;
    }
    Ok(status)
}

/// One file of a folder download: nothing to do when `dest` already holds
/// its bytes (same size and SHA-256: false), else downloaded (true). A
/// different file at `dest` is replaced only with `force`.
async fn fetch_into_tree(
    client: &Client,
    file: &FileRecord,
    dest: &Path,
    force: bool,
    progress: &dyn Progress,
) -> Result<bool, ClientError> {
    if let Ok(meta) = std::fs::metadata(dest) {
        if !meta.is_file() {
            return Err(ClientError::usage(format!(
                "{} exists and is not a file",
                dest.display()
            )));
        }
        if meta.len() == file.size && same_sha256(dest, file).await? {
            let transfer = progress.start(&file.name, file.size);
            transfer.resumed(file.size);
            transfer.done(&format!("{} is complete in {}", file.id, dest.display()));
            return Ok(false);
        }
        if !force {
            return Err(ClientError::usage(format!(
                "{} exists with other bytes: use --force to replace it",
                dest.display()
            )));
        }
    }
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| ClientError::io(format!("creating {}", dir.display()), e))?;
    }
    let url = file_url(client, file).await?;
    fetch(client, file, &url, dest, progress).await?;
    Ok(true)
}

/// Whether the file at `path` has `file`'s SHA-256.
async fn same_sha256(path: &Path, file: &FileRecord) -> Result<bool, ClientError> {
    let mut handle = tokio::fs::File::open(path)
        .await
        .map_err(|e| ClientError::io(format!("reading {}", path.display()), e))?;
    let hasher = hash_prefix(&mut handle, file.size)
        .await
        .map_err(|e| ClientError::io(format!("reading {}", path.display()), e))?;
    Ok(hex::encode(hasher.finalize()).eq_ignore_ascii_case(&file.sha256))
}

/// A relative path from the server as a local path: plain segments only
/// (never absolute, never `..`).
fn safe_relative(rel: &str) -> Result<PathBuf, ClientError> {
    let path = PathBuf::from(rel);
    let plain = !rel.is_empty()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain || rel.contains('\\') {
        return Err(ClientError::Protocol(format!("unusable file path {rel:?}")));
    }
    Ok(path)
}

/// The path to write: `-o FILE` as given, else the file's name in `-o DIR`
/// or the current directory, never replacing a file there without `--force`.
fn destination(output: Option<&Path>, name: &str, force: bool) -> Result<PathBuf, ClientError> {
    // The name comes from the server: keep only a plain final component,
    // made safe as a folder download makes each (no control characters).
    let safe = Path::new(name)
        .file_name()
        .filter(|n| *n != "." && *n != "..")
        .and_then(|n| n.to_str())
        .map(|n| PathBuf::from(paths::safe_segment(n).into_owned()))
        .ok_or_else(|| ClientError::Protocol(format!("unusable file name {name:?}")))?;
    let target = match output {
        Some(p) if p.is_dir() => p.join(safe),
        Some(p) => return Ok(p.to_path_buf()),
        None => safe,
    };
    if target.exists() && !force {
        return Err(ClientError::usage(format!(
            "{} exists: use --force to replace it, or -o FILE",
            target.display()
        )));
    }
    Ok(target)
}

/// The directory `-o PATH` writes into (PATH itself when it ends with a
/// separator) must be there, before anything is asked of the server: the
/// partial file goes there too.
fn target_dir_exists(output: &Path) -> Result<(), ClientError> {
    if output.is_dir() {
        return Ok(());
    }
    let names_a_dir = output
        .as_os_str()
        .to_string_lossy()
        .ends_with(std::path::is_separator);
    let dir = if names_a_dir {
        Some(output)
    } else {
        output.parent().filter(|d| !d.as_os_str().is_empty())
    };
    match dir {
        Some(d) if d.exists() && !d.is_dir() => Err(ClientError::usage(format!(
            "cannot write {}: {} is not a directory",
            output.display(),
            d.display()
        ))),
        Some(d) if !d.exists() => Err(ClientError::usage(format!(
            "cannot write {}: directory {} does not exist",
            output.display(),
            d.display()
        ))),
        _ => Ok(()),
    }
}

/// The partial file of file `id`: `.filestore-<id>.part`. The id comes from
/// the server, so it must be a plain name.
fn part_name(id: &str) -> Result<String, ClientError> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(ClientError::Protocol(format!("unusable file id {id:?}")));
    }
    Ok(format!(".filestore-{id}.part"))
}

/// After a failed download: a partial file with bytes in it stays (the next
/// run resumes it), an empty one goes.
fn keep_or_remove(part: &Path, progress: &dyn super::progress::Progress) {
    match std::fs::metadata(part).map(|m| m.len()) {
        Ok(0) => {
            let _ = std::fs::remove_file(part);
        }
        Ok(n) => progress.note(&format!(
            "kept {} in {}: the same command resumes from there",
            format::bytes(n),
            part.display()
        )),
        Err(_) => {}
    }
}

fn check_length(got: u64, want: u64) -> Result<(), ClientError> {
    if got == want {
        return Ok(());
    }
    Err(ClientError::Protocol(format!(
        "received {got} bytes but the file has {want}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            destination(Some(dir.path()), "a.txt", false).unwrap(),
            dir.path().join("a.txt")
        );
        let f = dir.path().join("x.bin");
        assert_eq!(destination(Some(&f), "a.txt", false).unwrap(), f);
        // A name from the server is made safe: no control character
        // reaches the file system.
        assert_eq!(
            destination(Some(dir.path()), "\u{1b}]0;x\u{7}.txt", false).unwrap(),
            dir.path().join("_]0;x_.txt")
        );
        assert_eq!(
            destination(None, "../../a.txt", false).unwrap(),
            PathBuf::from("a.txt")
        );
        assert!(destination(None, "..", false).is_err());

        // DIR/name exists: refused unless --force; -o FILE is replaced.
        std::fs::write(dir.path().join("a.txt"), "old").unwrap();
        let err = destination(Some(dir.path()), "a.txt", false).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.message().contains("--force"), "{err}");
        assert_eq!(
            destination(Some(dir.path()), "a.txt", true).unwrap(),
            dir.path().join("a.txt")
        );
        let existing = dir.path().join("a.txt");
        assert_eq!(destination(Some(&existing), "b", false).unwrap(), existing);
    }

    #[test]
    fn a_target_in_a_missing_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        assert!(target_dir_exists(dir.path()).is_ok());
        assert!(target_dir_exists(&dir.path().join("f")).is_ok());
        assert!(target_dir_exists(Path::new("f")).is_ok());
        let missing = dir.path().join("missing/dir");
        let err = target_dir_exists(&missing.join("f")).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(
            err.message()
                .ends_with(&format!("directory {} does not exist", missing.display())),
            "{err}"
        );
        assert!(!err.message().contains(".part"), "{err}");
        let slash = format!("{}/", missing.display());
        assert!(target_dir_exists(Path::new(&slash))
            .unwrap_err()
            .message()
            .contains("does not exist"));
        std::fs::write(dir.path().join("file"), "x").unwrap();
        assert!(target_dir_exists(&dir.path().join("file/f"))
            .unwrap_err()
            .message()
            .contains("is not a directory"));
    }
}
