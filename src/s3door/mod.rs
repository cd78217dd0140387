//! The S3 door (CONTRACT §18): the account's files spoken to in the S3
//! protocol on a listener of their own. `s3s` parses the requests, checks
//! their SigV4 signatures (header, presigned, aws-chunked chunk and trailer
//! signatures) and writes the XML; this door maps its operations onto the
//! service core, as `server` maps /v1's, and renders the core's refusals as
//! S3's errors. It reaches no database: every rule is the core's.

mod acl;
mod auth;
mod buckets;
mod copy;
mod digests;
mod errors;
mod keys;
mod layer;
mod listing;
mod lists;
mod multipart;
mod objects;
mod post;
mod render;

use crate::service::caller::Caller;
use crate::service::App;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use axum::Router;
use s3s::dto as d;
use s3s::{S3Request, S3Response, S3Result};
use std::sync::Arc;

/// What every request of the door shares.
#[derive(Clone)]
pub(crate) struct Door {
    s3: s3s::service::S3Service,
    /// POST Object is answered by the door itself (`post`).
    ops: Ops,
}

/// The operations, on the service core.
#[derive(Clone)]
pub(crate) struct Ops {
    pub(crate) app: Arc<App>,
}

/// The request's id, when the listener gave it one.
#[derive(Clone, Debug)]
pub(crate) struct RequestId(pub(crate) String);

/// Where the access check leaves the caller's account, for the access log.
#[derive(Clone, Default)]
pub(crate) struct AccountSlot(Arc<std::sync::OnceLock<String>>);

/// The caller the access check found (every operation runs after it).
pub(crate) fn caller(ext: &axum::http::Extensions) -> S3Result<Caller> {
    ext.get::<Caller>()
        .cloned()
        .ok_or_else(|| s3s::s3_error!(AccessDenied, "Anonymous requests are not allowed"))
}

type Out<T> = S3Result<S3Response<T>>;

#[async_trait::async_trait]
impl s3s::S3 for Ops {
    async fn put_object(&self, req: S3Request<d::PutObjectInput>) -> Out<d::PutObjectOutput> {
        self.put(req).await
    }
    async fn get_object(&self, req: S3Request<d::GetObjectInput>) -> Out<d::GetObjectOutput> {
        self.get(req).await
    }
    async fn head_object(&self, req: S3Request<d::HeadObjectInput>) -> Out<d::HeadObjectOutput> {
        self.head(req).await
    }
    async fn delete_object(
        &self,
        req: S3Request<d::DeleteObjectInput>,
    ) -> Out<d::DeleteObjectOutput> {
        self.delete(req).await
    }
    async fn delete_objects(
        &self,
        req: S3Request<d::DeleteObjectsInput>,
    ) -> Out<d::DeleteObjectsOutput> {
        self.delete_many(req).await
    }
    async fn list_objects(&self, req: S3Request<d::ListObjectsInput>) -> Out<d::ListObjectsOutput> {
        self.list_v1(req).await
    }
    async fn list_objects_v2(
        &self,
        req: S3Request<d::ListObjectsV2Input>,
    ) -> Out<d::ListObjectsV2Output> {
        self.list_v2(req).await
    }
    async fn list_object_versions(
        &self,
        req: S3Request<d::ListObjectVersionsInput>,
    ) -> Out<d::ListObjectVersionsOutput> {
        self.list_versions(req).await
    }
    async fn copy_object(&self, req: S3Request<d::CopyObjectInput>) -> Out<d::CopyObjectOutput> {
        self.copy(req).await
    }
    async fn get_object_acl(
        &self,
        req: S3Request<d::GetObjectAclInput>,
    ) -> Out<d::GetObjectAclOutput> {
        self.get_acl(req).await
    }
    async fn put_object_acl(
        &self,
        req: S3Request<d::PutObjectAclInput>,
    ) -> Out<d::PutObjectAclOutput> {
        self.put_acl(req).await
    }
    async fn create_multipart_upload(
        &self,
        req: S3Request<d::CreateMultipartUploadInput>,
    ) -> Out<d::CreateMultipartUploadOutput> {
        self.create_multipart(req).await
    }
    async fn upload_part(&self, req: S3Request<d::UploadPartInput>) -> Out<d::UploadPartOutput> {
        Ops::upload_part(self, req).await
    }
    async fn upload_part_copy(
        &self,
        req: S3Request<d::UploadPartCopyInput>,
    ) -> Out<d::UploadPartCopyOutput> {
        Ops::upload_part_copy(self, req).await
    }
    async fn complete_multipart_upload(
        &self,
        req: S3Request<d::CompleteMultipartUploadInput>,
    ) -> Out<d::CompleteMultipartUploadOutput> {
        self.complete_multipart(req).await
    }
    async fn abort_multipart_upload(
        &self,
        req: S3Request<d::AbortMultipartUploadInput>,
    ) -> Out<d::AbortMultipartUploadOutput> {
        self.abort_multipart(req).await
    }
    async fn list_parts(&self, req: S3Request<d::ListPartsInput>) -> Out<d::ListPartsOutput> {
        Ops::list_parts(self, req).await
    }
    async fn list_multipart_uploads(
        &self,
        req: S3Request<d::ListMultipartUploadsInput>,
    ) -> Out<d::ListMultipartUploadsOutput> {
        self.list_multipart(req).await
    }
    async fn list_buckets(&self, req: S3Request<d::ListBucketsInput>) -> Out<d::ListBucketsOutput> {
        Ops::list_buckets(self, req).await
    }
    async fn create_bucket(
        &self,
        req: S3Request<d::CreateBucketInput>,
    ) -> Out<d::CreateBucketOutput> {
        Ops::create_bucket(self, req).await
    }
    async fn head_bucket(&self, req: S3Request<d::HeadBucketInput>) -> Out<d::HeadBucketOutput> {
        Ops::head_bucket(self, req).await
    }
    async fn get_bucket_location(
        &self,
        req: S3Request<d::GetBucketLocationInput>,
    ) -> Out<d::GetBucketLocationOutput> {
        self.bucket_location(req).await
    }
    async fn delete_bucket(
        &self,
        req: S3Request<d::DeleteBucketInput>,
    ) -> Out<d::DeleteBucketOutput> {
        Ops::delete_bucket(self, req).await
    }
    async fn get_bucket_versioning(
        &self,
        req: S3Request<d::GetBucketVersioningInput>,
    ) -> Out<d::GetBucketVersioningOutput> {
        self.bucket_versioning(req).await
    }
}

