//! The relative paths of a folder's files, as a zip of the folder and a
//! folder download write them (docs/api.md, "Folder zip"):
//! `sub/dir/name` under the folder, each segment made safe for every
//! common file system ([`safe_segment`]: no `<>:"|?*\` or control
//! characters, no Windows device name, no trailing dot or space), and a
//! path already taken, compared case-insensitively, gets ` (2)`, ` (3)`…
//! before its extension (`a.txt`, `a (2).txt`). A file and a directory
//! never share a name: a file named as a directory already used is
//! numbered as a file clash is, and a directory named as a file already
//! given is renamed ` (n)` (no extension rule) for every file under it, so
//! every archive extracts whole on Linux, macOS and Windows.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The path of a file of folder `folder` (None: the root) relative to `top`
/// ("": the root), or None when the file is not in `top` or below.
pub(crate) fn relative(top: &str, folder: Option<&str>, name: &str) -> Option<String> {
    let folder = folder.unwrap_or("");
    if top.is_empty() {
        return Some(if folder.is_empty() {
            name.to_string()
        } else {
            format!("{folder}/{name}")
        });
    }
    let rest = folder.strip_prefix(top)?;
    if rest.is_empty() {
        return Some(name.to_string());
    }
    let rest = rest.strip_prefix('/')?;
    Some(format!("{rest}/{name}"))
}

/// Characters no Windows file name holds (`\` is its separator), each
/// replaced with `_`, as control characters are.
const UNSAFE: &[char] = &['<', '>', ':', '"', '|', '?', '*', '\\'];

/// Whether `stem` (a segment before its first dot, trailing spaces off) is a
/// Windows device name, which no file can be named, extension or not.
fn reserved(stem: &str) -> bool {
    let stem = stem.trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    if matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" | "CLOCK$"
    ) {
        return true;
    }
    let Some(rest) = upper
        .strip_prefix("COM")
        .or_else(|| upper.strip_prefix("LPT"))
    else {
        return false;
    };
    let mut chars = rest.chars();
    matches!(
        (chars.next(), chars.next()),
        (Some('0'..='9' | '¹' | '²' | '³'), None)
    )
}

/// One path segment as every common file system takes it: each of
/// `<>:"|?*\` and each control character replaced with `_`, trailing dots
/// and spaces replaced with `_` (`a.` → `a_`, `..` can never result), and
/// a Windows device name (`CON`, `aux.txt`, `com1.log`…, any case) given a
/// `_` prefix, as is a name of the form the CLI gives a download in
/// progress (`.filestore-….part`: a stored file so named would take
/// another's place while it downloads). Anything else, non-ASCII letters
/// included, is kept.
pub(crate) fn safe_segment(seg: &str) -> Cow<'_, str> {
    let mut out: Cow<'_, str> = if seg.contains(|c: char| UNSAFE.contains(&c) || c.is_control()) {
        Cow::Owned(
            seg.chars()
                .map(|c| {
                    if UNSAFE.contains(&c) || c.is_control() {
                        '_'
                    } else {
                        c
                    }
                })
                .collect(),
        )
    } else {
        Cow::Borrowed(seg)
    };
    let kept = out.trim_end_matches(['.', ' ']).len();
    if kept < out.len() || out.is_empty() {
        let mut s = out[..kept].to_string();
        s.extend(std::iter::repeat_n('_', (out.len() - kept).max(1)));
        out = Cow::Owned(s);
    }
    let stem = out.split('.').next().unwrap_or("");
    if reserved(stem) || (out.starts_with(".filestore-") && out.ends_with(".part")) {
        out = Cow::Owned(format!("_{out}"));
    }
    out
}

/// `path` with each segment made safe ([`safe_segment`]).
pub(crate) fn safe_path(path: &str) -> Cow<'_, str> {
    if path
        .split('/')
        .all(|s| matches!(safe_segment(s), Cow::Borrowed(_)))
    {
        return Cow::Borrowed(path);
    }
    let segs: Vec<Cow<'_, str>> = path.split('/').map(safe_segment).collect();
    Cow::Owned(segs.join("/"))
}

