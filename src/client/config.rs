//! Client settings: the server URL and API key, from flags, then
//! `FILESTORE_URL` / `FILESTORE_API_KEY`, then a profile of the client config
//! file (`<config dir>/filestore/config.toml`, or `FILESTORE_CLIENT_CONFIG`).
//!
//! ```toml
//! [profiles.default]
//! server = "https://files.example.com"
//! api_key = "sk_..."
//! ```

use super::error::ClientError;
use crate::domain::secret::Secret;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file's profiles, and the one used when none is named.
pub(crate) use super::profiles::{Profile, ProfileFile, DEFAULT_PROFILE};

/// What the flags give (already read from the command line).
#[derive(Debug, Clone, Default)]
pub(crate) struct Flags {
    pub server: Option<String>,
    pub api_key: Option<Secret>,
    pub profile: Option<String>,
}

/// The environment variables the client reads.
#[derive(Debug, Clone, Default)]
pub(crate) struct Env {
    pub url: Option<String>,
    pub api_key: Option<Secret>,
    pub profile: Option<String>,
    pub config_file: Option<PathBuf>,
}

impl Env {
    /// Reads `FILESTORE_URL`, `FILESTORE_API_KEY`, `FILESTORE_PROFILE` and
    /// `FILESTORE_CLIENT_CONFIG`; empty values count as unset.
    pub(crate) fn from_process() -> Env {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Env {
            url: var("FILESTORE_URL"),
            api_key: var("FILESTORE_API_KEY").map(Secret::from),
            profile: var("FILESTORE_PROFILE"),
            config_file: var("FILESTORE_CLIENT_CONFIG").map(PathBuf::from),
        }
    }
}

/// Where the API key came from, to name it when the server refuses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeySource {
    /// `--api-key KEY` (or `--api-key -`, read from stdin).
    Flag,
    /// `FILESTORE_API_KEY`.
    Env,
    /// The profile of this name in the config file.
    Profile(String),
}

impl KeySource {
    /// The source in words: `the --api-key flag`, `FILESTORE_API_KEY`,
    /// `profile "ci" in /home/me/.config/filestore/config.toml`.
    pub(crate) fn describe(&self, config_path: &Path) -> String {
        match self {
            KeySource::Flag => "the --api-key flag".into(),
            KeySource::Env => "FILESTORE_API_KEY".into(),
            KeySource::Profile(name) => {
                format!("profile {name:?} in {}", config_path.display())
            }
        }
    }
}

/// The resolved settings a client command runs with.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub server: Option<String>,
    pub api_key: Option<Secret>,
    /// Where `api_key` came from.
    pub key_source: Option<KeySource>,
    /// The profile name that was looked up.
    pub profile: String,
    /// Whether that profile was named (flag or env) but is not in the file.
    pub profile_missing: bool,
    /// The saved profiles, when none was named, none is `default` and
    /// there are several: an error about a missing setting names them.
    pub unchosen: Vec<String>,
}

impl Settings {
    /// The server URL, or a usage error saying how to give one.
    pub(crate) fn require_server(&self) -> Result<&str, ClientError> {
        self.server.as_deref().ok_or_else(|| {
            self.missing(
                "no server configured: pass --server URL, set FILESTORE_URL, or run `filestore login`",
            )
        })
    }

    /// The API key, or a usage error saying how to give one.
    pub(crate) fn require_key(&self) -> Result<&str, ClientError> {
        self.api_key.as_ref().map(Secret::expose).ok_or_else(|| {
            self.missing(
                "no API key configured: pass --api-key KEY, set FILESTORE_API_KEY, or run `filestore login`",
            )
        })
    }

    /// The error for a missing setting: about the profile when a named
    /// profile that does not exist was to provide it.
    fn missing(&self, generic: &str) -> ClientError {
        if self.profile_missing {
            let name = &self.profile;
            return ClientError::usage(format!(
                "profile {name:?} not found: create it with `filestore login --profile {name}`"
            ));
        }
        if !self.unchosen.is_empty() {
            return ClientError::usage(format!(
                "no profile named \"default\", and several saved ({}): pass --profile NAME \
or set FILESTORE_PROFILE",
                self.unchosen.join(", ")
            ));
        }
        ClientError::usage(generic)
    }
}

