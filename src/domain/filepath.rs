//! A file's path: `folder/name`, or `name` in the root (docs/api.md,
//! "Paths"). A path names the files of one account with that folder and
//! name; paths are ordered by their bytes (UTF-8), which is not the order of
//! (folder, name) pairs: `a-b/c` sorts before `a/b` (`-` is 0x2D, `/`
//! 0x2F). The databases index the path itself, in that order
//! (`files_by_path`), and these are the bounds a listing of it takes.

use super::validate::{self, MAX_FOLDER, MAX_SEGMENT};

/// What a new file does to the files already at its path (docs/api.md,
/// "Paths and stable links"), decided in the transaction that commits it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AtPath {
    /// It joins them (the newest is the file at the path).
    #[default]
    Add,
    /// It replaces every one of them: each is deleted (`file.deleted`),
    /// its bytes given back at once.
    Replace,
    /// It is refused (409 `conflict`) when the path holds a file.
    IfAbsent,
}

impl AtPath {
    /// The rule of an upload's `replace` and `if_absent` fields (both
    /// true is a 400's message).
    pub fn of(replace: bool, if_absent: bool) -> Result<AtPath, String> {
        match (replace, if_absent) {
            (true, true) => Err("replace and if_absent cannot both be true".into()),
            (true, false) => Ok(AtPath::Replace),
            (false, true) => Ok(AtPath::IfAbsent),
            (false, false) => Ok(AtPath::Add),
        }
    }

    /// How the databases keep it (a resumable upload's, the commit
    /// function's argument): NULL, `replace` or `absent`.
    pub fn stored(self) -> Option<&'static str> {
        match self {
            AtPath::Add => None,
            AtPath::Replace => Some("replace"),
            AtPath::IfAbsent => Some("absent"),
        }
    }

    /// The rule [`AtPath::stored`] kept (anything else: none).
    pub fn from_stored(stored: Option<&str>) -> AtPath {
        match stored {
            Some("replace") => AtPath::Replace,
            Some("absent") => AtPath::IfAbsent,
            _ => AtPath::Add,
        }
    }
}

/// The most bytes a path may hold: a folder, `/` and a name.
pub const MAX_PATH: usize = MAX_FOLDER + 1 + MAX_SEGMENT;

/// The path of a file of `folder` (None: the root) named `name`.
pub fn join(folder: Option<&str>, name: &str) -> String {
    match folder {
        Some(f) => format!("{f}/{name}"),
        None => name.to_string(),
    }
}

/// The OpenAPI `pattern` of a path: exactly what [`split`] accepts but for
/// the lengths (the schema's `maxLength` counts characters, the rule
/// bytes): an optional `/`, folder segments each followed by `/` (as
/// `validate::FOLDER_PATTERN` has them), then a name (no `/`, `\`, control
/// or bidirectional formatting character; not `.` or `..`).
pub(crate) const PATH_PATTERN: &str = concat!(
    r"^/?(",
    r"(\.{0,2}[^/.\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]|\.{3})[^/\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]*",
    r"/)*",
    r"(\.{0,2}[^/\\.\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]|\.{3})[^/\\\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]*",
    r"$"
);

/// The folder and name of `path` (a leading `/` is dropped), each as an
/// upload's would be checked; Err when no file can be at `path`.
pub fn split(path: &str) -> Result<(Option<String>, String), String> {
    let path = path.strip_prefix('/').unwrap_or(path);
    let (folder, name) = match path.rsplit_once('/') {
        Some((f, n)) => (Some(f), n),
        None => (None, path),
    };
    if name.is_empty() {
        return Err("path must end with a file name".into());
    }
    if validate::file_name(name)? != name {
        return Err(format!(
            "path's file name {name:?} is not one a file can have"
        ));
    }
    if let Some(f) = folder {
        if validate::folder(f)?.as_deref() != Some(f) {
            return Err(format!("path's folder {f:?} is not one a file can have"));
        }
    }
    Ok((folder.map(str::to_string), name.to_string()))
}

