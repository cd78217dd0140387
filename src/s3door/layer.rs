//! What the door does around s3s (docs/s3-door-research.md §1.6): a
//! request id on every answer (`x-amz-request-id`, and `<RequestId>` with
//! `<Resource>` in error XML, which s3s leaves out); CORS preflights for
//! any origin (a signature is the permission); Signature V2 and a bad
//! `X-Amz-Expires` refused as §18 says, before s3s would judge them.

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use std::fmt::Write as _;

/// The longest error body rewritten (s3s's are a few hundred bytes).
const MAX_ERROR_BODY: usize = 64 * 1024;
/// The longest body the door reads whole (an XML or JSON document):
/// DeleteObjects of 1,000 keys is about 100 KB.
pub(crate) const WHOLE_MAX: usize = 2 << 20;
/// The longest presigned URL lifetime (7 days).
const MAX_EXPIRES: i64 = 604_800;

/// A fresh request id (16 hex digits, as S3's).
pub(crate) fn request_id() -> String {
    format!("{:016X}", rand::random::<u64>())
}

/// An S3 error answer written by the door itself.
pub(crate) fn error(
    status: StatusCode,
    code: &str,
    message: &str,
    resource: &str,
    id: &str,
) -> Response<Body> {
    error_with(status, code, message, "", resource, id)
}

/// An S3 error answer with `extra` (elements, already escaped) after its
/// message.
fn error_with(
    status: StatusCode,
    code: &str,
    message: &str,
    extra: &str,
    resource: &str,
    id: &str,
) -> Response<Body> {
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>{}</Message>{extra}<Resource>{}</Resource><RequestId>{id}</RequestId></Error>",
        escape(message),
        escape(resource)
    );
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/xml")
        .body(Body::from(xml))
        .expect("a well-formed response")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A refusal the door makes before s3s sees the request, if any.
pub(crate) fn refuse_early(req: &Request<Body>, id: &str) -> Option<Response<Body>> {
    let resource = req.uri().path();
    let auth = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let query: Vec<(String, String)> = req
        .uri()
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let has = |k: &str| query.iter().any(|(n, _)| n == k);
    // Signature V2 in a header: refused (every client signs headers with
    // V4). A V2 *presigned URL* is what aws-cli v1's `s3 presign` and
    // boto3's `generate_presigned_url` make by default: s3s checks it, and
    // its lifetime is held to V4's 7 days (docs/s3.md, "Presigned URLs").
    if auth.starts_with("AWS ") {
        return Some(error(
            StatusCode::FORBIDDEN,
            "AccessDenied",
            "Signature Version 2 is not supported: sign requests with Signature Version 4",
            resource,
            id,
        ));
    }
    // s3s takes a query with `Signature` for a V2 presigned URL whatever
    // else it holds (`X-Amz-Signature` too): so does this check.
    if has("Signature") {
        let expires = query
            .iter()
            .find(|(n, _)| n == "Expires")
            .and_then(|(_, v)| v.parse::<i64>().ok());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        match expires {
            Some(at) if at <= now => {
                return Some(error(
                    StatusCode::FORBIDDEN,
                    "AccessDenied",
                    "Request has expired",
                    resource,
                    id,
                ))
            }
            Some(at) if at - now <= MAX_EXPIRES => {}
            _ => {
                return Some(error(
                    StatusCode::BAD_REQUEST,
                    "AuthorizationQueryParametersError",
                    "Expires must be a time within 604800 seconds from now",
                    resource,
                    id,
                ))
            }
        }
    }
    if let Some(names) = unsigned_headers(req.headers(), auth, &query) {
        return Some(not_signed(&names, resource, id));
    }
    if let Some((_, v)) = query.iter().find(|(n, _)| n == "X-Amz-Expires") {
        match v.parse::<i64>() {
            Ok(0) => {
                return Some(error(
                    StatusCode::FORBIDDEN,
                    "AccessDenied",
                    "Request has expired",
                    resource,
                    id,
                ))
            }
            Ok(n) if (1..=MAX_EXPIRES).contains(&n) => {}
            _ => {
                return Some(error(
                    StatusCode::BAD_REQUEST,
                    "AuthorizationQueryParametersError",
                    "X-Amz-Expires must be a number of seconds from 1 to 604800",
                    resource,
                    id,
                ))
            }
        }
    }
    None
}

