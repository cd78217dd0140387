//! `filestore`: parse the command line, set up logging, run the subcommand,
//! and turn its outcome into an exit status (docs/decisions.md, "Command line"): 0 ok, 1 other,
//! 2 usage, 3 unauthorized/forbidden, 4 not found, 5 limit, 6 server or
//! network. An error is one stderr line `error: <code>: <message>`; a closed
//! stdout (`filestore list | head -1`) counts as success.

use crate::cli::context::Ctx;
use crate::cli::error::CliError;
use crate::cli::globals::GlobalArgs;
use crate::cli::logging::error_line;
use crate::cli::{self, Cli, Command};
use crate::client::error::exit;
use crate::client::ClientError;
use clap::FromArgMatches;
use std::fmt::Write as _;
use std::future::Future;
use std::process::ExitCode;

/// The whole program: parses the command line, runs the command, and gives
/// its exit status.
pub fn main() -> ExitCode {
    // This binary as the server's AVIF decoder (a child process of its own).
    if let Some(status) = crate::images::isolated::child_main() {
        return status;
    }
    let cli = match cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => return ExitCode::from(parse_error(&e)),
    };
    // `serve` sets up its logs once its config (log format) is read.
    if !matches!(cli.command, Command::Serve(_)) {
        // Clients log little, straight to stderr: nothing to keep running.
        let _ = cli::logging::init(crate::config::LogFormat::Text, "warn", false);
    }
    let g = cli.globals;
    let status = match cli.command {
        Command::Serve(args) => {
            cli::serve::use_early_log_format(&args);
            match cli::runtime::serve() {
                Ok(rt) => report(rt.block_on(cli::serve::run(args, &g)).map(|()| exit::OK)),
                Err(e) => report(Err(e)),
            }
        }
        Command::Admin(args) => report(cli::admin::run(args, &g)),
        Command::Completions(args) => report(cli::completions::run(&args, cli::command())),
        Command::Login(a) => client(&g, |ctx| async move { cli::login::run(a, &ctx).await }),
        Command::Logout(a) => client(&g, |ctx| async move { cli::profile::logout(&a, &ctx) }),
        Command::Whoami(a) => client(&g, |ctx| async move { cli::whoami::run(a, &ctx).await }),
        Command::Profile(a) => client(&g, |ctx| async move { cli::profile::run(&a, &ctx) }),
        Command::Upload(a) => client(&g, |ctx| async move { cli::upload::run(a, &ctx).await }),
        Command::List(a) => client(&g, |ctx| async move { cli::list::run(a, &ctx).await }),
        Command::Get(a) => client(&g, |ctx| async move { cli::get::run(a, &ctx).await }),
        Command::Download(a) => client(&g, |ctx| async move { cli::download::run(a, &ctx).await }),
        Command::Sign(a) => client(&g, |ctx| async move { cli::sign::run(a, &ctx).await }),
        Command::Token(a) => client(&g, |ctx| async move { cli::token::run(a, &ctx).await }),
        Command::Mv(a) => client(&g, |ctx| async move { cli::mv::run(a, &ctx).await }),
        Command::Cp(a) => client(&g, |ctx| async move { cli::cp::run(a, &ctx).await }),
        Command::Delete(a) => client(&g, |ctx| async move { cli::delete::run(a, &ctx).await }),
        Command::Sync(a) => client(&g, |ctx| async move { cli::sync::run(a, &ctx).await }),
        Command::Usage(a) => client(&g, |ctx| async move { cli::usage::run(a, &ctx).await }),
        Command::S3(a) => client(&g, |ctx| async move { cli::s3::run(a, &ctx).await }),
        Command::Health(a) => client(&g, |ctx| async move { cli::health::run(a, &ctx).await }),
    };
    ExitCode::from(status)
}