/// The key two paths collide under on a case-insensitive disk: full
/// Unicode case folding approximated by upper- then lowercasing (`ß` and
/// `SS`, `ς` and `σ` meet), ASCII by its lowercase; and on one that
/// normalizes names (APFS, HFS+): `é` composed (NFC) or not (NFD) meet.
fn fold(path: &str) -> Cow<'_, str> {
    use unicode_normalization::UnicodeNormalization;
    if path.is_ascii() {
        if path.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(path.to_ascii_lowercase())
        } else {
            Cow::Borrowed(path)
        }
    } else {
        let folded: String = path.nfc().collect::<String>().to_uppercase().to_lowercase();
        if folded == path {
            Cow::Borrowed(path)
        } else {
            Cow::Owned(folded)
        }
    }
}

/// Paths given out so far; each new one is made safe ([`safe_path`]) and
/// unique among them, case-insensitively, files and directories alike.
///
/// `taken` holds the folded form of every path given out (files) and of
/// every directory they were put in; when a path is its own folded form
/// (lowercase names) that is the same `Arc<str>` that
/// [`Unique::claim_shared`] hands out (a zip's central directory keeps it).
/// `dirs` maps each directory of the input (safe and folded) to the one its
/// files go to: itself in its first-seen case, or its ` (n)` form when its
/// name was a file's already, so all of its files stay together; a path's
/// directory is found with one look-up, and a new one is placed from its
/// nearest known ancestor down, each directory once over the whole run.
/// The ` (n)` search is O(1) amortised per path: `next` remembers, for
/// each path that came more than once (files keyed by their folded path,
/// directories by it plus `/`), the next number to try, and a candidate is
/// still checked against `taken` (a real `a (2).txt` is never given
/// twice). A numbered form comes from at most one (path, n) per kind, so
/// each taken path turns down at most two candidates over the whole run.
/// Memory is O(paths + directories).
#[derive(Debug, Default)]
pub(crate) struct Unique {
    taken: HashSet<Arc<str>>,
    /// Input directory (safe, folded) → the directory its files go to.
    dirs: HashMap<Arc<str>, Arc<str>>,
    /// For a path given more than once: the next ` (n)` to try.
    next: HashMap<Box<str>, u64>,
    /// Files given out.
    files: usize,
}

/// How a clash is numbered: a file before its extension, a directory at
/// its end.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    File,
    Dir,
}

impl Unique {
    pub(crate) fn new() -> Unique {
        Unique::default()
    }

    /// Room for `n` paths up front (more may still come).
    pub(crate) fn with_capacity(n: usize) -> Unique {
        Unique {
            taken: HashSet::with_capacity(n),
            ..Unique::default()
        }
    }

    /// How many paths were given out.
    pub(crate) fn len(&self) -> usize {
        self.files
    }

    /// `path` made safe, in its directory's place, if not taken yet, else
    /// its first free ` (n)` form; taken from now on.
    pub(crate) fn claim(&mut self, path: &str) -> String {
        self.claim_shared(path).to_string()
    }

    /// As [`Unique::claim`], the path shared with the set rather than copied.
    pub(crate) fn claim_shared(&mut self, path: &str) -> Arc<str> {
        let safe = safe_path(path);
        let wanted = match safe.rfind('/') {
            None => safe,
            Some(slash) => {
                let dir = self.place_dir(&safe[..slash]);
                let name = &safe[slash + 1..];
                Cow::Owned(format!("{dir}/{name}"))
            }
        };
        self.files += 1;
        self.take(&wanted, Kind::File)
    }

    /// Where the files of input directory `dir` (safe) go: known, or placed
    /// now under its parent's place, numbered when its name is taken by a
    /// file (or by another directory, itself renamed there).
    fn place_dir(&mut self, dir: &str) -> Arc<str> {
        let key = fold(dir);
        if let Some(placed) = self.dirs.get(key.as_ref()) {
            return placed.clone();
        }
        let wanted = match dir.rfind('/') {
            None => Cow::Borrowed(dir),
            Some(slash) => {
                let parent = self.place_dir(&dir[..slash]);
                Cow::Owned(format!("{parent}/{}", &dir[slash + 1..]))
            }
        };
        let placed = self.take(&wanted, Kind::Dir);
        let key = if *key == *placed {
            placed.clone()
        } else {
            Arc::from(key.as_ref())
        };
        self.dirs.insert(key, placed.clone());
        placed
    }

