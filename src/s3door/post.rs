//! POST Object: a browser's form upload with a policy signed by the S3
//! secret (V4, or V2 `AWSAccessKeyId` + `signature`), read here as a
//! stream, not by s3s (which holds the whole file in memory before it
//! checks anything: docs/s3-door-research.md §1.4). The fields come first
//! and are judged (signature, expiry, every condition) before a byte of
//! the file is stored; the file streams into the upload pipeline with the
//! policy's `content-length-range` enforced as it arrives.

use super::digests::{Checked, Declared};
use super::errors;
use super::keys::{self, Target};
use super::render;
use super::Ops;
use crate::domain::metadata::Metadata;
use crate::service::upload::{Upload, UploadFields, UploadRequest};
use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::{header, StatusCode};
use axum::response::Response;
use base64::Engine as _;
use futures_util::StreamExt;
use hmac::{Hmac, Mac};
use s3s::post_policy::{PostPolicy, PostPolicyCondition};
use s3s::{s3_error, S3Error, S3ErrorCode};
use std::collections::BTreeMap;

/// The longest text field, and all of them together.
const MAX_FIELD: usize = 64 * 1024;
const MAX_FIELDS: usize = 256 * 1024;

/// Whether `req` is a POST Object: a multipart form posted to a bucket.
pub(crate) fn is_post_object(req: &Request) -> Option<String> {
    if req.method() != axum::http::Method::POST {
        return None;
    }
    let form = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("multipart/form-data"));
    let path = req
        .uri()
        .path()
        .trim_start_matches('/')
        .trim_end_matches('/');
    (form && !path.is_empty() && !path.contains('/')).then(|| path.to_string())
}

impl Ops {
    /// Answers a POST Object to `bucket`.
    pub(crate) async fn post_object(
        &self,
        bucket: String,
        req: Request,
    ) -> Result<Response, S3Error> {
        let form = Multipart::from_request(req, &())
            .await
            .map_err(|e| s3_error!(MalformedPOSTRequest, "{e}"))?;
        self.post_form(bucket, form).await
    }

    async fn post_form(&self, bucket: String, mut form: Multipart) -> Result<Response, S3Error> {
        let mut fields: BTreeMap<String, String> = BTreeMap::new();
        let mut total = 0;
        while let Some(mut field) = form.next_field().await.map_err(|e| malformed(&e))? {
            let name = field.name().unwrap_or("").to_ascii_lowercase();
            if name == "file" {
                let file_name = field.file_name().unwrap_or("").to_string();
                let part_type = field.content_type().map(str::to_string);
                let judged = self.judge(&bucket, &fields, &file_name).await?;
                let stream =
                    (&mut field).map(|c| c.map_err(|e| std::io::Error::other(e.to_string())));
                return self.store_posted(judged, fields, part_type, stream).await;
            }
            let mut value = Vec::new();
            while let Some(chunk) = field.chunk().await.map_err(|e| malformed(&e))? {
                value.extend_from_slice(&chunk);
                total += chunk.len();
                if value.len() > MAX_FIELD || total > MAX_FIELDS {
                    return Err(s3_error!(
                        MaxPostPreDataLengthExceededError,
                        "Your POST request fields preceding the upload file were too large."
                    ));
                }
            }
            let value = String::from_utf8(value)
                .map_err(|_| s3_error!(InvalidArgument, "Field {name} is not UTF-8"))?;
            fields.insert(name, value);
        }
        Err(s3_error!(
            InvalidArgument,
            "POST requires exactly one file upload per request."
        ))
    }

