//! The command line: `filestore serve | admin | login | logout | whoami |
//! profile | upload | list | get | download | sign | token | mv | cp | delete |
//! sync | usage | s3 | health | completions`. Each client
//! subcommand has its flags and its `run` in a file of its own.

pub(crate) mod admin;
pub(crate) mod backup;
pub(crate) mod bar_style;
pub(crate) mod completions;
pub(crate) mod context;
pub(crate) mod cp;
pub(crate) mod delete;
pub(crate) mod docs;
pub(crate) mod download;
pub(crate) mod entry;
pub(crate) mod error;
pub(crate) mod examples;
pub(crate) mod exit_codes;
pub(crate) mod format;
pub(crate) mod get;
pub(crate) mod globals;
pub(crate) mod hash_cache;
pub(crate) mod health;
pub(crate) mod list;
pub(crate) mod logging;
pub(crate) mod login;
pub(crate) mod mv;
pub(crate) mod output;
pub(crate) mod profile;
pub(crate) mod progress;
pub(crate) mod prompt;
pub(crate) mod runtime;
pub(crate) mod s3;
pub(crate) mod serve;
pub(crate) mod sign;
pub(crate) mod sync;
pub(crate) mod target;
pub(crate) mod token;
pub(crate) mod upload;
pub(crate) mod upload_check;
pub(crate) mod usage;
pub(crate) mod verify;
pub(crate) mod walk;
pub(crate) mod whoami;

use clap::{CommandFactory, Parser, Subcommand};

/// `filestore`: a self-hostable file storage service and its client.
#[derive(Debug, Parser)]
#[command(
    name = "filestore",
    version,
    about = "Self-hostable file storage service and its command-line client",
    after_help = exit_codes::EXIT_CODES_SHORT,
    after_long_help = exit_codes::TOP_AFTER_HELP,
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
    /// Forget a saved profile (--profile NAME; default: the one in use)
    Logout(profile::LogoutArgs),
    /// Show the server, account, key and plan in use
    Whoami(whoami::WhoamiArgs),
    /// The saved client profiles
    Profile(profile::ProfileArgs),
    /// Upload files, directories (-r) or standard input (-)
    ///
    /// Each file's SHA-256 is computed while it is sent and sent after it: the server refuses
    /// bytes damaged on the way (error checksum_mismatch, exit 6) and stores nothing.
    Upload(upload::UploadArgs),
    /// List files, newest first
    List(list::ListArgs),
    /// Show a file's record (by id, or by path: the newest file there)
    Get(get::GetArgs),
    /// Download a file's content
    ///
    /// The bytes are checked against the file's SHA-256 (a resumed download hashes its partial
    /// file first): a mismatch is error checksum_mismatch, exit 6, and leaves no file. With
    /// -o - the bytes are already written when the check fails: check the exit status.
    Download(download::DownloadArgs),
    /// Create a signed URL for a file (only the URL is printed)
    Sign(sign::SignArgs),
    /// Upload tokens: URLs a browser uploads to without an API key
    Token(token::TokenArgs),
    /// Rename or move a file (its id, bytes and checksum stay)
    Mv(mv::MvArgs),
    /// Copy a file to a new one (a new id; the same bytes, copied by the server)
    ///
    /// The copy counts as an upload (storage quota, monthly uploads) and keeps the file's type,
    /// metadata, privacy and expiry; --folder and --name change where it goes.
    Cp(cp::CpArgs),
    /// Delete files permanently (by id, every file at a path, or a folder)
    Delete(delete::DeleteArgs),
    /// Publish a directory to a folder: upload what is new or changed, skip the rest
    ///
    /// One listing of the remote folder and a SHA-256 of each local file (remembered between
    /// runs by path, size and modification time) decide what to send: a new path or a changed
    /// content is uploaded with replace=true, which removes the older remote files at that path
    /// as it stores the new one (the path never shows two files, nor none). With --delete,
    /// remote files without a local counterpart are deleted too. A run with nothing to do sends
    /// no write request.
    Sync(sync::SyncArgs),
    /// Show the account's usage this billing period
    Usage(usage::UsageArgs),
    /// The S3 door: the credential S3 clients (aws-cli, rclone, SDKs) sign with
    S3(s3::S3Args),
    /// Check the server's health (exit 0 only when ok)
    Health(health::HealthArgs),
    /// Print a shell completion script
    Completions(completions::CompletionsArgs),
}

/// The clap command of the whole CLI (parsing, completions, man pages),
/// finished by [`examples::finish`].
pub(crate) fn command() -> clap::Command {
    examples::finish(Cli::command())
}
