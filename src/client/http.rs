//! The HTTP client: pooled rustls `reqwest::Client`s, the bearer key, the
//! retry loop and the decoding of answers and error envelopes.
//!
//! Two connection pools: reqwest's read timeout is a single timer from the
//! start of a request until the response headers (it only resets per chunk
//! once the response body is read), so an upload whose body and storing
//! take longer than the timeout would fail, be sent again and fail again
//! until the retries run out. Uploads
//! therefore go through a client without a read timeout, relying on TCP
//! keepalive to notice a dead peer; everything else (small requests,
//! downloads whose body reads reset the timer) keeps the read timeout.

use super::answer::{
    decode_error, http_error, parse_json, read_capped, status_failure, Fetched, MAX_ERROR_BODY,
};
use super::error::ClientError;
use super::retry::{Failure, Retrier, RetryNotice, RetryPolicy};
use crate::domain::secret::Secret;
use crate::domain::PATH_SEGMENT;
use percent_encoding::utf8_percent_encode;
use reqwest::{RequestBuilder, Response, StatusCode};
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

/// The timeouts of a [`Client`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timeouts {
    /// Establishing a connection.
    pub connect: Duration,
    /// Waiting for the response headers, then for each body chunk (not for
    /// uploads, see the module docs).
    pub read: Duration,
    /// Idle time before TCP keepalive probes start.
    pub keepalive: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            read: Duration::from_mins(1),
            keepalive: Duration::from_secs(30),
        }
    }
}

/// A client for one filestore server.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    /// With the read timeout: every request but uploads.
    http: reqwest::Client,
    /// Without it: uploads, whose server answer comes only once the whole
    /// body is sent and stored.
    upload_http: reqwest::Client,
    server: String,
    api_key: Option<Secret>,
    /// Where the key came from (`the --api-key flag`…), named when the
    /// server refuses it.
    key_source: Option<Arc<str>>,
    policy: RetryPolicy,
    /// Shared by every request of this client: after a 429 with a wait,
    /// no request starts before then (so parallel transfers hold off together
    /// instead of each spending its retries on a spent rate window).
    rate_pause: Arc<Mutex<Option<Instant>>>,
}

impl Client {
    /// A client for `server` (base URL without `/v1`), optionally with a key.
    pub(crate) fn new(
        server: &str,
        api_key: Option<&str>,
        policy: RetryPolicy,
    ) -> Result<Client, ClientError> {
        Client::with_timeouts(server, api_key, policy, Timeouts::default())
    }

    /// [`Client::new`] with other timeouts.
    pub(crate) fn with_timeouts(
        server: &str,
        api_key: Option<&str>,
        policy: RetryPolicy,
        timeouts: Timeouts,
    ) -> Result<Client, ClientError> {
        let builder = || {
            reqwest::Client::builder()
                .user_agent(concat!("filestore/", env!("CARGO_PKG_VERSION")))
                .connect_timeout(timeouts.connect)
                .tcp_keepalive(timeouts.keepalive)
                .tcp_keepalive_interval(Duration::from_secs(10))
                .tcp_keepalive_retries(3)
                .tcp_nodelay(true)
        };
        let build = |b: reqwest::ClientBuilder| b.build().map_err(|e| ClientError::network(&e));
        Ok(Client {
            http: build(builder().read_timeout(timeouts.read))?,
            upload_http: build(builder())?,
            server: server.trim_end_matches('/').to_string(),
            api_key: api_key.map(Secret::new),
            key_source: None,
            policy,
            rate_pause: Arc::default(),
        })
    }

    /// This client, naming `source` as where its key came from when the
    /// server refuses the key (401).
    #[must_use]
    pub(crate) fn with_key_source(mut self, source: &str) -> Client {
        self.key_source = Some(source.into());
        self
    }

    /// `e`, with what the person can do about it: where the key came from
    /// when the server refuses it (`invalid API key (the key from
    /// FILESTORE_API_KEY)`), and how the plan's maximum file size is raised
    /// when a file is over it.
    pub(crate) fn explain(&self, e: ClientError) -> ClientError {
        match &self.key_source {
            Some(source) if e.status() == Some(401) && e.code() == "unauthorized" => {
                return e.map_message(|m| format!("{m} (the key from {source})"));
            }
            _ => {}
        }
        e
    }

    /// The server base URL.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// The retry policy.
    pub(crate) fn policy(&self) -> RetryPolicy {
        self.policy
    }

