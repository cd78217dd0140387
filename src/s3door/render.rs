//! A file as S3 shows it, and what an S3 request asks of one: ETags,
//! timestamps, metadata and content headers both ways, canned ACLs, and a
//! GET's conditions, range and part (CONTRACT §18 "What an object
//! carries"). Pure conversions, unit-tested here.

use super::keys::invalid;
use crate::domain::files::StoredFile as FileRow;
use crate::domain::metadata;
use crate::domain::object::ObjectAttrs;
use axum::http::HeaderMap;
use s3s::dto::{
    ETag, ETagCondition, GetObjectOutput, HeadObjectOutput, ObjectCannedACL, Range, Timestamp,
};
use s3s::{s3_error, S3Error, S3ErrorCode};
use std::sync::LazyLock;
use std::time::{Duration, UNIX_EPOCH};

/// The ETag of no bytes (a folder marker's).
pub(crate) static EMPTY_ETAG: LazyLock<ETag> =
    LazyLock::new(|| ETag::Strong("d41d8cd98f00b204e9800998ecf8427e".into()));

/// A file's ETag: a multipart object's, else its MD5; a file whose MD5 is
/// not known yet shows its SHA-256 (no client takes 64 hex digits for an MD5).
pub(crate) fn etag(row: &FileRow) -> ETag {
    let value = row
        .attrs
        .etag
        .clone()
        .or_else(|| row.md5.clone())
        .unwrap_or_else(|| row.sha256.clone());
    ETag::Strong(value)
}

/// Unix milliseconds as S3's timestamps.
pub(crate) fn timestamp(ms: i64) -> Timestamp {
    let ms = u64::try_from(ms).unwrap_or(0);
    Timestamp::from(UNIX_EPOCH + Duration::from_millis(ms))
}

/// Requests that need a feature the door does not have: 501.
pub(crate) fn refuse_unsupported(headers: &HeaderMap) -> Result<(), S3Error> {
    for name in [
        "x-amz-server-side-encryption",
        "x-amz-server-side-encryption-customer-algorithm",
        "x-amz-server-side-encryption-aws-kms-key-id",
        "x-amz-tagging",
        "x-amz-object-lock-mode",
        "x-amz-object-lock-retain-until-date",
        "x-amz-object-lock-legal-hold",
        "x-amz-website-redirect-location",
        "x-amz-write-offset-bytes",
    ] {
        if headers.contains_key(name) {
            return Err(S3Error::with_message(
                S3ErrorCode::NotImplemented,
                format!("{name} is not supported"),
            ));
        }
    }
    let chunked = headers
        .get(axum::http::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("aws-chunked"));
    let streaming = headers
        .get("x-amz-content-sha256")
        .is_some_and(|v| v.as_bytes().starts_with(b"STREAMING-"));
    if chunked && !streaming {
        // Its framing would be stored as the file's bytes.
        return Err(invalid(
            "Content-Encoding aws-chunked needs a STREAMING-* x-amz-content-sha256",
        ));
    }
    if let Some(class) = headers.get("x-amz-storage-class") {
        if class.as_bytes() != b"STANDARD" {
            return Err(s3_error!(
                NotImplemented,
                "Only the STANDARD storage class is kept"
            ));
        }
    }
    for name in [
        "x-amz-grant-read",
        "x-amz-grant-write",
        "x-amz-grant-read-acp",
        "x-amz-grant-write-acp",
        "x-amz-grant-full-control",
    ] {
        if headers.contains_key(name) {
            return Err(s3_error!(NotImplemented, "Only canned ACLs are supported"));
        }
    }
    Ok(())
}

/// Whether a canned ACL makes the file private (no ACL: private).
/// `public-read` (and `public-read-write`) make it public, with its CDN
/// link; the rest keep it to its owner, the only one there is.
pub(crate) fn private_of(acl: Option<&ObjectCannedACL>) -> Result<bool, S3Error> {
    match acl.map(ObjectCannedACL::as_str) {
        None
        | Some(
            ObjectCannedACL::PRIVATE
            | ObjectCannedACL::BUCKET_OWNER_READ
            | ObjectCannedACL::BUCKET_OWNER_FULL_CONTROL
            | ObjectCannedACL::AUTHENTICATED_READ
            | ObjectCannedACL::AWS_EXEC_READ,
        ) => Ok(true),
        Some(ObjectCannedACL::PUBLIC_READ | ObjectCannedACL::PUBLIC_READ_WRITE) => Ok(false),
        Some(other) => Err(S3Error::with_message(
            S3ErrorCode::InvalidArgument,
            format!("Unknown canned ACL {other}"),
        )),
    }
}

