//! `filestore whoami [--json]`: the server, account, key and plan the
//! client settings reach. No /v1 route names the calling key or account, so
//! they are derived from what the API gives: the plan from `GET /v1/usage`
//! (which only a secret key may read, so its success makes the key
//! `secret`), the account id from the url of a public file (`/live/<account>/…`,
//! or `/p/<account>/…`); what cannot be derived is null.

use super::context::{Ctx, NetArgs};
use crate::client::{Client, ClientError};
use serde_json::{json, Value};

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
    let usage = client.usage().await?;
    let account = account_id(&client).await?;
    let record = json!({
        "server": server,
        "account": {"id": account, "name": Value::Null},
        "key": {"id": Value::Null, "kind": "secret"},
        "plan": usage.record.plan,
    });
    if ctx.out.is_json() {
        ctx.out.record(&record)?;
        return Ok(0);
    }
    let shown = |v: &Value| v.as_str().unwrap_or("-").to_string();
    ctx.out.line(&format!("server   {server}"))?;
    ctx.out
        .line(&format!("account  {}", shown(&record["account"]["id"])))?;
    ctx.out.line(&format!(
        "key      secret ({}), profile {}",
        masked(&key),
        source(ctx)
    ))?;
    ctx.out
        .line(&format!("plan     {}", shown(&record["plan"])))?;
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

/// The account id in the url of the newest public file (`/live/<account>/`
/// or `/p/<account>/`), if there is one.
async fn account_id(client: &Client) -> Result<Option<String>, ClientError> {
    let page = client.list(None, false, &[], 100, None).await?;
    let files = page.raw.get("files").and_then(Value::as_array);
    let found = files
        .into_iter()
        .flatten()
        .flat_map(|f| [f.get("url"), f.get("path_url")])
        .flatten()
        .filter_map(Value::as_str)
        .find_map(account_in);
    Ok(found)
}

/// `acc_…` after `/live/` or `/p/` in a CDN url.
fn account_in(url: &str) -> Option<String> {
    ["/live/", "/p/"].iter().find_map(|door| {
        let rest = &url[url.find(door)? + door.len()..];
        let account = rest.split('/').next()?;
        (!account.is_empty()).then(|| account.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_in_urls_and_masked_keys() {
        assert_eq!(
            account_in("http://h:1/live/acc_12/f_3/a.txt").as_deref(),
            Some("acc_12")
        );
        assert_eq!(
            account_in("https://cdn/p/acc_9/rel/app.tgz").as_deref(),
            Some("acc_9")
        );
        assert_eq!(account_in("https://cdn/x/acc_9/a"), None);
        assert_eq!(masked("sk_0123456789abcdef"), "sk_…cdef");
    }
}
