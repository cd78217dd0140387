//! `filestore serve`: the API and CDN routes on one listener.

use super::error::CliError;
use super::globals::GlobalArgs;
use super::logging::{self, notice, Level};
use crate::clock::Clock;
use crate::config::{Config, LogFormat, Overrides};
use crate::server::{Door, Listener};
use crate::service::App;

#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on [env: FILESTORE_LISTEN] [default: 127.0.0.1:8080]
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Public address of the API [env: FILESTORE_BASE_URL] [default: http://<listen>]
    // (clap's help text, not HTML)
    #[allow(rustdoc::invalid_html_tags)]
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Address files are served from [env: FILESTORE_CDN_URL] [default: base URL]
    #[arg(long, value_name = "URL")]
    pub cdn_url: Option<String>,
    /// Serve Prometheus metrics at /metrics on this address [env: FILESTORE_METRICS_LISTEN] [default: off]
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,
    /// Open the S3 door on this address [env: FILESTORE_S3_LISTEN] [default: off]
    #[arg(long, value_name = "ADDR")]
    pub s3_listen: Option<String>,
    /// Log lines as text or JSON [env: FILESTORE_LOG_FORMAT] [default: text]
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub log_format: Option<LogFormat>,

    /// On PostgreSQL, migrate an existing older schema (without it, serve refuses to start on
    /// one and names `filestore admin migrate`; an empty database is always set up)
    #[arg(long)]
    pub migrate: bool,
    #[command(flatten)]
    pub ignored: super::globals::IgnoredClientFlags,
    #[command(flatten)]
    pub output: super::globals::IgnoredOutputFlags,
}

/// Errors before the config is read (a runtime that cannot start, a config
/// that cannot be read) are reported in the form the flag or the
/// environment asks for (the file's `server.log_format` is not known yet).
pub(crate) fn use_early_log_format(args: &ServeArgs) {
    if let Some(format) = args.log_format.or_else(|| {
        std::env::var("FILESTORE_LOG_FORMAT")
            .ok()
            .and_then(|v| v.parse().ok())
    }) {
        logging::use_format(format);
    }
}

