//! ListObjects (V1), ListObjectsV2 and ListObjectVersions (every object as
//! version `null`): a bucket's keys in UTF-8 byte order, from one range
//! scan of the path index a page (`service::paths::list_paths`), with
//! folder markers merged in, a delimiter's common prefixes skipped past in
//! one seek each (CONTRACT §18 "Listing").

use super::errors;
use super::keys;
use super::render::{etag, timestamp};
use super::Ops;
use crate::domain::filepath;
use crate::domain::files::StoredFile as FileRow;
use crate::domain::keylist::{KeyQuery, KeyRow, Walked};
use crate::service::caller::Caller;
use base64::Engine as _;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use s3s::dto::{CommonPrefix, Object, Owner};
use s3s::{s3_error, S3Result};

/// What `encoding-type=url` leaves as it is (as AWS: unreserved and `/`).
const KEEP: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');

/// One entry of a listing, in key order.
pub(crate) enum Entry {
    Object(Box<Listed>),
    Prefix(String),
}

/// An object listed: a file, or a folder marker (no row).
pub(crate) struct Listed {
    pub key: String,
    pub row: Option<FileRow>,
    /// A marker's creation time.
    pub created_at: i64,
}

/// A page of a listing.
pub(crate) struct Page {
    pub entries: Vec<Entry>,
    pub truncated: bool,
    /// Where the next page starts (exclusive): the last key, or a common
    /// prefix to skip past.
    pub next: Option<Resume>,
}

/// Where a listing resumes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resume {
    After(String),
    PastPrefix(String),
}

impl Resume {
    /// As a V2 continuation token (opaque to clients).
    pub(crate) fn token(&self) -> String {
        let text = match self {
            Resume::After(k) => format!("k{k}"),
            Resume::PastPrefix(p) => format!("p{p}"),
        };
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
    }

    pub(crate) fn from_token(t: &str) -> Option<Resume> {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(t)
            .ok()?;
        let text = String::from_utf8(bytes).ok()?;
        match text.split_at_checked(1)? {
            ("k", k) => Some(Resume::After(k.to_string())),
            ("p", p) => Some(Resume::PastPrefix(p.to_string())),
            _ => None,
        }
    }

    /// The key a listing starts strictly after.
    fn key(&self) -> String {
        match self {
            Resume::After(k) => k.clone(),
            Resume::PastPrefix(p) => filepath::past_prefix(p),
        }
    }
}

/// `encoding-type`: only `url` is known.
pub(crate) fn url_encoding(t: Option<&s3s::dto::EncodingType>) -> S3Result<bool> {
    match t.map(s3s::dto::EncodingType::as_str) {
        None => Ok(false),
        Some("url") => Ok(true),
        Some(_) => Err(s3_error!(
            InvalidArgument,
            "Invalid Encoding Method specified in Request"
        )),
    }
}

/// `s`, URL-encoded when asked.
pub(crate) fn enc(s: &str, url: bool) -> String {
    if url {
        utf8_percent_encode(s, KEEP).to_string()
    } else {
        s.to_string()
    }
}

/// `max-keys` 0–1000 (default 1000; more is 1000); negative is refused.
pub(crate) fn max_keys(m: Option<i32>) -> S3Result<u32> {
    match m {
        None => Ok(1000),
        Some(n) if n < 0 => Err(s3_error!(InvalidArgument, "max-keys must not be negative")),
        Some(n) => Ok(u32::try_from(n).unwrap_or(1000).min(1000)),
    }
}

impl Ops {
    /// Up to `max` entries of `bucket` whose keys start with `prefix`,
    /// after `start` (a key, or a common prefix to skip past).
    pub(crate) async fn page(
        &self,
        caller: &Caller,
        bucket: &str,
        prefix: &str,
        delimiter: Option<&str>,
        start: Option<Resume>,
        max: u32,
    ) -> S3Result<Page> {
        let base = format!("{bucket}/");
        // A common prefix at or before a V1 marker / start key was given
        // already (its NextMarker is the prefix itself).
        let start_key = match &start {
            Some(Resume::After(k)) => Some(format!("{base}{k}")),
            _ => None,
        };
        let q = KeyQuery {
            prefix: format!("{base}{prefix}"),
            after: start.map(|s| format!("{base}{}", s.key())),
            start: start_key,
            delimiter: delimiter.map(str::to_string),
            max,
        };
        let page = self
            .app
            .list_object_keys(caller, q)
            .await
            .map_err(errors::rule)?;
        let mut entries = Vec::with_capacity(page.entries.len());
        let mut last = None;
        for e in page.entries {
            match e {
                Walked::Item(path, row) => {
                    let Some(key) = keys::key_of(bucket, &path) else {
                        continue;
                    };
                    last = Some(Resume::After(key.to_string()));
                    let (row, created_at) = match row {
                        KeyRow::File(r) => (Some(*r), None),
                        KeyRow::Marker(at) => (None, Some(at)),
                    };
                    entries.push(Entry::Object(Box::new(Listed {
                        key: key.to_string(),
                        created_at: created_at
                            .unwrap_or_else(|| row.as_ref().map_or(0, |r| r.created_at)),
                        row,
                    })));
                }
                Walked::Prefix(p) => {
                    let common = p[base.len()..].to_string();
                    last = Some(Resume::PastPrefix(common.clone()));
                    entries.push(Entry::Prefix(common));
                }
            }
        }
        Ok(Page {
            entries,
            truncated: page.truncated,
            next: if page.truncated { last } else { None },
        })
    }

    /// The bucket's owner, as listings show it.
    pub(crate) fn owner(caller: &Caller) -> Owner {
        Owner {
            display_name: Some(caller.account.name.clone()),
            id: Some(caller.account.id.clone()),
        }
    }
}

/// An object as listings show it.
pub(crate) fn object(l: &Listed, url: bool, owner: Option<&Owner>) -> Object {
    Object {
        key: Some(enc(&l.key, url)),
        e_tag: Some(
            l.row
                .as_ref()
                .map_or_else(|| super::render::EMPTY_ETAG.clone(), etag),
        ),
        size: Some(
            l.row
                .as_ref()
                .map_or(0, |r| i64::try_from(r.size).unwrap_or(i64::MAX)),
        ),
        last_modified: Some(timestamp(l.created_at)),
        owner: owner.cloned(),
        storage_class: Some(s3s::dto::ObjectStorageClass::from_static(
            s3s::dto::ObjectStorageClass::STANDARD,
        )),
        ..Object::default()
    }
}

/// A common prefix as listings show it.
pub(crate) fn common(p: &str, url: bool) -> CommonPrefix {
    CommonPrefix {
        prefix: Some(enc(p, url)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_url_encoding_keeps_slashes() {
        for r in [
            Resume::After("a/b c".into()),
            Resume::PastPrefix("dir/".into()),
        ] {
            assert_eq!(Resume::from_token(&r.token()), Some(r));
        }
        assert_eq!(Resume::from_token("%%%"), None);
        assert_eq!(enc("a b/ü+&", true), "a%20b/%C3%BC%2B%26");
        assert_eq!(max_keys(Some(5000)).unwrap(), 1000);
        assert!(max_keys(Some(-1)).is_err());
    }
}