/// The first string after every string that starts with `prefix`, in byte
/// order (the exclusive upper bound of a listing of `prefix`); None when
/// there is none (every character of `prefix` is U+10FFFF).
pub fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(c) = chars.pop() {
        // UTF-8's byte order is the order of scalar values, which skip the
        // surrogates.
        let next = match c {
            '\u{D7FF}' => Some('\u{E000}'),
            c => char::from_u32(u32::from(c) + 1),
        };
        if let Some(n) = next {
            chars.push(n);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// A `start_after` key past every path that starts with `prefix` and before
/// every later one: `prefix` then U+10FFFF (the greatest character, `F4 8F
/// BF BF`) more times than a path has room for. An S3 listing with a
/// delimiter skips a common prefix with it.
pub fn past_prefix(prefix: &str) -> String {
    let room = MAX_PATH.saturating_sub(prefix.len()) / 4 + 1;
    let mut key = String::with_capacity(prefix.len() + 4 * room);
    key.push_str(prefix);
    key.extend(std::iter::repeat_n('\u{10FFFF}', room));
    key
}

/// The paths a listing covers, as bounds of one range scan of the index:
/// from `lower` (`inclusive` or not) up to `upper` (exclusive), either open.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Range {
    pub lower: Option<String>,
    pub inclusive: bool,
    pub upper: Option<String>,
}

/// The range of the paths that start with `prefix` and sort strictly after
/// `start_after` (either absent), with a single lower bound (the greater);
/// None when no path can be in it. No path holds NUL (a control
/// character), which PostgreSQL's text cannot either: a prefix with one
/// matches nothing, and a `start_after` with one is cut there (no path
/// lies between `a` and `a\0…`).
pub fn range(prefix: Option<&str>, start_after: Option<&str>) -> Option<Range> {
    let prefix = prefix.filter(|p| !p.is_empty());
    if prefix.is_some_and(|p| p.contains('\0')) {
        return None;
    }
    let after = start_after.map(|a| a.split('\0').next().unwrap_or(""));
    let mut r = Range {
        upper: prefix.and_then(prefix_end),
        ..Range::default()
    };
    match (prefix, after) {
        (Some(p), Some(a)) if a >= p => r.lower = Some(a.to_string()),
        (Some(p), _) => (r.lower, r.inclusive) = (Some(p.to_string()), true),
        (None, Some(a)) if !a.is_empty() => r.lower = Some(a.to_string()),
        (None, _) => {}
    }
    match (&r.lower, &r.upper) {
        (Some(l), Some(u)) if l >= u => None,
        _ => Some(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn paths_join_and_split() {
        assert_eq!(join(None, "a.txt"), "a.txt");
        assert_eq!(join(Some("my docs/ünï+%"), "a b"), "my docs/ünï+%/a b");
        assert_eq!(split("a.txt").unwrap(), (None, "a.txt".into()));
        assert_eq!(split("/a.txt").unwrap(), (None, "a.txt".into()));
        assert_eq!(
            split("my docs/ünï+%/a b").unwrap(),
            (Some("my docs/ünï+%".into()), "a b".into())
        );
        for bad in [
            "", "/", "a/", "a//b", "./b", "a/../b", "a/..", "a\\b", "a/b\u{1}", "//a",
        ] {
            assert!(split(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn byte_order_is_not_the_order_of_pairs() {
        // ("a", "b") < ("a-b", "c") as pairs, but not as paths.
        assert!(join(Some("a-b"), "c") < join(Some("a"), "b"));
    }

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end("photos/").as_deref(), Some("photos0"));
        assert_eq!(prefix_end("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(prefix_end("a\u{D7FF}").as_deref(), Some("a\u{E000}"));
        assert_eq!(prefix_end("\u{10FFFF}\u{10FFFF}"), None);
        assert_eq!(prefix_end(""), None);
    }

    #[test]
    fn ranges_take_the_greater_lower_bound() {
        let r = |l: &str, inc: bool, u: Option<&str>| Range {
            lower: Some(l.into()),
            inclusive: inc,
            upper: u.map(str::to_string),
        };
        assert_eq!(range(None, None), Some(Range::default()));
        assert_eq!(range(Some(""), Some("")), Some(Range::default()));
        assert_eq!(range(Some("a/"), None), Some(r("a/", true, Some("a0"))));
        assert_eq!(
            range(Some("a/"), Some("a")),
            Some(r("a/", true, Some("a0")))
        );
        assert_eq!(
            range(Some("a/"), Some("a/b")),
            Some(r("a/b", false, Some("a0")))
        );
        assert_eq!(range(Some("a/"), Some("a0")), None);
        assert_eq!(range(None, Some("x\0y")), Some(r("x", false, None)));
        assert_eq!(range(Some("x\0"), None), None);
    }

    #[test]
    fn the_openapi_pattern_is_the_rule() {
        let re = regex::Regex::new(PATH_PATTERN).unwrap();
        for s in [
            "a",
            "/a",
            "//a",
            "a/b",
            "a/b/",
            "a//b",
            "./a",
            "a/.",
            "a/..",
            "a/...",
            ".a",
            "..a/b",
            "my docs/ünï+%/a b.txt",
            "a\\b",
            "a\\b/c",
            "a/b\u{1}",
            "a\u{202e}/b",
            "",
            "/",
        ] {
            assert_eq!(re.is_match(s), split(s).is_ok(), "{s:?}");
        }
    }

    proptest! {
        #[test]
        fn the_openapi_pattern_matches_split(s in "[a./\\\\ é\u{1}\u{85}\u{200e}]{0,10}") {
            let re = regex::Regex::new(PATH_PATTERN).unwrap();
            prop_assert_eq!(re.is_match(&s), split(&s).is_ok());
        }

        #[test]
        fn a_range_holds_exactly_the_paths_listed(p in "[a-c/é]{0,3}", a in "[a-c/é\u{0}]{0,4}", s in "[a-c/é]{1,6}") {
            let listed = s.starts_with(&p) && s > a;
            let held = range(Some(&p), Some(&a)).is_some_and(|r| {
                let above = match &r.lower {
                    None => true,
                    Some(l) if r.inclusive => s >= *l,
                    Some(l) => s > *l,
                };
                above && r.upper.is_none_or(|u| s < u)
            });
            prop_assert_eq!(listed, held);
        }

        #[test]
        fn prefix_bounds_hold_exactly_the_paths_with_the_prefix(p in "\\PC{0,6}", s in "\\PC{0,8}") {
            let inside = s.starts_with(&p);
            let below_end = prefix_end(&p).is_none_or(|e| s.as_str() < e.as_str());
            prop_assert_eq!(inside, s.as_str() >= p.as_str() && below_end);
        }

        #[test]
        fn past_prefix_is_after_the_prefix_and_before_the_rest(p in "[a-c/\u{10FFFF}é]{0,4}", s in "[a-c/\u{10FFFF}é]{0,300}") {
            let key = past_prefix(&p);
            if s.starts_with(&p) {
                prop_assert!(s < key);
            } else {
                prop_assert_eq!(s > key, s.as_str() > p.as_str());
            }
        }
    }
}
