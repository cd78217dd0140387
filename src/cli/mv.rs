//! `filestore mv FILE [--folder F] [--name N]`: renames or moves a file; its
//! id stays.

use super::context::{Ctx, NetArgs};
use super::get::describe;
use crate::api::FileUpdate;
use crate::client::ClientError;

/// Rename or move a file (its id, bytes and checksum stay)
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
#[command(group(clap::ArgGroup::new("change").required(true).multiple(true).args(["folder", "name"])))]
pub(crate) struct MvArgs {
    #[arg(value_name = "FILE", help = super::target::FILE_HELP)]
    pub id: String,

    /// The new folder ("" for the root)
    #[arg(long, value_name = "FOLDER")]
    pub folder: Option<String>,

    /// The new name
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: MvArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let client = ctx.client(&args.net)?;
    let body = FileUpdate {
        name: args.name,
        folder: args.folder.map(serde_json::Value::String),
        private: None,
    };
    let id = super::target::id(&client, &args.id).await?;
    let fetched = client.update_file(&id, &body).await?;
    if ctx.out.is_json() {
        ctx.out.record(&fetched.raw)?;
    } else {
        for line in describe(&fetched.record, chrono::Utc::now()) {
            ctx.out.line(&line)?;
        }
    }
    Ok(0)
}
