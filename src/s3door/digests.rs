//! A PUT's body as the door receives it: the bytes s3s has decoded (and
//! whose SigV4 chunk signatures it checked), counted and hashed on the way
//! to the upload pipeline, then checked at their end against what the
//! sender declared: `Content-MD5`, an `x-amz-checksum-*` in a header or a
//! trailer, `x-amz-decoded-content-length`. A mismatch ends the stream with
//! an error, so the pipeline stores nothing (CONTRACT §18 "Objects").

use crate::domain::object::{ChecksumAlgorithm, ObjectChecksum};
use crate::service::ServiceError;
use axum::http::HeaderMap;
use base64::Engine as _;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use md5::Digest as _;
use s3s::{s3_error, S3Error, S3ErrorCode};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

/// What a body must turn out to be.
#[derive(Debug, Default)]
pub(crate) struct Declared {
    /// `Content-MD5` (the digest's bytes).
    pub md5: Option<[u8; 16]>,
    /// The checksum algorithm asked for, and its value when a header gave
    /// it (a trailer's is read at the end).
    pub checksum: Option<(ChecksumAlgorithm, Option<String>)>,
    /// The bytes the body decodes to (`x-amz-decoded-content-length`, or
    /// `Content-Length` of a plain body).
    pub length: Option<u64>,
}

/// What the body turned out to be, once it has ended well.
#[derive(Debug, Default, Clone)]
pub(crate) struct Received {
    pub md5: Option<String>,
    pub checksum: Option<ObjectChecksum>,
}

/// The outcome the stream leaves for the door: the S3 error that ended it,
/// or what it received.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub error: Option<S3Error>,
    pub received: Received,
}

pub(crate) type Shared = Arc<Mutex<Outcome>>;

/// The algorithm and value a request declares in its headers: an
/// `x-amz-checksum-<alg>` header, or an `x-amz-trailer` naming one, or
/// `x-amz-sdk-checksum-algorithm` alone (computed and kept).
pub(crate) fn declared_checksum(
    headers: &HeaderMap,
) -> Result<Option<(ChecksumAlgorithm, Option<String>)>, S3Error> {
    let mut found = None;
    for (alg, name) in ALGORITHMS {
        if let Some(v) = headers.get(format!("x-amz-checksum-{name}")) {
            if found.is_some() {
                return Err(s3_error!(
                    InvalidRequest,
                    "Expecting a single x-amz-checksum- header"
                ));
            }
            let v = v.to_str().map_err(|_| bad_checksum_header())?.to_string();
            found = Some((alg, Some(v)));
        }
    }
    if let Some(trailer) = headers.get("x-amz-trailer") {
        let t = trailer.to_str().unwrap_or("").trim().to_ascii_lowercase();
        if let Some(alg) = t.strip_prefix("x-amz-checksum-").and_then(algorithm) {
            if found.is_some() {
                return Err(s3_error!(
                    InvalidRequest,
                    "Expecting a single x-amz-checksum- header or trailer"
                ));
            }
            found = Some((alg, None));
        }
    }
    if found.is_none() {
        let asked = headers
            .get("x-amz-sdk-checksum-algorithm")
            .or_else(|| headers.get("x-amz-checksum-algorithm"));
        if let Some(alg) = asked.and_then(|v| v.to_str().ok()) {
            let alg = algorithm(&alg.to_ascii_lowercase())
                .ok_or_else(|| s3_error!(InvalidRequest, "Invalid checksum algorithm {alg}"))?;
            found = Some((alg, Some(String::new())));
        }
    }
    Ok(found.map(|(a, v)| (a, v.filter(|v| !v.is_empty()))))
}

fn bad_checksum_header() -> S3Error {
    s3_error!(
        InvalidRequest,
        "Value for x-amz-checksum header is invalid."
    )
}

const ALGORITHMS: [(ChecksumAlgorithm, &str); 5] = [
    (ChecksumAlgorithm::Crc32, "crc32"),
    (ChecksumAlgorithm::Crc32c, "crc32c"),
    (ChecksumAlgorithm::Crc64Nvme, "crc64nvme"),
    (ChecksumAlgorithm::Sha1, "sha1"),
    (ChecksumAlgorithm::Sha256, "sha256"),
];

/// The algorithm of a lower-case name (`crc32`, …).
pub(crate) fn algorithm(name: &str) -> Option<ChecksumAlgorithm> {
    ALGORITHMS.iter().find(|(_, n)| *n == name).map(|(a, _)| *a)
}

/// The lower-case name of an algorithm.
pub(crate) fn name(alg: ChecksumAlgorithm) -> &'static str {
    ALGORITHMS
        .iter()
        .find(|(a, _)| *a == alg)
        .map_or("crc32", |(_, n)| n)
}