    /// `{server}/v1/{path}`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}/v1/{}", self.server, path.trim_start_matches('/'))
    }

    /// `{server}/v1/files/{id}{suffix}` with the id escaped.
    pub(crate) fn file_url(&self, id: &str, suffix: &str) -> String {
        self.item_url("files", id, suffix)
    }

    /// `{server}/v1/{collection}/{id}{suffix}` with the id escaped.
    pub(crate) fn item_url(&self, collection: &str, id: &str, suffix: &str) -> String {
        self.url(&format!(
            "{collection}/{}{suffix}",
            utf8_percent_encode(id, PATH_SEGMENT)
        ))
    }

    /// A request with the bearer key (when configured).
    pub(crate) fn request(&self, method: reqwest::Method, url: &str) -> RequestBuilder {
        let req = self.http.request(method, url);
        match &self.api_key {
            Some(k) => req.bearer_auth(k.expose()),
            None => req,
        }
    }

    /// A `POST` with the bearer key on the pool without a read timeout (uploads).
    pub(crate) fn upload_request(&self, url: &str) -> RequestBuilder {
        self.upload_request_with(reqwest::Method::POST, url)
    }

    /// A request with the bearer key on the pool without a read timeout.
    pub(crate) fn upload_request_with(&self, method: reqwest::Method, url: &str) -> RequestBuilder {
        let req = self.upload_http.request(method, url);
        match &self.api_key {
            Some(k) => req.bearer_auth(k.expose()),
            None => req,
        }
    }

    /// A short fingerprint of the API key (never the key): tells apart the
    /// uploads of different keys in the client's own files.
    pub(crate) fn key_fingerprint(&self) -> String {
        use sha2::Digest;
        self.api_key.as_ref().map_or_else(String::new, |k| {
            hex::encode(&sha2::Sha256::digest(k.expose().as_bytes())[..8])
        })
    }

    /// A request without credentials (CDN URLs: the key never leaves for another host).
    pub(crate) fn anonymous(&self, url: &str) -> RequestBuilder {
        self.http.get(url)
    }

    /// Sends the request `make` builds, retrying per the policy. `make` is
    /// called once per attempt (an upload reopens its file). A success status
    /// gives the response; an error status gives the decoded error.
    pub(crate) async fn execute<F, Fut>(
        &self,
        mut make: F,
        on_retry: &(dyn Fn(&RetryNotice) + Sync),
    ) -> Result<Response, ClientError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<RequestBuilder, ClientError>>,
    {
        let mut retrier = Retrier::new(self.policy, on_retry);
        loop {
            self.rate_pause_over(on_retry).await;
            let request = make().await?;
            let failure = match request.send().await {
                Ok(resp) if resp.status().is_success() => return Ok(resp),
                Ok(resp) if resp.status() == StatusCode::TOO_MANY_REQUESTS => {
                    let failure = status_failure(resp).await;
                    let max = self.policy.max_wait;
                    if let Some(wait) = failure.hint.filter(|h| failure.retryable && *h <= max) {
                        self.pause_for_rate_limit(wait);
                    }
                    failure
                }
                Ok(resp) => status_failure(resp).await,
                Err(e) => Failure::transport(&e),
            };
            retrier.after(failure).await.map_err(|e| self.explain(e))?;
        }
    }

    /// Makes every request of this client wait `wait` from now (or longer,
    /// if another 429 asked for more).
    fn pause_for_rate_limit(&self, wait: Duration) {
        let until = Instant::now() + wait;
        let mut pause = self
            .rate_pause
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if pause.is_none_or(|p| p < until) {
            *pause = Some(until);
        }
    }

    /// Waits out a pause that a 429 asked for.
    /// Waits out a rate-limit pause in force, saying so when it is long
    /// enough to notice (a second or more).
    async fn rate_pause_over(&self, on_retry: &(dyn Fn(&RetryNotice) + Sync)) {
        let until = *self
            .rate_pause
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(until) = until {
            let wait = until.saturating_duration_since(Instant::now());
            if wait >= Duration::from_secs(1) {
                on_retry(&RetryNotice {
                    attempt: 0,
                    of: self.policy.retries,
                    wait,
                    reason: "rate limit".into(),
                });
            }
            tokio::time::sleep_until(until).await;
        }
    }

    /// `execute` for requests without a body to rebuild, and no retry reporting.
    pub(crate) async fn send(
        &self,
        make: impl Fn() -> RequestBuilder,
    ) -> Result<Response, ClientError> {
        self.execute(|| std::future::ready(Ok(make())), &|_| {})
            .await
    }
    /// `GET /v1/health`, once and without retries: a 503 carrying a health
    /// record is an answer (degraded), not an error.
    pub(crate) async fn health(&self) -> Result<Fetched<crate::api::Health>, ClientError> {
        let resp = self
            .http
            .get(self.url("health"))
            .send()
            .await
            .map_err(|e| ClientError::network(&e))?;
        let status = resp.status();
        if status.is_success() {
            // A 200 that is not a health record is not the API answering.
            return parse_json(&read_capped(resp, MAX_ERROR_BODY).await?);
        }
        if status == StatusCode::SERVICE_UNAVAILABLE {
            let body = read_capped(resp, MAX_ERROR_BODY).await?;
            if let Ok(f) = parse_json(&body) {
                return Ok(f);
            }
            return Err(http_error(status, &body));
        }
        Err(decode_error(resp).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server whose upload and usage routes answer only after `delay`.
    async fn slow_server(delay: Duration) -> (String, tokio::task::JoinHandle<()>) {
        use axum::routing::{get, post};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let record = serde_json::json!({
            "id": "f_1", "url": null, "name": "a.bin", "folder": null, "size": 4096,
            "type": "application/octet-stream", "private": true,
            "expires_at": null, "created_at": "2025-01-01T00:00:00Z",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000"
        });
        let usage = serde_json::json!({
            "storage_bytes": 0, "bandwidth_bytes": 0, "upload_count": 0,
            "period_start": "2025-01-01T00:00:00Z"
        });
        let app = axum::Router::new()
            .route(
                "/v1/upload",
                post(move |_body: axum::body::Bytes| async move {
                    tokio::time::sleep(delay).await;
                    axum::Json(record)
                }),
            )
            .route(
                "/v1/usage",
                get(move || async move {
                    tokio::time::sleep(delay).await;
                    axum::Json(usage)
                }),
            );
        let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (base, task)
    }

    #[tokio::test]
    async fn uploads_are_not_cut_by_the_read_timeout() {
        // The server takes longer to answer than the read timeout, as a big
        // upload (body sent, then stored) would with the real 60 s one.
        let (base, server) = slow_server(Duration::from_millis(1200)).await;
        let timeouts = Timeouts {
            read: Duration::from_millis(200),
            ..Timeouts::default()
        };
        let client =
            Client::with_timeouts(&base, Some("sk_x"), RetryPolicy::new(0), timeouts).unwrap();
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), [7u8; 4096]).unwrap();
        let meta = crate::client::upload::UploadMeta {
            name: "a.bin".into(),
            ..Default::default()
        };
        let meter = std::sync::Arc::new(crate::client::NoMeter);
        let stored = client
            .upload(file.path(), 4096, &meta, meter, &|_| {})
            .await
            .expect("the upload waits for its answer");
        assert_eq!(stored.record.id, "f_1");

        // Other requests keep the read timeout (so the test above means
        // something): the same delay fails them.
        let err = client.usage().await.unwrap_err();
        assert_eq!(err.code(), "network", "{err}");
        assert!(
            err.message()
                .starts_with(&format!("no answer from {base}/v1/usage: timed out")),
            "{err}"
        );
        server.abort();
    }

    #[tokio::test]
    async fn a_health_200_that_is_not_json_is_a_protocol_error() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new().route(
            "/v1/health",
            axum::routing::get(|| async { "<html>welcome to nginx</html>" }),
        );
        let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let client = Client::new(&base, None, RetryPolicy::new(0)).unwrap();
        let err = client.health().await.unwrap_err();
        assert_eq!(err.code(), "protocol", "{err}");
        assert_eq!(err.exit_code(), 6);
        server.abort();
    }

    #[tokio::test]
    async fn network_errors_are_one_line_with_the_url_and_the_cause() {
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let client = Client::new(&format!("http://{closed}"), None, RetryPolicy::new(0)).unwrap();
        let err = client.usage().await.unwrap_err();
        assert_eq!((err.code(), err.exit_code()), ("network", 6));
        assert_eq!(
            err.message(),
            format!("cannot connect to http://{closed}/v1/usage: connection refused")
        );

        let client = Client::new("http://nowhere.invalid", None, RetryPolicy::new(0)).unwrap();
        let err = client.usage().await.unwrap_err();
        assert!(
            err.message().starts_with(
                "cannot connect to http://nowhere.invalid/v1/usage: DNS lookup of nowhere.invalid failed"
            ),
            "{err}"
        );

        // TLS to a server that speaks plain HTTP.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route("/v1/usage", axum::routing::get(|| async { "x" }));
        let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let client = Client::new(&format!("https://{addr}"), None, RetryPolicy::new(0)).unwrap();
        let err = client.usage().await.unwrap_err();
        assert!(
            err.message().starts_with(&format!(
                "cannot connect to https://{addr}/v1/usage: TLS handshake with 127.0.0.1 failed"
            )),
            "{err}"
        );
        assert!(!err.message().contains("error sending request"), "{err}");
        assert!(!err.message().contains('\n'), "{err}");
        server.abort();
    }

    #[test]
    fn ids_are_escaped_in_paths() {
        let c = Client::new("http://h:1", None, RetryPolicy::new(0)).unwrap();
        assert_eq!(
            c.file_url("f_a/b", "/signed-url"),
            "http://h:1/v1/files/f_a%2Fb/signed-url"
        );
    }
}
