//! The saved profiles of the client config file: `filestore profile list`
//! (names and servers, never keys) and `filestore logout [--profile NAME]`
//! (the profile forgotten; the key itself stays valid on the server).

use super::context::Ctx;
use super::output::stderr_line;
use crate::client::config;
use crate::client::ClientError;
use serde_json::json;

/// The saved client profiles
#[derive(Debug, clap::Args)]
pub(crate) struct ProfileArgs {
    #[command(subcommand)]
    pub command: ProfileCommand,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum ProfileCommand {
    /// List the saved profiles: name and server (never a key); * marks the one in use
    #[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
    List,
}

/// Forget a saved profile (--profile NAME; default: the one in use)
#[derive(Debug, clap::Args)]
#[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
pub(crate) struct LogoutArgs {}

/// Runs `profile …`; gives the exit status.
pub(crate) fn run(args: &ProfileArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    match args.command {
        ProfileCommand::List => list(ctx),
    }
}

fn list(ctx: &Ctx) -> Result<u8, ClientError> {
    let file = config::load(&ctx.config_path)?;
    for (name, p) in &file.profiles {
        let in_use = *name == ctx.settings.profile;
        let server = p.server.as_deref().unwrap_or("-");
        if ctx.out.is_json() {
            ctx.out
                .record(&json!({"name": name, "server": p.server, "in_use": in_use}))?;
        } else {
            let mark = if in_use { '*' } else { ' ' };
            ctx.out.line(&format!("{mark} {name:<16} {server}"))?;
        }
    }
    if file.profiles.is_empty() && !ctx.out.is_json() && !ctx.globals.quiet {
        stderr_line(&format!(
            "no saved profiles in {} (`filestore login` saves one)",
            ctx.config_path.display()
        ));
    }
    Ok(0)
}

/// Runs `logout`: removes the profile in use (or `--profile NAME`) from the
/// config file.
pub(crate) fn logout(_args: &LogoutArgs, ctx: &Ctx) -> Result<u8, ClientError> {
    let mut file = config::load(&ctx.config_path)?;
    let name = ctx.settings.profile.clone();
    if file.profiles.remove(&name).is_none() {
        let saved: Vec<String> = file.profiles.keys().cloned().collect();
        return Err(ClientError::usage(if saved.is_empty() {
            format!("profile {name:?} not found: no profile is saved")
        } else {
            format!(
                "profile {name:?} not found (saved: {}): pass --profile NAME",
                saved.join(", ")
            )
        }));
    }
    config::save(&ctx.config_path, &file)?;
    if ctx.out.is_json() {
        ctx.out.record(&json!({"profile": name, "removed": true}))?;
    } else if !ctx.globals.quiet {
        stderr_line(&format!(
            "removed profile {name:?} from {}",
            ctx.config_path.display()
        ));
    }
    Ok(0)
}
