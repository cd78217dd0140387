//! `filestore admin`: accounts, keys and webhooks, straight on the server's metadata
//! store (safe while `serve` runs; changes apply to the next request).

use super::error::CliError;
use super::globals::GlobalArgs;
use super::output::{stderr_line, Printer};
use crate::client::ClientError;
use crate::clock::Clock;
use crate::config::{Config, Overrides, Plan};
use crate::db::{Account, MetaStore, Removed};
use crate::domain::ids::KeyKind;
use crate::domain::secret::Secret;
use crate::service::account_ops;
use crate::service::admin::{self, AccountView, KeyLimits, KeyView, WebhookView};
use crate::service::plans;
use crate::service::s3_keys;
use serde::Serialize;
use std::fmt::Write as _;

#[derive(Debug, clap::Args)]
pub(crate) struct AdminArgs {
    #[command(subcommand)]
    pub command: AdminCommand,
    #[command(flatten)]
    pub ignored: super::globals::IgnoredClientFlags,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum AdminCommand {
    /// Create, list and change accounts
    #[command(subcommand)]
    Account(AccountCommand),
    /// Create, list and revoke API keys
    #[command(subcommand)]
    Key(KeyCommand),
    /// Create, list and delete webhook subscriptions (file events)
    #[command(subcommand)]
    Webhook(WebhookCommand),
    /// List the plans every node enforces, or write this config's plans to the database
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Apply the schema migrations the database lacks (other commands, and serve without
    /// --migrate, refuse to move an existing PostgreSQL schema)
    Migrate,
    /// Check that every file's blob is there and holds its SHA-256; marks what is missing or
    /// damaged (never served whole) or, with --repair-from, puts it back from a backup; lists
    /// orphaned blobs; exit 1 when a file is (still) missing or damaged
    Verify(super::verify::VerifyArgs),
    /// Back up the metadata and every file's bytes to DEST while serve runs (a second
    /// backup to the same DEST copies only new blobs)
    Backup(super::backup::BackupArgs),
    /// Restore the newest complete backup of SRC into an empty data dir or (--database) an
    /// empty PostgreSQL database, whichever database it was taken on, checking every file's bytes
    Restore(super::backup::RestoreArgs),
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum PlanCommand {
    /// The plans in the database (JSON Lines with --json)
    List,
    /// Write the config's [plans.*] to the database (every node enforces them
    /// within one collector pass); prints what changed
    Apply,
}

/// A plan as `admin plan list --json` prints it.
#[derive(Debug, Serialize)]
struct PlanView {
    name: String,
    max_file_size: u64,
    storage: u64,
    bandwidth: u64,
    uploads: u64,
    rate_limit: u64,
    rate_window: String,
    concurrent_uploads: u64,
    open_uploads: u64,
    public_share: f64,
}

impl From<&Plan> for PlanView {
    fn from(p: &Plan) -> PlanView {
        PlanView {
            name: p.name.clone(),
            max_file_size: p.max_file_size,
            storage: p.storage,
            bandwidth: p.bandwidth,
            uploads: p.uploads,
            rate_limit: p.rate_limit,
            rate_window: humantime::format_duration(p.rate_window).to_string(),
            concurrent_uploads: p.concurrent_uploads,
            open_uploads: p.open_uploads,
            public_share: p.public_share.fraction(),
        }
    }
}

fn plan_line(p: &PlanView) -> String {
    let unlimited = |n: u64, show: fn(u64) -> String| {
        if n >= crate::config::UNLIMITED {
            "unlimited".to_string()
        } else {
            show(n)
        }
    };
    let size = |n| unlimited(n, super::format::bytes);
    let count = |n| unlimited(n, |n| n.to_string());
    format!(
        "{}  max_file_size={}  storage={}  bandwidth={}/month  uploads={}/month  rate={}/{}  \
         concurrent_uploads={}  open_uploads={}  public_share={}",
        p.name,
        size(p.max_file_size),
        size(p.storage),
        size(p.bandwidth),
        count(p.uploads),
        p.rate_limit,
        p.rate_window,
        p.concurrent_uploads,
        p.open_uploads,
        p.public_share
    )
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum AccountCommand {
    /// Create an account
    Create {
        /// Unique name (default: the account's id)
        #[arg(long)]
        name: Option<String>,
        /// Plan (default: server.default_plan)
        #[arg(long)]
        plan: Option<String>,
    },
    /// List accounts (JSON Lines with --json)
    List,
    /// Change an account's plan or grace period
    Set {
        /// Account id or name
        id: String,
        #[arg(long)]
        plan: Option<String>,
        /// In grace period, uploads are refused (403 grace_period)
        #[arg(long, value_enum)]
        grace_period: Option<Switch>,
    },
    /// Show an account's usage this billing period (the record of GET /v1/usage)
    Usage {
        /// Account id or name
        id: String,
    },
    /// Delete an account with its files (their blobs are freed), keys, upload tokens and
    /// webhooks; asks first on a terminal
    Delete {
        /// Account id or name
        id: String,
        /// Do not ask (required when stdin is not a terminal)
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum KeyCommand {
    /// Create a key; its secret is printed once (a secret key's with its S3 credential)
    Create {
        /// Account id or name
        #[arg(long)]
        account: String,
        #[arg(long, value_enum)]
        kind: KindArg,
        /// Allowed browser origin of a public key (scheme://host[:port] or https://*.example.com); repeatable
        // (clap's help text, not a rustdoc link)
        #[allow(rustdoc::broken_intra_doc_links)]
        #[arg(long = "origin", value_name = "URL")]
        origins: Vec<String>,
        /// A public key's largest file: bytes, or 10MB, 5MiB... (default: the plan's)
        #[arg(long, value_name = "SIZE", value_parser = crate::config::parse_bytes)]
        max_size: Option<u64>,
        /// A public key's allowed type of the bytes: image/png or a family like image/*
        /// (which leaves out SVG); repeatable (default: any)
        #[arg(long = "type", value_name = "MIME")]
        types: Vec<String>,
        /// The folder of a public key's files (an upload may repeat it, not change it)
        #[arg(long, value_name = "FOLDER")]
        folder: Option<String>,
        #[arg(long)]
        name: Option<String>,
    },
    /// List keys (never their secrets)
    List {
        /// Only the keys of this account (id or name)
        #[arg(long)]
        account: Option<String>,
    },
    /// Revoke a key at once
    Revoke {
        /// The key's id (key_…)
        key_id: String,
    },
    /// Show a secret key's S3 credential (access key id and secret access key) again
    ///
    /// The secret access key is derived from the signing secret, never stored: changing
    /// signing_secret changes every key's. Public keys and revoked keys have none.
    S3 {
        /// The secret key's id (key_…)
        key_id: String,
    },
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum WebhookCommand {
    /// Subscribe a URL to an account's file events; its signing secret is printed once
    Create {
        /// Account id or name
        #[arg(long)]
        account: String,
        /// Where events are POSTed (http or https)
        #[arg(long)]
        url: String,
        /// file.created, file.deleted, file.expired or file.updated; repeatable (default: all)
        #[arg(long = "event", value_name = "EVENT",
              value_parser = clap::builder::PossibleValuesParser::new(crate::domain::webhooks::EVENTS))]
        events: Vec<String>,
    },
    /// List subscriptions (never their secrets)
    List {
        /// Only the subscriptions of this account (id or name)
        #[arg(long)]
        account: Option<String>,
    },
    /// Delete a subscription (its undelivered events are dropped)
    Delete {
        /// The subscription's id (wh_…)
        webhook_id: String,
    },
}

/// The kinds of API key (an upload token is not one: `filestore token create`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KindArg {
    Secret,
    Public,
}

impl From<KindArg> for KeyKind {
    fn from(k: KindArg) -> KeyKind {
        match k {
            KindArg::Secret => KeyKind::Secret,
            KindArg::Public => KeyKind::Public,
        }
    }
}

/// `on` or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Switch {
    On,
    Off,
}

/// One record on stdout, through the printer (its human form may be
/// several lines, each [`shown`](super::output::shown)): a closed stdout
/// (`admin account list | head -0`) ends the command as a success.
fn emit<T: Serialize>(out: Printer, value: &T, human: &str) -> Result<(), ClientError> {
    if out.is_json() {
        let value = serde_json::to_value(value)
            .map_err(|e| ClientError::Protocol(format!("cannot encode record: {e}")))?;
        out.record(&value)
    } else {
        // Lines of the operator's own records (a new secret, then its note).
        human.split('\n').try_for_each(|line| out.line(line))
    }
}

fn account_line(a: &AccountView) -> String {
    let grace = if a.grace_period {
        "  [grace period]"
    } else {
        ""
    };
    format!(
        "{}  {}  plan={}  created {}{grace}",
        a.id, a.name, a.plan, a.created_at
    )
}

/// What `admin account delete --json` prints: the account as it was, and
/// what went with it.
#[derive(Debug, Serialize)]
struct DeletedAccount {
    #[serde(flatten)]
    account: AccountView,
    deleted: bool,
    #[serde(flatten)]
    removed: Removed,
}

fn deleted_line(d: &DeletedAccount) -> String {
    let r = &d.removed;
    format!(
        "deleted account {} ({}): {} files ({}), {} incomplete uploads, {} keys, {} upload \
         tokens, {} webhooks; a running server frees the blobs at its next collector pass",
        d.account.name,
        d.account.id,
        r.files,
        super::format::bytes(r.bytes),
        r.uploads,
        r.keys,
        r.tokens,
        r.webhooks
    )
}

/// `admin account delete` goes on with `--yes`, or when the operator
/// answers y on a terminal; off a terminal without `--yes` it is a usage
/// error (exit 2), so that no script deletes an account by accident.
fn confirm_delete(account: &Account, yes: bool) -> Result<(), CliError> {
    use std::io::IsTerminal;
    if yes {
        return Ok(());
    }
    let refused = |why: &str| CliError::Admin(admin::AdminError::Invalid(why.into()));
    if !std::io::stdin().is_terminal() {
        return Err(refused(
            "deleting an account deletes its files, keys, upload tokens and webhooks: \
             pass --yes (stdin is not a terminal to ask on)",
        ));
    }
    let answer = super::output::ask(&format!(
        "delete account {} ({}) with every file, key, upload token and webhook of it? [y/N] ",
        account.name, account.id
    ));
    if matches!(answer.as_str(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        Err(refused("not deleted (answer y, or pass --yes)"))
    }
}

fn key_line(k: &KeyView) -> String {
    let origins = if k.origins.is_empty() {
        String::new()
    } else {
        format!("  origins={}", k.origins.join(","))
    };
    let mut policy = String::new();
    if let Some(folder) = &k.folder {
        let _ = write!(policy, "  folder={folder}");
    }
    if let Some(max) = k.max_size {
        let _ = write!(policy, "  max_size={max}");
    }
    if !k.types.is_empty() {
        let _ = write!(policy, "  types={}", k.types.join(","));
    }
    let state = if k.revoked { "  [revoked]" } else { "" };
    format!(
        "{}  {}  account={}  created {}{origins}{policy}{state}",
        k.id, k.kind, k.account, k.created_at
    )
}

fn webhook_line(w: &WebhookView) -> String {
    format!(
        "{}  {}  events={}  account={}  created {}",
        w.id,
        w.url,
        w.events.join(","),
        w.account,
        w.created_at
    )
}

pub(crate) fn run(args: AdminArgs, g: &GlobalArgs) -> Result<u8, CliError> {
    super::globals::refuse_client_flags("admin", g, &args.ignored)?;
    let config = Config::load(&Overrides {
        config: g.config.clone(),
        data_dir: g.data_dir.clone(),
        ..Default::default()
    })?;
    match args.command {
        AdminCommand::Backup(a) => {
            return super::backup::backup(&a, &config, g).map(|()| crate::client::error::exit::OK)
        }
        AdminCommand::Restore(a) => {
            return super::backup::restore(a, config, g).map(|()| crate::client::error::exit::OK)
        }
        _ => {}
    }
    // A mistyped --data-dir must not quietly start an empty database.
    // (On PostgreSQL the metadata is not in the data dir.)
    if config.database_url.is_none() && !config.data_dir.is_dir() {
        return Err(crate::config::ConfigError::Invalid(format!(
            "data dir {} does not exist (a typo? `filestore serve` creates it on its first start)",
            config.data_dir.display()
        ))
        .into());
    }
    // The store is async: a small runtime of its own for the command.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ClientError::io("starting the async runtime", e))?;
    runtime.block_on(async {
        let migrate = if matches!(args.command, AdminCommand::Migrate) {
            crate::db::Migrate::Always
        } else {
            crate::db::Migrate::OnlyEmpty
        };
        let meta = crate::db::open_with(
            &config.data_dir,
            config.database_url.as_ref().map(Secret::expose),
            config.statement_timeout,
            migrate,
        )
        .await?;
        if let AdminCommand::Verify(a) = args.command {
            return super::verify::run(&*meta, &config, &a, Printer::new(g.json)).await;
        }
        command(args.command, &*meta, &config, g)
            .await
            .map(|()| crate::client::error::exit::OK)
    })
}

async fn command(
    command: AdminCommand,
    meta: &dyn MetaStore,
    config: &Config,
    g: &GlobalArgs,
) -> Result<(), CliError> {
    let now = Clock::new().now_ms();
    let out = &Printer::new(g.json);
    match command {
        AdminCommand::Account(cmd) => match cmd {
            AccountCommand::Create { name, plan } => {
                let a = admin::create_account(meta, config, name.as_deref(), plan.as_deref(), now)
                    .await?;
                let v = AccountView::from(&a);
                emit(*out, &v, &account_line(&v))?;
                Ok(())
            }
            AccountCommand::List => {
                for a in meta.list_accounts().await? {
                    let v = AccountView::from(&a);
                    emit(*out, &v, &account_line(&v))?;
                }
                Ok(())
            }
            AccountCommand::Set {
                id,
                plan,
                grace_period,
            } => {
                let grace = grace_period.map(|g| g == Switch::On);
                let a = admin::set_account(meta, config, &id, plan.as_deref(), grace).await?;
                let v = AccountView::from(&a);
                emit(*out, &v, &account_line(&v))?;
                Ok(())
            }
            AccountCommand::Usage { id } => {
                let (_, standing) = account_ops::usage(meta, config, &id, &Clock::new()).await?;
                let usage = crate::server::records::usage(standing);
                emit(*out, &usage, &super::usage::lines(&usage).join("\n"))?;
                Ok(())
            }
            AccountCommand::Delete { id, yes } => {
                let account = admin::find_account(meta, &id).await?;
                confirm_delete(&account, yes)?;
                let removed = account_ops::delete(meta, &account, now).await?;
                let v = DeletedAccount {
                    account: AccountView::from(&account),
                    deleted: true,
                    removed,
                };
                emit(*out, &v, &deleted_line(&v))?;
                Ok(())
            }
        },
        AdminCommand::Key(cmd) => match cmd {
            KeyCommand::Create {
                account,
                kind,
                origins,
                max_size,
                types,
                folder,
                name,
            } => {
                let limits = KeyLimits {
                    folder,
                    max_size,
                    types,
                };
                let k = admin::create_key_with(
                    meta,
                    &account,
                    kind.into(),
                    &origins,
                    &limits,
                    name.as_deref(),
                    now,
                )
                .await?;
                let k = s3_keys::with_credential(meta, config, k).await?;
                let mut human = format!(
                    "{}\n(key id {}, {} key of {}; store the key now: it is not shown again)",
                    k.secret.expose(),
                    k.id,
                    k.kind,
                    k.account
                );
                if let (Some(id), Some(secret)) = (&k.s3_access_key_id, &k.s3_secret_access_key) {
                    let _ = write!(
                        human,
                        "\ns3_access_key_id      {id}\ns3_secret_access_key  {}",
                        secret.expose()
                    );
                }
                emit(*out, &k, &human)?;
                Ok(())
            }
            KeyCommand::S3 { key_id } => {
                let c = s3_keys::admin_credential(meta, config, &key_id).await?;
                let human = format!(
                    "access_key_id      {}\nsecret_access_key  {}",
                    c.access_key_id,
                    c.secret_access_key.expose()
                );
                emit(*out, &c, &human)?;
                Ok(())
            }
            KeyCommand::List { account } => {
                for k in admin::list_keys(meta, account.as_deref()).await? {
                    let v = KeyView::from(&k);
                    emit(*out, &v, &key_line(&v))?;
                }
                Ok(())
            }
            KeyCommand::Revoke { key_id } => {
                let k = admin::revoke_key(meta, &key_id, now).await?;
                let v = KeyView::from(&k);
                emit(*out, &v, &key_line(&v))?;
                Ok(())
            }
        },
        AdminCommand::Verify(_) => unreachable!("run() took it"),
        AdminCommand::Migrate => {
            // Opening the store applied what the database lacked.
            let done = serde_json::json!({"migrated": true});
            emit(*out, &done, "the database's schema is this binary's")?;
            Ok(())
        }
        AdminCommand::Plan(cmd) => {
            let apply = matches!(cmd, PlanCommand::Apply);
            let (plans, changes) = plans::sync(meta, config, apply, now).await?;
            if apply {
                for c in &changes {
                    stderr_line(&format!("plan {} changed: {}", c.after.name, c.describe()));
                }
                if changes.is_empty() {
                    stderr_line("the database's plans already match this config");
                }
            }
            for p in plans.iter() {
                let v = PlanView::from(p);
                emit(*out, &v, &plan_line(&v))?;
            }
            Ok(())
        }
        AdminCommand::Backup(_) | AdminCommand::Restore(_) => unreachable!("run() took them"),
        AdminCommand::Webhook(cmd) => match cmd {
            WebhookCommand::Create {
                account,
                url,
                events,
            } => {
                let w = admin::create_webhook(meta, &account, &url, &events, now).await?;
                let human = format!(
                    "{}\n(webhook {} of {}: {} to {}; store the secret now: it is not shown again)",
                    w.secret.expose(),
                    w.id,
                    w.account,
                    w.events.join(","),
                    w.url
                );
                emit(*out, &w, &human)?;
                Ok(())
            }
            WebhookCommand::List { account } => {
                for w in admin::list_webhooks(meta, account.as_deref()).await? {
                    let v = WebhookView::from(&w);
                    emit(*out, &v, &webhook_line(&v))?;
                }
                Ok(())
            }
            WebhookCommand::Delete { webhook_id } => {
                let w = admin::delete_webhook(meta, &webhook_id).await?;
                let v = WebhookView::from(&w);
                emit(*out, &v, &webhook_line(&v))?;
                Ok(())
            }
        },
    }
}
