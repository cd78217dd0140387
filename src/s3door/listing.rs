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
use crate::service::caller::Caller;
use crate::service::paths::{self, MAX_PATHS_PAGE};
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
        let full_prefix = format!("{base}{prefix}");
        let delimiter = delimiter.filter(|d| !d.is_empty());
        // A common prefix at or before a V1 marker / start key was given
        // already (its NextMarker is the prefix itself).
        let start_key = match &start {
            Some(Resume::After(k)) => Some(k.clone()),
            _ => None,
        };
        let mut after: Option<String> = start.map(|s| format!("{base}{}", s.key()));
        // Rows a query asks for: few right after a skipped common prefix
        // (only the next entry matters: a folder per probe), doubling while
        // pages go on without one.
        let mut probe: u32 = if delimiter.is_some() {
            2
        } else {
            MAX_PATHS_PAGE
        };
        let mut entries = Vec::new();
        let mut last: Option<Resume> = None;
        let account = &caller.account.id;
        if max == 0 {
            return Ok(Page {
                entries,
                truncated: false,
                next: None,
            });
        }
        loop {
            // One more than room, to tell whether the page is the last.
            // One more than room, to tell whether the page is the last; no
            // more than one query gives (`MAX_PATHS_PAGE`).
            let room = max - u32::try_from(entries.len()).unwrap_or(max) + 1;
            let want = room.min(probe).min(MAX_PATHS_PAGE);
            let rows = paths::list_paths(
                &self.app,
                account,
                Some(&full_prefix),
                after.as_deref(),
                want,
            )
            .await
            .map_err(errors::key)?;
            let markers = self
                .markers(caller, &full_prefix, after.as_deref(), want)
                .await?;
            let mut batch = merge(rows, markers);
            // Beyond `want`, the merge of two limited lists may miss some.
            batch.truncate(want as usize);
            let complete = batch.len() < want as usize;
            let mut skipped = false;
            for item in batch {
                let path = item.path();
                let Some(key) = keys::key_of(bucket, &path) else {
                    continue;
                };
                if entries.len() >= max as usize {
                    return Ok(Page {
                        entries,
                        truncated: true,
                        next: last,
                    });
                }
                let rest = &key[prefix.len().min(key.len())..];
                if let Some(at) = delimiter.and_then(|d| rest.find(d).map(|i| i + d.len())) {
                    let common = format!("{prefix}{}", &rest[..at]);
                    after = Some(filepath::past_prefix(&format!("{base}{common}")));
                    if start_key.as_deref().is_none_or(|k| common.as_str() > k) {
                        last = Some(Resume::PastPrefix(common.clone()));
                        entries.push(Entry::Prefix(common));
                    }
                    skipped = true;
                    probe = 2;
                    break;
                }
                after = Some(path.clone());
                last = Some(Resume::After(key.to_string()));
                entries.push(Entry::Object(Box::new(item.listed(key))));
            }
            if !skipped && complete {
                break;
            }
            if !skipped {
                probe = probe.saturating_mul(2);
            }
        }
        Ok(Page {
            entries,
            truncated: false,
            next: None,
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

/// A file row or a marker, in one order.
enum Item {
    Row(Box<FileRow>),
    Marker(String, i64),
}

impl Item {
    fn path(&self) -> String {
        match self {
            Item::Row(r) => filepath::join(r.folder.as_deref(), &r.name),
            Item::Marker(p, _) => p.clone(),
        }
    }

    fn listed(self, key: &str) -> Listed {
        match self {
            Item::Row(r) => Listed {
                key: key.to_string(),
                created_at: r.created_at,
                row: Some(*r),
            },
            Item::Marker(_, at) => Listed {
                key: key.to_string(),
                row: None,
                created_at: at,
            },
        }
    }
}

/// Rows and markers, each in byte order, as one list in byte order.
fn merge(rows: Vec<FileRow>, markers: Vec<(String, i64)>) -> Vec<Item> {
    let mut out: Vec<Item> = rows.into_iter().map(|r| Item::Row(Box::new(r))).collect();
    out.extend(markers.into_iter().map(|(p, at)| Item::Marker(p, at)));
    out.sort_by_cached_key(Item::path);
    out
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
