//! Server configuration: TOML file < `FILESTORE_*` env vars < command-line
//! flags, over built-in defaults. `config.example.toml` documents every key.

mod error;
mod limits;
mod plans;

pub use crate::domain::secret::Secret;
pub(crate) use error::ConfigError;
pub(crate) use limits::Limits;
pub(crate) use plans::{parse_bytes, Plan, PlanOverride, Plans};

use limits::MIN_UPLOAD_WINDOW;
use plans::{opt_bytes, opt_duration};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub server: ServerSection,
    #[serde(default)]
    pub storage: StorageConfig,
    #[serde(default)]
    pub plans: BTreeMap<String, PlanOverride>,
    #[serde(default)]
    pub database: DatabaseSection,
}

/// Where the metadata lives (`[database]`): SQLite in the data dir when no
/// URL is set, else the PostgreSQL database the URL names (several `serve`
/// nodes may share it).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSection {
    /// `postgres://user:password@host:port/dbname` (no TLS yet).
    pub url: Option<Secret>,
    /// A file holding `url` (instead of the value itself: it may hold a password).
    pub url_file: Option<PathBuf>,
    /// Deadline of every database call (PostgreSQL); past it, 503.
    #[serde(default, deserialize_with = "opt_duration")]
    pub statement_timeout: Option<Duration>,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    pub listen: Option<String>,
    pub base_url: Option<String>,
    pub cdn_url: Option<String>,
    pub data_dir: Option<PathBuf>,
    pub default_plan: Option<String>,
    /// Secret for signed URLs; generated once and kept in the database when unset.
    pub signing_secret: Option<Secret>,
    /// A file holding `signing_secret` (instead of the value itself).
    pub signing_secret_file: Option<PathBuf>,
    /// How often expired files and failed blob deletions are processed.
    #[serde(default, deserialize_with = "opt_duration")]
    pub reap_interval: Option<Duration>,
    /// Largest total size of a request's headers (bytes) before 431.
    pub max_header_bytes: Option<usize>,
    /// A request whose headers have not all arrived by then is closed.
    #[serde(default, deserialize_with = "opt_duration")]
    pub header_timeout: Option<Duration>,
    /// A request body that sends no byte for this long is ended.
    #[serde(default, deserialize_with = "opt_duration")]
    pub body_timeout: Option<Duration>,
    /// A keep-alive connection with no request for this long is closed.
    #[serde(default, deserialize_with = "opt_duration")]
    pub idle_timeout: Option<Duration>,
    /// On SIGINT/SIGTERM, requests in flight get this long, then the process exits.
    #[serde(default, deserialize_with = "opt_duration")]
    pub shutdown_timeout: Option<Duration>,
    /// Connections served at once; the next ones wait in the accept queue.
    pub max_connections: Option<usize>,
    /// Slowest average an upload body may keep (bytes per second, or a size
    /// like `"1KiB"`, with or without `/s`); 0 turns it off.
    #[serde(default, deserialize_with = "opt_rate")]
    pub min_upload_rate: Option<u64>,
    /// Address of the Prometheus `/metrics` listener (off when unset).
    pub metrics_listen: Option<String>,
    /// `text` (default) or `json` log lines.
    pub log_format: Option<LogFormat>,
}

/// How log lines are written (`server.log_format`, `--log-format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines (colour only on a terminal).
    #[default]
    Text,
    /// One JSON object a line.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("log_format {other:?}: use \"text\" or \"json\"")),
        }
    }
}

/// Blob store settings (`[storage]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageConfig {
    #[serde(default)]
    pub backend: BackendKind,
    pub bucket: Option<String>,
    pub endpoint: Option<String>,
    pub region: Option<String>,
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub force_path_style: bool,
    pub access_key_id: Option<Secret>,
    pub secret_access_key: Option<Secret>,
    /// A file holding `secret_access_key` (instead of the value itself).
    pub secret_access_key_file: Option<PathBuf>,
    /// Files up to this size keep their bytes in the metadata database
    /// instead of the blob store (default 64 KiB; 0 turns it off).
    #[serde(default, deserialize_with = "opt_bytes")]
    pub inline_max: Option<u64>,
    /// Free space the local store keeps on its volume: an upload that would
    /// leave less is refused with 507 (default: 1 GiB or 5 % of the volume,
    /// the smaller).
    #[serde(default, deserialize_with = "opt_bytes")]
    pub min_free_space: Option<u64>,
}

