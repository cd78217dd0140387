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
    pub use crate::domain::policy::UploadPolicy;
    pub mod sqlite {
        pub use crate::db::sqlite::Db;
    }
}

/// The pure rules, which the fuzz targets and property tests call.
pub mod domain {
    pub use crate::domain::{
        digest, filepath, ids, metadata, ratelimit, secret, signing, sniff, transform, tus,
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
