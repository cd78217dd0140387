//! `filestore login --server URL --api-key KEY [--profile NAME]`: checks the
//! key against the server, then saves it as a profile of the client config
//! file (mode 0600). `--api-key -` reads the key from standard input, so it
//! never sits in the shell history; on a terminal, without `--api-key` (or
//! `FILESTORE_API_KEY`), it is asked for, with echo off.

use super::context::{Ctx, NetArgs};
use super::output::stderr_line;
use crate::client::config::{self, KeySource, Profile};
use crate::client::{Client, ClientError, RetryPolicy};
use crate::domain::secret::Secret;
use serde_json::json;
use std::io::IsTerminal;

/// Save a server and API key as a profile (checked against the server first)
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct LoginArgs {
    /// Save without checking the key against the server
    #[arg(long)]
    pub no_verify: bool,

    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: LoginArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let server = ctx.settings.require_server()?.to_string();
    let key = match ctx.settings.key_source {
        Some(KeySource::Flag | KeySource::Env) => ctx.settings.require_key()?.to_string(),
        _ if std::io::stdin().is_terminal() => {
            let key = super::prompt::hidden(&format!("API key for {server} (sk_…): ")).await?;
            if key.is_empty() {
                return Err(ClientError::usage("no API key given: nothing saved"));
            }
            key
        }
        _ => ctx.settings.require_key()?.to_string(),
    };
    if key.starts_with(crate::domain::ids::KeyKind::Public.prefix()) {
        return Err(public_key_refused());
    }
    let kind = if args.no_verify {
        "unverified"
    } else {
        verify(&server, &key, &args.net).await?
    };
    // The profile named (flag or env), else `default`: never the only
    // saved one standing in for `default`, which a login would overwrite.
    let name = ctx
        .globals
        .profile
        .clone()
        .or_else(|| config::Env::from_process().profile)
        .unwrap_or_else(|| config::DEFAULT_PROFILE.to_string());
    let mut file = config::load(&ctx.config_path)?;
    file.profiles.insert(
        name.clone(),
        Profile {
            server: Some(server.clone()),
            api_key: Some(Secret::new(key)),
        },
    );
    config::save(&ctx.config_path, &file)?;
    if ctx.out.is_json() {
        ctx.out.record(&json!({
            "profile": name,
            "server": server,
            "key_kind": kind,
            "config_file": ctx.config_path.display().to_string(),
        }))?;
    } else if !ctx.globals.quiet {
        stderr_line(&format!(
            "saved profile {:?} for {server} ({kind} key) in {}",
            name,
            ctx.config_path.display()
        ));
    }
    Ok(0)
}

/// A public key saved as a profile would fail every command but `upload`
/// (and that only from a browser page of its origins): refused.
fn public_key_refused() -> ClientError {
    ClientError::usage(
        "a public key (pk_…) only uploads from browser pages of its origins, so every \
command here would be refused with it: log in with a secret key (sk_…)",
    )
}

/// Asks the server about the key: `secret` when it reads usage; a 403
/// `forbidden` there is a public key (which may only upload), refused; 401
/// fails.
async fn verify(server: &str, key: &str, net: &NetArgs) -> Result<&'static str, ClientError> {
    let client = Client::new(server, Some(key), RetryPolicy::new(net.retries))?;
    match client.usage().await {
        Ok(_) => Ok("secret"),
        Err(e) if e.status() == Some(403) && e.code() == "forbidden" => Err(public_key_refused()),
        Err(e) => Err(e.context("checking the key (use --no-verify to save it anyway)")),
    }
}
