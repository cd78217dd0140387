//! Multipart uploads at the door: parts stream through the same checks as
//! a PUT's body (`digests`) into the core (`service::multipart`), which
//! keeps them in the blob store and the database so that they may go to
//! any node, in any order, in parallel (CONTRACT §18 "Multipart").

use super::digests::{self, Checked, Declared};
use super::errors;
use super::keys::{self, Target};
use super::listing::{enc, url_encoding};
use super::render;
use super::Ops;
use crate::service::multipart::{CopySource as PartSource, ObjectTemplate};
use s3s::dto::{
    AbortMultipartUploadInput, AbortMultipartUploadOutput, CompleteMultipartUploadInput,
    CompleteMultipartUploadOutput, CopyPartResult, CopySource, CreateMultipartUploadInput,
    CreateMultipartUploadOutput, ETag, Initiator, ListMultipartUploadsInput,
    ListMultipartUploadsOutput, ListPartsInput, ListPartsOutput, MultipartUpload, Part,
    UploadPartCopyInput, UploadPartCopyOutput, UploadPartInput, UploadPartOutput,
};
use s3s::{s3_error, S3Request, S3Response, S3Result};

/// A part number as the core takes it (1–10,000 is its rule).
fn part_number(n: i32) -> S3Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|n| (1..=10_000).contains(n))
        .ok_or_else(|| {
            s3_error!(
                InvalidArgument,
                "Part number must be an integer between 1 and 10000, inclusive"
            )
        })
}

impl Ops {
    /// Refuses, as S3 does, an upload id sent with another bucket or key
    /// than its own (`NoSuchUpload`).
    async fn named(
        &self,
        caller: &crate::service::caller::Caller,
        bucket: &str,
        key: &str,
        id: &str,
    ) -> S3Result<()> {
        let Target::File { folder, name } = keys::target(bucket, key)? else {
            return Err(errors::rule(
                crate::service::s3_error::S3Error::NoSuchUpload,
            ));
        };
        self.app
            .multipart_named(caller, id, &folder, &name)
            .await
            .map_err(errors::rule)
    }

    pub(crate) async fn create_multipart(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        let caller = super::caller(&req.extensions)?;
        render::refuse_unsupported(&req.headers)?;
        let i = req.input;
        let Target::File { folder, name } = keys::target(&i.bucket, &i.key)? else {
            return Err(keys::invalid("A folder marker holds no bytes"));
        };
        self.bucket_for_write(&caller, &i.bucket).await?;
        let template = ObjectTemplate {
            content_type: i.content_type.clone(),
            metadata: render::metadata_in(i.metadata.as_ref())?,
            attrs: render::attrs_in(
                i.cache_control,
                i.content_disposition,
                i.content_encoding,
                i.content_language,
                i.expires.as_ref(),
            ),
            private: render::private_of(i.acl.as_ref())?,
        };
        self.app.s3_may_write(&caller).await.map_err(errors::key)?;
        let id = self
            .app
            .create_multipart(&caller, &folder, &name, template)
            .await
            .map_err(errors::rule)?;
        Ok(S3Response::new(CreateMultipartUploadOutput {
            bucket: Some(i.bucket),
            key: Some(i.key),
            upload_id: Some(id),
            ..CreateMultipartUploadOutput::default()
        }))
    }

