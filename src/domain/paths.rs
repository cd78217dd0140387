//! The relative paths of a folder's files, as a zip of the folder and a
//! folder download write them (docs/api.md, "Folder zip"):
//! `sub/dir/name` under the folder, and a path already taken gets ` (2)`,
//! ` (3)`… before its extension (`a.txt`, `a (2).txt`).

use std::collections::HashSet;

/// The path of a file of folder `folder` (None: the root) relative to `top`,
/// or None when the file is not in `top` or below.
pub(crate) fn relative(top: &str, folder: Option<&str>, name: &str) -> Option<String> {
    let folder = folder.unwrap_or("");
    let rest = folder.strip_prefix(top)?;
    if rest.is_empty() {
        return Some(name.to_string());
    }
    let rest = rest.strip_prefix('/')?;
    Some(format!("{rest}/{name}"))
}

/// Paths given out so far; each new one is made unique among them.
#[derive(Debug, Default)]
pub(crate) struct Unique {
    taken: HashSet<String>,
}

impl Unique {
    pub(crate) fn new() -> Unique {
        Unique::default()
    }

    /// `path` if it is not taken yet, else its first free ` (n)` form; taken from now on.
    pub(crate) fn claim(&mut self, path: &str) -> String {
        let mut candidate = path.to_string();
        let mut n = 1u64;
        while self.taken.contains(&candidate) {
            n += 1;
            candidate = numbered(path, n);
        }
        self.taken.insert(candidate.clone());
        candidate
    }
}

/// `dir/stem (n).ext`: the extension is what follows the last dot of the
/// last segment, unless that dot starts it (`.bashrc (2)`).
fn numbered(path: &str, n: u64) -> String {
    let base_at = path.rfind('/').map_or(0, |i| i + 1);
    match path[base_at..].rfind('.') {
        Some(dot) if dot > 0 => {
            let dot = base_at + dot;
            format!("{} ({n}){}", &path[..dot], &path[dot..])
        }
        _ => format!("{path} ({n})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_relative_to_the_top_folder() {
        assert_eq!(relative("a", Some("a"), "x").as_deref(), Some("x"));
        assert_eq!(relative("a", Some("a/b/c"), "x").as_deref(), Some("b/c/x"));
        assert_eq!(relative("a", Some("ab"), "x"), None);
        assert_eq!(relative("a", None, "x"), None);
    }

    #[test]
    fn repeated_paths_are_numbered_before_the_extension() {
        let mut u = Unique::new();
        assert_eq!(u.claim("a.txt"), "a.txt");
        assert_eq!(u.claim("a.txt"), "a (2).txt");
        assert_eq!(u.claim("a.txt"), "a (3).txt");
        assert_eq!(u.claim("a (2).txt"), "a (2) (2).txt");
        assert_eq!(u.claim("d.x/b"), "d.x/b");
        assert_eq!(u.claim("d.x/b"), "d.x/b (2)");
        assert_eq!(u.claim(".bashrc"), ".bashrc");
        assert_eq!(u.claim(".bashrc"), ".bashrc (2)");
        assert_eq!(u.claim("s/t.tar.gz"), "s/t.tar.gz");
        assert_eq!(u.claim("s/t.tar.gz"), "s/t.tar (2).gz");
    }
}