/// `Content-MD5`'s digest: 400 `InvalidDigest` when it is no base64 MD5.
pub(crate) fn content_md5(value: Option<&str>) -> Result<Option<[u8; 16]>, S3Error> {
    let Some(v) = value else { return Ok(None) };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(v.trim())
        .ok()
        .and_then(|b| <[u8; 16]>::try_from(b).ok());
    bytes
        .map(Some)
        .ok_or_else(|| s3_error!(InvalidDigest, "The Content-MD5 you specified is not valid."))
}

/// A hasher of one S3 checksum algorithm.
fn hasher(alg: ChecksumAlgorithm) -> s3s::checksum::ChecksumHasher {
    use s3s::crypto::Checksum as _;
    let mut h = s3s::checksum::ChecksumHasher::default();
    match alg {
        ChecksumAlgorithm::Crc32 => h.crc32 = Some(s3s::crypto::Crc32::new()),
        ChecksumAlgorithm::Crc32c => h.crc32c = Some(s3s::crypto::Crc32c::new()),
        ChecksumAlgorithm::Crc64Nvme => h.crc64nvme = Some(s3s::crypto::Crc64Nvme::new()),
        ChecksumAlgorithm::Sha1 => h.sha1 = Some(s3s::crypto::Sha1::new()),
        ChecksumAlgorithm::Sha256 => h.sha256 = Some(s3s::crypto::Sha256::new()),
    }
    h
}

fn value_of(c: &s3s::dto::Checksum, alg: ChecksumAlgorithm) -> Option<String> {
    match alg {
        ChecksumAlgorithm::Crc32 => c.checksum_crc32.clone(),
        ChecksumAlgorithm::Crc32c => c.checksum_crc32c.clone(),
        ChecksumAlgorithm::Crc64Nvme => c.checksum_crc64nvme.clone(),
        ChecksumAlgorithm::Sha1 => c.checksum_sha1.clone(),
        ChecksumAlgorithm::Sha256 => c.checksum_sha256.clone(),
    }
}

/// A body's error as s3s's streams give it.
pub(crate) type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// The body, checked: yields its bytes as the pipeline wants them.
pub(crate) struct Checked<S> {
    inner: S,
    declared: Declared,
    md5: Option<md5::Md5>,
    checksum: Option<(ChecksumAlgorithm, s3s::checksum::ChecksumHasher)>,
    trailers: Option<s3s::TrailingHeaders>,
    seen: u64,
    done: bool,
    shared: Shared,
}

impl<S> Checked<S> {
    /// `md5`: hash MD5 (to check `Content-MD5`, or to answer an ETag the
    /// pipeline does not compute).
    pub(crate) fn new(
        inner: S,
        declared: Declared,
        md5: bool,
        trailers: Option<s3s::TrailingHeaders>,
    ) -> (Checked<S>, Shared) {
        let shared = Shared::default();
        let checksum = declared.checksum.as_ref().map(|(a, _)| (*a, hasher(*a)));
        let md5 = (md5 || declared.md5.is_some()).then(md5::Md5::new);
        (
            Checked {
                inner,
                declared,
                md5,
                checksum,
                trailers,
                seen: 0,
                done: false,
                shared: shared.clone(),
            },
            shared,
        )
    }

    fn fail(&mut self, e: S3Error) -> Poll<Option<Result<Bytes, ServiceError>>> {
        self.done = true;
        let message = e.message().unwrap_or("the body was refused").to_string();
        self.shared.lock().expect("outcome lock").error = Some(e);
        Poll::Ready(Some(Err(ServiceError::BadRequest(message))))
    }

    /// The body has ended: is it what was declared?
    fn finish(&mut self) -> Result<Received, S3Error> {
        if let Some(len) = self.declared.length {
            if self.seen != len {
                return Err(s3_error!(
                    IncompleteBody,
                    "You did not provide the number of bytes specified by the Content-Length HTTP header"
                ));
            }
        }
        let mut received = Received::default();
        if let Some(h) = self.md5.take() {
            let got: [u8; 16] = h.finalize().into();
            if let Some(want) = self.declared.md5 {
                if got != want {
                    return Err(s3_error!(
                        BadDigest,
                        "The Content-MD5 you specified did not match what we received."
                    ));
                }
            }
            received.md5 = Some(hex::encode(got));
        }
        if let Some((alg, h)) = self.checksum.take() {
            let got = value_of(&h.finalize(), alg).unwrap_or_default();
            let want = match &self.declared.checksum {
                Some((_, Some(v))) => Some(v.clone()),
                _ => self.trailer_value(alg)?,
            };
            if let Some(want) = want {
                if want != got {
                    return Err(S3Error::with_message(
                        S3ErrorCode::BadDigest,
                        format!(
                            "The {} you specified did not match the calculated checksum.",
                            name(alg).to_ascii_uppercase()
                        ),
                    ));
                }
            }
            received.checksum = Some(ObjectChecksum {
                algorithm: alg,
                value: got,
                composite: false,
            });
        }
        Ok(received)
    }

