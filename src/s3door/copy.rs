//! CopyObject: a new file with the source's bytes, which the blob store
//! copies itself (`service::copy`), within and across the account's
//! buckets, replacing the files at the target's path; metadata copied or
//! replaced (`x-amz-metadata-directive`).

use super::errors;
use super::keys::{self, Target};
use super::render;
use super::Ops;
use crate::domain::filepath::AtPath;
use crate::service::copy::{self, CopyRequest, Replaced};
use s3s::dto::{CopyObjectInput, CopyObjectOutput, CopyObjectResult, CopySource};
use s3s::{s3_error, S3Request, S3Response, S3Result};

impl Ops {
    pub(crate) async fn copy(
        &self,
        req: S3Request<CopyObjectInput>,
    ) -> S3Result<S3Response<CopyObjectOutput>> {
        let caller = super::caller(&req.extensions)?;
        render::refuse_unsupported(&req.headers)?;
        let i = req.input;
        let CopySource::Bucket {
            bucket: src_bucket,
            key: src_key,
            version_id,
        } = &i.copy_source
        else {
            return Err(s3_error!(
                NotImplemented,
                "Access point copy sources are not supported"
            ));
        };
        render::only_null_version(version_id.as_deref())?;
        let Target::File { folder, name } = keys::target(&i.bucket, &i.key)? else {
            return Err(keys::invalid(
                "A folder marker cannot be the target of a copy",
            ));
        };
        self.bucket_for_write(&caller, &i.bucket).await?;
        let source = self.found(&caller, src_bucket, src_key).await?;
        let row = &source.row;
        render::source_holds(
            row,
            render::Conditions {
                if_match: i.copy_source_if_match.clone(),
                if_none_match: i.copy_source_if_none_match.clone(),
                if_modified_since: i.copy_source_if_modified_since.clone(),
                if_unmodified_since: i.copy_source_if_unmodified_since.clone(),
            },
        )?;
        let replace = match i
            .metadata_directive
            .as_ref()
            .map(s3s::dto::MetadataDirective::as_str)
        {
            None | Some("COPY") => false,
            Some("REPLACE") => true,
            Some(other) => {
                return Err(keys::invalid(&format!(
                    "Unknown metadata directive {other}"
                )));
            }
        };
        let onto_itself = row.folder.as_deref() == Some(folder.as_str()) && row.name == name;
        if onto_itself && !replace && i.acl.is_none() {
            return Err(s3_error!(
                InvalidRequest,
                "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes."
            ));
        }
        let replaced = if replace {
            Some(Replaced {
                content_type: i.content_type.clone(),
                metadata: render::metadata_in(i.metadata.as_ref())?,
                attrs: render::attrs_in(
                    i.cache_control.clone(),
                    i.content_disposition.clone(),
                    i.content_encoding.clone(),
                    i.content_language.clone(),
                    i.expires.as_ref(),
                ),
            })
        } else {
            None
        };
        let private = match &i.acl {
            Some(acl) => Some(render::private_of(Some(acl))?),
            None => Some(true),
        };
        self.app.s3_may_write(&caller).await.map_err(errors::key)?;
        let id = row.id.clone();
        let stored = copy::copy(
            &self.app,
            &id,
            CopyRequest {
                caller,
                idempotency_key: None,
                name: Some(name),
                folder: Some(folder),
                private,
                at_path: AtPath::Replace,
                replaced,
            },
        )
        .await
        .map_err(errors::key)?;
        Ok(S3Response::new(CopyObjectOutput {
            copy_object_result: Some(CopyObjectResult {
                e_tag: Some(render::etag(&stored)),
                last_modified: Some(render::timestamp(stored.created_at)),
                ..CopyObjectResult::default()
            }),
            ..CopyObjectOutput::default()
        }))
    }
}
