//! `filestore sign ID [--expires DURATION]`: a signed URL, alone on stdout.

use super::context::{Ctx, NetArgs};
use super::format;
use crate::client::ClientError;

/// Create a signed URL for a file (only the URL is printed)
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct SignArgs {
    /// File id (f_…)
    #[arg(value_name = "ID")]
    pub id: String,

    /// Validity: seconds (3600) or a duration (90s, 15m, 1h, 7d); at most 7 days
    #[arg(long, value_name = "DURATION", default_value = "1h")]
    pub expires: String,

    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: SignArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let seconds = format::sign_seconds(&args.expires).map_err(ClientError::Usage)?;
    let client = ctx.client(&args.net)?;
    let fetched = client.sign(&args.id, seconds).await?;
    if ctx.out.is_json() {
        ctx.out.record(&fetched.raw)?;
    } else {
        ctx.out.line(&fetched.record.url)?;
    }
    Ok(0)
}