    /// The trailer's value of `alg`: a request that announced a trailer
    /// must send it.
    fn trailer_value(&self, alg: ChecksumAlgorithm) -> Result<Option<String>, S3Error> {
        let Some(trailers) = &self.trailers else {
            return Ok(None);
        };
        let header = format!("x-amz-checksum-{}", name(alg));
        match trailers.read(|h| {
            h.get(&header)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        }) {
            Some(Some(v)) => Ok(Some(v)),
            _ => Err(s3_error!(
                InvalidRequest,
                "The x-amz-trailer header announced a checksum the body did not send"
            )),
        }
    }
}

/// A body error of s3s's (the decoding and verifying streams keep their
/// error types private: their messages are matched, pinned by a test for
/// the s3s version in Cargo.toml) as S3's error.
pub(crate) fn body_error(e: &dyn std::error::Error) -> S3Error {
    let text = e.to_string();
    if text.starts_with("EntityTooLarge") {
        s3_error!(
            EntityTooLarge,
            "Your proposed upload exceeds the maximum allowed size"
        )
    } else if text.contains("SignatureMismatch") {
        s3_error!(
            SignatureDoesNotMatch,
            "The request signature we calculated does not match the signature you provided."
        )
    } else if text.contains("Sha256Mismatch") {
        // A code s3s does not know has no status of its own (s3s would
        // answer 500): S3 answers it 400.
        let mut e = S3Error::with_message(
            S3ErrorCode::Custom("XAmzContentSHA256Mismatch".into()),
            "The provided 'x-amz-content-sha256' header does not match what was computed.",
        );
        e.set_status_code(axum::http::StatusCode::BAD_REQUEST);
        e
    } else {
        s3_error!(IncompleteBody, "The request body could not be read: {text}")
    }
}

impl<S> Stream for Checked<S>
where
    S: Stream<Item = Result<Bytes, BodyError>> + Unpin,
{
    type Item = Result<Bytes, ServiceError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        match self.inner.poll_next_unpin(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(chunk))) => {
                self.seen += chunk.len() as u64;
                if let Some(h) = self.md5.as_mut() {
                    h.update(&chunk);
                }
                if let Some((_, h)) = self.checksum.as_mut() {
                    h.update(&chunk);
                }
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(e))) => {
                let err = body_error(&*e);
                self.fail(err)
            }
            Poll::Ready(None) => match self.finish() {
                Ok(received) => {
                    self.done = true;
                    self.shared.lock().expect("outcome lock").received = received;
                    Poll::Ready(None)
                }
                Err(e) => self.fail(e),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3s_body_errors_keep_their_meaning() {
        #[derive(Debug)]
        struct E(&'static str);
        impl std::fmt::Display for E {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for E {}
        // Each is the client's fault: a 4xx, never s3s's default 500.
        let code = |t| {
            let e = body_error(&E(t));
            (
                e.code().as_str().to_string(),
                e.status_code().map(|s| s.as_u16()),
            )
        };
        assert_eq!(
            code("AwsChunkedStreamError: SignatureMismatch"),
            ("SignatureDoesNotMatch".into(), Some(403))
        );
        assert_eq!(
            code("UploadStreamError: Sha256Mismatch"),
            ("XAmzContentSHA256Mismatch".into(), Some(400))
        );
        assert_eq!(
            code("AwsChunkedStreamError: Incomplete"),
            ("IncompleteBody".into(), Some(400))
        );
        assert_eq!(
            code("EntityTooLarge: over"),
            ("EntityTooLarge".into(), Some(400))
        );
    }

    #[test]
    fn a_bad_content_md5_is_an_invalid_digest() {
        assert!(content_md5(None).unwrap().is_none());
        assert!(content_md5(Some("1B2M2Y8AsgTpgAmY7PhCfg=="))
            .unwrap()
            .is_some());
        for bad in ["", "nope", "AAAA"] {
            assert_eq!(
                content_md5(Some(bad)).unwrap_err().code().as_str(),
                "InvalidDigest"
            );
        }
    }

    #[test]
    fn a_checksum_is_declared_by_header_trailer_or_algorithm() {
        let mut h = HeaderMap::new();
        assert!(declared_checksum(&h).unwrap().is_none());
        h.insert("x-amz-checksum-crc32", "AAAAAA==".parse().unwrap());
        assert_eq!(
            declared_checksum(&h).unwrap(),
            Some((ChecksumAlgorithm::Crc32, Some("AAAAAA==".into())))
        );
        h.insert("x-amz-trailer", "x-amz-checksum-crc32c".parse().unwrap());
        assert!(declared_checksum(&h).is_err());
        let mut t = HeaderMap::new();
        t.insert("x-amz-trailer", "x-amz-checksum-crc64nvme".parse().unwrap());
        assert_eq!(
            declared_checksum(&t).unwrap(),
            Some((ChecksumAlgorithm::Crc64Nvme, None))
        );
    }
}
