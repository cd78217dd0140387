//! `filestore s3 credentials [--json]`: the calling key's S3 credential
//! and the S3 door's address and region (`GET /v1/s3/credentials`), as
//! `export AWS_…=…` lines a shell evaluates (`eval "$(filestore s3
//! credentials)"`), for aws-cli, rclone's env_auth and the AWS SDKs.

use super::context::{Ctx, NetArgs};
use crate::client::ClientError;

/// The S3 door: the credential S3 clients (aws-cli, rclone, SDKs) sign with
#[derive(Debug, clap::Args)]
pub(crate) struct S3Args {
    #[command(subcommand)]
    pub command: S3Command,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum S3Command {
    /// Print the key's S3 credential, endpoint and region as shell exports (--json: the record)
    ///
    /// The access key id is the key's id; the secret access key is derived by the server and
    /// stops working when the key is revoked. Public keys have no S3 credential (exit 3).
    #[command(after_help = super::exit_codes::EXIT_CODES_SHORT, after_long_help = super::exit_codes::EXIT_CODES_LONG)]
    Credentials(CredentialsArgs),
}

/// The flags of `s3 credentials`.
#[derive(Debug, clap::Args)]
pub(crate) struct CredentialsArgs {
    #[command(flatten)]
    pub net: NetArgs,
}

/// Runs the command; gives the exit status.
pub(crate) async fn run(args: S3Args, ctx: &Ctx) -> Result<u8, ClientError> {
    let S3Command::Credentials(args) = args.command;
    let client = ctx.client(&args.net)?;
    let c = client.s3_credentials().await?.record;
    if ctx.out.is_json() {
        let value = serde_json::to_value(&c)
            .map_err(|e| ClientError::Protocol(format!("cannot encode record: {e}")))?;
        ctx.out.record(&value)?;
        return Ok(0);
    }
    for (name, value) in [
        ("AWS_ACCESS_KEY_ID", &c.access_key_id),
        ("AWS_SECRET_ACCESS_KEY", &c.secret_access_key),
        ("AWS_ENDPOINT_URL", &c.endpoint),
        ("AWS_REGION", &c.region),
    ] {
        ctx.out
            .line(&format!("export {name}={}", shell_word(value)))?;
    }
    Ok(0)
}

/// `value` as one word of a POSIX shell: as it is when it holds only
/// characters no shell treats specially, else in single quotes.
fn shell_word(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:@%+=,".contains(&b));
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn values_are_one_shell_word_each() {
        assert_eq!(shell_word("key_abc-DEF_0"), "key_abc-DEF_0");
        assert_eq!(
            shell_word("https://s3.example.com:9000/x"),
            "https://s3.example.com:9000/x"
        );
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a b$c`d"), "'a b$c`d'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
