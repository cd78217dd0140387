//! The /v1 + CDN door: the router, its layers, its rendering of the
//! service's values and errors, and how `serve` runs its list of listeners
//! (tests bind `127.0.0.1:0` and launch in-process).

pub(crate) mod access;
pub(crate) mod auth;
pub(crate) mod cdn;
pub(crate) mod conditional;
pub(crate) mod conn;
pub(crate) mod console;
pub(crate) mod cors;
pub(crate) mod drain;
pub(crate) mod envelope;
pub(crate) mod error;
mod file_headers;
pub(crate) mod form;
pub(crate) mod handlers;
mod history;
mod hooks;
mod hot;
mod keys;
pub(crate) mod metrics;
pub(crate) mod observe;
pub(crate) mod openapi;
mod paths;
mod query;
pub(crate) mod records;
pub(crate) mod request_id;
mod s3_credentials;
mod selection;
pub(crate) mod tokens;
pub(crate) mod tus;
mod variant;
mod whoami;

use crate::service::{bandwidth, collector, md5_fill, scrub, webhooks, App, StartError};
use auth::Access;
use axum::extract::DefaultBodyLimit;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::{delete, get, head, post};
use axum::Router;
use std::future::Future;
use std::sync::Arc;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;

/// The whole application: `/v1` API and CDN routes.
pub(crate) fn router(app: Arc<App>) -> Router {
    let guard = |access: Access| from_fn_with_state((app.clone(), access), auth::guard);
    let upload = Router::new()
        .route(
            "/v1/upload",
            post(handlers::upload)
                // Inside the guard: only an authenticated upload gets the rest
                // of a refused body read (a caller without a key gets no such service).
                .route_layer(from_fn(drain::drain_refused_bodies))
                .route_layer(guard(Access::Upload))
                // Uploads are limited by the plan, in the stream, not by axum's 2 MB default.
                .route_layer(DefaultBodyLimit::disable())
                .options(|| async { axum::http::StatusCode::NO_CONTENT }),
        )
        .layer(from_fn_with_state(app.clone(), cors::upload_cors));
    let resumable = Router::new()
        .route(
            "/v1/uploads",
            post(tus::create)
                .route_layer(from_fn(drain::drain_refused_bodies))
                .route_layer(from_fn(tus::require_version))
                .route_layer(guard(Access::Upload))
                .route_layer(DefaultBodyLimit::disable())
                .options(tus::options)
                .merge(get(tus::list).route_layer(guard(Access::Secret))),
        )
        .route(
            "/v1/uploads/{id}",
            head(tus::head)
                .get(tus::status)
                .patch(tus::patch)
                .delete(tus::terminate)
                .route_layer(from_fn(drain::drain_refused_bodies))
                .route_layer(from_fn(tus::require_version))
                .route_layer(guard(Access::UploadContinue))
                .route_layer(DefaultBodyLimit::disable())
                .options(tus::options),
        )
        .layer(from_fn(tus::resumable_header))
        .layer(from_fn_with_state(app.clone(), cors::tus_cors));
    let api = Router::new()
        .route(
            "/v1/files",
            get(handlers::list).route_layer(guard(Access::Secret)),
        )
        .route(
            "/v1/folders",
            get(handlers::folders)
                .delete(handlers::delete_folder)
                .route_layer(guard(Access::Secret)),
        )
        .route(
            "/v1/folders/zip",
            get(handlers::folder_zip).route_layer(guard(Access::SecretLimited)),
        )
        .route(
            "/v1/files/{id}",
            get(handlers::get)
                .delete(handlers::delete)
                .patch(handlers::update)
                .route_layer(guard(Access::Secret)),
        )
        .route(
            "/v1/files/at",
            get(paths::file_at).route_layer(guard(Access::Secret)),
        )
        .route(
            "/v1/files/delete",
            post(handlers::delete_many).route_layer(guard(Access::Secret)),
        )
        .route(
            "/v1/files/{id}/copy",
            post(handlers::copy).route_layer(guard(Access::SecretLimited)),
        )
        .route(
            "/v1/files/{id}/signed-url",
            post(handlers::signed_url).route_layer(guard(Access::SecretLimited)),
        )
        .route(
            "/v1/upload-tokens",
            post(tokens::create)
                .route_layer(guard(Access::SecretLimited))
                .merge(get(tokens::list).route_layer(guard(Access::Secret))),
        )
        .route(
            "/v1/upload-tokens/{id}",
            get(tokens::get)
                .delete(tokens::revoke)
                .route_layer(guard(Access::Secret)),
        )
        .route(
            "/v1/usage",
            get(handlers::usage).route_layer(guard(Access::SecretLimited)),
        )
        .route(
            "/v1/usage/history",
            get(history::usage_history).route_layer(guard(Access::SecretLimited)),
        )
        .route(
            "/v1/files/zip",
            post(selection::zip_files).route_layer(guard(Access::SecretLimited)),
        )
        .route(
            "/v1/keys",
            post(keys::create)
                .route_layer(guard(Access::SecretLimited))
                .merge(get(keys::list).route_layer(guard(Access::Secret))),
        )
        .route(
            "/v1/keys/{id}",
            delete(keys::revoke).route_layer(guard(Access::Secret)),
        )
        .route(
            "/v1/webhooks",
            post(hooks::create)
                .route_layer(guard(Access::SecretLimited))
                .merge(get(hooks::list).route_layer(guard(Access::Secret))),
        )
        .route(
            "/v1/webhooks/{id}",
            delete(hooks::delete).route_layer(guard(Access::Secret)),
        )
        .route(
            "/v1/webhooks/{id}/deliveries",
            get(hooks::deliveries).route_layer(guard(Access::Secret)),
        )
        .route(
            "/v1/s3/credentials",
            get(s3_credentials::credentials).route_layer(guard(Access::SecretLimited)),
        )
        .route(
            "/v1/whoami",
            get(whoami::whoami).route_layer(guard(Access::SecretLimited)),
        )
        .route("/v1/health", get(handlers::health))
        .route(
            "/live/{account}/{file}/{name}",
            get(cdn::serve_file)
                .head(cdn::serve_file)
                .options(|| async { axum::http::StatusCode::NO_CONTENT })
                .route_layer(from_fn(cors::cdn_cors)),
        )
        .route(
            "/p/{account}/{*path}",
            get(cdn::serve_path)
                .head(cdn::serve_path)
                .options(|| async { axum::http::StatusCode::NO_CONTENT })
                .route_layer(from_fn(cors::cdn_cors)),
        );
    let max_header_bytes = app.config.max_header_bytes;
    upload
        .merge(resumable)
        .merge(api)
        .merge(openapi::routes())
        .merge(console::routes(&app))
        .fallback(handlers::not_found)
        .method_not_allowed_fallback(handlers::method_not_allowed)
        .with_state(app)
        .layer(from_fn(envelope::errors_as_envelopes))
        .layer(CatchPanicLayer::custom(envelope::panic_response))
        .layer(from_fn(move |req, next| {
            envelope::limit_headers(max_header_bytes, req, next)
        }))
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .layer(from_fn(observe::observe))
}

