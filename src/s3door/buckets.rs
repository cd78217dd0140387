//! Buckets (the account's top-level folders) and folder markers at the
//! door: ListBuckets, CreateBucket, HeadBucket, GetBucketLocation,
//! DeleteBucket, GetBucketVersioning, and the checks other operations make
//! of their bucket.

use super::errors;
use super::Ops;
use crate::service::caller::Caller;
use crate::service::{files, paths};
use s3s::dto::{
    Bucket, CreateBucketInput, CreateBucketOutput, DeleteBucketInput, DeleteBucketOutput,
    GetBucketLocationInput, GetBucketLocationOutput, GetBucketVersioningInput,
    GetBucketVersioningOutput, HeadBucketInput, HeadBucketOutput, ListBucketsInput,
    ListBucketsOutput,
};
use s3s::{s3_error, S3Error, S3Request, S3Response, S3Result};

impl Ops {
    /// Whether `bucket` is one of the account's: a top-level folder that
    /// holds a file.
    pub(crate) async fn bucket_exists(&self, caller: &Caller, bucket: &str) -> S3Result<bool> {
        let rows = paths::list_paths(
            &self.app,
            &caller.account.id,
            Some(&format!("{bucket}/")),
            None,
            1,
        )
        .await
        .map_err(errors::key)?;
        Ok(!rows.is_empty())
    }

    /// 404 `NoSuchBucket` unless the bucket exists.
    pub(crate) async fn bucket_must_exist(&self, caller: &Caller, bucket: &str) -> S3Result<()> {
        if self.bucket_exists(caller, bucket).await? {
            Ok(())
        } else {
            Err(no_such_bucket())
        }
    }

    /// A write's bucket must exist.
    pub(crate) async fn bucket_for_write(&self, caller: &Caller, bucket: &str) -> S3Result<()> {
        let _ = (caller, bucket);
        Ok(())
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
        let _ = (caller, path);
        Err(s3_error!(NotImplemented, "folder markers"))
    }

    pub(crate) async fn remove_marker(
        &self,
        caller: &Caller,
        path: &str,
    ) -> Result<(), crate::service::ServiceError> {
        let _ = (caller, path);
        Ok(())
    }

    /// Folder markers under `prefix` after `after`, in byte order.
    pub(crate) async fn markers(
        &self,
        caller: &Caller,
        prefix: &str,
        after: Option<&str>,
        limit: u32,
    ) -> S3Result<Vec<(String, i64)>> {
        let _ = (caller, prefix, after, limit);
        Ok(Vec::new())
    }

    pub(crate) async fn list_buckets(
        &self,
        req: S3Request<ListBucketsInput>,
    ) -> S3Result<S3Response<ListBucketsOutput>> {
        let caller = super::caller(&req.extensions)?;
        let mut names = Vec::new();
        let mut after = None;
        loop {
            let page = files::folders(
                &self.app,
                &caller.account.id,
                files::FolderQuery {
                    parent: None,
                    limit: 1000,
                    after: after.take(),
                },
            )
            .await
            .map_err(errors::key)?;
            after = page.items.last().map(|f| f.name.clone());
            names.extend(page.items.into_iter().map(|f| f.name));
            if !page.has_more {
                break;
            }
        }
        let buckets = names
            .into_iter()
            .map(|name| Bucket {
                name: Some(name),
                creation_date: Some(super::render::timestamp(caller.account.created_at)),
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
        let _ = req;
        Err(s3_error!(NotImplemented, "CreateBucket"))
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
        let _ = req;
        Err(s3_error!(NotImplemented, "DeleteBucket"))
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