    /// `path` if its folded form is free, else its first free ` (n)` form
    /// (as a `kind`); taken from now on.
    fn take(&mut self, path: &str, kind: Kind) -> Arc<str> {
        let key = fold(path);
        if !self.taken.contains(key.as_ref()) {
            return self.insert(path, key.as_ref());
        }
        let mut family = key.into_owned();
        if kind == Kind::Dir {
            family.push('/');
        }
        let n = self.next.entry(family.into_boxed_str()).or_insert(2);
        loop {
            let candidate = numbered(path, *n, kind);
            *n += 1;
            let key = fold(&candidate);
            if !self.taken.contains(key.as_ref()) {
                let key = key.into_owned();
                return self.insert(&candidate, &key);
            }
        }
    }

    /// Takes `path`, whose folded form is `key`: one allocation when they
    /// are the same.
    fn insert(&mut self, path: &str, key: &str) -> Arc<str> {
        let name: Arc<str> = Arc::from(path);
        let key = if key == path {
            name.clone()
        } else {
            Arc::from(key)
        };
        self.taken.insert(key);
        name
    }
}

/// The longest name of one path segment most file systems take (bytes).
const MAX_SEGMENT: usize = 255;

/// `dir/stem (n).ext` for a file: the extension is what follows the last
/// dot of the last segment, unless that dot starts it (`.bashrc (2)`);
/// `dir/name (n)` for a directory. The stem is cut (on a character
/// boundary) so that the segment stays within [`MAX_SEGMENT`] bytes.
fn numbered(path: &str, n: u64, kind: Kind) -> String {
    let base_at = path.rfind('/').map_or(0, |i| i + 1);
    let base = &path[base_at..];
    let suffix = format!(" ({n})");
    let (stem, ext) = match base.rfind('.') {
        Some(dot)
            if dot > 0 && kind == Kind::File && base.len() - dot + suffix.len() < MAX_SEGMENT =>
        {
            base.split_at(dot)
        }
        _ => (base, ""),
    };
    let mut end = stem.len().min(MAX_SEGMENT - suffix.len() - ext.len());
    while !stem.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{}{suffix}{ext}", &path[..base_at], &stem[..end])
}

#[cfg(test)]
mod tests {
    #[test]
    fn composed_and_decomposed_names_collide() {
        let mut names = Unique::new();
        assert_eq!(names.claim("caf\u{e9}"), "caf\u{e9}");
        assert_eq!(names.claim("cafe\u{301}"), "cafe\u{301} (2)");
    }

    #[test]
    fn a_name_of_a_download_in_progress_is_never_one_of_the_tree() {
        assert_eq!(safe_segment(".filestore-f_1.part"), "_.filestore-f_1.part");
        assert_eq!(safe_segment(".filestore-f_1.partx"), ".filestore-f_1.partx");
        assert_eq!(safe_segment("x.filestore-f_1.part"), "x.filestore-f_1.part");
    }

    use super::*;

    /// Whether `names` extract whole on a case-insensitive disk: no two
    /// alike but for case, no file named as a directory of another, every
    /// segment safe.
    fn assert_extractable(names: &[String]) {
        let mut files = HashSet::new();
        let mut dirs = HashSet::new();
        for name in names {
            for seg in name.split('/') {
                assert!(
                    matches!(safe_segment(seg), Cow::Borrowed(_)),
                    "{name:?}: unsafe segment {seg:?}"
                );
            }
            assert!(files.insert(fold(name).into_owned()), "{name:?} twice");
            let mut at = 0;
            while let Some(i) = name[at..].find('/') {
                dirs.insert(fold(&name[..at + i]).into_owned());
                at += i + 1;
            }
        }
        if let Some(both) = files.intersection(&dirs).next() {
            panic!("{both:?} is a file and a directory in {names:?}");
        }
    }

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
    fn a_numbered_name_stays_within_255_bytes() {
        let mut u = Unique::default();
        let long = format!("d/{}.txt", "a".repeat(251));
        assert_eq!(u.claim(&long), long);
        let second = u.claim(&long);
        assert_eq!(second, format!("d/{} (2).txt", "a".repeat(247)));
        assert_eq!(second.len() - 2, 255);
        // Multi-byte characters are never split.
        let accents = format!("{}.bin", "\u{e9}".repeat(125));
        assert_eq!(u.claim(&accents), accents);
        let again = u.claim(&accents);
        assert!(again.len() <= 255 && again.ends_with(" (2).bin"), "{again}");
        assert_eq!(again, format!("{} (2).bin", "\u{e9}".repeat(123)));
        // A name that is all extension is cut whole.
        let dotted = format!(".{}", "x".repeat(254));
        u.claim(&dotted);
        let cut = u.claim(&dotted);
        assert!(cut.len() == 255 && cut.ends_with(" (2)"), "{cut}");
        for _ in 0..20 {
            assert!(u.claim(&long).len() - 2 <= 255);
        }
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
        // The caller's copy and the set's are one allocation.
        assert!(Arc::ptr_eq(&a, u.taken.get("x/y.bin").unwrap()));
        assert_eq!(Arc::strong_count(&a), 2);
        assert_eq!(Arc::strong_count(&b), 2);
        // A name not in lowercase: the set holds its folded form.
        let c = u.claim_shared("x/Y.bin");
        assert_eq!(&*c, "x/Y (3).bin");
        assert_eq!(Arc::strong_count(&c), 1);
        assert!(u.taken.contains("x/y (3).bin"));
    }

