//! `filestore sign FILE [--expires DURATION] [--width W] [--height H] [--fit F]
//! [--format FMT] [--quality Q]`: a signed URL (of an image variant when a
//! size, fit, format or quality is given), alone on stdout.

use super::context::{Ctx, NetArgs};
use super::format;
use crate::api::TransformRequest;
use crate::client::ClientError;
use crate::domain::transform::Transform;

/// Create a signed URL for a file (only the URL is printed)
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct SignArgs {
    #[arg(value_name = "FILE", help = super::target::FILE_HELP)]
    pub id: String,

    /// Validity: 3600, 90s, 1m30s, 1.5h, 7d... (at most 7 days)
    #[arg(long, value_name = "DURATION", default_value = "1h")]
    pub expires: String,

    /// An image variant of this width in pixels (1-4096)
    #[arg(long, value_name = "W")]
    pub width: Option<String>,

    /// An image variant of this height in pixels (1-4096)
    #[arg(long, value_name = "H")]
    pub height: Option<String>,

    /// How the variant fits WxH [default: inside]
    #[arg(long, value_name = "FIT", value_parser = ["cover", "contain", "inside", "fill"])]
    pub fit: Option<String>,

    /// The variant's format (auto: AVIF or WebP as the browser accepts) [default: the source's]
    #[arg(long, value_name = "FMT", value_parser = ["auto", "webp", "avif", "jpeg", "png"])]
    pub format: Option<String>,

    /// The variant's quality (1-100) [default: 80]
    #[arg(long, value_name = "Q")]
    pub quality: Option<String>,

    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: SignArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let seconds = format::sign_seconds(&args.expires).map_err(ClientError::Usage)?;
    let transform = transform(&args).map_err(ClientError::Usage)?;
    let client = ctx.client(&args.net)?;
    let id = super::target::id(&client, &args.id).await?;
    let fetched = client.sign(&id, seconds, transform).await?;
    if ctx.out.is_json() {
        ctx.out.record(&fetched.raw)?;
    } else {
        ctx.out.line(&fetched.record.url)?;
    }
    Ok(0)
}

/// The variant the flags ask for, checked by the server's own rule
/// (`domain::transform`); None when no flag names one.
fn transform(args: &SignArgs) -> Result<Option<TransformRequest>, String> {
    let given = [
        ("w", "--width", &args.width),
        ("h", "--height", &args.height),
        ("fit", "--fit", &args.fit),
        ("format", "--format", &args.format),
        ("q", "--quality", &args.quality),
    ];
    if given.iter().all(|(_, _, v)| v.is_none()) {
        return Ok(None);
    }
    let mut t = Transform::default();
    for (key, flag, value) in given {
        if let Some(v) = value {
            t.set(key, v).map_err(|e| {
                let why = e.0.strip_prefix(key).unwrap_or(&e.0).trim_start();
                format!("{flag} {why}")
            })?;
        }
    }
    Ok(Some(TransformRequest {
        w: t.w,
        h: t.h,
        fit: args.fit.clone(),
        format: args.format.clone(),
        q: args.quality.as_ref().map(|_| t.q),
    }))
}