/// The headers a V4 signature must cover but does not, comma-separated:
/// `host` and every `x-amz-*` header the request carries, as S3 requires
/// (its `HeadersNotSigned`). Without this a presigned PUT's holder could add
/// `x-amz-copy-source` or `x-amz-acl` and s3s would act on them unsigned.
/// The signature is found where s3s looks for it, in its order: a V2
/// presigned URL (`Signature`: its string to sign covers every `x-amz-*`
/// header, `None`), a V4 one (`X-Amz-Signature`, whatever the
/// `Authorization` header says), then any `Authorization` header (s3s
/// takes its first word for the algorithm and never checks it). A signed
/// list that cannot be found counts as empty. `None` for an anonymous
/// request.
fn unsigned_headers(headers: &HeaderMap, auth: &str, query: &[(String, String)]) -> Option<String> {
    let has = |k: &str| query.iter().any(|(n, _)| n == k);
    let signed = if has("Signature") {
        return None;
    } else if has("X-Amz-Signature") {
        query
            .iter()
            .find(|(n, _)| n == "X-Amz-SignedHeaders")
            .map_or("", |(_, v)| v.as_str())
    } else if headers.contains_key(header::AUTHORIZATION) {
        auth.split(',')
            .find_map(|part| part.trim().strip_prefix("SignedHeaders="))
            .unwrap_or("")
    } else {
        return None;
    };
    let signed: Vec<String> = signed.split(';').map(str::to_ascii_lowercase).collect();
    let missing: Vec<&str> = std::iter::once("host")
        .chain(
            headers
                .keys()
                .map(axum::http::HeaderName::as_str)
                .filter(|n| n.starts_with("x-amz-")),
        )
        .filter(|n| !signed.iter().any(|s| s == n))
        .collect();
    (!missing.is_empty()).then(|| missing.join(", "))
}

/// S3's refusal of a request with headers its signature does not cover.
fn not_signed(names: &str, resource: &str, id: &str) -> Response<Body> {
    error_with(
        StatusCode::FORBIDDEN,
        "AccessDenied",
        "There were headers present in the request which were not signed",
        &format!("<HeadersNotSigned>{}</HeadersNotSigned>", escape(names)),
        resource,
        id,
    )
}

/// The query keys with which s3s routes a PUT to an operation that reads
/// its body whole (a bucket's or an object's XML or JSON document).
const DOCUMENT_KEYS: [&str; 22] = [
    "accelerate",
    "acl",
    "analytics",
    "cors",
    "encryption",
    "intelligent-tiering",
    "inventory",
    "legal-hold",
    "lifecycle",
    "logging",
    "metrics",
    "notification",
    "object-lock",
    "ownershipControls",
    "policy",
    "publicAccessBlock",
    "replication",
    "requestPayment",
    "retention",
    "tagging",
    "versioning",
    "website",
];

/// Whether s3s would read the request's body whole (else it streams it,
/// or ignores it): a POST (DeleteObjects, Complete; a form upload never
/// comes here), or a PUT with one of [`DOCUMENT_KEYS`]. s3s takes such a
/// body over its limit for an internal error (500): the door reads these
/// itself, up to [`WHOLE_MAX`]. Decided by the query alone: every other
/// PUT (an object's, or CreateBucket's optional document, which keeps
/// s3s's limit) streams, however the host names the bucket.
pub(crate) fn read_whole_first(req: &axum::http::request::Parts) -> bool {
    req.method == Method::POST
        || (req.method == Method::PUT
            && form_urlencoded::parse(req.uri.query().unwrap_or("").as_bytes())
                .any(|(k, _)| DOCUMENT_KEYS.contains(&&*k)))
}

/// The bytes all bodies being read whole may hold at once (a flood of
/// such requests, signed or not, waits for no one: 503 past it).
const WHOLE_BUDGET: u32 = 64 << 20;