/// Path of the client config file: `FILESTORE_CLIENT_CONFIG`, else
/// `config.toml` in the platform config dir.
pub(crate) fn config_path(env: &Env) -> Result<PathBuf, ClientError> {
    if let Some(p) = &env.config_file {
        return Ok(p.clone());
    }
    directories::ProjectDirs::from("", "", "filestore")
        .map(|d| d.config_dir().join("config.toml"))
        .ok_or_else(|| {
            ClientError::usage(
                "no home directory: set FILESTORE_CLIENT_CONFIG to a config file path",
            )
        })
}

/// Reads the config file; a missing file is an empty one.
pub(crate) fn load(path: &Path) -> Result<ProfileFile, ClientError> {
    match std::fs::read_to_string(path) {
        Ok(text) => toml::from_str(&text)
            .map_err(|e| ClientError::usage(format!("config {}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ProfileFile::default()),
        Err(e) => Err(ClientError::io(format!("reading {}", path.display()), e)),
    }
}

/// Writes the config file atomically with mode 0600 (a temp file in the same
/// directory, then a rename), creating the directory when needed.
pub(crate) fn save(path: &Path, file: &ProfileFile) -> Result<(), ClientError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(|e| ClientError::io(format!("creating {}", dir.display()), e))?;
    let text = toml::to_string_pretty(file)
        .map_err(|e| ClientError::Io(format!("encoding config: {e}")))?;
    let write = || -> std::io::Result<()> {
        // tempfile creates the file with mode 0600 on Unix.
        let mut tmp = tempfile::Builder::new()
            .prefix(".config-")
            .tempfile_in(dir)?;
        tmp.write_all(b"# filestore client profiles, written by `filestore login`.\n")?;
        tmp.write_all(text.as_bytes())?;
        tmp.as_file().sync_all()?;
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    };
    write().map_err(|e| ClientError::io(format!("writing {}", path.display()), e))
}

/// Resolves server and key: flags > env > profile. A profile named
/// explicitly (flag or env) that is not in the file is only an error when a
/// setting it would give is needed and missing (see
/// [`Settings::require_server`]): `FILESTORE_URL=… FILESTORE_API_KEY=…
/// filestore login --profile ci` creates it.
pub(crate) fn resolve(
    flags: &Flags,
    env: &Env,
    file: &ProfileFile,
) -> Result<Settings, ClientError> {
    let named = flags.profile.clone().or_else(|| env.profile.clone());
    let chosen = super::profiles::choose(named, file);
    let name = chosen.name;
    let profile_missing = chosen.explicit && chosen.profile.is_none();
    let unchosen = if !chosen.explicit && chosen.profile.is_none() && file.profiles.len() > 1 {
        super::profiles::names(file)
    } else {
        Vec::new()
    };
    let profile = chosen.profile.unwrap_or_default();
    let server = flags
        .server
        .clone()
        .or_else(|| env.url.clone())
        .or(profile.server)
        .map(|s| normalize_server(&s))
        .transpose()?;
    let (api_key, key_source) = if let Some(k) = &flags.api_key {
        (Some(k.clone()), Some(KeySource::Flag))
    } else if let Some(k) = &env.api_key {
        (Some(k.clone()), Some(KeySource::Env))
    } else if let Some(k) = profile.api_key {
        (Some(k), Some(KeySource::Profile(name.clone())))
    } else {
        (None, None)
    };
    let api_key = api_key.map(|k| Secret::new(k.expose().trim()));
    Ok(Settings {
        server,
        api_key,
        key_source,
        profile: name,
        profile_missing,
        unchosen,
    })
}

/// Checks a server URL and gives it without trailing `/` or `/v1`.
pub(crate) fn normalize_server(raw: &str) -> Result<String, ClientError> {
    let trimmed = raw.trim();
    let url = reqwest::Url::parse(trimmed)
        .map_err(|e| ClientError::usage(format!("invalid server URL {trimmed:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(ClientError::usage(format!(
            "invalid server URL {trimmed:?}: expected http://HOST[:PORT] or https://…"
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ClientError::usage(format!(
            "invalid server URL {trimmed:?}: no query or fragment allowed"
        )));
    }
    let mut s = url.to_string();
    while s.ends_with('/') {
        s.pop();
    }
    if let Some(stripped) = s.strip_suffix("/v1") {
        s = stripped.to_string();
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(name: &str, server: &str, key: &str) -> ProfileFile {
        let mut f = ProfileFile::default();
        f.profiles.insert(
            name.into(),
            Profile {
                server: Some(server.into()),
                api_key: Some(Secret::new(key)),
            },
        );
        f
    }

    #[test]
    fn flags_beat_env_beat_profile() {
        let file = file_with("default", "http://p:1", "sk_p");
        let env = Env {
            url: Some("http://e:1".into()),
            api_key: Some(Secret::new("sk_e")),
            ..Default::default()
        };
        let flags = Flags {
            server: Some("http://f:1/".into()),
            ..Default::default()
        };
        let s = resolve(&flags, &env, &file).unwrap();
        assert_eq!(s.server.as_deref(), Some("http://f:1"));
        assert_eq!(s.api_key.as_ref().map(Secret::expose), Some("sk_e"));
        assert_eq!(s.key_source, Some(KeySource::Env));
        let s = resolve(&Flags::default(), &Env::default(), &file).unwrap();
        assert_eq!(s.server.as_deref(), Some("http://p:1"));
        assert_eq!(s.api_key.as_ref().map(Secret::expose), Some("sk_p"));
        assert_eq!(s.key_source, Some(KeySource::Profile("default".into())));
        assert_eq!(
            s.key_source.unwrap().describe(Path::new("/c/config.toml")),
            "profile \"default\" in /c/config.toml"
        );
        let flags = Flags {
            api_key: Some(Secret::new("sk_f")),
            ..Default::default()
        };
        let s = resolve(&flags, &env, &file).unwrap();
        assert_eq!(s.key_source, Some(KeySource::Flag));
    }

    #[test]
    fn a_missing_named_profile_fails_only_when_a_setting_is_missing() {
        let file = file_with("default", "http://p:1", "sk_p");
        let flags = Flags {
            profile: Some("prod".into()),
            ..Default::default()
        };
        // Nothing else gives server or key: the profile is what is missing.
        let s = resolve(&flags, &Env::default(), &file).unwrap();
        assert!(s.profile_missing);
        for err in [
            s.require_server().unwrap_err(),
            s.require_key().unwrap_err(),
        ] {
            assert_eq!(err.exit_code(), 2);
            assert!(
                err.message().contains("profile \"prod\" not found"),
                "{err}"
            );
        }

        // Server and key from the environment (or flags): no error at all,
        // whether the profile is named by flag or by FILESTORE_PROFILE.
        let env = Env {
            url: Some("http://e:1".into()),
            api_key: Some(Secret::new("sk_e")),
            ..Default::default()
        };
        let s = resolve(&flags, &env, &file).unwrap();
        assert_eq!(s.require_server().unwrap(), "http://e:1");
        assert_eq!(s.require_key().unwrap(), "sk_e");
        assert_eq!(s.profile, "prod");
        let env = Env {
            profile: Some("ci".into()),
            ..env
        };
        let s = resolve(&Flags::default(), &env, &file).unwrap();
        assert!(s.require_server().is_ok() && s.require_key().is_ok());
        assert_eq!(s.profile, "ci");

        // Only the key missing: the error names the profile.
        let flags = Flags {
            server: Some("http://f:1".into()),
            profile: Some("prod".into()),
            ..Default::default()
        };
        let s = resolve(&flags, &Env::default(), &file).unwrap();
        assert!(s.require_server().is_ok());
        assert!(s.require_key().unwrap_err().message().contains("prod"));

        // An existing named profile, and the implicit default, are not missing.
        let env = Env {
            profile: Some("default".into()),
            ..Default::default()
        };
        assert!(
            !resolve(&Flags::default(), &env, &file)
                .unwrap()
                .profile_missing
        );
        let s = resolve(&Flags::default(), &Env::default(), &ProfileFile::default()).unwrap();
        assert!(!s.profile_missing);
        assert!(s
            .require_server()
            .unwrap_err()
            .message()
            .contains("no server"));
    }

    #[test]
    fn server_urls_are_normalized() {
        assert_eq!(normalize_server("http://h:8080/").unwrap(), "http://h:8080");
        assert_eq!(normalize_server("https://h/v1/").unwrap(), "https://h");
        assert_eq!(
            normalize_server("https://h/files").unwrap(),
            "https://h/files"
        );
        assert!(normalize_server("ftp://h").is_err());
        assert!(normalize_server("h:8080").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn save_writes_mode_0600_and_roundtrips() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/config.toml");
        let file = file_with("ci", "http://h:1", "sk_x");
        save(&path, &file).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load(&path).unwrap(), file);
        assert_eq!(
            load(&dir.path().join("none.toml")).unwrap(),
            ProfileFile::default()
        );
    }
}