    /// The caller, key and limits a form's fields allow, or S3's refusal.
    async fn judge(
        &self,
        bucket: &str,
        fields: &BTreeMap<String, String>,
        file_name: &str,
    ) -> Result<Judged, S3Error> {
        let get = |k: &str| fields.get(k).map(String::as_str);
        let key_field = get("key").ok_or_else(|| {
            s3_error!(
                InvalidArgument,
                "Bucket POST must contain a field named 'key'."
            )
        })?;
        let key = key_field.replace("${filename}", file_name);
        let Some(policy_b64) = get("policy") else {
            return Err(s3_error!(
                AccessDenied,
                "Anonymous POST requests are not allowed: sign a policy"
            ));
        };
        let (access_key, signature_ok): (String, Checker) =
            if let Some(cred) = get("x-amz-credential") {
                if get("x-amz-algorithm") != Some("AWS4-HMAC-SHA256") {
                    return Err(s3_error!(
                        InvalidArgument,
                        "x-amz-algorithm must be AWS4-HMAC-SHA256"
                    ));
                }
                let mut parts = cred.split('/');
                let (Some(ak), Some(date), Some(region), Some(service), Some("aws4_request")) = (
                    parts.next(),
                    parts.next(),
                    parts.next(),
                    parts.next(),
                    parts.next(),
                ) else {
                    return Err(s3_error!(InvalidArgument, "x-amz-credential is malformed"));
                };
                let given = get("x-amz-signature")
                    .ok_or_else(missing_signature)?
                    .to_string();
                let (date, region, service, policy) = (
                    date.to_string(),
                    region.to_string(),
                    service.to_string(),
                    policy_b64.to_string(),
                );
                (
                    ak.to_string(),
                    Box::new(move |secret: &str| {
                        let k = sign_v4_key(secret, &date, &region, &service);
                        let want = hex::encode(hmac_sha256(&k, policy.as_bytes()));
                        constant_eq(&want, &given)
                    }),
                )
            } else if let Some(ak) = get("awsaccesskeyid") {
                let given = get("signature").ok_or_else(missing_signature)?.to_string();
                let policy = policy_b64.to_string();
                (
                    ak.to_string(),
                    Box::new(move |secret: &str| {
                        let mut mac = Hmac::<sha1::Sha1>::new_from_slice(secret.as_bytes())
                            .expect("HMAC takes any key length");
                        mac.update(policy.as_bytes());
                        let want = base64::engine::general_purpose::STANDARD
                            .encode(mac.finalize().into_bytes());
                        constant_eq(&want, &given)
                    }),
                )
            } else {
                return Err(s3_error!(
                    AccessDenied,
                    "Anonymous POST requests are not allowed: sign a policy"
                ));
            };
        let caller = self
            .app
            .s3_caller(&access_key)
            .await
            .map_err(errors::key)?
            .ok_or_else(|| {
                s3_error!(
                    InvalidAccessKeyId,
                    "The AWS Access Key Id you provided does not exist in our records."
                )
            })?;
        if !signature_ok(&self.app.signer.s3_secret(&access_key)) {
            return Err(s3_error!(
                SignatureDoesNotMatch,
                "The request signature we calculated does not match the signature you provided."
            ));
        }
        let policy = PostPolicy::from_base64(policy_b64)
            .map_err(|e| s3_error!(InvalidPolicyDocument, "Invalid Policy: {e}"))?;
        let expires = render::unix_secs(&policy.expiration);
        if expires <= self.app.clock.now().timestamp() {
            return Err(s3_error!(
                AccessDenied,
                "Invalid according to Policy: Policy expired."
            ));
        }
        let mut range = None;
        for c in &policy.conditions {
            let value_of = |field: &str| -> Option<String> {
                match field {
                    "bucket" => Some(bucket.to_string()),
                    "key" => Some(key.clone()),
                    f => fields.get(f).cloned(),
                }
            };
            let holds = match c {
                PostPolicyCondition::Eq { field, value } => {
                    value_of(field).as_deref() == Some(value.as_str())
                }
                PostPolicyCondition::StartsWith { field, prefix } => {
                    value_of(field).is_some_and(|v| v.starts_with(prefix.as_str()))
                }
                PostPolicyCondition::ContentLengthRange { min, max } => {
                    range = Some((*min, *max));
                    true
                }
            };
            if !holds {
                return Err(s3_error!(
                    AccessDenied,
                    "Invalid according to Policy: Policy Condition failed: {c:?}"
                ));
            }
        }
        // Every field the form sends must be named by a condition, as AWS
        // has it (but those it exempts).
        for name in fields.keys() {
            let exempt = matches!(
                name.as_str(),
                "policy"
                    | "x-amz-signature"
                    | "signature"
                    | "awsaccesskeyid"
                    | "file"
                    | "x-amz-algorithm"
                    | "x-amz-credential"
                    | "x-amz-date"
                    | "x-amz-security-token"
            ) || name.starts_with("x-ignore-");
            let named = policy.conditions.iter().any(|c| match c {
                PostPolicyCondition::Eq { field, .. }
                | PostPolicyCondition::StartsWith { field, .. } => field == name,
                PostPolicyCondition::ContentLengthRange { .. } => false,
            });
            if !exempt && !named {
                return Err(S3Error::with_message(
                    S3ErrorCode::AccessDenied,
                    format!("Invalid according to Policy: Extra input fields: {name}"),
                ));
            }
        }
        let target = keys::target(bucket, &key)?;
        Ok(Judged {
            caller,
            bucket: bucket.to_string(),
            key,
            target,
            range,
        })
    }

