//! The three listing operations over [`super::listing`]'s pages.

use super::listing::{common, enc, max_keys, object, url_encoding, Entry, Resume};
use super::Ops;
use s3s::dto::{
    ListObjectVersionsInput, ListObjectVersionsOutput, ListObjectsInput, ListObjectsOutput,
    ListObjectsV2Input, ListObjectsV2Output, ObjectVersion,
};
use s3s::{s3_error, S3Request, S3Response, S3Result};

impl Ops {
    pub(crate) async fn list_v1(
        &self,
        req: S3Request<ListObjectsInput>,
    ) -> S3Result<S3Response<ListObjectsOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        self.bucket_must_exist(&caller, &i.bucket).await?;
        let url = url_encoding(i.encoding_type.as_ref())?;
        let max = max_keys(i.max_keys)?;
        let prefix = i.prefix.clone().unwrap_or_default();
        let start = i
            .marker
            .clone()
            .filter(|m| !m.is_empty())
            .map(Resume::After);
        let page = self
            .page(
                &caller,
                &i.bucket,
                &prefix,
                i.delimiter.as_deref(),
                start,
                max,
            )
            .await?;
        let owner = Self::owner(&caller);
        let (mut contents, mut prefixes) = (Vec::new(), Vec::new());
        for e in &page.entries {
            match e {
                Entry::Object(l) => contents.push(object(l, url, Some(&owner))),
                Entry::Prefix(p) => prefixes.push(common(p, url)),
            }
        }
        // As AWS: NextMarker only with a delimiter (clients use the last key).
        let next_marker = match (&page.next, &i.delimiter) {
            (Some(Resume::After(k) | Resume::PastPrefix(k)), Some(_)) if page.truncated => {
                Some(enc(k, url))
            }
            _ => None,
        };
        Ok(S3Response::new(ListObjectsOutput {
            name: Some(i.bucket),
            prefix: Some(enc(&prefix, url)),
            marker: Some(enc(i.marker.as_deref().unwrap_or(""), url)),
            max_keys: i32::try_from(max).ok(),
            is_truncated: Some(page.truncated),
            contents: Some(contents),
            common_prefixes: Some(prefixes),
            delimiter: i.delimiter.filter(|d| !d.is_empty()).map(|d| enc(&d, url)),
            next_marker,
            encoding_type: i.encoding_type,
            ..ListObjectsOutput::default()
        }))
    }

    pub(crate) async fn list_v2(
        &self,
        req: S3Request<ListObjectsV2Input>,
    ) -> S3Result<S3Response<ListObjectsV2Output>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        self.bucket_must_exist(&caller, &i.bucket).await?;
        let url = url_encoding(i.encoding_type.as_ref())?;
        let max = max_keys(i.max_keys)?;
        let prefix = i.prefix.clone().unwrap_or_default();
        let start = match i.continuation_token.as_ref().filter(|t| !t.is_empty()) {
            Some(t) => Some(Resume::from_token(t).ok_or_else(|| {
                s3_error!(
                    InvalidArgument,
                    "The continuation token provided is incorrect"
                )
            })?),
            None => i
                .start_after
                .clone()
                .filter(|s| !s.is_empty())
                .map(Resume::After),
        };
        let page = self
            .page(
                &caller,
                &i.bucket,
                &prefix,
                i.delimiter.as_deref(),
                start,
                max,
            )
            .await?;
        let owner = i.fetch_owner.unwrap_or(false).then(|| Self::owner(&caller));
        let (mut contents, mut prefixes) = (Vec::new(), Vec::new());
        for e in &page.entries {
            match e {
                Entry::Object(l) => contents.push(object(l, url, owner.as_ref())),
                Entry::Prefix(p) => prefixes.push(common(p, url)),
            }
        }
        Ok(S3Response::new(ListObjectsV2Output {
            name: Some(i.bucket),
            prefix: Some(enc(&prefix, url)),
            max_keys: i32::try_from(max).ok(),
            key_count: i32::try_from(page.entries.len()).ok(),
            continuation_token: i.continuation_token,
            is_truncated: Some(page.truncated),
            next_continuation_token: page.next.filter(|_| page.truncated).map(|n| n.token()),
            contents: Some(contents),
            common_prefixes: Some(prefixes),
            delimiter: i.delimiter.filter(|d| !d.is_empty()).map(|d| enc(&d, url)),
            encoding_type: i.encoding_type,
            start_after: i.start_after.map(|s| enc(&s, url)),
            ..ListObjectsV2Output::default()
        }))
    }

    /// Versioning is never enabled: each object is its version `null`.
    pub(crate) async fn list_versions(
        &self,
        req: S3Request<ListObjectVersionsInput>,
    ) -> S3Result<S3Response<ListObjectVersionsOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        self.bucket_must_exist(&caller, &i.bucket).await?;
        let url = url_encoding(i.encoding_type.as_ref())?;
        let max = max_keys(i.max_keys)?;
        let prefix = i.prefix.clone().unwrap_or_default();
        let start = i
            .key_marker
            .clone()
            .filter(|m| !m.is_empty())
            .map(Resume::After);
        let page = self
            .page(
                &caller,
                &i.bucket,
                &prefix,
                i.delimiter.as_deref(),
                start,
                max,
            )
            .await?;
        let owner = Self::owner(&caller);
        let (mut versions, mut prefixes) = (Vec::new(), Vec::new());
        for e in &page.entries {
            match e {
                Entry::Object(l) => {
                    let o = object(l, url, Some(&owner));
                    versions.push(ObjectVersion {
                        e_tag: o.e_tag,
                        is_latest: Some(true),
                        key: o.key,
                        last_modified: o.last_modified,
                        owner: o.owner,
                        size: o.size,
                        storage_class: Some(s3s::dto::ObjectVersionStorageClass::from_static(
                            s3s::dto::ObjectVersionStorageClass::STANDARD,
                        )),
                        version_id: Some("null".into()),
                        ..ObjectVersion::default()
                    });
                }
                Entry::Prefix(p) => prefixes.push(common(p, url)),
            }
        }
        let next_key_marker = match &page.next {
            Some(Resume::After(k) | Resume::PastPrefix(k)) if page.truncated => Some(enc(k, url)),
            _ => None,
        };
        let truncated = page.truncated;
        Ok(S3Response::new(ListObjectVersionsOutput {
            name: Some(i.bucket),
            prefix: Some(enc(&prefix, url)),
            key_marker: Some(i.key_marker.unwrap_or_default()),
            version_id_marker: Some(i.version_id_marker.unwrap_or_default()),
            max_keys: i32::try_from(max).ok(),
            is_truncated: Some(truncated),
            next_version_id_marker: truncated.then(|| "null".to_string()),
            next_key_marker,
            versions: Some(versions),
            common_prefixes: Some(prefixes),
            delimiter: i.delimiter.filter(|d| !d.is_empty()).map(|d| enc(&d, url)),
            encoding_type: i.encoding_type,
            ..ListObjectVersionsOutput::default()
        }))
    }
}