/// Where blobs live (`storage.backend`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// A directory under the data dir.
    #[default]
    Local,
    /// An S3-compatible bucket.
    S3,
}

impl std::str::FromStr for BackendKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "local" => Ok(BackendKind::Local),
            "s3" => Ok(BackendKind::S3),
            other => Err(format!(
                "storage.backend {other:?}: use \"local\" or \"s3\""
            )),
        }
    }
}

impl Default for StorageConfig {
    fn default() -> Self {
        Self {
            backend: BackendKind::Local,
            bucket: None,
            endpoint: None,
            region: None,
            prefix: String::new(),
            force_path_style: false,
            access_key_id: None,
            secret_access_key: None,
            secret_access_key_file: None,
            inline_max: None,
            min_free_space: None,
        }
    }
}

/// Flags that override the file and the environment (`serve` and `admin`).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub config: Option<PathBuf>,
    pub listen: Option<String>,
    pub data_dir: Option<PathBuf>,
    pub base_url: Option<String>,
    pub cdn_url: Option<String>,
    pub metrics_listen: Option<String>,
    pub log_format: Option<LogFormat>,
}

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
}

pub(crate) const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// Small files are faster to store and serve from SQLite than as files of
/// their own (one shared fsync, one read): up to 64 KiB by default.
pub(crate) const DEFAULT_INLINE_MAX: u64 = 64 * 1024;
/// `server.min_upload_rate`: slow mobile links pass, a trickle does not.
pub(crate) const DEFAULT_MIN_UPLOAD_RATE: u64 = 1024;
/// `database.statement_timeout`.
pub const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(5);
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
        toml::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.to_path_buf(),
            source,
        })
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
        Ok(Config {
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

/// A rate: bytes per second as an integer, or a size (`"1KiB"`, `"2MB/s"`).
fn parse_rate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_suffix("/s").unwrap_or(t);
    parse_bytes(t).map_err(|e| format!("min_upload_rate: {e}"))
}

fn opt_rate<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    plans::opt_count(d, parse_rate)
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

/// The environment, as a value (so tests need not touch the process's).
#[derive(Debug, Clone, Default)]
pub struct Env(BTreeMap<String, String>);

impl Env {
    pub fn empty() -> Env {
        Env::default()
    }
    pub fn from_process() -> Env {
        Env(std::env::vars()
            .filter(|(k, _)| k.starts_with("FILESTORE_"))
            .collect())
    }
    #[must_use]
    pub fn with(mut self, k: &str, v: &str) -> Env {
        self.0.insert(k.to_string(), v.to_string());
        self
    }
    fn get(&self, k: &str) -> Option<String> {
        self.0.get(k).filter(|v| !v.is_empty()).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_is_flags_env_file() {
        let file: FileConfig = toml::from_str(
            "[server]\nlisten = \"127.0.0.1:1\"\ndata_dir = \"/f\"\n[plans.tiny]\nmax_file_size = \"1kB\"\n",
        )
        .unwrap();
        let env = Env::empty().with("FILESTORE_LISTEN", "127.0.0.1:2");
        let c = Config::resolve(file.clone(), &env, &Overrides::default()).unwrap();
        assert_eq!(c.listen, "127.0.0.1:2");
        assert_eq!(c.base_url, "http://127.0.0.1:2");
        assert_eq!(c.data_dir, PathBuf::from("/f"));
        let flags = Overrides {
            listen: Some("127.0.0.1:3".into()),
            ..Default::default()
        };
        let c = Config::resolve(file, &env, &flags).unwrap();
        assert_eq!(c.listen, "127.0.0.1:3");
        let tiny = c.plans.get("tiny").unwrap();
        assert_eq!(tiny.max_file_size, 1000);
        assert_eq!(tiny.storage, 1_000_000_000, "new plans start from free");
    }

    #[test]
    fn bad_values_are_refused() {
        let file: FileConfig = toml::from_str("[server]\ndefault_plan = \"gold\"\n").unwrap();
        assert!(Config::resolve(file, &Env::empty(), &Overrides::default()).is_err());
        assert!(toml::from_str::<FileConfig>("[server]\nlisten_typo = 1\n").is_err());
        let file: FileConfig = toml::from_str("[storage]\nbackend = \"s3\"\n").unwrap();
        assert!(Config::resolve(file, &Env::empty(), &Overrides::default()).is_err());
        assert!(
            toml::from_str::<FileConfig>("[storage]\nbackend = \"lcoal\"\n").is_err(),
            "a typo is an error, not a fallback"
        );
        let env = Env::empty().with("FILESTORE_STORAGE_BACKEND", "s4");
        assert!(Config::resolve(FileConfig::default(), &env, &Overrides::default()).is_err());
        for bad in [
            "[server]\nsigning_secret = \"\"\n",
            "[server]\nsigning_secret = \"short\"\n",
            "[server]\nreap_interval = \"0s\"\n",
            "[storage]\ninline_max = \"2MiB\"\n",
        ] {
            let file: FileConfig = toml::from_str(bad).unwrap();
            assert!(
                Config::resolve(file, &Env::empty(), &Overrides::default()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_example_config_is_valid_and_matches_the_defaults() {
        let file: FileConfig = toml::from_str(include_str!("../../config.example.toml")).unwrap();
        let c = Config::resolve(file, &Env::empty(), &Overrides::default()).unwrap();
        assert_eq!(c.plans, Plans::default());
        assert_eq!(c.listen, DEFAULT_LISTEN);
        assert_eq!(c.storage.backend, BackendKind::Local);
        assert_eq!(c.reap_interval, Duration::from_secs(5));
        assert_eq!(c.limits.min_upload_rate, DEFAULT_MIN_UPLOAD_RATE);
        assert_eq!(c.statement_timeout, DEFAULT_STATEMENT_TIMEOUT);
    }

    #[test]
    fn min_upload_rate_and_statement_timeout_parse() {
        let resolve = |text: &str, env: Env| {
            let file: FileConfig = toml::from_str(text).unwrap();
            Config::resolve(file, &env, &Overrides::default())
        };
        let rate = |text: &str| resolve(text, Env::empty()).unwrap().limits.min_upload_rate;
        assert_eq!(rate(""), 1024);
        assert_eq!(rate("[server]\nmin_upload_rate = \"2KiB/s\"\n"), 2048);
        assert_eq!(rate("[server]\nmin_upload_rate = \"10kB\"\n"), 10_000);
        assert_eq!(rate("[server]\nmin_upload_rate = 0\n"), 0);
        let env = Env::empty().with("FILESTORE_MIN_UPLOAD_RATE", "512");
        assert_eq!(resolve("", env).unwrap().limits.min_upload_rate, 512);
        assert!(toml::from_str::<FileConfig>("[server]\nmin_upload_rate = \"fast\"\n").is_err());
        let t = resolve("[database]\nstatement_timeout = \"250ms\"\n", Env::empty()).unwrap();
        assert_eq!(t.statement_timeout, Duration::from_millis(250));
        assert!(resolve("[database]\nstatement_timeout = \"0s\"\n", Env::empty()).is_err());
    }

    #[test]
    fn the_several_nodes_example_is_valid() {
        let dir = tempfile::tempdir().unwrap();
        let (db, s3) = (dir.path().join("db"), dir.path().join("s3"));
        std::fs::write(&db, "postgres://filestore:pw@db:5432/filestore\n").unwrap();
        std::fs::write(&s3, "s3-secret\n").unwrap();
        let text = include_str!("../../contrib/several-nodes/filestore.toml")
            .replace("/run/secrets/filestore-database-url", db.to_str().unwrap())
            .replace("/run/secrets/s3-secret", s3.to_str().unwrap());
        let file: FileConfig = toml::from_str(&text).unwrap();
        let c = Config::resolve(file, &Env::empty(), &Overrides::default()).unwrap();
        assert_eq!(c.storage.backend, BackendKind::S3);
        assert_eq!(
            c.database_url.as_ref().map(|u| u.expose().to_string()),
            Some("postgres://filestore:pw@db:5432/filestore".to_string())
        );
        assert_eq!(c.base_url, "https://files.example.com");
    }

    #[test]
    fn secrets_come_from_a_value_or_a_file_not_both() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("signing");
        std::fs::write(&path, format!("{}\n", "s".repeat(40))).unwrap();
        let resolve = |toml_text: String, env: Env| {
            let file: FileConfig = toml::from_str(&toml_text).unwrap();
            Config::resolve(file, &env, &Overrides::default())
        };
        let p = path.display();
        let c = resolve(
            format!("[server]\nsigning_secret_file = \"{p}\"\n"),
            Env::empty(),
        )
        .unwrap();
        assert_eq!(c.signing_secret.unwrap().expose(), "s".repeat(40));
        let env = Env::empty().with("FILESTORE_SIGNING_SECRET_FILE", &p.to_string());
        let c = resolve(String::new(), env).unwrap();
        assert_eq!(c.signing_secret.unwrap().expose(), "s".repeat(40));
        let c = resolve(
            format!("[storage]\nsecret_access_key_file = \"{p}\"\n"),
            Env::empty(),
        )
        .unwrap();
        assert_eq!(
            c.storage.secret_access_key.unwrap().expose(),
            "s".repeat(40)
        );
        let both = format!(
            "[server]\nsigning_secret = \"{}\"\nsigning_secret_file = \"{p}\"\n",
            "t".repeat(40)
        );
        assert!(matches!(
            resolve(both, Env::empty()),
            Err(ConfigError::Invalid(m)) if m.contains("not both")
        ));
        let missing = "[storage]\nsecret_access_key_file = \"/nonexistent/s\"\n".to_string();
        assert!(matches!(
            resolve(missing, Env::empty()),
            Err(ConfigError::SecretFile {
                setting: "storage.secret_access_key_file",
                ..
            })
        ));
        // The environment overrides the file, whichever form each uses.
        let env = Env::empty().with("FILESTORE_SIGNING_SECRET", &"e".repeat(40));
        let c = resolve(format!("[server]\nsigning_secret_file = \"{p}\"\n"), env).unwrap();
        assert_eq!(c.signing_secret.unwrap().expose(), "e".repeat(40));
        let env = Env::empty()
            .with("FILESTORE_SIGNING_SECRET", &"e".repeat(40))
            .with("FILESTORE_SIGNING_SECRET_FILE", &p.to_string());
        assert!(resolve(String::new(), env).is_err(), "both in one layer");
        // A short secret from a file is refused like a short value.
        std::fs::write(&path, "short\n").unwrap();
        assert!(resolve(
            format!("[server]\nsigning_secret_file = \"{p}\"\n"),
            Env::empty()
        )
        .is_err());
    }

    #[test]
    fn the_database_url_comes_from_the_env_or_the_file_and_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db-url");
        std::fs::write(&path, "postgres://u:pw@db/fs\n").unwrap();
        let resolve = |toml_text: &str, env: Env| {
            let file: FileConfig = toml::from_str(toml_text).unwrap();
            Config::resolve(file, &env, &Overrides::default())
        };
        let c = resolve("", Env::empty()).unwrap();
        assert!(c.database_url.is_none(), "SQLite by default");
        let c = resolve("[database]\nurl = \"postgres://f@h/d\"\n", Env::empty()).unwrap();
        assert_eq!(c.database_url.unwrap().expose(), "postgres://f@h/d");
        let p = path.display();
        let c = resolve(&format!("[database]\nurl_file = \"{p}\"\n"), Env::empty()).unwrap();
        assert_eq!(c.database_url.unwrap().expose(), "postgres://u:pw@db/fs");
        let env = Env::empty().with("FILESTORE_DATABASE_URL", "postgresql://e@h/d");
        let c = resolve("[database]\nurl = \"postgres://f@h/d\"\n", env).unwrap();
        assert_eq!(c.database_url.unwrap().expose(), "postgresql://e@h/d");
        let env = Env::empty().with("FILESTORE_DATABASE_URL_FILE", &p.to_string());
        let c = resolve("", env).unwrap();
        assert_eq!(c.database_url.unwrap().expose(), "postgres://u:pw@db/fs");
        assert!(resolve("[database]\nurl = \"mysql://h/d\"\n", Env::empty()).is_err());
        assert!(resolve(
            &format!("[database]\nurl = \"postgres://h/d\"\nurl_file = \"{p}\"\n"),
            Env::empty()
        )
        .is_err());
        assert!(!format!(
            "{:?}",
            resolve(
                "[database]\nurl = \"postgres://u:hunter2@h/d\"\n",
                Env::empty()
            )
            .unwrap()
        )
        .contains("hunter2"));
    }

    #[test]
    fn secrets_are_redacted() {
        let s = StorageConfig {
            secret_access_key: Some(Secret::new("hunter2")),
            access_key_id: Some(Secret::new("AKIA")),
            ..Default::default()
        };
        let shown = format!("{s:?}");
        assert!(!shown.contains("hunter2") && !shown.contains("AKIA"));
    }
}
