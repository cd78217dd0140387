//! What every client command starts from: the resolved settings, the printer,
//! the progress mode, and a way to build an HTTP client.

use super::globals::GlobalArgs;
use super::output::Printer;
use super::progress::{Mode, Progress};
use crate::client::config::{self, Env, Flags, Settings};
use crate::client::{Client, ClientError, RetryPolicy};
use crate::domain::secret::Secret;
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;

/// Network options shared by the client commands.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct NetArgs {
    /// Retries of a failed request (connection errors, 408, 429, 5xx), with
    /// exponential backoff and jitter, honouring Retry-After
    #[arg(long, value_name = "N", default_value_t = 3, env = "FILESTORE_RETRIES")]
    pub retries: u32,
}

/// The run context of a client command.
pub(crate) struct Ctx {
    /// The global flags.
    pub globals: GlobalArgs,
    /// Server, key and profile after flags > env > profile.
    pub settings: Settings,
    /// Path of the client config file.
    pub config_path: PathBuf,
    /// Where results go.
    pub out: Printer,
    /// How progress is shown.
    pub mode: Mode,
    /// Whether the API key was read from stdin (`--api-key -`).
    pub key_from_stdin: bool,
}

impl Ctx {
    /// Resolves the settings for `globals` from the process environment.
    pub(crate) fn new(globals: &GlobalArgs) -> Result<Ctx, ClientError> {
        let env = Env::from_process();
        let key_from_stdin = globals.api_key.as_deref() == Some("-");
        let api_key = if key_from_stdin {
            Some(read_key_from_stdin()?)
        } else {
            globals.api_key.clone()
        }
        .map(Secret::from);
        let flags = Flags {
            server: globals.server.clone(),
            api_key,
            profile: globals.profile.clone(),
        };
        let config_path = config::config_path(&env)?;
        let file = config::load(&config_path)?;
        let settings = config::resolve(&flags, &env, &file)?;
        Ok(Ctx {
            globals: globals.clone(),
            settings,
            config_path,
            out: Printer::new(globals.json),
            mode: Mode::detect(globals.quiet, globals.json),
            key_from_stdin,
        })
    }

    /// A client with server and key (the authenticated endpoints).
    pub(crate) fn client(&self, net: &NetArgs) -> Result<Client, ClientError> {
        let server = self.settings.require_server()?;
        let key = self.settings.require_key()?;
        let client = Client::new(server, Some(key), RetryPolicy::new(net.retries))?;
        Ok(match &self.settings.key_source {
            Some(source) => client.with_key_source(&source.describe(&self.config_path)),
            None => client,
        })
    }

    /// A client with the server only (health).
    pub(crate) fn anonymous_client(&self) -> Result<Client, ClientError> {
        let server = self.settings.require_server()?;
        Client::new(server, None, RetryPolicy::new(0))
    }

    /// The progress reporter of this command.
    pub(crate) fn progress(&self) -> Arc<dyn Progress> {
        self.mode.build()
    }
}

/// Reads the API key from the first line of stdin (`--api-key -`).
fn read_key_from_stdin() -> Result<String, ClientError> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| ClientError::io("reading the API key from standard input", e))?;
    let key = line.trim().to_string();
    if key.is_empty() {
        return Err(ClientError::usage(
            "--api-key -: standard input gave no key",
        ));
    }
    Ok(key)
}
