//! Server configuration: TOML file < `FILESTORE_*` env vars < command-line
//! flags, over built-in defaults. `config.example.toml` documents every key.

mod console;
mod env;
mod error;
mod file;
mod images;
mod limits;
mod plans;
#[cfg(test)]
mod tests;
mod webhooks;

pub use crate::domain::secret::Secret;
pub(crate) use error::ConfigError;
pub(crate) use limits::Limits;
pub(crate) use plans::{parse_bytes, Plan, Plans, UNLIMITED};

pub(crate) use console::Console;
pub use env::{Env, Overrides};
pub use file::{BackendKind, FileConfig, LogFormat, StorageConfig};
pub use images::Images;
pub(crate) use images::{DEFAULT_IMAGES_MEMORY, DEFAULT_MAX_SOURCE_PIXELS};

use file::parse_rate;
use limits::MIN_UPLOAD_WINDOW;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The resolved configuration the server runs with.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: String,
    pub base_url: String,
    pub cdn_url: String,
    pub data_dir: PathBuf,
    pub default_plan: String,
    pub signing_secret: Option<Secret>,
    pub reap_interval: Duration,
    pub max_header_bytes: usize,
    /// Largest file kept inline in the database (`storage.inline_max`).
    pub inline_max: u64,
    /// Connection limits (`server.*_timeout`, `server.max_connections`).
    pub limits: Limits,
    pub storage: StorageConfig,
    pub plans: Plans,
    /// Where `/metrics` is served, if anywhere.
    pub metrics_listen: Option<String>,
    pub log_format: LogFormat,
    /// The PostgreSQL metadata database (`database.url`); SQLite when None.
    pub database_url: Option<Secret>,
    /// Deadline of every PostgreSQL call (`database.statement_timeout`).
    pub statement_timeout: Duration,
    /// Image variants (`[images]`).
    pub images: Images,
    /// The plans this config names in `[plans.*]` (written to the database
    /// at start; the built-in ones it does not name are written only where
    /// the database has none).
    pub configured_plans: Vec<String>,
    /// Whether opening a PostgreSQL database may migrate an existing older
    /// schema (`serve --migrate`); an empty one is always created. True
    /// unless `serve` says otherwise.
    pub migrate: bool,
    /// The S3 door (`[s3]`).
    pub s3: S3Door,
    /// The web console (`[console]`).
    pub console: Console,
    /// The addresses webhook deliveries may go to (`[webhooks] receivers`).
    pub webhook_receivers: crate::domain::webhooks::receivers::Receivers,
}

/// The S3 door's settings, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Door {
    /// Where it listens; None: no door.
    pub listen: Option<String>,
    pub region: String,
    /// The address clients use (`http://<listen>` unless set; `serve`
    /// names the port really bound).
    pub url: String,
    /// Virtual-host style under this domain, when set.
    pub domain: Option<String>,
}

/// The region the S3 door signs for unless `[s3] region` says.
pub(crate) const DEFAULT_S3_REGION: &str = "us-east-1";

pub(crate) const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// Small files are faster to store and serve from SQLite than as files of
/// their own (one shared fsync, one read): up to 128 KiB by default
/// (docs/decisions.md, "Small files": measured, 64 to 128 KiB included).
pub(crate) const DEFAULT_INLINE_MAX: u64 = 128 * 1024;
/// `server.min_upload_rate`: slow mobile links pass, a trickle does not.
pub(crate) const DEFAULT_MIN_UPLOAD_RATE: u64 = 1024;
/// `server.stall_timeout`: a download that has sent nothing for this long is closed.
pub(crate) const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// The smallest `server.memory_budget`: below it the server's own start-up
/// would not fit.
const MIN_MEMORY_BUDGET: u64 = 64 << 20;
/// `database.statement_timeout` (the store's own default).
pub use crate::db::postgres::DEFAULT_STATEMENT_TIMEOUT;
/// Inline bytes are read into memory whole: keep them small.
const MAX_INLINE_MAX: u64 = 1 << 20;

impl Config {
    /// A config for tests and embedding: defaults over `data_dir`.
    pub fn for_data_dir(data_dir: impl Into<PathBuf>) -> Config {
        Config::resolve(
            FileConfig::default(),
            &Env::empty(),
            &Overrides {
                data_dir: Some(data_dir.into()),
                ..Default::default()
            },
        )
        .expect("defaults are valid")
    }

