//! The service core every door calls: who may do what (`caller`), and the
//! rules that touch I/O: opening the data dir, the upload pipeline, reads,
//! deletion, signing, usage, the background collector and the operator's
//! account/key management. It speaks in domain values; each door renders
//! them in its own wire format.

pub(crate) mod account_ops;
pub mod admin;
pub(crate) mod bandwidth;
pub(crate) mod blobs;
pub(crate) mod buckets;
pub(crate) mod caller;
pub(crate) mod cdn;
pub(crate) mod checksum;
pub(crate) mod collector;
pub(crate) mod commit;
pub(crate) mod console;
pub(crate) mod copy;
pub(crate) mod data_dir;
pub(crate) mod disk;
pub(crate) mod download;
pub(crate) mod error;
pub(crate) mod files;
pub(crate) mod health;
pub(crate) mod history;
pub(crate) mod images;
pub(crate) mod inflight;
pub(crate) mod integrity;
pub(crate) mod keys;
pub(crate) mod links;
pub(crate) mod md5_fill;
pub(crate) mod meter;
pub(crate) mod multipart;
pub(crate) mod outbox;
pub(crate) mod paths;
pub(crate) mod plans;
pub(crate) mod refusals;
pub(crate) mod render_queue;
pub(crate) mod render_threads;
pub(crate) mod repair;
pub(crate) mod s3_error;
pub(crate) mod s3_keys;
pub(crate) mod scrub;
pub(crate) mod spool;
pub(crate) mod subscriptions;
pub(crate) mod tokens;
pub(crate) mod tus;
pub(crate) mod tus_locks;
pub(crate) mod upload;
pub(crate) mod usage;
pub(crate) mod verify;
pub(crate) mod webhook_guard;
pub(crate) mod webhooks;
pub(crate) mod zip;
pub(crate) mod zip_pick;

use crate::clock::Clock;
use crate::config::{BackendKind, Config, Plan, Plans};
use crate::db::{Account, DbError, DynMetaStore};
use crate::domain::secret::Secret;
use crate::domain::signing::Signer;
use crate::storage::{local::LocalStore, s3::S3Store, DynBlobStore, StorageError};
use admin::AdminError;
pub(crate) use error::ServiceError;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Everything a request needs, shared by all of them.
#[derive(Debug)]
pub struct App {
    pub config: Config,
    /// The metadata store (SQLite, or a database server).
    pub meta: DynMetaStore,
    pub store: DynBlobStore,
    pub clock: Clock,
    pub signer: Signer,
    /// Bytes sent by the CDN, not yet written to the database.
    pub bandwidth: meter::Meter,
    /// Where uploads are spooled before they go to the blob store.
    pub spool_dir: PathBuf,
    /// The free space kept on the data dir's volume.
    pub disk: disk::Disk,
    /// Bytes of uploads still arriving, per account (counted in the quota).
    pub in_flight: inflight::InFlight,
    pub(crate) tus_locks: tus_locks::Locks,
    /// Wakes the webhook sender.
    pub(crate) outbox: Arc<outbox::Outbox>,
    /// The image render pool.
    pub(crate) renders: images::Renders,
    /// Files the CDN served lately, answered from memory for a second.
    pub(crate) recent: cdn::Recent,
    /// Wakes the task that fills in the MD5 of spooled files.
    pub(crate) md5_fill: md5_fill::Fill,
    /// The download buffers `server.memory_budget` allows at once.
    pub(crate) downloads: download::Buffers,
    /// The plans in force: the database's, read at start and again every
    /// second (so a plan applied on one node holds on all of them within
    /// it).
    plans: std::sync::RwLock<Arc<Plans>>,
}

/// What the first start of a server created, to be shown once.
#[derive(Debug, Clone)]
pub struct Bootstrap {
    pub account: Account,
    pub secret_key: Secret,
}

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot create or use {}: {source}", path.display())]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("blob store: {0}")]
    Store(#[from] StorageError),
    #[error("metrics: {0}")]
    Metrics(String),
    /// Accounts on plans nobody defines.
    #[error("{0}")]
    Plans(String),
    /// Another `serve` holds the data dir (`data_dir`).
    #[error(
        "{} is in use by another filestore serve (pid {pid}); stop it first, or give this one another data dir",
        dir.display()
    )]
    Locked { dir: PathBuf, pid: String },
    /// On PostgreSQL, the data dir's SQLite database holds files.
    #[error(
        "{} holds {files} file(s) and this server is configured for PostgreSQL, which would leave them behind; \
         move them first with `filestore admin backup DEST` (on the SQLite config) and \
         `filestore admin restore DEST --database URL`, then move {} aside",
        db.display(),
        db.display()
    )]
    SqliteHoldsFiles { db: PathBuf, files: u64 },
}