/// The tracing span of a request: method and path only. The query string is
/// left out, since a signed URL's carries its signature.
fn request_span(req: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    tracing::info_span!("request", method = %req.method(), path = %req.uri().path())
}

/// What a listener of `serve` speaks: each door renders its own wire
/// format and errors over the one service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// The `/v1` API and the CDN routes.
    Api,
    /// The Prometheus metrics (`/metrics`).
    Metrics,
    /// The S3 door (CONTRACT §18).
    S3,
}

/// A listener and the door it opens.
#[derive(Debug)]
pub struct Listener {
    pub door: Door,
    pub listener: tokio::net::TcpListener,
}

/// Serves `app` on each of `listeners` until `shutdown` completes, then
/// finishes the requests in flight. Runs the collector, the bandwidth
/// flusher, the MD5 fill, the scrub and the webhook sender alongside.
pub async fn run(
    app: Arc<App>,
    listeners: Vec<Listener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), StartError> {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let until_stopped = move || {
        let mut stopped = stopped.clone();
        async move {
            // A closed channel (the sender gone) stops too.
            let _ = stopped.wait_for(|s| *s).await;
        }
    };
    let mut api = Vec::new();
    let mut s3 = Vec::new();
    let mut others = Vec::new();
    for l in listeners {
        match l.door {
            Door::Api => api.push(l.listener),
            Door::S3 => s3.push(l.listener),
            Door::Metrics => {
                let handle = metrics::recorder().map_err(StartError::Metrics)?;
                let app = app.clone();
                others.push(tokio::spawn(metrics::serve(
                    app,
                    l.listener,
                    handle,
                    until_stopped(),
                )));
            }
        }
    }
    collector::recover(&app).await;
    collector::run_once(&app).await;
    let collector = collector::spawn(app.clone(), app.config.reap_interval);
    let flusher = bandwidth::spawn(app.clone());
    let md5s = md5_fill::spawn(app.clone());
    let scrubber = scrub::spawn(app.clone());
    let sender = webhooks::spawn(app.clone(), records::event_body);
    let mut limits = app.config.limits;
    if let Some(room) = conn::connection_room() {
        if room < limits.max_connections {
            tracing::warn!(
                max_connections = limits.max_connections,
                room,
                "max_connections lowered to fit the open-file limit"
            );
            limits.max_connections = room;
        }
    }
    let fit = conn::connections_within(limits.memory_budget);
    if fit < limits.max_connections {
        tracing::warn!(
            max_connections = limits.max_connections,
            fit,
            memory_budget = limits.memory_budget,
            "max_connections lowered to fit the memory budget"
        );
        limits.max_connections = fit;
    }
    tracing::info!(
        memory_budget = limits.memory_budget,
        download_buffers = app.downloads.count(),
        max_connections = limits.max_connections,
        stall_timeout = ?limits.stall_timeout,
        "under the memory budget: a window per download beyond its socket"
    );
    let mut doors = Vec::new();
    for listener in api {
        let front = hot::front(app.clone());
        let router = router(app.clone());
        let stopping = until_stopped();
        doors.push(tokio::spawn(conn::serve(
            listener,
            router,
            Some(front),
            limits,
            stopping,
        )));
    }
    for listener in s3 {
        let label = |mut req: axum::extract::Request, next: axum::middleware::Next| async move {
            req.extensions_mut().insert(observe::RouteLabel("s3"));
            // One id for the access line, X-Request-Id and x-amz-request-id.
            let id = req
                .extensions()
                .get::<request_id::Tag>()
                .map(|t| t.id().to_string());
            if let Some(id) = id {
                req.extensions_mut().insert(crate::s3door::RequestId(id));
            }
            next.run(req).await
        };
        let door = crate::s3door::router(app.clone())
            .layer(from_fn(observe::observe))
            .layer(from_fn(label));
        doors.push(tokio::spawn(conn::serve(
            listener,
            door,
            None,
            limits,
            until_stopped(),
        )));
    }
    shutdown.await;
    let _ = stop.send(true);
    // Each door finishes the requests it has in flight.
    for door in doors.into_iter().chain(others) {
        let _ = door.await;
    }
    collector.abort();
    flusher.abort();
    md5s.abort();
    if let Some(s) = scrubber {
        s.abort();
    }
    sender.abort();
    bandwidth::flush(&app).await;
    Ok(())
}
