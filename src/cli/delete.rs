//! `filestore delete ID...`: deletes each file; a failure does not stop the
//! others, and the exit status reports the first one. `delete --folder F
//! --recursive`: every file in F and below at once, after a question on a
//! terminal (unless `--yes`).

use super::context::{Ctx, NetArgs};
use super::output::{self, stderr_line};
use crate::client::ClientError;

/// Delete files permanently
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct DeleteArgs {
    /// File ids (f_…)
    #[arg(
        value_name = "ID",
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

    /// With --folder: do not ask on a terminal
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
        match client.delete(id).await {
            Ok(fetched) if ctx.out.is_json() => ctx.out.record(&with_id(id, fetched.raw))?,
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
    if !args.yes && std::io::stdin().is_terminal() {
        let answer = output::ask(&format!("delete every file in {folder} and below? [y/N] "));
        if !matches!(answer.as_str(), "y" | "Y" | "yes") {
            return Err(ClientError::usage("not deleted (answer y, or pass --yes)"));
        }
    }
    let client = ctx.client(&args.net)?;
    let fetched = client.delete_folder(folder).await?;
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
