//! `filestore completions SHELL`: the shell completion script on stdout.

use crate::client::ClientError;
use clap_complete::Shell;

/// Print a shell completion script
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Install, for example:\n  filestore completions bash > ~/.local/share/bash-completion/completions/filestore\n  filestore completions zsh > ~/.zfunc/_filestore\n  filestore completions fish > ~/.config/fish/completions/filestore.fish"
)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

/// The completion script of `shell`.
pub fn script(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut super::command(), "filestore", &mut out);
    out
}

/// Runs the command.
pub fn run(args: &CompletionsArgs) -> Result<u8, ClientError> {
    super::output::Printer::new(false).raw(&script(args.shell))?;
    Ok(0)
}