/// Room for one body read whole, held until its answer: `None` when the
/// budget is spent.
pub(crate) fn whole_room(len: usize) -> Option<tokio::sync::SemaphorePermit<'static>> {
    static BUDGET: tokio::sync::Semaphore =
        tokio::sync::Semaphore::const_new(WHOLE_BUDGET as usize);
    BUDGET
        .try_acquire_many(u32::try_from(len).unwrap_or(u32::MAX))
        .ok()
}

/// The body s3s is given: streamed, or read whole first
/// ([`read_whole_first`]) with its room in the budget, to be held until
/// the answer.
pub(crate) async fn for_s3s(
    parts: &axum::http::request::Parts,
    body: Body,
) -> Result<(s3s::Body, Option<tokio::sync::SemaphorePermit<'static>>), Unread> {
    if !read_whole_first(parts) {
        return Ok((s3s::Body::http_body_unsync(body), None));
    }
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let held = whole_room(declared.map_or(WHOLE_MAX, |n| n.min(WHOLE_MAX))).ok_or(Unread::Busy)?;
    let bytes = read_whole(body, declared).await?;
    Ok((s3s::Body::from(bytes), Some(held)))
}

/// Why a body the door reads whole was not read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unread {
    TooBig,
    Broken,
    /// The budget of all bodies being read whole is spent.
    Busy,
}

/// How much of a body over [`WHOLE_MAX`] is read and dropped before the
/// refusal: a client still sending when the connection closed would see
/// a reset, not the answer.
const DRAIN_MAX: usize = 8 << 20;

/// A body read whole, at most [`WHOLE_MAX`] bytes (`declared`: its
/// `Content-Length`, refused at once when larger).
pub(crate) async fn read_whole(
    body: Body,
    declared: Option<usize>,
) -> Result<bytes::Bytes, Unread> {
    use futures_util::StreamExt;
    let mut stream = body.into_data_stream();
    let mut whole = Vec::with_capacity(declared.unwrap_or(0).min(WHOLE_MAX));
    let mut over = usize::from(declared.is_some_and(|n| n > WHOLE_MAX));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| Unread::Broken)?;
        if over > 0 || whole.len() + chunk.len() > WHOLE_MAX {
            over += chunk.len();
            if over > DRAIN_MAX {
                break;
            }
            continue;
        }
        whole.extend_from_slice(&chunk);
    }
    if over > 0 {
        return Err(Unread::TooBig);
    }
    Ok(whole.into())
}

/// S3's answer to a body [`read_whole`] did not read.
pub(crate) fn unread(why: &Unread, resource: &str, id: &str) -> Response<Body> {
    match why {
        Unread::TooBig => error(
            StatusCode::BAD_REQUEST,
            "MaxMessageLengthExceeded",
            "Your request was too big.",
            resource,
            id,
        ),
        Unread::Broken => error(
            StatusCode::BAD_REQUEST,
            "IncompleteBody",
            "The request body could not be read.",
            resource,
            id,
        ),
        Unread::Busy => {
            let mut resp = error(
                StatusCode::SERVICE_UNAVAILABLE,
                "SlowDown",
                "Please reduce your request rate.",
                resource,
                id,
            );
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            resp
        }
    }
}

/// The answer to a CORS preflight: any origin, the methods S3 has, the
/// headers asked for.
pub(crate) fn preflight(req: &Request<Body>) -> Option<Response<Body>> {
    if req.method() != Method::OPTIONS {
        return None;
    }
    let headers = req.headers();
    let Some(origin) = headers.get(header::ORIGIN).cloned() else {
        return Some(error(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "Insufficient information. Origin request header needed.",
            req.uri().path(),
            "",
        ));
    };
    let mut resp = Response::builder()
        .status(StatusCode::OK)
        .header(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin)
        .header(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            "GET, PUT, POST, DELETE, HEAD",
        )
        .header(header::ACCESS_CONTROL_MAX_AGE, "3600")
        .header(
            header::VARY,
            "Origin, Access-Control-Request-Headers, Access-Control-Request-Method",
        );
    if let Some(h) = headers.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
        resp = resp.header(header::ACCESS_CONTROL_ALLOW_HEADERS, h.clone());
    }
    resp.body(Body::empty()).ok()
}