    async fn store_posted<S>(
        &self,
        judged: Judged,
        fields: BTreeMap<String, String>,
        part_type: Option<String>,
        stream: S,
    ) -> Result<Response, S3Error>
    where
        S: futures_util::Stream<Item = std::io::Result<bytes::Bytes>> + Send + Unpin,
    {
        let Judged {
            caller,
            bucket,
            key,
            target,
            range,
        } = judged;
        let Target::File { folder, name } = target else {
            return Err(keys::invalid("A folder marker cannot be posted"));
        };
        self.bucket_for_write(&caller, &bucket).await?;
        let get = |k: &str| fields.get(k).cloned();
        let acl = get("acl").map(s3s::dto::ObjectCannedACL::from);
        let private = render::private_of(acl.as_ref())?;
        let mut meta = Metadata::new();
        for (k, v) in &fields {
            if let Some(m) = k.strip_prefix("x-amz-meta-") {
                meta.insert(m.to_string(), v.clone());
            }
        }
        crate::domain::metadata::check(&meta)
            .map_err(|why| keys::invalid(&format!("x-amz-meta-*: {why}")))?;
        let attrs = render::attrs_in(
            get("cache-control"),
            get("content-disposition"),
            get("content-encoding"),
            None,
            get("expires")
                .as_deref()
                .and_then(render::parse_http_date)
                .as_ref(),
        );
        let content_type = get("content-type").or(part_type);
        self.app.s3_may_write(&caller).await.map_err(errors::key)?;
        let upload = Upload::start(
            &self.app,
            UploadRequest {
                caller: caller.clone(),
                content_length: None,
                idempotency_key: None,
                content_digest: None,
                held: None,
                // An S3 PUT answers with the ETag, the MD5.
                md5_now: true,
            },
        )
        .await
        .map_err(errors::key)?;
        let max = range.map(|(_, max)| max);
        let limited = Limited {
            inner: stream,
            seen: 0,
            max,
        };
        let body = limited.map(|c| c.map_err(|e| -> super::digests::BodyError { Box::new(e) }));
        let (checked, outcome) = Checked::new(body, Declared::default(), false, None);
        let part = match upload
            .receive(&name, content_type.as_deref(), checked)
            .await
        {
            Ok(p) => p,
            Err(e) => {
                let error = outcome.lock().expect("outcome lock").error.take();
                return Err(error.unwrap_or_else(|| errors::key(e)));
            }
        };
        let received = outcome.lock().expect("outcome lock").received.clone();
        let stored = upload
            .finish(
                part,
                UploadFields {
                    folder: Some(folder),
                    private: Some(private),
                    metadata: meta,
                    replace: Some(true),
                    attrs,
                    ..UploadFields::default()
                },
            )
            .await;
        let stored = stored.map_err(errors::key)?;
        if let Some((min, _)) = range {
            if stored.size < min {
                // Judged once the size is known: the file goes again.
                let _ =
                    crate::service::files::delete(&self.app, &caller.account.id, &stored.id).await;
                return Err(s3_error!(
                    EntityTooSmall,
                    "Your proposed upload is smaller than the minimum allowed size"
                ));
            }
        }
        let etag = received
            .md5
            .or(stored.md5.clone())
            .unwrap_or(stored.sha256.clone());
        let location = format!("{}/{}/{}", self.app.config.s3.url, bucket, key);
        if let Some(redirect) = get("success_action_redirect").filter(|r| !r.is_empty()) {
            let sep = if redirect.contains('?') { '&' } else { '?' };
            let q = form_urlencoded::Serializer::new(String::new())
                .append_pair("bucket", &bucket)
                .append_pair("key", &key)
                .append_pair("etag", &format!("\"{etag}\""))
                .finish();
            return Ok(Response::builder()
                .status(StatusCode::SEE_OTHER)
                .header(header::LOCATION, format!("{redirect}{sep}{q}"))
                .body(Body::empty())
                .expect("a well-formed response"));
        }
        let status = match get("success_action_status").as_deref() {
            Some("200") => StatusCode::OK,
            Some("201") => StatusCode::CREATED,
            _ => StatusCode::NO_CONTENT,
        };
        let builder = Response::builder()
            .status(status)
            .header(header::ETAG, format!("\"{etag}\""))
            .header(header::LOCATION, &location);
        let body = if status == StatusCode::CREATED {
            Body::from(format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<PostResponse><Location>{}</Location><Bucket>{}</Bucket><Key>{}</Key><ETag>\"{etag}\"</ETag></PostResponse>",
                xml(&location),
                xml(&bucket),
                xml(&key)
            ))
        } else {
            Body::empty()
        };
        Ok(builder.body(body).expect("a well-formed response"))
    }
}

