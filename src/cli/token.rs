//! `filestore token create`: an upload token (docs/api.md, "Upload tokens"),
//! a counted, short-lived URL a browser uploads to without a key. Only its
//! URL is printed (`--json`: the record, with the token). `token list`: the
//! active tokens; `token revoke ID`: one refused from now on.

use super::context::{Ctx, NetArgs};
use super::format;
use crate::api::UploadTokenRequest;
use crate::client::ClientError;

/// Upload tokens: URLs a browser uploads to without an API key
#[derive(Debug, clap::Args)]
pub(crate) struct TokenArgs {
    #[command(subcommand)]
    pub command: TokenCommand,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum TokenCommand {
    /// Create an upload token; only its upload URL is printed (--json: the record)
    ///
    /// The URL takes a multipart POST (a `file` part, nothing else needed) from any origin,
    /// without a key, as many times as --max-uploads allows until it expires. Its policy
    /// decides the folder, privacy and lifetime of the files; the server checks the type
    /// of the bytes against --type and their size against --max-size.
    #[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
    Create(CreateArgs),
    /// List the active upload tokens (not revoked, not expired), newest first; never a secret
    #[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
    List(ListArgs),
    /// Revoke an upload token: refused at once (files already uploaded stay)
    #[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
    Revoke(RevokeArgs),
}

/// The flags of `token list`.
#[derive(Debug, clap::Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub net: NetArgs,
}

/// The flags of `token revoke`.
#[derive(Debug, clap::Args)]
pub(crate) struct RevokeArgs {
    /// Token id (ut_…), as `token list` shows it
    #[arg(value_name = "ID")]
    pub id: String,

    #[command(flatten)]
    pub net: NetArgs,
}

/// The flags of `token create`.
#[derive(Debug, clap::Args)]
pub(crate) struct CreateArgs {
    /// Folder of the files uploaded with it
    #[arg(long, value_name = "FOLDER")]
    pub folder: Option<String>,

    /// Largest file: bytes, or 10MB, 5MiB... (default and at most: the plan's)
    #[arg(long, value_name = "SIZE", value_parser = format::positive_size)]
    pub max_size: Option<u64>,

    /// Allowed type of the bytes: image/png or a family like image/* (which leaves out
    /// SVG); repeatable (default: any)
    #[arg(long = "type", value_name = "MIME", value_parser = format::policy_type)]
    pub types: Vec<String>,

    /// How many files it may upload
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_uploads: u32,

    /// How long it may be used: 900, 90s, 1m30s, 1.5h... (at most 1 day)
    #[arg(long, value_name = "DURATION", default_value = "1h")]
    pub expires: String,

    /// Delete its files automatically after this long: 90, 90s, 1m30s, 1.5h, 7d... (at most 365d)
    #[arg(long, value_name = "DURATION")]
    pub file_expires: Option<String>,

    /// Make its files private (URL null; download through signed URLs)
    #[arg(long)]
    pub private: bool,

    /// Metadata of every file it uploads: KEY=VALUE, repeatable; these keys win over
    /// the uploader's
    #[arg(long = "metadata", value_name = "KEY=VALUE", value_parser = format::metadata_pair)]
    pub metadata: Vec<(String, String)>,

    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: TokenArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    match args.command {
        TokenCommand::Create(args) => create(args, ctx).await,
        TokenCommand::List(args) => list(args, ctx).await,
        TokenCommand::Revoke(args) => revoke(args, ctx).await,
    }
}

/// `token list`: one line a token (`--json`: one record a line).
async fn list(args: ListArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let client = ctx.client(&args.net)?;
    let fetched = client.upload_tokens().await?;
    if ctx.out.is_json() {
        let raw = fetched.raw.get("tokens").and_then(|t| t.as_array());
        for token in raw.into_iter().flatten() {
            ctx.out.record(token)?;
        }
        return Ok(0);
    }
    let now = chrono::Utc::now();
    for t in &fetched.record.tokens {
        let folder = t.policy.folder.as_deref().unwrap_or("/");
        ctx.out.line(&format!(
            "{}  {}/{} left  expires {:<9} {folder}",
            t.id,
            t.uploads_left,
            t.max_uploads,
            format::until(Some(&t.expires_at), now),
        ))?;
    }
    if fetched.record.tokens.is_empty() && !ctx.globals.quiet {
        super::output::stderr_line("no active upload tokens");
    }
    Ok(0)
}