/// Serves until a signal stops it ([`use_early_log_format`] has run).
pub(crate) async fn run(args: ServeArgs, g: &GlobalArgs) -> Result<(), CliError> {
    super::globals::refuse_client_flags("serve", g, &args.ignored)?;
    super::globals::refuse_output_flags(g, &args.output)?;
    let mut config = Config::load(&Overrides {
        config: g.config.clone(),
        data_dir: g.data_dir.clone(),
        listen: args.listen,
        base_url: args.base_url,
        cdn_url: args.cdn_url,
        metrics_listen: args.metrics_listen,
        s3_listen: args.s3_listen,
        log_format: args.log_format,
    })?;
    let logs = logging::init(config.log_format, "info", true);
    if let Some(write) = logs.plain_writer() {
        crate::server::access::write_directly(
            matches!(config.log_format, crate::config::LogFormat::Json),
            write,
        );
    }
    // Before anything is bound or opened; held until serve returns.
    let _lock = crate::service::data_dir::claim(&config)?;
    let listen_error = |source| CliError::Listen {
        addr: config.listen.clone(),
        source,
    };
    let listener = tokio::net::TcpListener::bind(&config.listen)
        .await
        .map_err(listen_error)?;
    let bound = listener.local_addr().map_err(listen_error)?;
    // With `--listen 127.0.0.1:0` the default URLs name the port really bound.
    let derived = format!("http://{}", config.listen);
    if config.base_url == derived {
        config.base_url = format!("http://{bound}");
    }
    if config.cdn_url == derived {
        config.cdn_url = config.base_url.clone();
    }
    let metrics = match &config.metrics_listen {
        Some(addr) => Some(
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| CliError::Listen {
                    addr: addr.clone(),
                    source,
                })?,
        ),
        None => None,
    };
    let s3 = match config.s3.listen.clone() {
        Some(addr) => {
            let l = tokio::net::TcpListener::bind(&addr)
                .await
                .map_err(|source| CliError::Listen {
                    addr: addr.clone(),
                    source,
                })?;
            // With `--s3-listen 127.0.0.1:0` the default URL names the port bound.
            if config.s3.url == format!("http://{addr}") {
                if let Ok(bound) = l.local_addr() {
                    config.s3.url = format!("http://{bound}");
                }
            }
            Some(l)
        }
        None => None,
    };
    config.migrate = args.migrate;
    let app = App::open(config, Clock::new()).await?;
    let base_url = app.config.base_url.clone();
    if let Some(boot) = app.bootstrap().await? {
        let key = boot.secret_key.expose();
        notice(
            Level::Info,
            &format!(
                "filestore: first start: created account \"{}\" ({}) on plan {}",
                boot.account.name, boot.account.id, boot.account.plan
            ),
            &[
                ("account", boot.account.id.as_str().into()),
                ("account_name", boot.account.name.as_str().into()),
                ("plan", boot.account.plan.as_str().into()),
            ],
        );
        notice(
            Level::Info,
            &format!("filestore: its secret key, shown only this once: {key}"),
            &[("key", key.into())],
        );
        // The line to paste; in JSON its `login` field carries the command
        // (`jq -r 'select(.login).login'`) and `key` the key alone.
        let login = format!("filestore login --server {base_url} --api-key {key}");
        notice(
            Level::Info,
            &login,
            &[("login", login.clone().into()), ("key", key.into())],
        );
    }
    let shared = app.config.database_url.is_some();
    let data_dir = app.config.data_dir.display().to_string();
    let metadata = if shared { "PostgreSQL" } else { "SQLite" };
    // The runtime `cli::runtime::serve` chose.
    let runtime = tokio::runtime::Handle::current();
    let threads = runtime.metrics().num_workers();
    let scheduler = match runtime.runtime_flavor() {
        tokio::runtime::RuntimeFlavor::CurrentThread => "current-thread",
        _ => "multi-thread",
    };
    notice(
        Level::Info,
        &format!(
            "filestore: serving {base_url} on {bound} (data {data_dir}, {} blob store, metadata in {metadata}, {threads} thread{})",
            app.store.kind(),
            if threads == 1 { "" } else { "s" },
        ),
        &[
            ("base_url", base_url.clone().into()),
            ("listen", bound.to_string().into()),
            ("data_dir", data_dir.into()),
            ("blob_store", app.store.kind().into()),
            ("metadata", metadata.into()),
            ("threads", threads.into()),
            ("scheduler", scheduler.into()),
        ],
    );
    if shared && app.store.kind() == "local" {
        notice(
            Level::Warn,
            "filestore: warning: blobs on this machine's disk with a shared database: \
             other nodes cannot serve them (several nodes need storage.backend = \"s3\")",
            &[],
        );
    }
    if let Some(m) = &metrics {
        if let Ok(addr) = m.local_addr() {
            let url = format!("http://{addr}/metrics");
            notice(
                Level::Info,
                &format!("filestore: metrics at {url}"),
                &[("metrics_url", url.into())],
            );
        }
    }
    let mut doors = vec![Listener {
        door: Door::Api,
        listener,
    }];
    if let Some(listener) = s3 {
        let url = app.config.s3.url.clone();
        let bound = listener
            .local_addr()
            .map_or_else(|_| String::new(), |a| a.to_string());
        notice(
            Level::Info,
            &format!(
                "filestore: S3 door at {url} on {bound} (region {}{})",
                app.config.s3.region,
                app.config
                    .s3
                    .domain
                    .as_deref()
                    .map_or_else(String::new, |d| format!(", buckets also as BUCKET.{d}"))
            ),
            &[
                ("s3_url", url.clone().into()),
                ("s3_listen", bound.into()),
                ("s3_region", app.config.s3.region.clone().into()),
            ],
        );
        doors.push(Listener {
            door: Door::S3,
            listener,
        });
    }
    if let Some(listener) = metrics {
        doors.push(Listener {
            door: Door::Metrics,
            listener,
        });
    }
    crate::server::run(app, doors, shutdown_signal()).await?;
    // The log's last lines (requests that finished while draining) first.
    drop(logs);
    notice(Level::Info, "filestore: stopped", &[]);
    Ok(())
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    notice(
        Level::Info,
        "filestore: shutting down, finishing requests in flight",
        &[],
    );
}