/// The bytes a body decodes to: `x-amz-decoded-content-length` of an
/// aws-chunked body, else its `Content-Length`.
pub(crate) fn decoded_length(
    headers: &HeaderMap,
    content_length: Option<i64>,
) -> Result<Option<u64>, S3Error> {
    if let Some(v) = headers.get("x-amz-decoded-content-length") {
        let n = v
            .to_str()
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| invalid("x-amz-decoded-content-length is not a number"))?;
        return Ok(Some(n));
    }
    match content_length {
        Some(n) if n < 0 => Err(invalid("Content-Length is negative")),
        Some(n) => Ok(u64::try_from(n).ok()),
        None => Ok(None),
    }
}

/// `x-amz-meta-*` as the file's metadata (`domain::metadata`'s rules: a
/// key it cannot hold is 400 `InvalidArgument`).
pub(crate) fn metadata_in(m: Option<&s3s::dto::Metadata>) -> Result<metadata::Metadata, S3Error> {
    let mut out = metadata::Metadata::new();
    for (k, v) in m.into_iter().flatten() {
        out.insert(k.to_ascii_lowercase(), v.clone());
    }
    metadata::check(&out).map_err(|why| invalid(&format!("x-amz-meta-*: {why}")))?;
    Ok(out)
}

/// The file's metadata as `x-amz-meta-*` (None when it has none).
pub(crate) fn metadata_out(m: &metadata::Metadata) -> Option<s3s::dto::Metadata> {
    (!m.is_empty()).then(|| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

/// The content headers a PUT gave, kept with the file; `aws-chunked` is
/// the body's framing, not the file's encoding, and is dropped.
pub(crate) fn attrs_in(
    cache_control: Option<String>,
    content_disposition: Option<String>,
    content_encoding: Option<String>,
    content_language: Option<String>,
    expires: Option<&Timestamp>,
) -> ObjectAttrs {
    let encoding = content_encoding.map(|e| {
        e.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty() && !t.eq_ignore_ascii_case("aws-chunked"))
            .collect::<Vec<_>>()
            .join(", ")
    });
    ObjectAttrs {
        cache_control: cache_control.filter(|v| !v.is_empty()),
        content_disposition: content_disposition.filter(|v| !v.is_empty()),
        content_encoding: encoding.filter(|v| !v.is_empty()),
        content_language: content_language.filter(|v| !v.is_empty()),
        expires: expires.and_then(http_date),
        ..ObjectAttrs::default()
    }
}

fn http_date(t: &Timestamp) -> Option<String> {
    let mut buf = Vec::new();
    t.format(s3s::dto::TimestampFormat::HttpDate, &mut buf)
        .ok()?;
    String::from_utf8(buf).ok()
}

pub(crate) fn parse_http_date(s: &str) -> Option<Timestamp> {
    Timestamp::parse(s3s::dto::TimestampFormat::HttpDate, s).ok()
}

/// Only the version S3 calls `null` exists (versioning is never enabled).
pub(crate) fn only_null_version(v: Option<&str>) -> Result<(), S3Error> {
    match v {
        None | Some("null" | "") => Ok(()),
        Some(_) => Err(s3_error!(
            NoSuchVersion,
            "The specified version does not exist."
        )),
    }
}

/// A GET's or HEAD's conditions.
#[allow(clippy::struct_field_names)] // S3's own names for them
pub(crate) struct Conditions {
    pub if_match: Option<ETagCondition>,
    pub if_none_match: Option<ETagCondition>,
    pub if_modified_since: Option<Timestamp>,
    pub if_unmodified_since: Option<Timestamp>,
}

/// What a GET or HEAD asks of the file beyond it.
pub(crate) struct Read {
    pub part_number: Option<i32>,
    pub range: Option<Range>,
    pub conditions: Conditions,
    /// `x-amz-checksum-mode: ENABLED`.
    pub checksums: bool,
}

/// What a GetObject or HeadObject input (two types, the same fields) asks.
macro_rules! read_of {
    ($i:expr) => {
        $crate::s3door::render::Read {
            part_number: $i.part_number,
            range: $i.range,
            conditions: $crate::s3door::render::Conditions {
                if_match: $i.if_match,
                if_none_match: $i.if_none_match,
                if_modified_since: $i.if_modified_since,
                if_unmodified_since: $i.if_unmodified_since,
            },
            checksums: $i.checksum_mode.is_some_and(|m| m.as_str() == "ENABLED"),
        }
    };
}
pub(crate) use read_of;

/// A body of no bytes (a folder marker's, a PUT that sent none).
pub(crate) fn empty_body() -> s3s::dto::StreamingBlob {
    s3s::dto::StreamingBlob::wrap(futures_util::stream::empty::<
        Result<bytes::Bytes, std::io::Error>,
    >())
}

/// The bytes a GET sends.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub offset: u64,
    pub len: u64,
    /// 206, with `content_range`.
    pub partial: bool,
    pub content_range: Option<String>,
    pub parts_count: Option<i32>,
}

