//! PutObject, GetObject, HeadObject, DeleteObject, DeleteObjects: the
//! newest file at a key's path, written and read through the service
//! core's upload pipeline and reads (CONTRACT §18 "Objects", "One object
//! per key").

use super::digests::{self, Checked, Declared};
use super::errors;
use super::keys::{self, Target};
use super::render;
use super::Ops;
use crate::service::caller::Caller;
use crate::service::cdn::{self, Content};
use crate::service::upload::{Upload, UploadFields, UploadRequest};
use crate::service::{files, paths, ServiceError};
use s3s::dto::{
    DeleteObjectInput, DeleteObjectOutput, DeleteObjectsInput, DeleteObjectsOutput, DeletedObject,
    GetObjectInput, GetObjectOutput, HeadObjectInput, HeadObjectOutput, PutObjectInput,
    PutObjectOutput, StreamingBlob,
};
use s3s::{s3_error, S3Request, S3Response, S3Result};

impl Ops {
    pub(crate) async fn put(
        &self,
        req: S3Request<PutObjectInput>,
    ) -> S3Result<S3Response<PutObjectOutput>> {
        let caller = super::caller(&req.extensions)?;
        let input = req.input;
        let target = keys::target(&input.bucket, &input.key)?;
        render::refuse_unsupported(&req.headers)?;
        let private = render::private_of(input.acl.as_ref())?;
        self.bucket_for_write(&caller, &input.bucket).await?;
        let declared_length = render::decoded_length(&req.headers, input.content_length)?;
        let Target::File { folder, name } = target else {
            // A folder marker: no bytes.
            if declared_length.unwrap_or(0) != 0 {
                return Err(keys::invalid(
                    "A key ending in '/' is a folder marker and holds no bytes",
                ));
            }
            self.app.s3_may_write(&caller).await.map_err(errors::key)?;
            self.put_marker(&caller, &target.path()).await?;
            return Ok(S3Response::new(PutObjectOutput {
                e_tag: Some(render::EMPTY_ETAG.clone()),
                ..PutObjectOutput::default()
            }));
        };
        let if_absent = match &input.if_none_match {
            Some(c) if c.is_any() => true,
            Some(_) => {
                return Err(s3_error!(
                    NotImplemented,
                    "If-None-Match takes only '*' on a PUT"
                ))
            }
            None => false,
        };
        if input.if_match.is_some() {
            return Err(s3_error!(
                NotImplemented,
                "If-Match on a PUT is not supported"
            ));
        }
        let metadata = render::metadata_in(input.metadata.as_ref())?;
        let mut attrs = render::attrs_in(
            input.cache_control,
            input.content_disposition,
            input.content_encoding,
            input.content_language,
            input.expires.as_ref(),
        );
        let declared = Declared {
            md5: digests::content_md5(input.content_md5.as_deref())?,
            checksum: digests::declared_checksum(&req.headers)?,
            length: declared_length,
        };
        self.app.s3_may_write(&caller).await.map_err(errors::key)?;
        let body = input.body.unwrap_or_else(render::empty_body);
        let (checked, outcome) = Checked::new(body, declared, false, req.trailing_headers);
        let upload = Upload::start(
            &self.app,
            UploadRequest {
                caller: caller.clone(),
                content_length: declared_length,
                idempotency_key: None,
                content_digest: None,
                held: None,
                // An S3 PUT answers with the ETag, the MD5.
                md5_now: true,
            },
        )
        .await
        .map_err(errors::key)?;
        let content_type = input.content_type.as_ref().map(ToString::to_string);
        let part = upload
            .receive(&name, content_type.as_deref(), checked)
            .await;
        let body_error = || outcome.lock().expect("outcome lock").error.take();
        let part = match part {
            Ok(p) => p,
            Err(e) => return Err(body_error().unwrap_or_else(|| errors::key(e))),
        };
        let received = outcome.lock().expect("outcome lock").received.clone();
        attrs.checksum.clone_from(&received.checksum);
        let fields = UploadFields {
            folder: Some(folder),
            private: Some(private),
            metadata,
            replace: (!if_absent).then_some(true),
            if_absent,
            attrs,
            ..UploadFields::default()
        };
        let stored = upload.finish(part, fields).await.map_err(errors::key)?;
        let e_tag = received
            .md5
            .or(stored.md5.clone())
            .map_or_else(|| render::etag(&stored), s3s::dto::ETag::Strong);
        let mut out = PutObjectOutput {
            e_tag: Some(e_tag),
            size: i64::try_from(stored.size).ok(),
            ..PutObjectOutput::default()
        };
        if let Some(c) = &stored.attrs.checksum {
            render::set_checksum!(out, c);
        }
        Ok(S3Response::new(out))
    }

    pub(crate) async fn get(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        let asked = render::read_of!(i);
        if let Some(at) = self.marker_at(&caller, &i.bucket, &i.key).await? {
            let mut out = render::marker_output(at);
            out.body = Some(render::empty_body());
            return Ok(S3Response::new(out));
        }
        let found = self.found(&caller, &i.bucket, &i.key).await?;
        let row = found.row.clone();
        let shape = render::shape(&row, &asked)?;
        let content = found
            .content(&self.app, shape.offset, shape.len, None)
            .await
            .map_err(errors::key)?;
        let body = match content {
            Content::Inline(bytes) => StreamingBlob::wrap(futures_util::stream::once(async move {
                Ok::<_, std::io::Error>(bytes)
            })),
            Content::Stream(s) => StreamingBlob::wrap(sync_wrapper::SyncStream::new(s)),
        };
        let mut out = render::get_output(&row, &shape, asked.checksums);
        out.body = Some(body);
        let mut resp = S3Response::new(out);
        if shape.partial {
            resp.status = Some(axum::http::StatusCode::PARTIAL_CONTENT);
        }
        Ok(resp)
    }

