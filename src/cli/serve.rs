//! `filestore serve`: the API and CDN routes on one listener.

use super::error::CliError;
use super::globals::GlobalArgs;
use super::output::stderr_line;
use crate::clock::Clock;
use crate::config::{Config, LogFormat, Overrides};
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
    /// Log lines as text or JSON [env: FILESTORE_LOG_FORMAT] [default: text]
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub log_format: Option<LogFormat>,
    #[command(flatten)]
    pub ignored: super::globals::IgnoredClientFlags,
    #[command(flatten)]
    pub output: super::globals::IgnoredOutputFlags,
}

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
        log_format: args.log_format,
    })?;
    let _logs = super::logging::init(config.log_format, "info", true);
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
    let app = App::open(config, Clock::new()).await?;
    let base_url = app.config.base_url.clone();
    if let Some(boot) = app.bootstrap().await? {
        stderr_line(&format!(
            "filestore: first start: created account \"{}\" ({}) on plan {}",
            boot.account.name, boot.account.id, boot.account.plan
        ));
        stderr_line(&format!(
            "filestore: its secret key, shown only this once: {}",
            boot.secret_key.expose()
        ));
        stderr_line(&format!(
            "filestore login --server {base_url} --api-key {}",
            boot.secret_key.expose()
        ));
    }
    let shared = app.config.database_url.is_some();
    stderr_line(&format!(
        "filestore: serving {base_url} on {bound} (data {}, {} blob store, metadata in {})",
        app.config.data_dir.display(),
        app.store.kind(),
        if shared { "PostgreSQL" } else { "SQLite" }
    ));
    if shared && app.store.kind() == "local" {
        stderr_line(
            "filestore: warning: blobs on this machine's disk with a shared database: \
             other nodes cannot serve them (several nodes need storage.backend = \"s3\")",
        );
    }
    if let Some(m) = &metrics {
        if let Ok(addr) = m.local_addr() {
            stderr_line(&format!("filestore: metrics at http://{addr}/metrics"));
        }
    }
    crate::server::run(app, listener, metrics, shutdown_signal()).await?;
    stderr_line("filestore: stopped");
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
    stderr_line("filestore: shutting down, finishing requests in flight");
}
