//! Talking to the S3 door (CONTRACT §18) as an S3 client does: a server
//! with the door on (`TestOptions { s3: true, .. }` in-process, or
//! `process::Serve::new(dir).s3()` for the binary), a key's credential from
//! `GET /v1/s3/credentials`, and an `aws_sdk_s3::Client` signing with it
//! (SigV4, path style, no retries):
//!
//!     let srv = TestServer::start_with(TestOptions { s3: true, ..Default::default() }).await;
//!     let creds = s3door::credentials(&srv.http, &srv.base_url, &srv.secret_key).await;
//!     let s3 = s3door::client(&creds);          // endpoint: srv.s3_url
//!     s3.list_buckets().send().await

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use serde_json::Value;

/// `GET {base}/v1/s3/credentials` with `key` (asserting 200): the object
/// `{"access_key_id", "secret_access_key", "endpoint", "region"}`.
pub async fn credentials(http: &reqwest::Client, base: &str, key: &str) -> Value {
    let r = http
        .get(format!("{base}/v1/s3/credentials"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    assert_eq!(status, 200, "GET /v1/s3/credentials: {body}");
    body
}

/// A client of the door at `creds["endpoint"]`, signing with the
/// credential and region of `creds` (as [`credentials`] gives them).
pub fn client(creds: &Value) -> aws_sdk_s3::Client {
    let field = |k: &str| {
        creds[k]
            .as_str()
            .unwrap_or_else(|| panic!("{k} in {creds}"))
    };
    client_with(
        field("endpoint"),
        field("access_key_id"),
        field("secret_access_key"),
        field("region"),
    )
}

/// A client of the door at `endpoint` with this credential and region.
pub fn client_with(
    endpoint: &str,
    access_key_id: &str,
    secret_access_key: &str,
    region: &str,
) -> aws_sdk_s3::Client {
    let conf = aws_sdk_s3::config::Builder::new()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region.to_string()))
        .endpoint_url(endpoint)
        .force_path_style(true)
        .credentials_provider(Credentials::new(
            access_key_id,
            secret_access_key,
            None,
            None,
            "filestore-test",
        ))
        .retry_config(aws_sdk_s3::config::retry::RetryConfig::disabled())
        .build();
    aws_sdk_s3::Client::from_conf(conf)
}

/// The HTTP status and S3 error code of a failed call (None, None: no
/// answer from the door at all).
pub fn failure<E>(e: &aws_sdk_s3::error::SdkError<E>) -> (Option<u16>, Option<String>)
where
    E: aws_sdk_s3::error::ProvideErrorMetadata,
{
    use aws_sdk_s3::error::ProvideErrorMetadata as _;
    match e {
        aws_sdk_s3::error::SdkError::ServiceError(s) => (
            Some(s.raw().status().as_u16()),
            s.err().code().map(str::to_string),
        ),
        aws_sdk_s3::error::SdkError::ResponseError(r) => (Some(r.raw().status().as_u16()), None),
        _ => (None, e.code().map(str::to_string)),
    }
}
