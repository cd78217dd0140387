//! Which profile of the client config file a command uses: the one named
//! by `--profile` or `FILESTORE_PROFILE`, else `default`, else, when no
//! profile is named `default` and exactly one is saved, that one.

use crate::domain::secret::Secret;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub(crate) const DEFAULT_PROFILE: &str = "default";

/// The client config file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct ProfileFile {
    /// Profiles by name.
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

/// One named server + key pair.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Profile {
    /// Server base URL (without `/v1`).
    pub server: Option<String>,
    /// API key (`sk_…` or `pk_…`).
    pub api_key: Option<Secret>,
}

/// The profile a command runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chosen {
    /// Its name.
    pub name: String,
    /// Whether it was named (flag or env).
    pub explicit: bool,
    /// It, when the file has it.
    pub profile: Option<Profile>,
}

/// Picks the profile: the one `named` (by flag, then env), then `default`,
/// then the only one saved.
pub(crate) fn choose(named: Option<String>, file: &ProfileFile) -> Chosen {
    if let Some(name) = named {
        let profile = file.profiles.get(&name).cloned();
        return Chosen {
            name,
            explicit: true,
            profile,
        };
    }
    if let Some(p) = file.profiles.get(DEFAULT_PROFILE) {
        return Chosen {
            name: DEFAULT_PROFILE.into(),
            explicit: false,
            profile: Some(p.clone()),
        };
    }
    match file.profiles.iter().next() {
        Some((name, p)) if file.profiles.len() == 1 => Chosen {
            name: name.clone(),
            explicit: false,
            profile: Some(p.clone()),
        },
        _ => Chosen {
            name: DEFAULT_PROFILE.into(),
            explicit: false,
            profile: None,
        },
    }
}

/// The saved profiles' names, for an error that must name them: `"a", "b"`.
pub(crate) fn names(file: &ProfileFile) -> Vec<String> {
    file.profiles.keys().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::secret::Secret;

    fn file(names: &[&str]) -> ProfileFile {
        let mut f = ProfileFile::default();
        for n in names {
            f.profiles.insert(
                (*n).into(),
                Profile {
                    server: Some(format!("http://{n}:1")),
                    api_key: Some(Secret::new(format!("sk_{n}"))),
                },
            );
        }
        f
    }

    #[test]
    fn the_only_profile_stands_in_for_default() {
        let c = choose(None, &file(&["work"]));
        assert_eq!((c.name.as_str(), c.explicit), ("work", false));
        assert!(c.profile.is_some());
        // Two, neither `default`: none chosen.
        let c = choose(None, &file(&["a", "b"]));
        assert_eq!(c.name, "default");
        assert!(c.profile.is_none());
        // `default` wins over any other.
        let c = choose(None, &file(&["default", "b"]));
        assert_eq!(c.name, "default");
        assert!(c.profile.is_some());
        // A named profile is that one, present or not.
        let c = choose(Some("x".into()), &file(&["work"]));
        assert_eq!((c.name.as_str(), c.explicit), ("x", true));
        assert!(c.profile.is_none());
        assert_eq!(names(&file(&["b", "a"])), ["a", "b"]);
    }
}
