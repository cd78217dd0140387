//! The relative paths of a folder's files, as a zip of the folder and a
//! folder download write them (docs/api.md, "Folder zip"):
//! `sub/dir/name` under the folder, and a path already taken gets ` (2)`,
//! ` (3)`… before its extension (`a.txt`, `a (2).txt`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

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
///
/// Each path is held once: the set holds the same `Arc<str>` that
/// [`Unique::claim_shared`] hands out (a zip's central directory keeps it),
/// and `next` is keyed by that same allocation. The ` (n)` search is O(1)
/// amortised per path: `next` remembers, for each path that came more than
/// once, the next number to try, and a candidate is still checked against
/// the set (a real `a (2).txt` is never given twice). Numbered forms are
/// distinct for distinct (path, n), so each taken path turns down at most
/// one candidate over the whole run.
#[derive(Debug, Default)]
pub(crate) struct Unique {
    taken: HashSet<Arc<str>>,
    /// For a path given more than once: the next ` (n)` to try.
    next: HashMap<Arc<str>, u64>,
}

impl Unique {
    pub(crate) fn new() -> Unique {
        Unique::default()
    }

    /// Room for `n` paths up front (more may still come).
    pub(crate) fn with_capacity(n: usize) -> Unique {
        Unique {
            taken: HashSet::with_capacity(n),
            next: HashMap::new(),
        }
    }

    /// How many paths were given out.
    pub(crate) fn len(&self) -> usize {
        self.taken.len()
    }

    /// `path` if it is not taken yet, else its first free ` (n)` form; taken from now on.
    pub(crate) fn claim(&mut self, path: &str) -> String {
        self.claim_shared(path).to_string()
    }

    /// As [`Unique::claim`], the path shared with the set rather than copied.
    pub(crate) fn claim_shared(&mut self, path: &str) -> Arc<str> {
        let Some(base) = self.taken.get(path).cloned() else {
            let name: Arc<str> = Arc::from(path);
            self.taken.insert(name.clone());
            return name;
        };
        let n = self.next.entry(base).or_insert(2);
        loop {
            let candidate = numbered(path, *n);
            *n += 1;
            if !self.taken.contains(candidate.as_str()) {
                let name: Arc<str> = Arc::from(candidate);
                self.taken.insert(name.clone());
                return name;
            }
        }
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
        assert_eq!(u.len(), 10);
    }

    #[test]
    fn many_copies_of_one_path_are_numbered_in_turn() {
        let mut u = Unique::new();
        let names: Vec<String> = (0..1000).map(|_| u.claim("logs/latest.log")).collect();
        assert_eq!(names[0], "logs/latest.log");
        for (i, name) in names.iter().enumerate().skip(1) {
            assert_eq!(*name, format!("logs/latest ({}).log", i + 1));
        }
        assert_eq!(names.iter().collect::<HashSet<_>>().len(), 1000);
    }

    #[test]
    fn a_real_numbered_path_is_never_given_twice() {
        // The real `a (2).txt` first: the second `a.txt` skips to ` (3)`.
        let mut u = Unique::new();
        assert_eq!(u.claim("a (2).txt"), "a (2).txt");
        assert_eq!(u.claim("a.txt"), "a.txt");
        assert_eq!(u.claim("a.txt"), "a (3).txt");
        assert_eq!(u.claim("a.txt"), "a (4).txt");
        // The real `b (3).txt` after `b (2).txt` was made: it is numbered
        // itself, and the next `b.txt` skips ` (3)`.
        assert_eq!(u.claim("b.txt"), "b.txt");
        assert_eq!(u.claim("b.txt"), "b (2).txt");
        assert_eq!(u.claim("b (3).txt"), "b (3).txt");
        assert_eq!(u.claim("b (2).txt"), "b (2) (2).txt");
        assert_eq!(u.claim("b.txt"), "b (4).txt");
        // Real numbered paths interleaved with many copies: never a repeat.
        let mut u = Unique::new();
        let mut seen = HashSet::new();
        for i in 0..3000u64 {
            let path = if i % 3 == 0 {
                format!("c ({}).txt", i / 2 + 2)
            } else {
                "c.txt".to_string()
            };
            assert!(seen.insert(u.claim(&path)), "{path} given twice");
        }
        assert_eq!(u.len(), 3000);
    }

    #[test]
    fn the_name_is_held_once_and_shared() {
        let mut u = Unique::new();
        let a = u.claim_shared("x/y.bin");
        let b = u.claim_shared("x/y.bin");
        assert_eq!((&*a, &*b), ("x/y.bin", "x/y (2).bin"));
        // The caller's copy and the set's are one allocation (plus the
        // `next` key for the repeated path).
        assert!(Arc::ptr_eq(&a, u.taken.get("x/y.bin").unwrap()));
        assert_eq!(Arc::strong_count(&a), 3);
        assert_eq!(Arc::strong_count(&b), 2);
    }

    /// 100,000 copies of one path: linear, so this ends in well under a
    /// second (the old quadratic search took about 5·10⁹ steps).
    #[test]
    fn a_hundred_thousand_copies_of_one_path() {
        let mut u = Unique::with_capacity(100_000);
        let mut last = String::new();
        for _ in 0..100_000 {
            last = u.claim("latest.log");
        }
        assert_eq!(last, "latest (100000).log");
        assert_eq!(u.len(), 100_000);
    }
}
