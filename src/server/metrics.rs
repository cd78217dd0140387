//! `--metrics-listen ADDR`: Prometheus text at `/metrics`, on an address of
//! its own so that it never shows on the public listener. The series:
//! - `filestore_http_requests_total{method,route,status}`,
//!   `filestore_http_request_duration_seconds{route}` (histogram),
//!   `filestore_http_request_bytes_total{route}`,
//!   `filestore_http_response_bytes_total{route}` (from [`super::observe`]);
//! - `filestore_uploads_total`, `filestore_upload_bytes_total` (committed uploads);
//! - `filestore_store_errors_total` (blob store failures);
//! - `filestore_db_pool_connections`, `filestore_db_pool_idle_connections`;
//! - `filestore_webhook_outbox_events` (events not delivered yet, read at
//!   scrape time), `filestore_webhook_deliveries_total{result}` (`ok`,
//!   `failed`: to be retried, `dropped`: given up after 24 h);
//! - `filestore_stored_bytes`, `filestore_files`, `filestore_accounts` (the
//!   whole store, read at scrape time from the counters its account rows
//!   keep: one row an account, never a scan of the files; every node of a
//!   PostgreSQL database shows the same), `filestore_disk_free_bytes`
//!   (statvfs of the data dir: the room of SQLite, the upload spool and the
//!   local store's blobs; on the S3 store the blobs are elsewhere, so this
//!   is the node's own room, not the bucket's);
//! - `filestore_build_info{version}`, always 1.
//!
//! Each has its `# HELP` and `# TYPE` lines ([`describe`]).

use crate::service::App;
use axum::http::header;
use axum::routing::get;
use axum::Router;
use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Latency buckets, in seconds: 0.5 ms to 30 s.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Whether a recorder is installed: without one, a request's metrics are
/// not even labelled (their labels are strings made per request).
static ON: AtomicBool = AtomicBool::new(false);

/// Whether the process records metrics.
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The process's metrics recorder, installed on first use (one per process:
/// every server of the process reports into it).
pub(crate) fn recorder() -> Result<&'static PrometheusHandle, String> {
    static HANDLE: OnceLock<Result<PrometheusHandle, String>> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let handle = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), BUCKETS)
                .map_err(|e| e.to_string())?
                .install_recorder()
                .map_err(|e| e.to_string())?;
            describe();
            metrics::gauge!("filestore_build_info", "version" => env!("CARGO_PKG_VERSION"))
                .set(1.0);
            ON.store(true, Ordering::Relaxed);
            Ok(handle)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Serves `/metrics` on `listener` until `shutdown` completes.
pub(crate) async fn serve(
    app: Arc<App>,
    listener: tokio::net::TcpListener,
    handle: &'static PrometheusHandle,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let router = Router::new().route(
        "/metrics",
        get(move || {
            let app = app.clone();
            async move {
                (
                    [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
                    render(&app, handle).await,
                )
            }
        }),
    );
    if let Err(e) = axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
    {
        tracing::error!(error = %e, "metrics listener failed");
    }
}

/// The gauges read at scrape time, then the whole text.
async fn render(app: &App, handle: &PrometheusHandle) -> String {
    if let Some(n) = app.pending_events().await {
        // Gauges are f64; a count past 2^53 events is beyond any outbox.
        #[allow(clippy::cast_precision_loss)]
        metrics::gauge!("filestore_webhook_outbox_events").set(n as f64);
    }
    // Gauges are f64: exact up to 2^53 (8 PiB, 9e15 files).
    #[allow(clippy::cast_precision_loss)]
    if let Some(t) = app.totals().await {
        metrics::gauge!("filestore_stored_bytes").set(t.stored_bytes as f64);
        metrics::gauge!("filestore_files").set(t.files as f64);
        metrics::gauge!("filestore_accounts").set(t.accounts as f64);
    }
    #[allow(clippy::cast_precision_loss)]
    if let Some(n) = app.damaged_files().await {
        metrics::gauge!("filestore_damaged_files").set(n as f64);
    }
    #[allow(clippy::cast_precision_loss)]
    if let Some(free) = app.disk_free() {
        metrics::gauge!("filestore_disk_free_bytes").set(free as f64);
    }
    let pool = app.pool();
    metrics::gauge!("filestore_db_pool_connections").set(f64::from(pool.connections));
    metrics::gauge!("filestore_db_pool_idle_connections").set(f64::from(pool.idle_connections));
    handle.render()
}

/// The `# HELP` text (and unit) of every series: a series recorded anywhere
/// in the crate is described here, once, when the recorder is installed.
fn describe() {
    describe_counter!(
        "filestore_http_requests_total",
        Unit::Count,
        "HTTP requests answered, by method, route template and status."
    );
    describe_histogram!(
        "filestore_http_request_duration_seconds",
        Unit::Seconds,
        "Time from a request's arrival to its response head, by route template."
    );
    describe_counter!(
        "filestore_http_request_bytes_total",
        Unit::Bytes,
        "Request body bytes read, by route template."
    );
    describe_counter!(
        "filestore_http_response_bytes_total",
        Unit::Bytes,
        "Response body bytes announced (Content-Length), by route template."
    );
    describe_counter!(
        "filestore_uploads_total",
        Unit::Count,
        "Uploads committed (a file stored and recorded)."
    );
    describe_counter!(
        "filestore_upload_bytes_total",
        Unit::Bytes,
        "Bytes of the uploads committed."
    );
    describe_counter!(
        "filestore_store_errors_total",
        Unit::Count,
        "Blob store operations that failed."
    );
    describe_gauge!(
        "filestore_db_pool_connections",
        Unit::Count,
        "Connections open in the metadata database pool."
    );
    describe_gauge!(
        "filestore_db_pool_idle_connections",
        Unit::Count,
        "Idle connections in the metadata database pool."
    );
    describe_gauge!(
        "filestore_webhook_outbox_events",
        Unit::Count,
        "Webhook events not delivered yet (read at scrape time)."
    );
    describe_gauge!(
        "filestore_stored_bytes",
        Unit::Bytes,
        "Bytes of every account's files (read at scrape time from the accounts' counters)."
    );
    describe_gauge!(
        "filestore_files",
        Unit::Count,
        "Files of every account (read at scrape time from the accounts' counters)."
    );
    describe_gauge!(
        "filestore_accounts",
        Unit::Count,
        "Accounts (read at scrape time)."
    );
    describe_gauge!(
        "filestore_disk_free_bytes",
        Unit::Bytes,
        "Free bytes on the data dir's volume (database if SQLite, upload spool, local blobs; \
not the S3 bucket's)."
    );
    describe_gauge!(
        "filestore_damaged_files",
        Unit::Count,
        "Files whose stored bytes were found missing or not matching their SHA-256 (read at \
scrape time): never served whole until `admin verify --repair-from` puts them back."
    );
    describe_counter!(
        "filestore_damaged_found_total",
        Unit::Count,
        "Files this node found damaged (a read, the scrub or verify) and marked."
    );
    describe_counter!(
        "filestore_scrub_bytes_total",
        Unit::Bytes,
        "Bytes of blobs the background scrub read again and checked."
    );
    describe_counter!(
        "filestore_webhook_deliveries_total",
        Unit::Count,
        "Webhook delivery attempts, by result: ok, failed (to be retried), dropped (given up)."
    );
    describe_gauge!(
        "filestore_build_info",
        "Always 1; the version label is the running binary's."
    );
}
