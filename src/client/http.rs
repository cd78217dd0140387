//! The HTTP client: one `reqwest::Client` (rustls, pooled), the bearer key,
//! the retry loop and the decoding of answers and error envelopes.

use super::error::ClientError;
use super::retry::{retryable_error, retryable_status, server_hint, RetryPolicy};
use crate::api::ErrorBody;
use futures_util::StreamExt;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use reqwest::{RequestBuilder, Response, StatusCode};
use serde::de::DeserializeOwned;
use std::future::Future;
use std::time::Duration;

/// Characters escaped in a path segment (everything but unreserved ones).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Largest error body read to decode an error envelope.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A record as typed, plus the JSON exactly as the server sent it (for `--json`).
#[derive(Debug, Clone)]
pub struct Fetched<T> {
    pub record: T,
    pub raw: serde_json::Value,
}

/// What a retry is about to do, for progress reporting.
#[derive(Debug, Clone)]
pub struct RetryNotice {
    /// The retry about to be made (1-based).
    pub attempt: u32,
    /// Retries allowed in total.
    pub of: u32,
    /// How long until it is made.
    pub wait: Duration,
    /// Why: the status or the transport error.
    pub reason: String,
}

/// A client for one filestore server.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    server: String,
    api_key: Option<String>,
    policy: RetryPolicy,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client for `server` (base URL without `/v1`), optionally with a key.
    pub fn new(
        server: &str,
        api_key: Option<&str>,
        policy: RetryPolicy,
    ) -> Result<Client, ClientError> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("filestore/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .read_timeout(Duration::from_secs(60))
            .tcp_nodelay(true)
            .build()
            .map_err(|e| ClientError::network(&e))?;
        Ok(Client {
            http,
            server: server.trim_end_matches('/').to_string(),
            api_key: api_key.map(str::to_string),
            policy,
        })
    }

    /// The server base URL.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The retry policy.
    pub fn policy(&self) -> RetryPolicy {
        self.policy
    }

    /// `{server}/v1/{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/v1/{}", self.server, path.trim_start_matches('/'))
    }

    /// `{server}/v1/files/{id}{suffix}` with the id escaped.
    pub fn file_url(&self, id: &str, suffix: &str) -> String {
        self.url(&format!(
            "files/{}{suffix}",
            utf8_percent_encode(id, SEGMENT)
        ))
    }

    /// A request with the bearer key (when configured).
    pub fn request(&self, method: reqwest::Method, url: &str) -> RequestBuilder {
        let req = self.http.request(method, url);
        match &self.api_key {
            Some(k) => req.bearer_auth(k),
            None => req,
        }
    }

    /// A request without credentials (CDN URLs: the key never leaves for another host).
    pub fn anonymous(&self, url: &str) -> RequestBuilder {
        self.http.get(url)
    }

    /// Sends the request `make` builds, retrying per the policy. `make` is
    /// called once per attempt (an upload reopens its file). A success status
    /// gives the response; an error status gives the decoded error.
    pub async fn execute<F, Fut>(
        &self,
        mut make: F,
        on_retry: &(dyn Fn(&RetryNotice) + Sync),
    ) -> Result<Response, ClientError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<RequestBuilder, ClientError>>,
    {
        let mut attempt = 0u32;
        loop {
            let request = make().await?;
            let (wait, reason) = match request.send().await {
                Ok(resp) if resp.status().is_success() => return Ok(resp),
                Ok(resp) if retryable_status(resp.status()) && attempt < self.policy.retries => {
                    let status = resp.status();
                    match self.policy.wait(attempt, server_hint(resp.headers())) {
                        Some(wait) => (wait, status_text(status)),
                        None => return Err(decode_error(resp).await),
                    }
                }
                Ok(resp) => {
                    let err = decode_error(resp).await;
                    return Err(if attempt > 0 {
                        retried(err, attempt)
                    } else {
                        err
                    });
                }
                Err(e) if retryable_error(&e) && attempt < self.policy.retries => {
                    let reason = ClientError::network(&e).message().to_string();
                    (self.policy.backoff(attempt), reason)
                }
                Err(e) => {
                    let err = ClientError::network(&e);
                    return Err(if attempt > 0 {
                        retried(err, attempt)
                    } else {
                        err
                    });
                }
            };
            attempt += 1;
            tracing::debug!(attempt, ?wait, %reason, "retrying");
            on_retry(&RetryNotice {
                attempt,
                of: self.policy.retries,
                wait,
                reason,
            });
            tokio::time::sleep(wait).await;
        }
    }

    /// `execute` for requests without a body to rebuild, and no retry reporting.
    pub async fn send(&self, make: impl Fn() -> RequestBuilder) -> Result<Response, ClientError> {
        self.execute(|| std::future::ready(Ok(make())), &|_| {})
            .await
    }

    /// `GET /v1/files/{id}`.
    pub async fn get_file(&self, id: &str) -> Result<Fetched<crate::api::FileRecord>, ClientError> {
        let url = self.file_url(id, "");
        read_json(
            self.send(|| self.request(reqwest::Method::GET, &url))
                .await?,
        )
        .await
    }

    /// `GET /v1/files` with the given filter, page size and cursor.
    pub async fn list(
        &self,
        folder: Option<&str>,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Fetched<crate::api::FileList>, ClientError> {
        let mut url = reqwest::Url::parse(&self.url("files"))
            .map_err(|e| ClientError::usage(format!("invalid server URL: {e}")))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("limit", &limit.to_string());
            if let Some(f) = folder {
                q.append_pair("folder", f);
            }
            if let Some(c) = cursor {
                q.append_pair("cursor", c);
            }
        }
        let resp = self
            .send(|| self.request(reqwest::Method::GET, url.as_str()))
            .await?;
        read_json(resp).await
    }

    /// `DELETE /v1/files/{id}`.
    pub async fn delete(&self, id: &str) -> Result<Fetched<crate::api::DeleteResult>, ClientError> {
        let url = self.file_url(id, "");
        read_json(
            self.send(|| self.request(reqwest::Method::DELETE, &url))
                .await?,
        )
        .await
    }

    /// `POST /v1/files/{id}/signed-url`.
    pub async fn sign(
        &self,
        id: &str,
        expires_in: u64,
    ) -> Result<Fetched<crate::api::SignedUrl>, ClientError> {
        let url = self.file_url(id, "/signed-url");
        let body = crate::api::SignedUrlRequest { expires_in };
        let resp = self
            .send(|| self.request(reqwest::Method::POST, &url).json(&body))
            .await?;
        read_json(resp).await
    }

    /// `GET /v1/usage`.
    pub async fn usage(&self) -> Result<Fetched<crate::api::Usage>, ClientError> {
        let url = self.url("usage");
        read_json(
            self.send(|| self.request(reqwest::Method::GET, &url))
                .await?,
        )
        .await
    }

    /// `GET /v1/health`, once and without retries: a 503 carrying a health
    /// record is an answer (degraded), not an error.
    pub async fn health(&self) -> Result<Fetched<crate::api::Health>, ClientError> {
        let resp = self
            .http
            .get(self.url("health"))
            .send()
            .await
            .map_err(|e| ClientError::network(&e))?;
        let status = resp.status();
        if status.is_success() || status == StatusCode::SERVICE_UNAVAILABLE {
            let body = read_capped(resp, MAX_ERROR_BODY).await?;
            if let Ok(f) = parse_json(&body) {
                return Ok(f);
            }
            return Err(http_error(status, &body));
        }
        Err(decode_error(resp).await)
    }
}