fn matches(c: &ETagCondition, tag: &ETag) -> bool {
    match c {
        ETagCondition::Any => true,
        ETagCondition::ETag(e) => e.value() == tag.value(),
    }
}

/// Seconds since the epoch (HTTP dates have no finer grain).
fn secs(t: &Timestamp) -> i64 {
    unix_secs(t)
}

/// A timestamp's seconds since the epoch.
pub(crate) fn unix_secs(t: &Timestamp) -> i64 {
    let t: time::OffsetDateTime = t.clone().into();
    t.unix_timestamp()
}

/// The conditions, as S3 judges them (RFC 9110's order: If-Match, else
/// If-Unmodified-Since: 412; If-None-Match, else If-Modified-Since: 304),
/// then the part or range asked for.
pub(crate) fn shape(row: &FileRow, r: &Read) -> Result<Shape, S3Error> {
    let tag = etag(row);
    let modified = row.created_at.div_euclid(1000);
    let c = &r.conditions;
    if let Some(m) = &c.if_match {
        if !matches(m, &tag) {
            return Err(s3_error!(
                PreconditionFailed,
                "At least one of the pre-conditions you specified did not hold"
            ));
        }
    } else if let Some(t) = &c.if_unmodified_since {
        if modified > secs(t) {
            return Err(s3_error!(
                PreconditionFailed,
                "At least one of the pre-conditions you specified did not hold"
            ));
        }
    }
    if let Some(m) = &c.if_none_match {
        if matches(m, &tag) {
            return Err(not_modified(row));
        }
    } else if let Some(t) = &c.if_modified_since {
        if modified <= secs(t) {
            return Err(not_modified(row));
        }
    }
    let size = row.size;
    let whole = Shape {
        offset: 0,
        len: size,
        partial: false,
        content_range: None,
        parts_count: None,
    };
    match (r.part_number, &r.range) {
        (Some(_), Some(_)) => Err(s3_error!(
            InvalidRequest,
            "Cannot specify both Range header and partNumber query parameter"
        )),
        (Some(n), None) => part(row, n),
        (None, Some(range)) => {
            let range = range
                .check(size)
                .map_err(|_| s3_error!(InvalidRange, "The requested range is not satisfiable"))?;
            Ok(Shape {
                offset: range.start,
                len: range.end - range.start,
                partial: true,
                content_range: Some(format!(
                    "bytes {}-{}/{size}",
                    range.start,
                    range.end.saturating_sub(1)
                )),
                parts_count: None,
            })
        }
        (None, None) => Ok(whole),
    }
}

/// A copy's source conditions (`x-amz-copy-source-if-*`): as a GET's,
/// but a condition that fails is always 412 (never 304).
pub(crate) fn source_holds(row: &FileRow, conditions: Conditions) -> Result<(), S3Error> {
    let read = Read {
        part_number: None,
        range: None,
        conditions,
        checksums: false,
    };
    match shape(row, &read) {
        Ok(_) => Ok(()),
        Err(e) if e.code().as_str() == "NotModified" => Err(s3_error!(
            PreconditionFailed,
            "At least one of the pre-conditions you specified did not hold"
        )),
        Err(e) => Err(e),
    }
}

