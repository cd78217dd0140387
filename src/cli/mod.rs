//! The command line: `filestore serve | admin | login | upload | list | get |
//! download | sign | delete | usage | health | completions`. Each client
//! subcommand has its flags and its `run` in a file of its own.

pub(crate) mod admin;
pub(crate) mod completions;
pub(crate) mod context;
pub(crate) mod delete;
pub(crate) mod docs;
pub(crate) mod download;
pub(crate) mod entry;
pub(crate) mod error;
pub(crate) mod format;
pub(crate) mod get;
pub(crate) mod globals;
pub(crate) mod health;
pub(crate) mod list;
pub(crate) mod logging;
pub(crate) mod login;
pub(crate) mod output;
pub(crate) mod progress;
pub(crate) mod serve;
pub(crate) mod sign;
pub(crate) mod upload;
pub(crate) mod usage;
pub(crate) mod walk;

use clap::{CommandFactory, Parser, Subcommand};

/// One line about the exit codes, for `-h`.
pub(crate) const EXIT_CODES_SHORT: &str =
    "Exit codes: 0 ok, 1 other error, 2 usage, 3 unauthorized/forbidden, \
4 not found, 5 limit (413, 429), 6 server or network error.";

/// Defines, from one table, [`EXIT_CODES`] (for the man pages) and the
/// `exit_codes_help!` literal (for `--help`, through `concat!`).
macro_rules! exit_codes {
    ($(($code:literal, $text:literal)),* $(,)?) => {
        /// The exit statuses and their meaning (docs/decisions.md, "Command line"): the one source
        /// of `--help` and the man pages' EXIT STATUS.
        pub(crate) const EXIT_CODES: &[(&str, &str)] = &[$(($code, $text)),*];

        /// The exit codes in full as a string literal, ending with the
        /// form of the error line.
        macro_rules! exit_codes_help {
            () => {
                concat!(
                    "Exit codes:\n",
                    $("  ", $code, "  ", $text, "\n",)*
                    "\n",
                    "Errors are printed to stderr as one line: error: <code>: <message>"
                )
            };
        }
    };
}

exit_codes! {
    ("0", "ok"),
    ("1", "other error (a request refused as bad (400), a local file error)"),
    ("2", "usage error (bad flags or values, no server or API key configured)"),
    ("3", "unauthorized or forbidden (401, 403): bad or revoked key, public key for a secret-key call"),
    ("4", "not found (404): no such file, deleted or expired"),
    ("5", "limit: file too large or storage quota (413), rate limit or monthly uploads after retries (429)"),
    ("6", "server or network error (5xx, connection failures, timeouts, bad answers)"),
    ("130", "interrupted (Ctrl-C); a download keeps what it received and resumes on the next run"),
}

/// The exit codes in full, for `--help` (the man pages have them as EXIT STATUS).
pub(crate) const EXIT_CODES_LONG: &str = exit_codes_help!();

/// Shown after the top-level help.
const TOP_AFTER_HELP: &str = concat!(
    "Client settings: --server / --api-key, else FILESTORE_URL / FILESTORE_API_KEY, else the profile\n",
    "(--profile, FILESTORE_PROFILE, default \"default\") in the client config file written by\n",
    "`filestore login` (FILESTORE_CLIENT_CONFIG overrides its path).\n",
    "\n",
    exit_codes_help!()
);

/// `filestore`: a self-hostable file storage service and its client.
#[derive(Debug, Parser)]
#[command(
    name = "filestore",
    version,
    about = "Self-hostable file storage service and its command-line client",
    after_help = EXIT_CODES_SHORT,
    after_long_help = TOP_AFTER_HELP,
    propagate_version = true,
    max_term_width = 100
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub globals: globals::GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the server (API and CDN routes)
    Serve(serve::ServeArgs),
    /// Operator commands: accounts and keys (on the server's data dir)
    Admin(admin::AdminArgs),
    /// Save a server and API key as a profile (checked against the server first)
    Login(login::LoginArgs),
    /// Upload files, directories (-r) or standard input (-)
    ///
    /// Each file's SHA-256 is computed while it is sent and sent after it: the server refuses
    /// bytes damaged on the way (error checksum_mismatch, exit 6) and stores nothing.
    Upload(upload::UploadArgs),
    /// List files, newest first
    List(list::ListArgs),
    /// Show a file's record
    Get(get::GetArgs),
    /// Download a file's content
    ///
    /// The bytes are checked against the file's SHA-256 (a resumed download hashes its partial
    /// file first): a mismatch is error checksum_mismatch, exit 6, and leaves no file. With
    /// -o - the bytes are already written when the check fails: check the exit status.
    Download(download::DownloadArgs),
    /// Create a signed URL for a file (only the URL is printed)
    Sign(sign::SignArgs),
    /// Delete files permanently
    Delete(delete::DeleteArgs),
    /// Show the account's usage this billing period
    Usage(usage::UsageArgs),
    /// Check the server's health (exit 0 only when ok)
    Health(health::HealthArgs),
    /// Print a shell completion script
    Completions(completions::CompletionsArgs),
}

/// The clap command of the whole CLI (completions, man pages).
pub(crate) fn command() -> clap::Command {
    Cli::command()
}