/// `token revoke ID`.
async fn revoke(args: RevokeArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let client = ctx.client(&args.net)?;
    let fetched = client.revoke_upload_token(&args.id).await?;
    if ctx.out.is_json() {
        ctx.out.record(&fetched.raw)?;
    } else {
        ctx.out.line(&format!("revoked {}", args.id))?;
    }
    Ok(0)
}

async fn create(args: CreateArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let body = request(&args).map_err(ClientError::Usage)?;
    let client = ctx.client(&args.net)?;
    let fetched = client.create_upload_token(&body).await?;
    if ctx.out.is_json() {
        ctx.out.record(&fetched.raw)?;
    } else {
        let url = fetched.record.url.as_deref().ok_or_else(|| {
            ClientError::Protocol("the server's upload token came without its url".into())
        })?;
        ctx.out.line(url)?;
    }
    Ok(0)
}

/// The request body of the flags, checked before anything is sent.
fn request(args: &CreateArgs) -> Result<UploadTokenRequest, String> {
    let expires_in = format::token_seconds(&args.expires)?;
    let file_expires = args
        .file_expires
        .as_deref()
        .map(|d| format::file_expires(d, "--file-expires"))
        .transpose()?;
    let metadata = format::metadata(&args.metadata)?;
    Ok(UploadTokenRequest {
        folder: args.folder.clone(),
        max_size: args.max_size,
        types: (!args.types.is_empty()).then(|| args.types.clone()),
        max_uploads: Some(args.max_uploads),
        expires_in: Some(expires_in),
        private: args.private.then_some(true),
        file_expires: file_expires.map(serde_json::Value::String),
        metadata: (!metadata.is_empty()).then_some(metadata),
        replace: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, clap::Parser)]
    struct Wrap {
        #[command(flatten)]
        args: CreateArgs,
    }

    fn parse(argv: &[&str]) -> Result<UploadTokenRequest, String> {
        let wrap = Wrap::try_parse_from(std::iter::once("t").chain(argv.iter().copied()))
            .map_err(|e| e.to_string())?;
        request(&wrap.args)
    }

    #[test]
    fn the_flags_make_the_request() {
        let r = parse(&[
            "--folder",
            "avatars",
            "--max-size",
            "5MiB",
            "--type",
            "image/*",
            "--type",
            "application/PDF",
            "--max-uploads",
            "3",
            "--expires",
            "15m",
            "--file-expires",
            "7d",
            "--private",
            "--metadata",
            "user=u1",
            "--metadata",
            "user=u2",
        ])
        .unwrap();
        assert_eq!(r.folder.as_deref(), Some("avatars"));
        assert_eq!(r.max_size, Some(5 * 1024 * 1024));
        assert_eq!(
            r.types,
            Some(vec!["image/*".to_string(), "application/pdf".to_string()])
        );
        assert_eq!((r.max_uploads, r.expires_in), (Some(3), Some(900)));
        assert_eq!(r.file_expires, Some(serde_json::json!("7d")));
        assert_eq!(r.private, Some(true));
        assert_eq!(r.metadata.unwrap()["user"], "u2", "the last value wins");
    }

    #[test]
    fn defaults_leave_the_policy_open() {
        let r = parse(&[]).unwrap();
        assert_eq!((r.max_uploads, r.expires_in), (Some(1), Some(3600)));
        assert_eq!(
            (
                r.folder,
                r.max_size,
                r.types,
                r.private,
                r.file_expires,
                r.metadata
            ),
            (None, None, None, None, None, None)
        );
    }

    #[test]
    fn bad_values_are_refused_before_sending() {
        for bad in [
            &["--expires", "2d"][..],
            &["--expires", "0"],
            &["--max-uploads", "0"],
            &["--max-uploads", "1001"],
            &["--max-size", "0"],
            &["--type", "image"],
            &["--metadata", "User=x"],
            &["--metadata", "novalue"],
            &["--file-expires", "1y"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