/// Part `n` of the file: of a multipart object its `n`th part; of any
/// other file part 1 is the whole.
fn part(row: &FileRow, n: i32) -> Result<Shape, S3Error> {
    let parts: &[u64] = if row.attrs.parts.is_empty() {
        &[row.size]
    } else {
        &row.attrs.parts
    };
    let index = usize::try_from(n)
        .ok()
        .filter(|&i| i >= 1 && i <= parts.len())
        .ok_or_else(|| {
            let mut e = S3Error::with_message(
                S3ErrorCode::Custom("InvalidPartNumber".into()),
                "The requested partnumber is not satisfiable",
            );
            e.set_status_code(axum::http::StatusCode::RANGE_NOT_SATISFIABLE);
            e
        })?;
    let offset: u64 = parts[..index - 1].iter().sum();
    let len = parts[index - 1];
    let multipart = !row.attrs.parts.is_empty();
    Ok(Shape {
        offset,
        len,
        partial: multipart,
        content_range: multipart.then(|| {
            format!(
                "bytes {offset}-{}/{}",
                (offset + len).saturating_sub(1),
                row.size
            )
        }),
        parts_count: multipart.then(|| i32::try_from(parts.len()).unwrap_or(i32::MAX)),
    })
}

fn not_modified(row: &FileRow) -> S3Error {
    let mut e = S3Error::new(S3ErrorCode::NotModified);
    let mut headers = HeaderMap::new();
    if let Ok(v) = format!("\"{}\"", etag(row).value()).parse() {
        headers.insert(axum::http::header::ETAG, v);
    }
    e.set_headers(headers);
    e
}

macro_rules! set_checksum {
    ($out:expr, $c:expr) => {{
        let c: &$crate::domain::object::ObjectChecksum = $c;
        let v = Some(c.value.clone());
        match c.algorithm {
            $crate::domain::object::ChecksumAlgorithm::Crc32 => $out.checksum_crc32 = v,
            $crate::domain::object::ChecksumAlgorithm::Crc32c => $out.checksum_crc32c = v,
            $crate::domain::object::ChecksumAlgorithm::Crc64Nvme => $out.checksum_crc64nvme = v,
            $crate::domain::object::ChecksumAlgorithm::Sha1 => $out.checksum_sha1 = v,
            $crate::domain::object::ChecksumAlgorithm::Sha256 => $out.checksum_sha256 = v,
        }
        $out.checksum_type = Some(s3s::dto::ChecksumType::from_static(if c.composite {
            s3s::dto::ChecksumType::COMPOSITE
        } else {
            s3s::dto::ChecksumType::FULL_OBJECT
        }));
    }};
}
pub(crate) use set_checksum;

macro_rules! object_headers {
    ($out:expr, $row:expr, $shape:expr, $checksums:expr) => {{
        let row: &FileRow = $row;
        let a = &row.attrs;
        $out.accept_ranges = Some("bytes".into());
        $out.content_length = i64::try_from($shape.len).ok();
        $out.content_range.clone_from(&$shape.content_range);
        $out.content_type = Some(row.content_type.clone());
        $out.e_tag = Some(etag(row));
        $out.last_modified = Some(timestamp(row.created_at));
        $out.metadata = metadata_out(&row.metadata);
        $out.cache_control.clone_from(&a.cache_control);
        $out.content_disposition.clone_from(&a.content_disposition);
        $out.content_encoding.clone_from(&a.content_encoding);
        $out.content_language.clone_from(&a.content_language);
        $out.expires = a.expires.as_deref().and_then(parse_http_date);
        $out.parts_count = $shape.parts_count;
        if $checksums && !$shape.partial {
            if let Some(c) = &a.checksum {
                set_checksum!($out, c);
            }
        }
    }};
}

/// A folder marker as GET shows it: no bytes.
pub(crate) fn marker_output(created_at: i64) -> GetObjectOutput {
    GetObjectOutput {
        content_length: Some(0),
        e_tag: Some(EMPTY_ETAG.clone()),
        last_modified: Some(timestamp(created_at)),
        content_type: Some("application/x-directory".into()),
        ..GetObjectOutput::default()
    }
}

pub(crate) fn get_output(row: &FileRow, shape: &Shape, checksums: bool) -> GetObjectOutput {
    let mut out = GetObjectOutput::default();
    object_headers!(out, row, shape, checksums);
    out
}