/// Adds "(after N retries)" to an error's message.
fn retried(err: ClientError, attempts: u32) -> ClientError {
    let note = format!(
        "after {attempts} {}",
        if attempts == 1 { "retry" } else { "retries" }
    );
    err.map_message(|m| format!("{m} ({note})"))
}

fn status_text(status: StatusCode) -> String {
    format!(
        "{} {}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    )
    .trim_end()
    .to_string()
}

/// Reads a success response as JSON into `T`, keeping the raw value.
pub async fn read_json<T: DeserializeOwned>(resp: Response) -> Result<Fetched<T>, ClientError> {
    let body = resp.bytes().await.map_err(|e| ClientError::network(&e))?;
    parse_json(&body)
}

fn parse_json<T: DeserializeOwned>(body: &[u8]) -> Result<Fetched<T>, ClientError> {
    let raw: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ClientError::Protocol(format!("the server's answer is not JSON: {e}")))?;
    let record = serde_json::from_value(raw.clone())
        .map_err(|e| ClientError::Protocol(format!("unexpected answer from the server: {e}")))?;
    Ok(Fetched { record, raw })
}

/// Reads at most `cap` bytes of a body.
async fn read_capped(resp: Response, cap: usize) -> Result<Vec<u8>, ClientError> {
    let mut out = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ClientError::network(&e))?;
        let room = cap.saturating_sub(out.len());
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if out.len() >= cap {
            break;
        }
    }
    Ok(out)
}

/// Turns an error response into a `ClientError`, from the `{"error": …}`
/// envelope when there is one (a proxy's HTML page otherwise).
pub async fn decode_error(resp: Response) -> ClientError {
    let status = resp.status();
    match read_capped(resp, MAX_ERROR_BODY).await {
        Ok(body) => http_error(status, &body),
        Err(_) => http_error(status, b""),
    }
}

fn http_error(status: StatusCode, body: &[u8]) -> ClientError {
    if let Ok(env) = serde_json::from_slice::<ErrorBody>(body) {
        return ClientError::Api {
            status: status.as_u16(),
            code: env.error.code,
            message: env.error.message,
        };
    }
    let snippet: String = String::from_utf8_lossy(body)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(200)
        .collect();
    let mut message = status_text(status);
    if !snippet.is_empty() {
        message = format!("{message}: {snippet}");
    }
    ClientError::Api {
        status: status.as_u16(),
        code: format!("http_{}", status.as_u16()),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_is_decoded() {
        let e = http_error(
            StatusCode::NOT_FOUND,
            br#"{"error":{"code":"not_found","message":"File not found"}}"#,
        );
        assert_eq!(e.to_string(), "not_found: File not found");
        assert_eq!(e.exit_code(), 4);
    }

    #[test]
    fn non_json_errors_keep_the_status() {
        let e = http_error(StatusCode::BAD_GATEWAY, b"<html>\n  bad gateway </html>");
        assert_eq!(e.code(), "http_502");
        assert_eq!(e.message(), "502 Bad Gateway: <html> bad gateway </html>");
        assert_eq!(e.exit_code(), 6);
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
