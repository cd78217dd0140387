//! GetObjectAcl and PutObjectAcl with canned ACLs only (CONTRACT §18): a
//! file is its owner's, and public (`public-read`, its CDN link open to
//! all) or private.

use super::errors;
use super::render;
use super::Ops;
use crate::service::files;
use s3s::dto::{
    GetObjectAclInput, GetObjectAclOutput, Grant, Grantee, Permission, PutObjectAclInput,
    PutObjectAclOutput, Type,
};
use s3s::{s3_error, S3Request, S3Response, S3Result};

/// The group S3 names for everyone.
const ALL_USERS: &str = "http://acs.amazonaws.com/groups/global/AllUsers";

impl Ops {
    pub(crate) async fn get_acl(
        &self,
        req: S3Request<GetObjectAclInput>,
    ) -> S3Result<S3Response<GetObjectAclOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        render::only_null_version(i.version_id.as_deref())?;
        let found = self.found(&caller, &i.bucket, &i.key).await?;
        let owner = Self::owner(&caller);
        let mut grants = vec![Grant {
            grantee: Some(Grantee {
                display_name: owner.display_name.clone(),
                id: owner.id.clone(),
                type_: Type::from_static(Type::CANONICAL_USER),
                email_address: None,
                uri: None,
            }),
            permission: Some(Permission::from_static(Permission::FULL_CONTROL)),
        }];
        if !found.row.private {
            grants.push(Grant {
                grantee: Some(Grantee {
                    display_name: None,
                    id: None,
                    type_: Type::from_static(Type::GROUP),
                    email_address: None,
                    uri: Some(ALL_USERS.into()),
                }),
                permission: Some(Permission::from_static(Permission::READ)),
            });
        }
        Ok(S3Response::new(GetObjectAclOutput {
            grants: Some(grants),
            owner: Some(owner),
            ..GetObjectAclOutput::default()
        }))
    }

    pub(crate) async fn put_acl(
        &self,
        req: S3Request<PutObjectAclInput>,
    ) -> S3Result<S3Response<PutObjectAclOutput>> {
        let caller = super::caller(&req.extensions)?;
        let i = req.input;
        render::only_null_version(i.version_id.as_deref())?;
        let Some(acl) = i.acl.as_ref() else {
            return Err(s3_error!(
                NotImplemented,
                "Only canned ACLs (x-amz-acl) are supported"
            ));
        };
        let private = render::private_of(Some(acl))?;
        let found = self.found(&caller, &i.bucket, &i.key).await?;
        self.app.s3_may_write(&caller).await.map_err(errors::key)?;
        if found.row.private != private {
            files::update(
                &self.app,
                &caller.account.id,
                &found.row.id,
                None,
                None,
                Some(private),
            )
            .await
            .map_err(errors::key)?;
        }
        Ok(S3Response::new(PutObjectAclOutput::default()))
    }
}