impl App {
    /// Opens the data dir, the database and the blob store.
    pub async fn open(config: Config, clock: Clock) -> Result<Arc<App>, StartError> {
        let data_dir = config.data_dir.clone();
        let dir_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StartError::Dir { path, source }
        };
        crate::private_dir::create(&data_dir).map_err(dir_error(&data_dir))?;
        let spool_dir = data_dir.join("tmp");
        crate::private_dir::create(&spool_dir).map_err(dir_error(&spool_dir))?;
        clear_spool(&spool_dir);
        let url = config.database_url.as_ref().map(Secret::expose);
        let migrate = if config.migrate {
            crate::db::Migrate::Always
        } else {
            crate::db::Migrate::OnlyEmpty
        };
        let meta = crate::db::open_with(&data_dir, url, config.statement_timeout, migrate).await?;
        let store = open_store(&config).await?;
        let secret = signing_secret(&*meta, &config).await?;
        // Room for deletes is kept in SQLite's files in the data dir (a
        // database server's disk is not this volume).
        let room = config.database_url.is_none();
        let disk = disk::Disk::new(&data_dir, config.storage.min_free_space, room)
            .map_err(dir_error(&data_dir))?;
        let (plans, changes) = plans::sync(&*meta, &config, true, clock.now_ms()).await?;
        for c in &changes {
            tracing::warn!(
                plan = %c.after.name,
                change = %c.describe(),
                "this node's config changed a plan in the database: every node enforces it now"
            );
        }
        if let Some(why) = plans::unknown_in_use(&*meta, &plans).await? {
            return Err(StartError::Plans(why));
        }
        let config_concurrency = config.images.concurrency;
        // Renders take at most half of the process's budget: the other
        // half is downloads' windows and connections.
        let config_memory = config.images.memory.min(config.limits.memory_budget / 2);
        let downloads =
            download::Buffers::new(config.limits.memory_budget, config.limits.stall_timeout);
        Ok(Arc::new(App {
            signer: Signer::new(secret),
            config,
            meta,
            store,
            clock,
            bandwidth: meter::Meter::default(),
            disk,
            in_flight: inflight::InFlight::default(),
            tus_locks: tus_locks::Locks::default(),
            outbox: Arc::default(),
            renders: images::Renders::new(config_concurrency, config_memory),
            recent: cdn::Recent::default(),
            md5_fill: md5_fill::Fill::default(),
            downloads,
            plans: std::sync::RwLock::new(Arc::new(plans)),
            spool_dir,
        }))
    }

    /// The plan in force for an account: its plan as the database has it;
    /// an account on a plan that is gone takes the default plan (start-up
    /// refuses to run with such accounts, so this is a plan removed since).
    pub fn plan_of(&self, account: &Account) -> Plan {
        usage::plan_for(&self.plans(), &self.config, account)
    }

    /// The plans in force.
    pub fn plans(&self) -> Arc<Plans> {
        Arc::clone(&self.plans.read().expect("plans lock"))
    }

    /// Reads the plans again from the database (every second).
    pub(crate) async fn reload_plans(&self) {
        match plans::load(&*self.meta).await {
            Ok(p) => *self.plans.write().expect("plans lock") = Arc::new(p),
            Err(e) => tracing::warn!(error = %e, "reading the plans failed; keeping the last ones"),
        }
    }

    /// The first start on an empty database: account `default`, on the
    /// built-in plan `owner` (the operator's own: no storage or
    /// monthly limits), and one secret key for it. Accounts created later
    /// take `server.default_plan`; a database with any account gets
    /// nothing, so an existing `default` keeps its plan.
    pub async fn bootstrap(&self) -> Result<Option<Bootstrap>, AdminError> {
        let meta = &*self.meta;
        if meta.count_accounts().await? > 0 {
            return Ok(None);
        }
        let now = self.clock.now_ms();
        let created =
            admin::create_account(meta, &self.config, Some("default"), Some(OWNER_PLAN), now).await;
        let account = match created {
            Ok(a) => a,
            // Another node starting on the same empty database made it first.
            Err(_) if meta.find_account("default").await?.is_some() => return Ok(None),
            Err(e) => return Err(e),
        };
        let key = admin::create_key(
            meta,
            &account.id,
            crate::domain::ids::KeyKind::Secret,
            &[],
            Some("bootstrap"),
            now,
        )
        .await?;
        Ok(Some(Bootstrap {
            account,
            secret_key: key.secret,
        }))
    }
}

/// The secret every signature and S3 secret derives from: the config's
/// `signing_secret`, else the one the database keeps (made by the first node
/// or `admin` command that needed it), so that every node signs alike.
pub(crate) async fn signing_secret(
    meta: &dyn crate::db::MetaStore,
    config: &Config,
) -> Result<Secret, DbError> {
    Ok(match &config.signing_secret {
        Some(s) => s.clone(),
        None => Secret::new(
            meta.meta_get_or_insert("signing_secret", crate::domain::ids::signing_secret())
                .await?,
        ),
    })
}

/// The blob store `config` names, as `serve` uses it (`admin verify` too).
pub(crate) async fn open_store(config: &Config) -> Result<DynBlobStore, StartError> {
    Ok(match config.storage.backend {
        BackendKind::S3 => Arc::new(S3Store::connect(&config.storage).await?),
        BackendKind::Local => {
            let root = config.data_dir.join("blobs");
            Arc::new(LocalStore::open(&root).map_err(|source| StartError::Dir {
                path: root.clone(),
                source,
            })?)
        }
    })
}

/// The plan of the bootstrap account `default`.
pub(crate) const OWNER_PLAN: &str = "owner";

/// Spool files left by a crash are partial uploads: remove them.
fn clear_spool(dir: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