/// Headers every answer gets: its request id, and for a request from a
/// page, its origin allowed with `ETag` exposed.
pub(crate) fn decorate(headers: &mut HeaderMap, id: &str, origin: Option<&HeaderValue>) {
    if let Ok(v) = HeaderValue::from_str(id) {
        headers.insert("x-amz-request-id", v);
    }
    if let Some(o) = origin {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, o.clone());
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("ETag, x-amz-request-id, x-amz-version-id, x-amz-checksum-crc32, x-amz-checksum-crc32c, x-amz-checksum-crc64nvme, x-amz-checksum-sha1, x-amz-checksum-sha256"),
        );
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
    }
}

/// An error answer of s3s's with `<Resource>` and `<RequestId>` added.
pub(crate) async fn complete_error(
    resp: Response<Body>,
    resource: &str,
    id: &str,
) -> Response<Body> {
    let is_xml = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().ends_with(b"xml"));
    if resp.status().as_u16() < 400 || !is_xml {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
        return error(
            parts.status,
            "InternalError",
            "error body too long",
            resource,
            id,
        );
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut extra = String::new();
    if !text.contains("<Message>") {
        let code = text
            .split("<Code>")
            .nth(1)
            .and_then(|t| t.split("</Code>").next())
            .unwrap_or("");
        let _ = write!(
            extra,
            "<Message>{}</Message>",
            escape(default_message(code))
        );
    }
    if !text.contains("<Resource>") {
        let _ = write!(extra, "<Resource>{}</Resource>", escape(resource));
    }
    if !text.contains("<RequestId>") {
        let _ = write!(extra, "<RequestId>{id}</RequestId>");
    }
    let text = match text.rfind("</Error>") {
        Some(at) if !extra.is_empty() => format!("{}{extra}{}", &text[..at], &text[at..]),
        _ => text.into_owned(),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(text))
}