    pub(crate) async fn upload_part(
        &self,
        req: S3Request<UploadPartInput>,
    ) -> S3Result<S3Response<UploadPartOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        let number = part_number(i.part_number)?;
        self.named(&caller, &i.bucket, &i.key, &i.upload_id).await?;
        let length = render::decoded_length(&req.headers, i.content_length)?;
        let declared = Declared {
            md5: digests::content_md5(i.content_md5.as_deref())?,
            checksum: digests::declared_checksum(&req.headers)?,
            length,
        };
        let body = i.body.unwrap_or_else(render::empty_body);
        let (checked, outcome) = Checked::new(body, declared, false, req.trailing_headers);
        let part = self
            .app
            .upload_part(&caller, &i.upload_id, number, length, checked)
            .await;
        let part = match part {
            Ok(p) => p,
            Err(e) => {
                let body = outcome.lock().expect("outcome lock").error.take();
                return Err(body.unwrap_or_else(|| errors::rule(e)));
            }
        };
        let received = outcome.lock().expect("outcome lock").received.clone();
        let mut out = UploadPartOutput {
            e_tag: Some(ETag::Strong(part.md5)),
            ..UploadPartOutput::default()
        };
        if let Some(c) = &received.checksum {
            let mut tmp = s3s::dto::PutObjectOutput::default();
            render::set_checksum!(tmp, c);
            out.checksum_crc32 = tmp.checksum_crc32;
            out.checksum_crc32c = tmp.checksum_crc32c;
            out.checksum_crc64nvme = tmp.checksum_crc64nvme;
            out.checksum_sha1 = tmp.checksum_sha1;
            out.checksum_sha256 = tmp.checksum_sha256;
        }
        Ok(S3Response::new(out))
    }

    pub(crate) async fn upload_part_copy(
        &self,
        req: S3Request<UploadPartCopyInput>,
    ) -> S3Result<S3Response<UploadPartCopyOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        let number = part_number(i.part_number)?;
        self.named(&caller, &i.bucket, &i.key, &i.upload_id).await?;
        let CopySource::Bucket {
            bucket,
            key,
            version_id,
        } = &i.copy_source
        else {
            return Err(s3_error!(
                NotImplemented,
                "Access point copy sources are not supported"
            ));
        };
        render::only_null_version(version_id.as_deref())?;
        let source = self.found(&caller, bucket, key).await?;
        render::source_holds(
            &source.row,
            render::Conditions {
                if_match: i.copy_source_if_match,
                if_none_match: i.copy_source_if_none_match,
                if_modified_since: i.copy_source_if_modified_since,
                if_unmodified_since: i.copy_source_if_unmodified_since,
            },
        )?;
        let range = match &i.copy_source_range {
            None => None,
            Some(r) => Some(copy_range(r, source.row.size)?),
        };
        let part = self
            .app
            .upload_part_copy(
                &caller,
                &i.upload_id,
                number,
                PartSource {
                    file_id: source.row.id.clone(),
                    range,
                },
            )
            .await
            .map_err(errors::rule)?;
        Ok(S3Response::new(UploadPartCopyOutput {
            copy_part_result: Some(CopyPartResult {
                e_tag: Some(ETag::Strong(part.md5)),
                last_modified: Some(render::timestamp(part.created_at)),
                ..CopyPartResult::default()
            }),
            ..UploadPartCopyOutput::default()
        }))
    }

    pub(crate) async fn complete_multipart(
        &self,
        req: S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<S3Response<CompleteMultipartUploadOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        let parts = i
            .multipart_upload
            .and_then(|m| m.parts)
            .unwrap_or_default()
            .into_iter()
            .map(|p| {
                let n = p
                    .part_number
                    .ok_or_else(|| s3_error!(MalformedXML, "A part has no PartNumber"))?;
                let tag = p.e_tag.map(|t| t.value().to_string()).unwrap_or_default();
                Ok((part_number(n)?, tag))
            })
            .collect::<S3Result<Vec<_>>>()?;
        if parts.is_empty() {
            return Err(s3_error!(MalformedXML, "The XML you provided was not well-formed or did not validate against our published schema"));
        }
        self.named(&caller, &i.bucket, &i.key, &i.upload_id).await?;
        self.app.s3_may_write(&caller).await.map_err(errors::key)?;
        let stored = self
            .app
            .complete_multipart(&caller, &i.upload_id, parts)
            .await
            .map_err(errors::rule)?;
        Ok(S3Response::new(CompleteMultipartUploadOutput {
            bucket: Some(i.bucket.clone()),
            key: Some(i.key.clone()),
            e_tag: Some(render::etag(&stored)),
            location: Some(format!("{}/{}/{}", self.app.config.s3.url, i.bucket, i.key)),
            ..CompleteMultipartUploadOutput::default()
        }))
    }

    pub(crate) async fn abort_multipart(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = &req.input;
        self.named(&caller, &i.bucket, &i.key, &i.upload_id).await?;
        self.app
            .abort_multipart(&caller, &i.upload_id)
            .await
            .map_err(errors::rule)?;
        let mut resp = S3Response::new(AbortMultipartUploadOutput::default());
        resp.status = Some(axum::http::StatusCode::NO_CONTENT);
        Ok(resp)
    }

    pub(crate) async fn list_parts(
        &self,
        req: S3Request<ListPartsInput>,
    ) -> S3Result<S3Response<ListPartsOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        let after = u32::try_from(i.part_number_marker.unwrap_or(0)).unwrap_or(0);
        let max = u32::try_from(i.max_parts.unwrap_or(1000))
            .unwrap_or(1000)
            .min(1000);
        self.named(&caller, &i.bucket, &i.key, &i.upload_id).await?;
        let (_, listed) = self
            .app
            .list_parts(&caller, &i.upload_id, after, max)
            .await
            .map_err(errors::rule)?;
        let next = listed.items.last().map(|p| p.number);
        let parts = listed
            .items
            .into_iter()
            .map(|p| Part {
                e_tag: Some(ETag::Strong(p.md5)),
                last_modified: Some(render::timestamp(p.created_at)),
                part_number: i32::try_from(p.number).ok(),
                size: i64::try_from(p.size).ok(),
                ..Part::default()
            })
            .collect();
        let owner = Self::owner(&caller);
        Ok(S3Response::new(ListPartsOutput {
            bucket: Some(i.bucket),
            key: Some(i.key),
            upload_id: Some(i.upload_id),
            initiator: Some(Initiator {
                display_name: owner.display_name.clone(),
                id: owner.id.clone(),
            }),
            owner: Some(owner),
            is_truncated: Some(listed.truncated),
            max_parts: i32::try_from(max).ok(),
            part_number_marker: i.part_number_marker,
            next_part_number_marker: next.and_then(|n| i32::try_from(n).ok()),
            parts: Some(parts),
            storage_class: Some(s3s::dto::StorageClass::from_static(
                s3s::dto::StorageClass::STANDARD,
            )),
            ..ListPartsOutput::default()
        }))
    }

    pub(crate) async fn list_multipart(
        &self,
        req: S3Request<ListMultipartUploadsInput>,
    ) -> S3Result<S3Response<ListMultipartUploadsOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        self.bucket_must_exist(&caller, &i.bucket).await?;
        let url = url_encoding(i.encoding_type.as_ref())?;
        let max = u32::try_from(i.max_uploads.unwrap_or(1000))
            .unwrap_or(1000)
            .min(1000);
        let base = format!("{}/", i.bucket);
        let prefix = format!("{base}{}", i.prefix.clone().unwrap_or_default());
        let key_marker = i
            .key_marker
            .as_ref()
            .filter(|k| !k.is_empty())
            .map(|k| format!("{base}{k}"));
        let listed = self
            .app
            .list_multipart_uploads(
                &caller,
                &prefix,
                key_marker.as_deref(),
                i.upload_id_marker.as_deref().filter(|m| !m.is_empty()),
                max,
            )
            .await
            .map_err(errors::rule)?;
        let owner = Self::owner(&caller);
        let key_of = |path: &str| keys::key_of(&i.bucket, path).unwrap_or(path).to_string();
        let last = listed.items.last().map(|u| (key_of(&u.path), u.id.clone()));
        let uploads = listed
            .items
            .iter()
            .map(|u| MultipartUpload {
                key: Some(enc(&key_of(&u.path), url)),
                upload_id: Some(u.id.clone()),
                initiated: Some(render::timestamp(u.created_at)),
                initiator: Some(Initiator {
                    display_name: owner.display_name.clone(),
                    id: owner.id.clone(),
                }),
                owner: Some(owner.clone()),
                storage_class: Some(s3s::dto::StorageClass::from_static(
                    s3s::dto::StorageClass::STANDARD,
                )),
                ..MultipartUpload::default()
            })
            .collect();
        Ok(S3Response::new(ListMultipartUploadsOutput {
            bucket: Some(i.bucket.clone()),
            prefix: Some(enc(i.prefix.as_deref().unwrap_or(""), url)),
            key_marker: Some(enc(i.key_marker.as_deref().unwrap_or(""), url)),
            upload_id_marker: Some(i.upload_id_marker.clone().unwrap_or_default()),
            max_uploads: i32::try_from(max).ok(),
            is_truncated: Some(listed.truncated),
            next_key_marker: last.as_ref().map(|(k, _)| enc(k, url)),
            next_upload_id_marker: last.map(|(_, id)| id),
            uploads: Some(uploads),
            encoding_type: i.encoding_type,
            ..ListMultipartUploadsOutput::default()
        }))
    }
}

/// `x-amz-copy-source-range: bytes=a-b` (inclusive) within a source of
/// `size` bytes.
fn copy_range(r: &str, size: u64) -> S3Result<(u64, u64)> {
    let bad = || {
        s3_error!(InvalidArgument, "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy")
    };
    let (a, b) = r
        .strip_prefix("bytes=")
        .and_then(|s| s.split_once('-'))
        .ok_or_else(bad)?;
    let (a, b): (u64, u64) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
    if a > b || b >= size {
        return Err(s3_error!(
            InvalidRange,
            "The requested range is not satisfiable"
        ));
    }
    Ok((a, b))
}
