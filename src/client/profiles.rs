//! Which profile of the client config file a command uses: the one named
//! by `--profile` or `FILESTORE_PROFILE`, else `default`, else, when no
//! profile is named `default` and exactly one is saved, that one.

use super::config::{Env, Flags, Profile, ProfileFile, DEFAULT_PROFILE};

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

/// Picks the profile: flag, then env, then `default`, then the only one saved.
pub(crate) fn choose(flags: &Flags, env: &Env, file: &ProfileFile) -> Chosen {
    if let Some(name) = flags.profile.clone().or_else(|| env.profile.clone()) {
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
        let none = Flags::default();
        let env = Env::default();
        let c = choose(&none, &env, &file(&["work"]));
        assert_eq!((c.name.as_str(), c.explicit), ("work", false));
        assert!(c.profile.is_some());
        // Two, neither `default`: none chosen.
        let c = choose(&none, &env, &file(&["a", "b"]));
        assert_eq!(c.name, "default");
        assert!(c.profile.is_none());
        // `default` wins over any other.
        let c = choose(&none, &env, &file(&["default", "b"]));
        assert_eq!(c.name, "default");
        assert!(c.profile.is_some());
        // A named profile is that one, present or not.
        let flags = Flags {
            profile: Some("x".into()),
            ..Flags::default()
        };
        let c = choose(&flags, &env, &file(&["work"]));
        assert_eq!((c.name.as_str(), c.explicit), ("x", true));
        assert!(c.profile.is_none());
        assert_eq!(names(&file(&["b", "a"])), ["a", "b"]);
    }
}
