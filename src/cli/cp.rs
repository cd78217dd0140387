//! `filestore cp FILE [--folder F] [--name N] [--private | --public]`: copies
//! a file to a new one (a new id and url, the same bytes; the server copies
//! them).

use super::context::{Ctx, NetArgs};
use crate::api::FileCopy;
use crate::client::ClientError;

/// Copy a file to a new one (a new id; the same bytes, copied by the server)
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct CpArgs {
    #[arg(value_name = "FILE", help = super::target::FILE_HELP)]
    pub id: String,

    /// The copy's folder ("" for the root; default: the file's)
    #[arg(long, value_name = "FOLDER")]
    pub folder: Option<String>,

    /// The copy's name (default: the file's)
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Make the copy private (default: as the file is)
    #[arg(long, conflicts_with = "public")]
    pub private: bool,

    /// Make the copy public (default: as the file is)
    #[arg(long)]
    pub public: bool,

    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: CpArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let client = ctx.client(&args.net)?;
    let body = FileCopy {
        name: args.name,
        folder: args.folder.map(serde_json::Value::String),
        private: (args.private || args.public).then_some(args.private),
    };
    let id = super::target::id(&client, &args.id).await?;
    let fetched = client.copy_file(&id, &body).await?;
    if ctx.out.is_json() {
        ctx.out.record(&fetched.raw)?;
    } else {
        let copy = &fetched.record;
        let url = copy
            .url
            .as_deref()
            .unwrap_or("private: use `filestore sign`");
        ctx.out
            .line(&format!("copied {id} to {} ({url})", copy.id))?;
    }
    Ok(0)
}
