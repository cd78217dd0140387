//! `filestore get FILE`: a file's record (FILE: an id or a path).

use super::context::{Ctx, NetArgs};
use super::format;
use crate::api::FileRecord;
use crate::client::ClientError;

/// Show a file's record
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct GetArgs {
    #[arg(value_name = "FILE", help = super::target::FILE_HELP)]
    pub id: String,

    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: GetArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let client = ctx.client(&args.net)?;
    let fetched = super::target::record(&client, &args.id).await?;
    if ctx.out.is_json() {
        ctx.out.record(&fetched.raw)?;
    } else {
        for line in describe(&fetched.record, chrono::Utc::now()) {
            ctx.out.line(&line)?;
        }
    }
    Ok(0)
}

/// The record as `key  value` lines.
pub(crate) fn describe(f: &FileRecord, now: chrono::DateTime<chrono::Utc>) -> Vec<String> {
    let expires = match &f.expires_at {
        Some(t) => format!("{t} ({})", format::until(Some(t), now)),
        None => "never".to_string(),
    };
    let fields = [
        ("id", f.id.clone()),
        ("name", f.name.clone()),
        ("folder", f.folder.clone().unwrap_or_else(|| "-".into())),
        (
            "size",
            format!("{} ({} bytes)", format::bytes(f.size), f.size),
        ),
        ("type", f.content_type.clone()),
        ("private", if f.private { "yes" } else { "no" }.into()),
        (
            "url",
            f.url
                .clone()
                .unwrap_or_else(|| "- (private: use `filestore sign`)".into()),
        ),
        (
            "created",
            format!("{} ({} ago)", f.created_at, format::age(&f.created_at, now)),
        ),
        ("expires", expires),
        ("sha256", f.sha256.clone()),
    ];
    fields.iter().map(|(k, v)| format!("{k:<8} {v}")).collect()
}
