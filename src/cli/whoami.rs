//! `filestore whoami [--json]`: the server, account, key and plan the
//! client settings reach (`GET /v1/whoami`).

use super::context::{Ctx, NetArgs};
use crate::client::ClientError;
use serde_json::json;

/// Show the server, account, key and plan in use
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct WhoamiArgs {
    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: WhoamiArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let server = ctx.settings.require_server()?.to_string();
    let key = ctx.settings.require_key()?.to_string();
    let client = ctx.client(&args.net)?;
    let me = client.whoami().await?.record;
    if ctx.out.is_json() {
        ctx.out.record(&json!({
            "server": server,
            "account": {"id": me.account.id, "name": me.account.name},
            "key": {"id": me.key.id, "kind": me.key.kind},
            "plan": me.plan,
        }))?;
        return Ok(0);
    }
    ctx.out.line(&format!("server   {server}"))?;
    ctx.out
        .line(&format!("account  {} ({})", me.account.name, me.account.id))?;
    ctx.out.line(&format!(
        "key      {} {} ({}), profile {}",
        me.key.kind,
        me.key.id,
        masked(&key),
        source(ctx)
    ))?;
    ctx.out.line(&format!("plan     {}", me.plan))?;
    Ok(0)
}
/// Where the settings came from: the profile's name, or the flags/env.
fn source(ctx: &Ctx) -> String {
    match &ctx.settings.key_source {
        Some(crate::client::config::KeySource::Profile(name)) => format!("{name:?}"),
        Some(s) => format!("none ({})", s.describe(&ctx.config_path)),
        None => "none".into(),
    }
}

/// A key as it may be shown: its prefix and last four characters.
fn masked(key: &str) -> String {
    let prefix = key.find('_').map_or("", |i| &key[..=i]);
    let tail: String = key
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{prefix}…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_shown_masked() {
        assert_eq!(masked("sk_0123456789abcdef"), "sk_…cdef");
    }
}
