//! `filestore delete ID...`: deletes each file; a failure does not stop the
//! others, and the exit status reports the first one.

use super::context::{Ctx, NetArgs};
use super::output::stderr_line;
use crate::client::ClientError;

/// Delete files permanently
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct DeleteArgs {
    /// File ids (f_…)
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<String>,

    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: DeleteArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let client = ctx.client(&args.net)?;
    let mut status = 0;
    for id in &args.ids {
        match client.delete(id).await {
            Ok(fetched) if ctx.out.is_json() => ctx.out.record(&fetched.raw)?,
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
