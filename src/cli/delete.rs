//! `filestore delete FILE...`: deletes each file (an id), or every file at
//! a path; a failure does not stop the others, and the exit status reports
//! the first one. `delete --folder F --recursive`: every file in F and below
//! at once, after a question on a terminal (off a terminal: only with
//! `--yes`); a folder that holds no file is not found (exit 4).

use super::context::{Ctx, NetArgs};
use super::output::{self, stderr_line};
use super::target::{self, Target};
use crate::client::{Client, ClientError};

/// Delete files permanently
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct DeleteArgs {
    /// File ids (f_…) or paths (folder/name; a leading / forces a path): a path deletes
    /// every file at it
    #[arg(
        value_name = "FILE",
        required_unless_present = "folder",
        conflicts_with = "folder"
    )]
    pub ids: Vec<String>,

    /// Delete every file in this folder and below (needs --recursive)
    #[arg(long, value_name = "FOLDER")]
    pub folder: Option<String>,

    /// With --folder: its subfolders too (required: a folder goes whole)
    #[arg(short = 'r', long, requires = "folder")]
    pub recursive: bool,

    /// With --folder: do not ask (required off a terminal)
    #[arg(short = 'y', long, requires = "folder")]
    pub yes: bool,

    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: DeleteArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    if let Some(folder) = &args.folder {
        return delete_folder(&args, folder, ctx).await;
    }
    let client = ctx.client(&args.net)?;
    let mut status = 0;
    for id in &args.ids {
        let outcome = match Target::parse(id) {
            Target::Id(id) => client.delete(&id).await.map(|f| (f.raw, None)),
            Target::Path(path) => delete_at(&client, &path, ctx)
                .await
                .map(|n| (serde_json::Value::Null, Some(n))),
        };
        match outcome {
            Ok((_, Some(_))) => {}
            Ok((raw, None)) if ctx.out.is_json() => ctx.out.record(&with_id(id, raw))?,
            Ok(_) => ctx.out.line(&format!("deleted {id}"))?,
            Err(e) if args.ids.len() == 1 => return Err(e),
            Err(e) => {
                let e = e.context(id);
                stderr_line(&format!("error: {e}"));
                if status == 0 {
                    status = e.exit_code();
                }
            }
        }
    }
    Ok(status)
}

/// Deletes every file at `path`, printing each (`--json`) or how many.
async fn delete_at(client: &Client, path: &str, ctx: &Ctx) -> Result<usize, ClientError> {
    let ids = target::delete_all_at(client, path).await?;
    if ctx.out.is_json() {
        for id in &ids {
            ctx.out
                .record(&serde_json::json!({"id": id, "path": path, "success": true}))?;
        }
    } else {
        let files = if ids.len() == 1 { "file" } else { "files" };
        ctx.out
            .line(&format!("deleted {} {files} at {path}", ids.len()))?;
    }
    Ok(ids.len())
}

/// The API's answer to a delete (`{"success": true}`) with the id it is
/// about first: `{"id": "f_…", "success": true}`, so that each JSON line
/// of `delete A B C` says which file it is.
fn with_id(id: &str, raw: serde_json::Value) -> serde_json::Value {
    let mut record = serde_json::Map::new();
    record.insert("id".into(), id.into());
    match raw {
        serde_json::Value::Object(fields) => {
            for (k, v) in fields {
                record.entry(k).or_insert(v);
            }
        }
        other => {
            record.insert("result".into(), other);
        }
    }
    serde_json::Value::Object(record)
}

/// `--folder F --recursive`: asks first on a terminal unless `--yes`.
async fn delete_folder(args: &DeleteArgs, folder: &str, ctx: &Ctx) -> Result<u8, ClientError> {
    use std::io::IsTerminal;
    if !args.recursive {
        return Err(ClientError::usage(
            "deleting a folder deletes its subfolders too: add --recursive",
        ));
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(ClientError::usage(format!(
                "not deleted: off a terminal, deleting the folder {folder} and everything below \
it needs --yes"
            )));
        }
        let answer = output::ask(&format!("delete every file in {folder} and below? [y/N] "));
        if !matches!(answer.as_str(), "y" | "Y" | "yes") {
            return Err(ClientError::usage("not deleted (answer y, or pass --yes)"));
        }
    }
    let client = ctx.client(&args.net)?;
    let fetched = client.delete_folder(folder).await?;
    // Folders exist through their files: none deleted, no such folder.
    if fetched.record.deleted == 0 {
        return Err(no_such_folder(folder));
    }
    if ctx.out.is_json() {
        ctx.out.record(&fetched.raw)?;
    } else {
        ctx.out.line(&format!(
            "deleted {} files in {folder}",
            fetched.record.deleted
        ))?;
    }
    Ok(0)
}

/// The error of a folder that holds no file (exit 4).
pub(crate) fn no_such_folder(folder: &str) -> ClientError {
    ClientError::Api {
        status: 404,
        code: "not_found".into(),
        message: format!("no folder {folder:?}: no file is in it or below it"),
    }
}
