//! What the integration tests, the fuzz targets and the benchmarks drive
//! besides the binary: the program's own modules are private to the crate,
//! and this is the one door into them. Not an API for other programs (it
//! changes with the code); its paths mirror the modules they open.

/// The generated manual pages and completion scripts.
pub mod cli {
    pub use crate::cli::docs::{completion_scripts, man_pages};
}

/// The image pipeline's AVIF decoder, a child process: the tests name the
/// `filestore` binary it runs.
pub mod images {
    pub use crate::images::isolated::use_program;
}

pub mod clock {
    pub use crate::clock::{period_of, Clock};
}

pub mod config {
    pub use crate::config::{
        BackendKind, Config, Env, FileConfig, Images, LogFormat, Overrides, Secret, StorageConfig,
        DEFAULT_STATEMENT_TIMEOUT,
    };
}

/// The metadata store and its rows, to drive a store directly (several
/// `PgStore`s on one database stand for several nodes).
pub mod db {
    pub use crate::db::{
        open, Account, AccountRepo, BlobRepo, CommitContext, CommitOutcome, CreateOutcome,
        DynMetaStore, FileRepo, FileRow, FolderFilter, KeyRecord, ListFilter, MetaStore, Migrate,
        OpsRepo, OutboxEvent, OutboxRepo, PageAfter, PgStore, PlanRepo, PlanUse, Quota, RateRepo,
        Refusal, StoredPlan, TokenRepo, TokenRow, UploadRepo, UploadRow, VariantOutcome,
        VariantRepo, VariantRow, WebhookRow,
    };
    pub use crate::domain::files::FileChange;
    pub use crate::domain::policy::UploadPolicy;
    pub mod sqlite {
        pub use crate::db::sqlite::Db;
    }
}

/// The pure rules, which the fuzz targets and property tests call.
pub mod domain {
    pub use crate::domain::{
        digest, filepath, ids, metadata, object, ratelimit, secret, signing, sniff, transform, tus,
        validate, webhooks,
    };
}

/// The server in-process, and the header parsers the fuzz targets feed.
pub mod server {
    pub use crate::server::{run, Door, Listener};
    pub mod auth {
        pub use crate::server::auth::bearer;
    }
    pub mod cdn {
        pub use crate::server::conditional::{not_modified, parse_range, requested_range};
    }
}

pub mod service {
    pub use crate::service::{admin, App};
    pub mod files {
        pub use crate::service::files::decode_cursor;
    }
    pub mod paths {
        pub use crate::service::paths::{file_at, files_at, list_paths, MAX_PATHS_PAGE};
    }
    pub mod md5_fill {
        pub use crate::service::md5_fill::pass_once;
    }
    /// An upload through the service's own pipeline (`Upload::start`,
    /// `receive`, `finish`: every check, the spool, the blob store, the
    /// commit), with what only another door than /v1 asks for.
    pub mod upload {
        use crate::domain::object::ObjectAttrs;
        use crate::service::caller::{Access, Presented};
        use crate::service::upload::{Upload, UploadFields, UploadRequest};
        use crate::service::App;
        use std::sync::Arc;

        /// What to upload.
        #[derive(Debug, Default)]
        pub struct Put {
            pub folder: Option<String>,
            pub name: String,
            pub bytes: Vec<u8>,
            pub private: bool,
            /// `UploadFields::attrs`.
            pub attrs: ObjectAttrs,
            /// `UploadRequest::md5_now`.
            pub md5_now: bool,
        }

        /// Uploads `put` as the caller of key `secret` (`sk_…`); the stored
        /// file, or the service's error as its code and message.
        pub async fn put(
            app: &Arc<App>,
            secret: &str,
            put: Put,
        ) -> Result<crate::db::FileRow, String> {
            let err = |e: crate::service::ServiceError| format!("{}: {e}", e.code());
            let presented = Presented {
                secret,
                origin: None,
                retry: false,
            };
            let caller = app
                .authenticate(presented, Access::Upload)
                .await
                .map_err(err)?;
            let req = UploadRequest {
                caller,
                content_length: Some(put.bytes.len() as u64),
                idempotency_key: None,
                content_digest: None,
                held: None,
                md5_now: put.md5_now,
            };
            let upload = Upload::start(app, req).await.map_err(err)?;
            let body = futures_util::stream::iter([Ok(bytes::Bytes::from(put.bytes))]);
            let file = upload.receive(&put.name, None, body).await.map_err(err)?;
            let fields = UploadFields {
                folder: put.folder,
                private: Some(put.private),
                attrs: put.attrs,
                ..UploadFields::default()
            };
            upload.finish(file, fields).await.map_err(err)
        }
    }
}

pub mod storage {
    pub use crate::storage::{BlobStore, BlobStream, DynBlobStore, StorageError};
    pub mod local {
        pub use crate::storage::local::LocalStore;
    }
    pub mod s3 {
        pub use crate::storage::s3::S3Store;
    }
}
