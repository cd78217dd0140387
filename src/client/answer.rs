//! Reading the server's answers: JSON records (with their raw value), and
//! error responses decoded from the `{"error": …}` envelope.

use super::error::ClientError;
use super::retry::{status_text, Failure};
use crate::api::{ErrorBody, LIMIT_HEADER, PLAN_MAX_FILE_SIZE};
use futures_util::StreamExt;
use reqwest::{Response, StatusCode};
use serde::de::DeserializeOwned;

/// Largest error body read to decode an error envelope.
pub(super) const MAX_ERROR_BODY: usize = 64 * 1024;

/// A record as typed, plus the JSON exactly as the server sent it (for `--json`).
#[derive(Debug, Clone)]
pub(crate) struct Fetched<T> {
    pub record: T,
    pub raw: serde_json::Value,
}
/// An error answer as a failed attempt: its status, its wait hint and its
/// decoded error.
pub(crate) async fn status_failure(resp: Response) -> Failure {
    let (status, headers) = (resp.status(), resp.headers().clone());
    Failure::status(status, &headers, decode_error(resp).await)
}

/// Reads a success response as JSON into `T`, keeping the raw value.
pub(crate) async fn read_json<T: DeserializeOwned>(
    resp: Response,
) -> Result<Fetched<T>, ClientError> {
    let body = resp.bytes().await.map_err(|e| ClientError::network(&e))?;
    parse_json(&body)
}

pub(super) fn parse_json<T: DeserializeOwned>(body: &[u8]) -> Result<Fetched<T>, ClientError> {
    let raw: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ClientError::Protocol(format!("the server's answer is not JSON: {e}")))?;
    let record = serde_json::from_value(raw.clone())
        .map_err(|e| ClientError::Protocol(format!("unexpected answer from the server: {e}")))?;
    Ok(Fetched { record, raw })
}

/// Reads at most `cap` bytes of a body.
pub(super) async fn read_capped(resp: Response, cap: usize) -> Result<Vec<u8>, ClientError> {
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
pub(crate) async fn decode_error(resp: Response) -> ClientError {
    let status = resp.status();
    let limit = resp.headers().get(LIMIT_HEADER).cloned();
    let e = match read_capped(resp, MAX_ERROR_BODY).await {
        Ok(body) => http_error(status, &body),
        Err(_) => http_error(status, b""),
    };
    match limit {
        Some(l) if l.as_bytes() == PLAN_MAX_FILE_SIZE.as_bytes() => {
            e.map_message(|m| format!("{m}{PLAN_HINT}"))
        }
        _ => e,
    }
}

/// Added to the 413 of a file over the plan's maximum file size.
pub(crate) const PLAN_HINT: &str = "; an operator raises it by moving the account to a plan \
with a larger max_file_size: `filestore admin account set ACCOUNT --plan PLAN`";

pub(super) fn http_error(status: StatusCode, body: &[u8]) -> ClientError {
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
}
