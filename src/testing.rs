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

/// A backup repository read for its blobs (what `admin verify --repair-from`
/// puts back from).
pub mod backup {
    pub use crate::backup::{BackupError, Source};
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
    pub use crate::db::integrity::IntegrityRepo;
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
        digest, filepath, ids, keylist, metadata, multipart, object, ratelimit, secret, signing,
        sniff, transform, tus, validate, webhooks,
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
    /// `admin verify`'s check (CONTRACT §20) on any blob store.
    pub mod verify {
        pub use crate::service::verify::{verify, FileRef, Orphan, Report, VerifyError};
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
                session: false,
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

/// The S3 door's service core (buckets, folder markers, multipart
/// uploads) as a secret key calls it: what the door calls, for the tests
/// (no route calls it yet).
pub mod s3 {
    pub use crate::domain::files::StoredFile;
    pub use crate::service::buckets::{Bucket, Marker};
    use crate::service::caller::Caller;
    pub use crate::service::multipart::{
        CopySource, Listed, MultipartUpload, ObjectTemplate, Part,
    };
    pub use crate::service::s3_error::S3Error;
    use crate::service::{App, ServiceError};
    use bytes::Bytes;
    use std::sync::Arc;

    /// A secret key's calls on one node (`app`).
    pub struct Session {
        app: Arc<App>,
        caller: Caller,
    }

    impl Session {
        /// The caller of secret key `secret` (`sk_…`) on `app`.
        pub async fn of_secret(app: &Arc<App>, secret: &str) -> Session {
            let hash = crate::domain::ids::key_hash(secret);
            let (key, account) = app
                .meta
                .key_by_hash(hash)
                .await
                .expect("database")
                .expect("a live key");
            Session {
                app: Arc::clone(app),
                caller: Caller { key, account },
            }
        }

        pub async fn create_bucket(&self, name: &str) -> Result<bool, S3Error> {
            self.app.create_bucket(&self.caller, name).await
        }

        pub async fn buckets(&self) -> Result<Vec<Bucket>, S3Error> {
            self.app.buckets(&self.caller).await
        }

        pub async fn bucket_exists(&self, name: &str) -> Result<bool, S3Error> {
            self.app.bucket_exists(&self.caller, name).await
        }

        pub async fn delete_bucket(&self, name: &str) -> Result<(), S3Error> {
            self.app.delete_bucket(&self.caller, name).await
        }

        pub async fn put_marker(&self, path: &str) -> Result<Marker, S3Error> {
            self.app.put_marker(&self.caller, path).await
        }

        pub async fn delete_marker(&self, path: &str) -> Result<bool, S3Error> {
            self.app.delete_marker(&self.caller, path).await
        }

        pub async fn markers(
            &self,
            prefix: Option<&str>,
            start_after: Option<&str>,
            limit: u32,
        ) -> Result<Vec<Marker>, S3Error> {
            self.app
                .markers(&self.caller, prefix, start_after, limit)
                .await
        }

        pub async fn create_multipart(
            &self,
            folder: &str,
            name: &str,
            template: ObjectTemplate,
        ) -> Result<String, S3Error> {
            self.app
                .create_multipart(&self.caller, folder, name, template)
                .await
        }

        /// UploadPart with `chunks` as the body (declared length: their sum).
        pub async fn upload_part(
            &self,
            upload_id: &str,
            number: u32,
            chunks: Vec<Vec<u8>>,
        ) -> Result<Part, S3Error> {
            let len = chunks.iter().map(|c| c.len() as u64).sum();
            let body = futures_util::stream::iter(
                chunks
                    .into_iter()
                    .map(|c| Ok::<_, ServiceError>(Bytes::from(c))),
            );
            self.app
                .upload_part(&self.caller, upload_id, number, Some(len), body)
                .await
        }

        /// UploadPart whose request declares `declared` bytes.
        pub async fn upload_part_declared(
            &self,
            upload_id: &str,
            number: u32,
            declared: u64,
            chunks: Vec<Vec<u8>>,
        ) -> Result<Part, S3Error> {
            let body = futures_util::stream::iter(
                chunks
                    .into_iter()
                    .map(|c| Ok::<_, ServiceError>(Bytes::from(c))),
            );
            self.app
                .upload_part(&self.caller, upload_id, number, Some(declared), body)
                .await
        }

        pub async fn upload_part_copy(
            &self,
            upload_id: &str,
            number: u32,
            source: CopySource,
        ) -> Result<Part, S3Error> {
            self.app
                .upload_part_copy(&self.caller, upload_id, number, source)
                .await
        }

        pub async fn complete(
            &self,
            upload_id: &str,
            parts: Vec<(u32, String)>,
        ) -> Result<StoredFile, S3Error> {
            self.app
                .complete_multipart(&self.caller, upload_id, parts)
                .await
        }

        pub async fn abort(&self, upload_id: &str) -> Result<(), S3Error> {
            self.app.abort_multipart(&self.caller, upload_id).await
        }

        pub async fn list_parts(
            &self,
            upload_id: &str,
            after: u32,
            max: u32,
        ) -> Result<(MultipartUpload, Listed<Part>), S3Error> {
            self.app
                .list_parts(&self.caller, upload_id, after, max)
                .await
        }

        pub async fn list_uploads(
            &self,
            prefix: &str,
            key_marker: Option<&str>,
            upload_id_marker: Option<&str>,
            max: u32,
        ) -> Result<Listed<MultipartUpload>, S3Error> {
            self.app
                .list_multipart_uploads(&self.caller, prefix, key_marker, upload_id_marker, max)
                .await
        }

        /// The file's bytes, read back from the store.
        pub async fn read(&self, file: &StoredFile) -> Vec<u8> {
            use futures_util::StreamExt;
            if file.inline {
                let now = self.app.clock.now_ms();
                let (_, data) = self
                    .app
                    .meta
                    .file_with_data(&self.caller.account.id, &file.id, now)
                    .await
                    .unwrap()
                    .unwrap();
                return data.unwrap_or_default();
            }
            let mut out = Vec::new();
            let mut s = self
                .app
                .store
                .get(&file.blob_key, 0, file.size)
                .await
                .unwrap();
            while let Some(c) = s.next().await {
                out.extend_from_slice(&c.unwrap());
            }
            out
        }
    }

    /// One pass of the collector's expiry of multipart uploads; how many
    /// were aborted.
    pub async fn reap(app: &App) -> usize {
        crate::service::multipart::reap(app).await
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