    /// Loads the file named by `--config` (or `FILESTORE_CONFIG`), then layers
    /// the process environment and the flags over it.
    pub fn load(flags: &Overrides) -> Result<Config, ConfigError> {
        let env = Env::from_process();
        let path = flags
            .config
            .clone()
            .or_else(|| env.get("FILESTORE_CONFIG").map(PathBuf::from));
        let file = match path {
            Some(p) => Self::read_file(&p)?,
            None => FileConfig::default(),
        };
        Config::resolve(file, &env, flags)
    }

    pub fn read_file(path: &Path) -> Result<FileConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        toml::from_str(&text).map_err(|source| ConfigError::parse(path, &text, &source))
    }

    pub fn resolve(file: FileConfig, env: &Env, flags: &Overrides) -> Result<Config, ConfigError> {
        let pick = |flag: &Option<String>, var: &str, file: &Option<String>| {
            flag.clone()
                .or_else(|| env.get(var))
                .or_else(|| file.clone())
        };
        let s = &file.server;
        let listen = pick(&flags.listen, "FILESTORE_LISTEN", &s.listen)
            .unwrap_or_else(|| DEFAULT_LISTEN.to_string());
        let base_url = pick(&flags.base_url, "FILESTORE_BASE_URL", &s.base_url)
            .unwrap_or_else(|| format!("http://{listen}"));
        let cdn_url = pick(&flags.cdn_url, "FILESTORE_CDN_URL", &s.cdn_url)
            .unwrap_or_else(|| base_url.clone());
        let data_dir = flags
            .data_dir
            .clone()
            .or_else(|| env.get("FILESTORE_DATA_DIR").map(PathBuf::from))
            .or_else(|| s.data_dir.clone())
            .map_or_else(default_data_dir, Ok)?;
        let default_plan = pick(&None, "FILESTORE_DEFAULT_PLAN", &s.default_plan)
            .unwrap_or_else(|| "free".to_string());
        // Value or file within each layer; the environment over the file.
        let signing_secret = match secret_or_file(
            ("FILESTORE_SIGNING_SECRET", "FILESTORE_SIGNING_SECRET_FILE"),
            env.get("FILESTORE_SIGNING_SECRET").map(Secret::from),
            env.get("FILESTORE_SIGNING_SECRET_FILE").map(PathBuf::from),
        )? {
            Some(from_env) => Some(from_env),
            None => secret_or_file(
                ("signing_secret", "signing_secret_file"),
                s.signing_secret.clone(),
                s.signing_secret_file.clone(),
            )?,
        };
        if signing_secret
            .as_ref()
            .is_some_and(|s| s.expose().len() < 32)
        {
            return Err(
                "signing_secret must be at least 32 characters (or unset: one is generated)".into(),
            );
        }
        let database_url = match secret_or_file(
            ("FILESTORE_DATABASE_URL", "FILESTORE_DATABASE_URL_FILE"),
            env.get("FILESTORE_DATABASE_URL").map(Secret::from),
            env.get("FILESTORE_DATABASE_URL_FILE").map(PathBuf::from),
        )? {
            Some(from_env) => Some(from_env),
            None => secret_or_file(
                ("database.url", "database.url_file"),
                file.database.url.clone(),
                file.database.url_file.clone(),
            )?,
        };
        if let Some(url) = &database_url {
            let u = url.expose();
            if !(u.starts_with("postgres://") || u.starts_with("postgresql://")) {
                return Err("database.url must start with postgres:// or postgresql://".into());
            }
            crate::db::postgres::check_tls(u).map_err(|e| ConfigError::Invalid(e.to_string()))?;
        }
        let reap_interval = s.reap_interval.unwrap_or(Duration::from_secs(5));
        if reap_interval.is_zero() {
            return Err("server.reap_interval must be positive".into());
        }
        let plans = Plans::from_overrides(&file.plans)?;
        if plans.get(&default_plan).is_none() {
            return Err(ConfigError::Invalid(format!(
                "default_plan {default_plan:?} is not a plan (plans: {})",
                plans.names().join(", ")
            )));
        }
        let mut storage = file.storage;
        if let Some(b) = env.get("FILESTORE_STORAGE_BACKEND") {
            storage.backend = b.parse().map_err(ConfigError::Invalid)?;
        }
        for (var, slot) in [
            ("FILESTORE_S3_BUCKET", &mut storage.bucket),
            ("FILESTORE_S3_ENDPOINT", &mut storage.endpoint),
            ("FILESTORE_S3_REGION", &mut storage.region),
        ] {
            if let Some(v) = env.get(var) {
                *slot = Some(v);
            }
        }
        if let Some(p) = env.get("FILESTORE_S3_PREFIX") {
            storage.prefix = p;
        }
        storage.secret_access_key = secret_or_file(
            (
                "storage.secret_access_key",
                "storage.secret_access_key_file",
            ),
            storage.secret_access_key.take(),
            storage.secret_access_key_file.take(),
        )?;
        if storage.backend == BackendKind::S3 && storage.bucket.as_deref().unwrap_or("").is_empty()
        {
            return Err("storage.backend = \"s3\" needs storage.bucket".into());
        }
        for (what, url) in [("base_url", &base_url), ("cdn_url", &cdn_url)] {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(ConfigError::Invalid(format!(
                    "{what} {url:?} must start with http:// or https://"
                )));
            }
        }
        let inline_max = storage.inline_max.unwrap_or(DEFAULT_INLINE_MAX);
        if inline_max > MAX_INLINE_MAX {
            return Err(ConfigError::Invalid(format!(
                "storage.inline_max is at most {MAX_INLINE_MAX} bytes (1 MiB)"
            )));
        }
        let limits = Limits {
            header_timeout: s.header_timeout.unwrap_or(Duration::from_secs(10)),
            body_timeout: s.body_timeout.unwrap_or(Duration::from_mins(1)),
            idle_timeout: s.idle_timeout.unwrap_or(Duration::from_secs(75)),
            shutdown_timeout: s.shutdown_timeout.unwrap_or(Duration::from_secs(30)),
            max_connections: s.max_connections.unwrap_or(4096),
            stall_timeout: s.stall_timeout.unwrap_or(DEFAULT_STALL_TIMEOUT),
            memory_budget: s
                .memory_budget
                .unwrap_or_else(limits::default_memory_budget),
            min_upload_rate: match env.get("FILESTORE_MIN_UPLOAD_RATE") {
                Some(v) => parse_rate(&v).map_err(ConfigError::Invalid)?,
                None => s.min_upload_rate.unwrap_or(DEFAULT_MIN_UPLOAD_RATE),
            },
            min_upload_window: MIN_UPLOAD_WINDOW,
        };
        for (what, d) in [
            ("header_timeout", limits.header_timeout),
            ("body_timeout", limits.body_timeout),
            ("idle_timeout", limits.idle_timeout),
            ("stall_timeout", limits.stall_timeout),
        ] {
            if d.is_zero() {
                return Err(ConfigError::Invalid(format!(
                    "server.{what} must be positive"
                )));
            }
        }
        if limits.max_connections == 0 {
            return Err("server.max_connections must be at least 1".into());
        }
        if limits.memory_budget < MIN_MEMORY_BUDGET {
            return Err(ConfigError::Invalid(format!(
                "server.memory_budget must be at least {} MiB (the server itself takes tens)",
                MIN_MEMORY_BUDGET >> 20
            )));
        }
        let statement_timeout = file
            .database
            .statement_timeout
            .unwrap_or(DEFAULT_STATEMENT_TIMEOUT);
        if statement_timeout.is_zero() {
            return Err("database.statement_timeout must be positive".into());
        }
        let metrics_listen = pick(
            &flags.metrics_listen,
            "FILESTORE_METRICS_LISTEN",
            &s.metrics_listen,
        );
        let log_format = match (flags.log_format, env.get("FILESTORE_LOG_FORMAT")) {
            (Some(f), _) => f,
            (None, Some(v)) => v.parse().map_err(ConfigError::Invalid)?,
            (None, None) => s.log_format.unwrap_or_default(),
        };
        let images = file.images.resolve().map_err(ConfigError::Invalid)?;
        let console = file.console.resolve().map_err(ConfigError::Invalid)?;
        let webhook_receivers = file.webhooks.resolve().map_err(ConfigError::Invalid)?;
        let s3 = s3_door(flags, env, &file.s3)?;
        Ok(Config {
            s3,
            console,
            webhook_receivers,
            configured_plans: file.plans.keys().cloned().collect(),
            migrate: true,
            images,
            listen,
            base_url: base_url.trim_end_matches('/').to_string(),
            cdn_url: cdn_url.trim_end_matches('/').to_string(),
            data_dir,
            default_plan,
            signing_secret,
            reap_interval,
            max_header_bytes: s.max_header_bytes.unwrap_or(32 * 1024),
            inline_max,
            limits,
            storage,
            plans,
            metrics_listen,
            log_format,
            database_url,
            statement_timeout,
        })
    }
}
/// `[s3]` with `FILESTORE_S3_LISTEN` / `--s3-listen` (and
/// `FILESTORE_S3_DOOR_REGION`, `FILESTORE_S3_DOOR_URL`, `FILESTORE_S3_DOOR_DOMAIN`:
/// `FILESTORE_S3_REGION` is the blob store's) laid over it.
fn s3_door(flags: &Overrides, env: &Env, f: &file::S3Section) -> Result<S3Door, ConfigError> {
    let listen = flags
        .s3_listen
        .clone()
        .or_else(|| env.get("FILESTORE_S3_LISTEN"))
        .or_else(|| f.listen.clone());
    let region = env
        .get("FILESTORE_S3_DOOR_REGION")
        .or_else(|| f.region.clone())
        .unwrap_or_else(|| DEFAULT_S3_REGION.to_string());
    if region.is_empty()
        || !region
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err(ConfigError::Invalid(format!(
            "s3.region {region:?}: letters, digits and '-' only"
        )));
    }
    let url = env
        .get("FILESTORE_S3_DOOR_URL")
        .or_else(|| f.url.clone())
        .unwrap_or_else(|| format!("http://{}", listen.as_deref().unwrap_or("127.0.0.1:8333")));
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ConfigError::Invalid(format!(
            "s3.url {url:?} must start with http:// or https://"
        )));
    }
    let domain = env
        .get("FILESTORE_S3_DOOR_DOMAIN")
        .or_else(|| f.domain.clone())
        .map(|d| d.trim_matches('.').to_ascii_lowercase())
        .filter(|d| !d.is_empty());
    if let Some(d) = &domain {
        // A host name (its labels letters, digits and '-'), with a port
        // when clients name one: what a request's Host header is matched to.
        let (host, port) = d.split_once(':').unwrap_or((d, "443"));
        let label =
            |l: &str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !host.split('.').all(label) || port.parse::<u16>().is_err() {
            return Err(ConfigError::Invalid(format!(
                "s3.domain {d:?} must be a host name such as s3.example.com (with :PORT when \
                 clients name one)"
            )));
        }
    }
    Ok(S3Door {
        listen,
        region,
        url: url.trim_end_matches('/').to_string(),
        domain,
    })
}

fn default_data_dir() -> Result<PathBuf, ConfigError> {
    directories::ProjectDirs::from("", "", "filestore")
        .map(|d| d.data_dir().to_path_buf())
        .ok_or_else(|| "no home directory: set --data-dir or FILESTORE_DATA_DIR".into())
}

/// A secret given as its value or as `<key>_file`, a file holding it; not both.
/// `names`: the value's setting and the file's (`signing_secret`,
/// `signing_secret_file`).
fn secret_or_file(
    names: (&'static str, &'static str),
    value: Option<Secret>,
    file: Option<PathBuf>,
) -> Result<Option<Secret>, ConfigError> {
    let (value_name, file_name) = names;
    match (value, file) {
        (Some(_), Some(_)) => Err(ConfigError::Invalid(format!(
            "set {value_name} or {file_name}, not both"
        ))),
        (value, None) => Ok(value),
        (None, Some(path)) => {
            Secret::from_file(&path)
                .map(Some)
                .map_err(|source| ConfigError::SecretFile {
                    setting: file_name,
                    path,
                    source,
                })
        }
    }
}