    pub(crate) async fn head(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        let asked = render::read_of!(i);
        if let Some(at) = self.marker_at(&caller, &i.bucket, &i.key).await? {
            let o = render::marker_output(at);
            return Ok(S3Response::new(HeadObjectOutput {
                content_length: o.content_length,
                e_tag: o.e_tag,
                last_modified: o.last_modified,
                content_type: o.content_type,
                ..HeadObjectOutput::default()
            }));
        }
        let found = self.found(&caller, &i.bucket, &i.key).await?;
        let shape = render::shape(&found.row, &asked)?;
        let out = render::head_output(&found.row, &shape, asked.checksums);
        let mut resp = S3Response::new(out);
        if shape.partial {
            resp.status = Some(axum::http::StatusCode::PARTIAL_CONTENT);
        }
        Ok(resp)
    }

    /// When `key` is a folder marker that exists, its creation time.
    async fn marker_at(&self, caller: &Caller, bucket: &str, key: &str) -> S3Result<Option<i64>> {
        let Ok(Target::Marker { path }) = keys::target(bucket, key) else {
            return Ok(None);
        };
        let found = self.markers(caller, &path, None, 1).await?;
        Ok(found
            .into_iter()
            .find(|(p, _)| *p == path)
            .map(|(_, at)| at))
    }

    /// The newest file at a key (404 `NoSuchKey`, or `NoSuchBucket` when the
    /// bucket is none of the account's).
    pub(crate) async fn found(
        &self,
        caller: &Caller,
        bucket: &str,
        key: &str,
    ) -> S3Result<cdn::Found> {
        let target = keys::target(bucket, key)?;
        let Target::File { folder, name } = target else {
            return Err(self.missing_key(caller, bucket).await);
        };
        match cdn::open_own(&self.app, &caller.account.id, &folder, &name).await {
            Ok(found) => Ok(found),
            Err(ServiceError::NotFound(_)) => Err(self.missing_key(caller, bucket).await),
            Err(e) => Err(errors::key(e)),
        }
    }

    pub(crate) async fn delete(
        &self,
        req: S3Request<DeleteObjectInput>,
    ) -> S3Result<S3Response<DeleteObjectOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        render::only_null_version(i.version_id.as_deref())?;
        let target = keys::target(&i.bucket, &i.key)?;
        self.bucket_must_exist(&caller, &i.bucket).await?;
        self.remove(&caller, &target).await?;
        let mut resp = S3Response::new(DeleteObjectOutput::default());
        resp.status = Some(axum::http::StatusCode::NO_CONTENT);
        Ok(resp)
    }

    /// Removes every file at a key's path (or its folder marker).
    async fn remove(&self, caller: &Caller, target: &Target) -> S3Result<()> {
        match target {
            Target::Marker { path } => self.remove_marker(caller, path).await,
            Target::File { .. } => {
                let account = &caller.account.id;
                let ids: Vec<String> = paths::files_at(&self.app, account, &target.path())
                    .await
                    .map_err(errors::key)?
                    .into_iter()
                    .map(|f| f.id)
                    .collect();
                if !ids.is_empty() {
                    files::delete_many(&self.app, account, ids)
                        .await
                        .map_err(errors::key)?;
                }
                Ok(())
            }
        }
    }

    pub(crate) async fn delete_many(
        &self,
        req: S3Request<DeleteObjectsInput>,
    ) -> S3Result<S3Response<DeleteObjectsOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        let objects = i.delete.objects;
        if objects.len() > 1000 {
            return Err(s3_error!(
                MalformedXML,
                "The XML you provided was not well-formed or did not validate against our published schema"
            ));
        }
        self.bucket_must_exist(&caller, &i.bucket).await?;
        let quiet = i.delete.quiet.unwrap_or(false);
        let mut deleted = Vec::new();
        let mut errors_out = Vec::new();
        for o in objects {
            let outcome = match render::only_null_version(o.version_id.as_deref())
                .and_then(|()| keys::target(&i.bucket, &o.key))
            {
                Ok(target) => self.remove(&caller, &target).await,
                Err(e) => Err(e),
            };
            match outcome {
                Ok(()) if quiet => {}
                Ok(()) => deleted.push(DeletedObject {
                    key: Some(o.key),
                    version_id: o.version_id,
                    ..DeletedObject::default()
                }),
                Err(e) => errors_out.push(s3s::dto::Error {
                    code: Some(e.code().as_str().to_string()),
                    key: Some(o.key),
                    message: e.message().map(str::to_string),
                    version_id: o.version_id,
                }),
            }
        }
        Ok(S3Response::new(DeleteObjectsOutput {
            deleted: Some(deleted),
            errors: Some(errors_out),
            ..DeleteObjectsOutput::default()
        }))
    }
}