/// Runs a client command: resolve the settings, then `f`. Ctrl-C drops the
/// command (its temporary files are removed; a download keeps what it
/// received, to resume) and exits 130.
fn client<F, Fut>(g: &GlobalArgs, f: F) -> u8
where
    F: FnOnce(Ctx) -> Fut,
    Fut: Future<Output = Result<u8, ClientError>>,
{
    let rt = match cli::runtime::client() {
        Ok(rt) => rt,
        Err(e) => return report(Err(e)),
    };
    let result = rt.block_on(async {
        let ctx = Ctx::new(g)?;
        tokio::select! {
            result = f(ctx) => result,
            _ = tokio::signal::ctrl_c() => Err(ClientError::Interrupted),
        }
    });
    // Don't wait for blocking tasks: after Ctrl-C during `upload -` from a
    // terminal, one is stuck reading stdin and dropping the runtime would
    // wait for it (for ever). The command's outcome is decided; its files
    // are already written or removed.
    rt.shutdown_background();
    report(result)
}

/// The exit status of a command, printing its error (a closed stdout is
/// not one).
fn report(result: Result<u8, impl Into<CliError>>) -> u8 {
    match result.map_err(Into::into) {
        Ok(status) => status,
        Err(e) if e.is_broken_pipe() => exit::OK,
        Err(e) => {
            error_line(e.code(), &e.message());
            e.exit_code()
        }
    }
}

/// Help and version go to stdout (exit 0); a usage error is one line
/// `error: usage: …` with the usage synopsis (exit 2).
fn parse_error(e: &clap::Error) -> u8 {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            exit::OK
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            exit::USAGE
        }
        _ => {
            error_line("usage", &usage_message(&e.render().to_string()));
            exit::USAGE
        }
    }
}

/// Folds clap's multi-line error into one line: the message with what it
/// lists on the lines below it (the missing arguments, the possible values),
/// any tip, and the usage synopsis.
fn usage_message(rendered: &str) -> String {
    let mut lines = rendered.lines().map(str::trim);
    let first = lines.next().unwrap_or("invalid usage");
    let mut msg = first
        .strip_prefix("error:")
        .unwrap_or(first)
        .trim()
        .to_string();
    let mut usage: Option<String> = None;
    let mut in_usage = false;
    for line in lines {
        if line.starts_with("For more information") {
            continue;
        }
        if line.is_empty() {
            in_usage = false;
        } else if let Some(tip) = line.strip_prefix("tip:") {
            let _ = write!(msg, "; tip: {}", tip.trim());
        } else if let Some(u) = line.strip_prefix("Usage:") {
            usage = Some(u.trim().to_string());
            in_usage = true;
        } else if in_usage {
            // A synopsis clap wrapped over several lines.
            if let Some(u) = usage.as_mut() {
                u.push(' ');
                u.push_str(line);
            }
        } else if let Some(values) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            // `[possible values: a, b]`
            let _ = write!(msg, "; {values}");
        } else if msg.ends_with(':') {
            // The first thing listed below `…were not provided:`.
            let _ = write!(msg, " {line}");
        } else {
            let _ = write!(msg, ", {line}");
        }
    }
    match usage {
        Some(u) => format!("{msg} (usage: {u}; see --help)"),
        None => format!("{msg} (see --help)"),
    }
}

#[cfg(test)]
mod tests {
    use super::usage_message;
    use crate::cli::Cli;
    use clap::Parser;

    fn message(args: &[&str]) -> String {
        let e = Cli::try_parse_from(args).unwrap_err();
        usage_message(&e.render().to_string())
    }

    #[test]
    fn usage_errors_name_what_is_missing_and_what_is_allowed() {
        let m = message(&["filestore", "upload"]);
        assert!(
            m.starts_with("the following required arguments were not provided: <PATH>..."),
            "{m}"
        );
        let m = message(&["filestore", "sign", "f_1", "--fit", "bogus"]);
        assert!(
            m.contains("possible values: cover, contain, inside, fill"),
            "{m}"
        );
    }
}
