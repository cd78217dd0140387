//! Buckets (the account's top-level folders) and folder markers at the
//! door: ListBuckets, CreateBucket, HeadBucket, GetBucketLocation,
//! DeleteBucket, GetBucketVersioning, and the checks other operations make
//! of their bucket.

use super::errors;
use super::keys;
use super::Ops;
use crate::service::caller::Caller;
use s3s::dto::{
    Bucket, CreateBucketInput, CreateBucketOutput, DeleteBucketInput, DeleteBucketOutput,
    GetBucketLocationInput, GetBucketLocationOutput, GetBucketVersioningInput,
    GetBucketVersioningOutput, HeadBucketInput, HeadBucketOutput, ListBucketsInput,
    ListBucketsOutput,
};
use s3s::{s3_error, S3Error, S3Request, S3Response, S3Result};

impl Ops {
    /// Whether `bucket` is one of the account's: made by CreateBucket, or
    /// a top-level folder holding a file or a folder marker.
    pub(crate) async fn bucket_exists(&self, caller: &Caller, bucket: &str) -> S3Result<bool> {
        self.app
            .bucket_exists(caller, bucket)
            .await
            .map_err(errors::rule)
    }

    /// 404 `NoSuchBucket` unless the bucket exists.
    pub(crate) async fn bucket_must_exist(&self, caller: &Caller, bucket: &str) -> S3Result<()> {
        if self.bucket_exists(caller, bucket).await? {
            Ok(())
        } else {
            Err(no_such_bucket())
        }
    }

    /// A write's bucket must exist, as S3's must.
    pub(crate) async fn bucket_for_write(&self, caller: &Caller, bucket: &str) -> S3Result<()> {
        self.bucket_must_exist(caller, bucket).await
    }

    /// A key that is no file: `NoSuchKey`, or `NoSuchBucket`.
    pub(crate) async fn missing_key(&self, caller: &Caller, bucket: &str) -> S3Error {
        match self.bucket_exists(caller, bucket).await {
            Ok(false) => no_such_bucket(),
            Ok(true) => s3_error!(NoSuchKey, "The specified key does not exist."),
            Err(e) => e,
        }
    }

    pub(crate) async fn put_marker(&self, caller: &Caller, path: &str) -> S3Result<()> {
        self.app
            .put_marker(caller, path)
            .await
            .map(|_| ())
            .map_err(errors::rule)
    }

    pub(crate) async fn remove_marker(&self, caller: &Caller, path: &str) -> Result<(), S3Error> {
        self.app
            .delete_marker(caller, path)
            .await
            .map(|_| ())
            .map_err(errors::rule)
    }

    /// Folder markers under `prefix` after `after`, in byte order.
    pub(crate) async fn markers(
        &self,
        caller: &Caller,
        prefix: &str,
        after: Option<&str>,
        limit: u32,
    ) -> S3Result<Vec<(String, i64)>> {
        Ok(self
            .app
            .markers(caller, Some(prefix), after, limit)
            .await
            .map_err(errors::rule)?
            .into_iter()
            .map(|m| (m.path, m.created_at))
            .collect())
    }

    pub(crate) async fn list_buckets(
        &self,
        req: S3Request<ListBucketsInput>,
    ) -> S3Result<S3Response<ListBucketsOutput>> {
        let caller = super::caller(&req.extensions)?;
        let buckets = self
            .app
            .buckets(&caller)
            .await
            .map_err(errors::rule)?
            .into_iter()
            .map(|b| Bucket {
                name: Some(b.name),
                creation_date: Some(super::render::timestamp(b.created_at)),
                ..Bucket::default()
            })
            .collect();
        Ok(S3Response::new(ListBucketsOutput {
            buckets: Some(buckets),
            owner: Some(Self::owner(&caller)),
            ..ListBucketsOutput::default()
        }))
    }

    pub(crate) async fn create_bucket(
        &self,
        req: S3Request<CreateBucketInput>,
    ) -> S3Result<S3Response<CreateBucketOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        if i.object_lock_enabled_for_bucket == Some(true) {
            return Err(s3_error!(NotImplemented, "Object lock is not supported"));
        }
        if let Some(c) = i
            .create_bucket_configuration
            .as_ref()
            .and_then(|c| c.location_constraint.as_ref())
        {
            let region = &self.app.config.s3.region;
            if c.as_str() != region.as_str() && !(c.as_str().is_empty() && region == "us-east-1") {
                return Err(s3_error!(
                    InvalidLocationConstraint,
                    "The specified location-constraint is not valid: this door is {region}"
                ));
            }
        }
        keys::bucket_name(&i.bucket)?;
        self.app.s3_may_write(&caller).await.map_err(errors::key)?;
        self.app
            .create_bucket(&caller, &i.bucket)
            .await
            .map_err(errors::rule)?;
        Ok(S3Response::new(CreateBucketOutput {
            location: Some(format!("/{}", i.bucket)),
        }))
    }

    pub(crate) async fn head_bucket(
        &self,
        req: S3Request<HeadBucketInput>,
    ) -> S3Result<S3Response<HeadBucketOutput>> {
        let caller = super::caller(&req.extensions)?;
        self.bucket_must_exist(&caller, &req.input.bucket).await?;
        Ok(S3Response::new(HeadBucketOutput {
            bucket_region: Some(self.app.config.s3.region.clone()),
            ..HeadBucketOutput::default()
        }))
    }

    pub(crate) async fn bucket_location(
        &self,
        req: S3Request<GetBucketLocationInput>,
    ) -> S3Result<S3Response<GetBucketLocationOutput>> {
        let caller = super::caller(&req.extensions)?;
        self.bucket_must_exist(&caller, &req.input.bucket).await?;
        let region = &self.app.config.s3.region;
        // Empty for us-east-1, as AWS.
        let location = (region != "us-east-1")
            .then(|| s3s::dto::BucketLocationConstraint::from(region.clone()));
        Ok(S3Response::new(GetBucketLocationOutput {
            location_constraint: location,
        }))
    }

    pub(crate) async fn delete_bucket(
        &self,
        req: S3Request<DeleteBucketInput>,
    ) -> S3Result<S3Response<DeleteBucketOutput>> {
        let caller = super::caller(&req.extensions)?;
        self.app
            .delete_bucket(&caller, &req.input.bucket)
            .await
            .map_err(errors::rule)?;
        let mut resp = S3Response::new(DeleteBucketOutput::default());
        resp.status = Some(axum::http::StatusCode::NO_CONTENT);
        Ok(resp)
    }

    pub(crate) async fn bucket_versioning(
        &self,
        req: S3Request<GetBucketVersioningInput>,
    ) -> S3Result<S3Response<GetBucketVersioningOutput>> {
        let caller = super::caller(&req.extensions)?;
        self.bucket_must_exist(&caller, &req.input.bucket).await?;
        // Never enabled: no Status.
        Ok(S3Response::new(GetBucketVersioningOutput::default()))
    }
}

pub(crate) fn no_such_bucket() -> S3Error {
    s3_error!(NoSuchBucket, "The specified bucket does not exist")
}