pub(crate) fn head_output(row: &FileRow, shape: &Shape, checksums: bool) -> HeadObjectOutput {
    let mut out = HeadObjectOutput::default();
    object_headers!(out, row, shape, checksums);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(size: u64) -> FileRow {
        FileRow {
            size,
            md5: Some("abc".into()),
            created_at: 10_000,
            ..FileRow::default()
        }
    }

    fn read(range: Option<Range>, part: Option<i32>, c: Conditions) -> Read {
        Read {
            part_number: part,
            range,
            conditions: c,
            checksums: false,
        }
    }

    fn none() -> Conditions {
        Conditions {
            if_match: None,
            if_none_match: None,
            if_modified_since: None,
            if_unmodified_since: None,
        }
    }

    #[test]
    fn conditions_give_412_and_304_as_s3_does() {
        let r = row(10);
        let tag = |v: &str| Some(ETagCondition::ETag(ETag::Strong(v.into())));
        let code = |c| {
            shape(&r, &read(None, None, c))
                .unwrap_err()
                .code()
                .as_str()
                .to_string()
        };
        assert_eq!(
            code(Conditions {
                if_match: tag("zzz"),
                ..none()
            }),
            "PreconditionFailed"
        );
        assert_eq!(
            code(Conditions {
                if_none_match: tag("abc"),
                ..none()
            }),
            "NotModified"
        );
        assert_eq!(
            code(Conditions {
                if_modified_since: Some(timestamp(10_000)),
                ..none()
            }),
            "NotModified"
        );
        assert_eq!(
            code(Conditions {
                if_unmodified_since: Some(timestamp(9_000)),
                ..none()
            }),
            "PreconditionFailed"
        );
        // If-Match that holds wins over If-Unmodified-Since.
        let ok = Conditions {
            if_match: tag("abc"),
            if_unmodified_since: Some(timestamp(0)),
            ..none()
        };
        assert!(shape(&r, &read(None, None, ok)).is_ok());
    }

    #[test]
    fn ranges_and_parts_pick_their_bytes() {
        let file = row(10);
        let got = shape(
            &file,
            &read(
                Some(Range::Int {
                    first: 2,
                    last: Some(4),
                }),
                None,
                none(),
            ),
        )
        .unwrap();
        assert_eq!((got.offset, got.len, got.partial), (2, 3, true));
        assert_eq!(got.content_range.as_deref(), Some("bytes 2-4/10"));
        let err = shape(
            &file,
            &read(
                Some(Range::Int {
                    first: 20,
                    last: None,
                }),
                None,
                none(),
            ),
        )
        .unwrap_err();
        assert_eq!(err.code().as_str(), "InvalidRange");
        let whole = shape(&file, &read(None, Some(1), none())).unwrap();
        assert_eq!((whole.offset, whole.len, whole.parts_count), (0, 10, None));
        assert!(shape(&file, &read(None, Some(2), none())).is_err());
        let mut multi = row(12);
        multi.attrs.parts = vec![5, 5, 2];
        let third = shape(&multi, &read(None, Some(3), none())).unwrap();
        assert_eq!(
            (third.offset, third.len, third.parts_count),
            (10, 2, Some(3))
        );
        assert_eq!(third.content_range.as_deref(), Some("bytes 10-11/12"));
    }

    #[test]
    fn aws_chunked_is_no_content_encoding_and_acls_set_privacy() {
        let a = attrs_in(None, None, Some("aws-chunked, gzip".into()), None, None);
        assert_eq!(a.content_encoding.as_deref(), Some("gzip"));
        let a = attrs_in(None, None, Some("aws-chunked".into()), None, None);
        assert_eq!(a.content_encoding, None);
        assert!(private_of(None).unwrap());
        let public = ObjectCannedACL::from_static(ObjectCannedACL::PUBLIC_READ);
        assert!(!private_of(Some(&public)).unwrap());
    }

    #[test]
    fn metadata_keys_the_file_cannot_hold_are_invalid_arguments() {
        let mut m = s3s::dto::Metadata::new();
        m.insert("Color".into(), "red".into());
        assert_eq!(metadata_in(Some(&m)).unwrap()["color"], "red");
        m.insert("bad.key".into(), "x".into());
        assert_eq!(
            metadata_in(Some(&m)).unwrap_err().code().as_str(),
            "InvalidArgument"
        );
    }
}