/// The door's whole application, served by `server::conn` like /v1's.
pub(crate) fn router(app: Arc<App>) -> Router {
    let mut builder = s3s::service::S3ServiceBuilder::new(Ops { app: app.clone() });
    builder.set_auth(auth::Credentials { app: app.clone() });
    builder.set_access(auth::Admission { app: app.clone() });
    let mut config = s3s::config::S3Config::default();
    // The door reads such bodies itself first (`layer::read_whole`).
    config.xml_max_body_size = layer::WHOLE_MAX;
    builder.set_config(Arc::new(s3s::config::StaticConfigProvider::new(Arc::new(
        config,
    ))));
    if let Some(domain) = &app.config.s3.domain {
        if let Ok(host) = s3s::host::SingleDomain::new(domain) {
            builder.set_host(host);
        }
    }
    let door = Door {
        s3: builder.build(),
        ops: Ops { app },
    };
    Router::new().fallback(serve).with_state(door)
}

async fn serve(State(door): State<Door>, req: Request) -> Response {
    let id = req
        .extensions()
        .get::<RequestId>()
        .map_or_else(layer::request_id, |r| r.0.clone());
    let origin = req.headers().get(axum::http::header::ORIGIN).cloned();
    let resource = req.uri().path().to_string();
    let mut resp = if let Some(resp) = layer::preflight(&req) {
        resp
    } else if let Some(bucket) = post::is_post_object(&req) {
        let answer = match door.ops.post_object(bucket, req).await {
            Ok(r) => r,
            Err(e) => post::answer(e),
        };
        layer::complete_error(answer, &resource, &id).await
    } else if let Some(resp) = layer::refuse_early(&req, &id) {
        resp
    } else {
        let (parts, body) = req.into_parts();
        match layer::for_s3s(&parts, body).await {
            Ok((body, _held)) => {
                let req = s3s::HttpRequest::from_parts(parts, body);
                call(&door, req, &resource, &id).await
            }
            Err(why) => layer::unread(&why, &resource, &id),
        }
    };
    layer::decorate(resp.headers_mut(), &id, origin.as_ref());
    resp
}

/// The request answered by s3s (and the door's operations behind it).
async fn call(door: &Door, mut req: s3s::HttpRequest, resource: &str, id: &str) -> Response {
    let slot = AccountSlot::default();
    req.extensions_mut().insert(slot.clone());
    let call = auth::SEEN.scope(std::sync::Mutex::new(None), door.s3.call(req));
    match call.await {
        Ok(resp) => {
            let mut resp = layer::complete_error(resp.map(Body::new), resource, id).await;
            if let Some(account) = slot.0.get() {
                resp.extensions_mut()
                    .insert(crate::service::caller::AccountTag(account.clone()));
            }
            resp
        }
        Err(e) => {
            tracing::error!(error = ?e, "S3 door: unanswered request");
            layer::error(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                "InternalError",
                "We encountered an internal error. Please try again.",
                resource,
                id,
            )
        }
    }
}