/// Whether a form's signature is right for a given secret.
type Checker = Box<dyn Fn(&str) -> bool + Send>;

struct Judged {
    caller: crate::service::caller::Caller,
    bucket: String,
    key: String,
    target: Target,
    range: Option<(u64, u64)>,
}

/// The file's bytes, refused past the policy's largest size.
struct Limited<S> {
    inner: S,
    seen: u64,
    max: Option<u64>,
}

impl<S> futures_util::Stream for Limited<S>
where
    S: futures_util::Stream<Item = std::io::Result<bytes::Bytes>> + Unpin,
{
    type Item = std::io::Result<bytes::Bytes>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        let next = self.inner.poll_next_unpin(cx);
        if let std::task::Poll::Ready(Some(Ok(chunk))) = &next {
            self.seen += chunk.len() as u64;
            if self.max.is_some_and(|m| self.seen > m) {
                return std::task::Poll::Ready(Some(Err(std::io::Error::other(TOO_LARGE))));
            }
        }
        next
    }
}

const TOO_LARGE: &str = "EntityTooLarge: Your proposed upload exceeds the maximum allowed size";

fn missing_signature() -> S3Error {
    s3_error!(
        InvalidArgument,
        "Bucket POST must contain a field named 'Signature'"
    )
}

fn malformed(e: &axum::extract::multipart::MultipartError) -> S3Error {
    s3_error!(
        MalformedPOSTRequest,
        "The body of your POST request is not well-formed multipart/form-data: {}",
        e.body_text()
    )
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// SigV4's signing key.
fn sign_v4_key(secret: &str, date: &str, region: &str, service: &str) -> Vec<u8> {
    let k = hmac_sha256(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k = hmac_sha256(&k, region.as_bytes());
    let k = hmac_sha256(&k, service.as_bytes());
    hmac_sha256(&k, b"aws4_request")
}

fn constant_eq(a: &str, b: &str) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Map a POST's S3 refusal to an answer.
pub(crate) fn answer(e: S3Error) -> Response {
    match e.to_http_response() {
        Ok(r) => r.map(Body::new),
        Err(_) => Response::builder()
            .status(StatusCode::INTERNAL_SERVER_ERROR)
            .body(Body::empty())
            .expect("a static response"),
    }
}
