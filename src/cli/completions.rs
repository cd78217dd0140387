//! `filestore completions SHELL`: the shell completion script on stdout.

use crate::client::ClientError;
use clap_complete::Shell;

/// Print a shell completion script
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Install, for example:\n  filestore completions bash > ~/.local/share/bash-completion/completions/filestore\n  filestore completions zsh > ~/.zfunc/_filestore\n  filestore completions fish > ~/.config/fish/completions/filestore.fish"
)]
pub(crate) struct CompletionsArgs {
    /// The shell
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

/// The completion script of `shell` for the command line `cmd`.
pub(crate) fn script(shell: Shell, mut cmd: clap::Command) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "filestore", &mut out);
    out
}

/// Runs the command: the script of the command line `cmd`.
pub(crate) fn run(args: &CompletionsArgs, cmd: clap::Command) -> Result<u8, ClientError> {
    super::output::Printer::new(false).raw(&script(args.shell, cmd))?;
    Ok(0)
}