    #[test]
    fn a_file_named_as_a_used_directory_is_numbered() {
        // The folder first, then a file of its name (and its case).
        let mut u = Unique::new();
        assert_eq!(u.claim("sub/x.txt"), "sub/x.txt");
        assert_eq!(u.claim("sub"), "sub (2)");
        assert_eq!(u.claim("SUB"), "SUB (3)");
        assert_eq!(u.claim("sub/y.txt"), "sub/y.txt");
        assert_eq!(u.claim("a/b/c"), "a/b/c");
        assert_eq!(u.claim("a/b"), "a/b (2)");
        assert_eq!(u.claim("a"), "a (2)");
        assert_eq!(u.claim("v1.2/n"), "v1.2/n");
        assert_eq!(u.claim("v1.2"), "v1 (2).2");
        let names: Vec<String> = ["sub/x.txt", "sub (2)", "SUB (3)", "sub/y.txt"]
            .iter()
            .chain(&["a/b/c", "a/b (2)", "a (2)", "v1.2/n", "v1 (2).2"])
            .map(ToString::to_string)
            .collect();
        assert_extractable(&names);
    }

    #[test]
    fn a_directory_named_as_a_file_is_renamed_for_all_its_files() {
        let mut u = Unique::new();
        let names: Vec<String> = [
            "sub",
            "sub/x.txt",
            "sub/y.txt",
            "sub/deep/z",
            "sub/x.txt",
            "Sub/w",
            "sub (2)/real",
            "top/f",
            "top/f/g",
            "top/f/h",
            "v1.2",
            "v1.2/n",
        ]
        .iter()
        .map(|p| u.claim(p))
        .collect();
        assert_eq!(
            names,
            [
                "sub",
                "sub (2)/x.txt",
                "sub (2)/y.txt",
                "sub (2)/deep/z",
                "sub (2)/x (2).txt",
                // The same directory but for case: with the others.
                "sub (2)/w",
                // A real `sub (2)` is another directory.
                "sub (2) (2)/real",
                "top/f",
                "top/f (2)/g",
                "top/f (2)/h",
                "v1.2",
                // A directory is numbered at its end.
                "v1.2 (2)/n",
            ]
        );
        assert_extractable(&names);
    }

    #[test]
    fn device_names_get_a_prefix() {
        let mut u = Unique::new();
        for (path, want) in [
            ("CON", "_CON"),
            ("aux.txt", "_aux.txt"),
            ("NUL", "_NUL"),
            ("nul.tar.gz", "_nul.tar.gz"),
            ("com1", "_com1"),
            ("COM0.log", "_COM0.log"),
            ("LPT9.log", "_LPT9.log"),
            ("lpt¹", "_lpt¹"),
            ("Prn", "_Prn"),
            ("con .txt", "_con .txt"),
            ("conin$", "_conin$"),
            ("aux/x", "_aux/x"),
            ("d/CON/e", "d/_CON/e"),
            // Not device names.
            ("CONSOLE", "CONSOLE"),
            ("com10", "com10"),
            ("coms", "coms"),
            ("x.con", "x.con"),
            ("aux_", "aux_"),
            ("_CON", "_CON (2)"),
        ] {
            assert_eq!(u.claim(path), want, "{path}");
        }
    }