/// What an error s3s wrote without a message says (as AWS words it).
fn default_message(code: &str) -> &'static str {
    match code {
        "InvalidBucketName" => "The specified bucket is not valid.",
        "SignatureDoesNotMatch" => "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
        "InvalidAccessKeyId" => "The AWS Access Key Id you provided does not exist in our records.",
        "AccessDenied" => "Access Denied",
        "NoSuchBucket" => "The specified bucket does not exist",
        "NoSuchKey" => "The specified key does not exist.",
        "MalformedXML" => "The XML you provided was not well-formed or did not validate against our published schema",
        "NotImplemented" => "A header or operation you provided implies functionality that is not implemented",
        "RequestTimeTooSkewed" => "The difference between the request time and the server's time is too large.",
        "MissingContentLength" => "You must provide the Content-Length HTTP header.",
        "InvalidRange" => "The requested range is not satisfiable",
        "PreconditionFailed" => "At least one of the pre-conditions you specified did not hold",
        _ => "The request was refused",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(uri: &str, auth: Option<&str>) -> Request<Body> {
        let mut b = Request::builder().uri(uri);
        if let Some(a) = auth {
            b = b.header(header::AUTHORIZATION, a);
        }
        b.body(Body::empty()).unwrap()
    }

    #[test]
    fn signature_v2_and_bad_expiries_are_refused_as_section_18_says() {
        let status = |r: Request<Body>| refuse_early(&r, "X").map(|r| r.status().as_u16());
        assert_eq!(status(req("/b/k", Some("AWS key:sig"))), Some(403));
        assert_eq!(
            status(req("/b/k?AWSAccessKeyId=k&Signature=s&Expires=1", None)),
            Some(403)
        );
        // A V2 URL stays V2 (as s3s judges it) with an X-Amz-Signature added.
        assert_eq!(
            status(req(
                "/b/k?AWSAccessKeyId=k&Signature=s&Expires=99999999999&X-Amz-Signature=x",
                None
            )),
            Some(400)
        );
        assert_eq!(status(req("/b/k?X-Amz-Expires=0", None)), Some(403));
        assert_eq!(status(req("/b/k?X-Amz-Expires=-7", None)), Some(400));
        assert_eq!(status(req("/b/k?X-Amz-Expires=604801", None)), Some(400));
        assert_eq!(status(req("/b/k?X-Amz-Expires=60", None)), None);
        assert_eq!(
            status(req(
                "/b/k",
                Some("AWS4-HMAC-SHA256 Credential=x, SignedHeaders=host, Signature=y")
            )),
            None
        );
    }

    #[tokio::test]
    async fn every_x_amz_header_and_host_must_be_signed() {
        let status = |uri: &str, auth: Option<&str>, extra: &[(&str, &str)]| {
            let mut r = req(uri, auth);
            for (k, v) in extra {
                let name = axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap();
                r.headers_mut()
                    .insert(name, HeaderValue::from_str(v).unwrap());
            }
            refuse_early(&r, "X").map(|r| r.status().as_u16())
        };
        let v4 = |signed: &str| {
            format!("AWS4-HMAC-SHA256 Credential=k/20261203/us-east-1/s3/aws4_request, SignedHeaders={signed}, Signature=ab")
        };
        let copy = [("x-amz-copy-source", "/b/secret")];
        let pre = "/b/k?X-Amz-Signature=ab&X-Amz-SignedHeaders=host&X-Amz-Expires=60";
        assert_eq!(status(pre, None, &[]), None);
        assert_eq!(status(pre, None, &[("content-type", "x/y")]), None);
        assert_eq!(status(pre, None, &copy), Some(403));
        let no_host = "/b/k?X-Amz-Signature=ab&X-Amz-SignedHeaders=x-amz-acl";
        assert_eq!(
            status(no_host, None, &[("x-amz-acl", "private")]),
            Some(403)
        );
        let signed = v4("host;x-amz-content-sha256;x-amz-date");
        let sha = [
            ("x-amz-content-sha256", "UNSIGNED-PAYLOAD"),
            ("x-amz-date", "20261203T000000Z"),
        ];
        assert_eq!(status("/b/k", Some(&signed), &sha), None);
        let acl = [sha[0], sha[1], ("x-amz-acl", "public-read")];
        assert_eq!(status("/b/k", Some(&signed), &acl), Some(403));
        let with_acl = v4("host;x-amz-acl;x-amz-content-sha256;x-amz-date");
        assert_eq!(status("/b/k", Some(&with_acl), &acl), None);
        assert_eq!(status("/b/k", Some(&v4("x-amz-date")), &[]), Some(403));
        // The signature s3s checks decides: a presigned URL's, whatever an
        // added Authorization header lists; any first word of the header.
        let claims = v4("host;x-amz-copy-source");
        assert_eq!(status(pre, Some(&claims), &copy), Some(403));
        let other_word = signed.replacen("AWS4-HMAC-SHA256", "X", 1);
        assert_eq!(status("/b/k", Some(&other_word), &acl), Some(403));
        assert_eq!(status("/b/k", Some("X garbage"), &[]), Some(403));
        let no_list = "/b/k?X-Amz-Signature=ab&X-Amz-Expires=60";
        assert_eq!(status(no_list, None, &[]), Some(403));
        // Anonymous, and V2's presigned URL (its signature covers x-amz-*):
        // s3s judges them.
        assert_eq!(status("/b/k", None, &copy), None);
        let soon = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 60;
        let v2 = format!("/b/k?AWSAccessKeyId=k&Signature=s&Expires={soon}");
        assert_eq!(status(&v2, None, &copy), None);

        let mut r = req(pre, None);
        r.headers_mut()
            .insert("x-amz-acl", HeaderValue::from_static("public-read"));
        r.headers_mut()
            .insert("x-amz-meta-a", HeaderValue::from_static("1"));
        let resp = refuse_early(&r, "ID3").unwrap();
        let body = axum::body::to_bytes(resp.into_body(), 1 << 16)
            .await
            .unwrap();
        let body = std::str::from_utf8(&body).unwrap();
        assert!(body.contains("<Code>AccessDenied</Code>"), "{body}");
        assert!(
            body.contains("<HeadersNotSigned>x-amz-acl, x-amz-meta-a</HeadersNotSigned>"),
            "{body}"
        );
        assert!(body.contains("<RequestId>ID3</RequestId>"), "{body}");
    }

    #[tokio::test]
    async fn only_documents_are_read_whole_and_bounded() {
        let whole_first = |method: &str, uri: &str| {
            let (parts, ()) = Request::builder()
                .method(method)
                .uri(uri)
                .header(header::HOST, "b.s3.example.com:8333")
                .body(())
                .unwrap()
                .into_parts();
            read_whole_first(&parts)
        };
        // Every object's PUT streams, whatever the host or key.
        for uri in [
            "/b/k",
            "/k",
            "/",
            "/b",
            "/b%2Fk",
            "/b/dir/k?partNumber=1&uploadId=u",
            "/b/k?x-id=PutObject",
        ] {
            assert!(!whole_first("PUT", uri), "{uri}");
        }
        for uri in [
            "/b/k?tagging",
            "/b/k?acl",
            "/b?versioning",
            "/?cors",
            "/b/k?legal-hold",
        ] {
            assert!(whole_first("PUT", uri), "{uri}");
        }
        assert!(whole_first("POST", "/b?delete"));
        assert!(whole_first("POST", "/b/k?uploadId=u"));
        for method in ["GET", "HEAD", "DELETE"] {
            assert!(!whole_first(method, "/b/k?tagging"), "{method}");
        }

        let small = read_whole(Body::from(vec![7u8; WHOLE_MAX]), None)
            .await
            .unwrap();
        assert_eq!(small.len(), WHOLE_MAX);
        let chunks = futures_util::stream::iter(
            (0..3).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![1u8; 1 << 20]))),
        );
        assert_eq!(
            read_whole(Body::from_stream(chunks), None).await,
            Err(Unread::TooBig)
        );
        let broken = futures_util::stream::iter([
            Ok(bytes::Bytes::from_static(b"<Delete>")),
            Err(std::io::Error::other("cut")),
        ]);
        assert_eq!(
            read_whole(Body::from_stream(broken), None).await,
            Err(Unread::Broken)
        );
        let declared_big = Some(WHOLE_MAX + 1);
        assert_eq!(
            read_whole(Body::from("<Delete/>"), declared_big).await,
            Err(Unread::TooBig)
        );
        // The budget of all bodies read at once.
        assert!(whole_room(WHOLE_BUDGET as usize + 1).is_none());
        let most = whole_room(WHOLE_BUDGET as usize - 1).unwrap();
        assert!(whole_room(2).is_none());
        drop(most);
        assert!(whole_room(WHOLE_MAX).is_some());
        let busy = unread(&Unread::Busy, "/b", "ID5");
        assert_eq!(busy.status(), 503);
        assert_eq!(busy.headers()[header::RETRY_AFTER], "1");
        let resp = unread(&Unread::TooBig, "/b", "ID4");
        assert_eq!(resp.status(), 400);
        let body = axum::body::to_bytes(resp.into_body(), 1 << 16)
            .await
            .unwrap();
        assert!(std::str::from_utf8(&body)
            .unwrap()
            .contains("<Code>MaxMessageLengthExceeded</Code>"));
    }

    #[tokio::test]
    async fn error_xml_gains_its_resource_and_request_id() {
        let resp = Response::builder()
            .status(404)
            .header(header::CONTENT_TYPE, "application/xml")
            .body(Body::from(
                "<Error><Code>NoSuchKey</Code><Message>m</Message></Error>",
            ))
            .unwrap();
        let done = complete_error(resp, "/b/k&", "ID1").await;
        let body = axum::body::to_bytes(done.into_body(), 1 << 16)
            .await
            .unwrap();
        assert_eq!(
            std::str::from_utf8(&body).unwrap(),
            "<Error><Code>NoSuchKey</Code><Message>m</Message><Resource>/b/k&amp;</Resource><RequestId>ID1</RequestId></Error>"
        );
        let bare = Response::builder()
            .status(400)
            .header(header::CONTENT_TYPE, "application/xml")
            .body(Body::from("<Error><Code>InvalidBucketName</Code></Error>"))
            .unwrap();
        let done = complete_error(bare, "/t1", "ID2").await;
        let body = axum::body::to_bytes(done.into_body(), 1 << 16)
            .await
            .unwrap();
        assert!(std::str::from_utf8(&body)
            .unwrap()
            .contains("<Message>The specified bucket is not valid.</Message>"));
    }
}