    #[test]
    fn characters_windows_refuses_are_replaced() {
        let mut u = Unique::new();
        assert_eq!(u.claim("C:evil.bat"), "C_evil.bat");
        assert_eq!(u.claim("c_evil.bat"), "c_evil (2).bat");
        assert_eq!(u.claim(r#"a<b>c:d"e|f?g*h\i"#), "a_b_c_d_e_f_g_h_i");
        assert_eq!(u.claim("bell\u{7}\u{1b}[0m"), "bell__[0m");
        assert_eq!(u.claim("tab\tx\u{7f}"), "tab_x_");
        assert_eq!(u.claim("d/C:x"), "d/C_x");
    }

    #[test]
    fn trailing_dots_and_spaces_are_replaced() {
        let mut u = Unique::new();
        for (path, want) in [
            ("a.", "a_"),
            (".. ", "___"),
            ("...", "___ (2)"),
            ("x ", "x_"),
            ("a. .", "a___"),
            ("d./f", "d_/f"),
            ("e /f", "e_/f"),
            ("CON.", "CON_"),
            (" lead", " lead"),
            ("mid. dle.txt", "mid. dle.txt"),
        ] {
            assert_eq!(u.claim(path), want, "{path}");
        }
    }

    #[test]
    fn names_differing_only_in_case_collide() {
        let mut u = Unique::new();
        assert_eq!(u.claim("A.txt"), "A.txt");
        assert_eq!(u.claim("a.txt"), "a (2).txt");
        assert_eq!(u.claim("A.TXT"), "A (3).TXT");
        assert_eq!(u.claim("a (2).TXT"), "a (2) (2).TXT");
        // Directories alike but for case are one, in the first case seen.
        assert_eq!(u.claim("Docs/x"), "Docs/x");
        assert_eq!(u.claim("docs/y"), "Docs/y");
        assert_eq!(u.claim("DOCS/x"), "Docs/x (2)");
        // Beyond ASCII.
        assert_eq!(u.claim("Ärger.txt"), "Ärger.txt");
        assert_eq!(u.claim("ärger.txt"), "ärger (2).txt");
        assert_eq!(u.claim("straße"), "straße");
        assert_eq!(u.claim("STRASSE"), "STRASSE (2)");
        assert_eq!(u.claim("ΟΔΟΣ"), "ΟΔΟΣ");
        assert_eq!(u.claim("οδος"), "οδος (2)");
        assert_eq!(u.claim("οδοσ"), "οδοσ (3)");
    }

    #[test]
    fn unicode_names_are_kept() {
        let mut u = Unique::new();
        for path in [
            "résumé (1).pdf",
            "日本語/データ.txt",
            "emoji 🎉.png",
            "Ελληνικά/Σ.md",
            "e\u{301}.txt",
        ] {
            assert_eq!(u.claim(path), path);
        }
    }

    #[test]
    fn a_hostile_mix_extracts_whole() {
        let mut u = Unique::new();
        let paths = [
            "sub",
            "sub/x.txt",
            "SUB/x.txt",
            "sub/x.txt/y",
            "C:evil.bat",
            "c_evil.bat",
            "CON",
            "con",
            "_con",
            "a.",
            "a_",
            "A_",
            "a. ",
            "x/aux.txt",
            "x/AUX.TXT",
            "x",
            "X/y",
            "d/e/f",
            "D/E",
            "d/e (2)/g",
            "d/E/f",
            "nul/nul",
            "f.",
            "f./g",
        ];
        let names: Vec<String> = paths.iter().map(|p| u.claim(p)).collect();
        assert_eq!(names.len(), paths.len());
        assert_extractable(&names);
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

    /// The same under a directory named as a file, in another case, with a
    /// name made safe: still linear.
    #[test]
    fn a_hundred_thousand_copies_under_a_renamed_directory() {
        let start = std::time::Instant::now();
        let mut u = Unique::with_capacity(100_001);
        assert_eq!(u.claim("logs"), "logs");
        let mut last = String::new();
        for i in 0..100_000 {
            last = u.claim(if i % 2 == 0 {
                "Logs/CON:.log"
            } else {
                "logs/con:.LOG"
            });
        }
        // `CON:` is `CON_`, no device name; the first case seen names the directory.
        assert_eq!(last, "Logs (2)/con_ (100000).LOG");
        assert_eq!(u.len(), 100_001);
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
    }
}
