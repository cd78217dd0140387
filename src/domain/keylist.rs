//! A listing of paths with a delimiter, as S3 lists keys (CONTRACT §18
//! "Listing"): the paths under a prefix in byte order, where every path
//! whose rest holds the delimiter is rolled into one common prefix and the
//! whole prefix is skipped past in one seek.
//!
//! [`KeyWalk`] is the rule without the reading: it asks for rows
//! ([`KeyWalk::probe`]: after which path, how many) and is fed what a
//! store found ([`KeyWalk::feed`]), so a store may run every probe of a
//! page in one transaction. After a skip only the next row matters, so a
//! probe asks for two rows, doubling while pages go on without a skip.

use super::filepath;
use super::files::StoredFile;

/// What a page lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyQuery {
    /// Every path listed starts with it (`bucket/` + the key prefix).
    pub prefix: String,
    /// The page starts strictly after this path.
    pub after: Option<String>,
    /// A common prefix at or before this path is not given again (a V1
    /// marker or V2 `start-after` that lies inside one).
    pub start: Option<String>,
    /// None or empty: no rolling up.
    pub delimiter: Option<String>,
    /// Entries a page holds, 1-1000.
    pub max: u32,
}

/// One entry of a page, in path order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Walked<T> {
    /// A path and what the store keeps at it.
    Item(String, T),
    /// A common prefix: the prefix, the rest up to and with the delimiter.
    Prefix(String),
}

/// A page: its entries, and whether more follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPage<T> {
    pub entries: Vec<Walked<T>>,
    pub truncated: bool,
}

/// What a listed path holds: a file, or a folder marker (made then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyRow {
    File(Box<StoredFile>),
    Marker(i64),
}

/// Rows one query may give (a store's page bound).
pub const MAX_PROBE: u32 = 1000;

/// The walk through one page.
#[derive(Debug)]
pub struct KeyWalk<T> {
    q: KeyQuery,
    after: Option<String>,
    probe: u32,
    entries: Vec<Walked<T>>,
    done: Option<bool>,
}

impl<T> KeyWalk<T> {
    #[must_use]
    pub fn new(mut q: KeyQuery) -> Self {
        if q.delimiter.as_deref() == Some("") {
            q.delimiter = None;
        }
        let probe = if q.delimiter.is_some() { 2 } else { MAX_PROBE };
        let done = (q.max == 0).then_some(false);
        KeyWalk {
            after: q.after.clone(),
            q,
            probe,
            entries: Vec::new(),
            done,
        }
    }

    /// The next rows to read: up to `.1` paths under the prefix strictly
    /// after `.0`, in byte order (None: the page is complete).
    #[must_use]
    pub fn probe(&self) -> Option<(Option<&str>, u32)> {
        if self.done.is_some() {
            return None;
        }
        // One more than room, to tell whether the page is the last.
        let room = self.q.max - u32::try_from(self.entries.len()).unwrap_or(self.q.max) + 1;
        Some((self.after.as_deref(), room.min(self.probe).min(MAX_PROBE)))
    }

    /// What the last probe found: at most the rows it asked for, in order.
    pub fn feed(&mut self, rows: Vec<(String, T)>) {
        let Some((_, want)) = self.probe() else {
            return;
        };
        let complete = rows.len() < want as usize;
        let mut skipped = false;
        for (path, item) in rows.into_iter().take(want as usize) {
            let Some(rest) = path.strip_prefix(self.q.prefix.as_str()) else {
                continue;
            };
            if self.entries.len() >= self.q.max as usize {
                self.done = Some(true);
                return;
            }
            let cut = self
                .q
                .delimiter
                .as_deref()
                .and_then(|d| rest.find(d).map(|i| i + d.len()));
            if let Some(at) = cut {
                let common = format!("{}{}", self.q.prefix, &rest[..at]);
                self.after = Some(filepath::past_prefix(&common));
                if self.q.start.as_deref().is_none_or(|s| common.as_str() > s) {
                    self.entries.push(Walked::Prefix(common));
                }
                skipped = true;
                self.probe = 2;
                break;
            }
            self.after = Some(path.clone());
            self.entries.push(Walked::Item(path, item));
        }
        if !skipped {
            if complete {
                self.done = Some(false);
            } else {
                self.probe = self.probe.saturating_mul(2);
            }
        }
    }

    /// The page (call once [`KeyWalk::probe`] says None).
    #[must_use]
    pub fn finish(self) -> KeyPage<T> {
        KeyPage {
            entries: self.entries,
            truncated: self.done.unwrap_or(false),
        }
    }
}

/// Two lists in path order made one, no longer than `want` (beyond it the
/// merge of two limited lists may miss some).
#[must_use]
pub fn merge<T>(a: Vec<(String, T)>, b: Vec<(String, T)>, want: u32) -> Vec<(String, T)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    while out.len() < want as usize {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => x.0 <= y.0,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        out.extend(if take_a { a.next() } else { b.next() });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk over a sorted list of paths, probes answered from it.
    fn page(paths: &[&str], q: &KeyQuery) -> (Vec<String>, bool, usize) {
        let mut sorted: Vec<String> = paths.iter().map(ToString::to_string).collect();
        sorted.sort_unstable();
        let mut walk = KeyWalk::new(q.clone());
        let mut probes = 0;
        while let Some((after, want)) = walk.probe() {
            probes += 1;
            let rows: Vec<(String, ())> = sorted
                .iter()
                .filter(|p| p.starts_with(&q.prefix) && after.is_none_or(|a| p.as_str() > a))
                .take(want as usize)
                .map(|p| (p.clone(), ()))
                .collect();
            walk.feed(rows);
        }
        let p = walk.finish();
        let names = p
            .entries
            .into_iter()
            .map(|e| match e {
                Walked::Item(p, ()) => p,
                Walked::Prefix(p) => format!("P:{p}"),
            })
            .collect();
        (names, p.truncated, probes)
    }

    fn q(prefix: &str, delimiter: Option<&str>, max: u32) -> KeyQuery {
        KeyQuery {
            prefix: prefix.into(),
            after: None,
            start: None,
            delimiter: delimiter.map(Into::into),
            max,
        }
    }

    #[test]
    fn rolls_up_by_the_delimiter_in_byte_order() {
        let paths = ["b/a.txt", "b/v1/x", "b/v1/y", "b/v1.2/z", "b/z", "c/other"];
        let (got, more, _) = page(&paths, &q("b/", Some("/"), 10));
        assert_eq!(got, ["b/a.txt", "P:b/v1.2/", "P:b/v1/", "b/z"]);
        assert!(!more);
        let (got, more, _) = page(&paths, &q("b/", None, 10));
        assert_eq!(got, ["b/a.txt", "b/v1.2/z", "b/v1/x", "b/v1/y", "b/z"]);
        assert!(!more);
    }

    #[test]
    fn a_full_page_says_more_follow_and_resumes_after_its_last_entry() {
        let paths = ["b/a/1", "b/a/2", "b/b/1", "b/c", "b/d/1"];
        let (got, more, _) = page(&paths, &q("b/", Some("/"), 2));
        assert_eq!(got, ["P:b/a/", "P:b/b/"]);
        assert!(more);
        let mut next = q("b/", Some("/"), 2);
        next.after = Some(filepath::past_prefix("b/b/"));
        let (got, more, _) = page(&paths, &next);
        assert_eq!(got, ["b/c", "P:b/d/"]);
        assert!(!more);
        // Exactly full: nothing follows.
        let (got, more, _) = page(&paths[..4], &q("b/", Some("/"), 3));
        assert_eq!(got, ["P:b/a/", "P:b/b/", "b/c"]);
        assert!(!more);
    }

    #[test]
    fn a_start_inside_a_common_prefix_does_not_give_it_again() {
        let paths = ["b/a/1", "b/a/2", "b/b/1"];
        let mut query = q("b/", Some("/"), 10);
        query.after = Some("b/a/1".into());
        query.start = Some("b/a/1".into());
        let (got, _, _) = page(&paths, &query);
        assert_eq!(got, ["P:b/b/"]);
    }

    #[test]
    fn each_folder_costs_one_small_probe() {
        let many: Vec<String> = (0..50)
            .flat_map(|f| (0..20).map(move |i| format!("b/d{f:02}/o{i:02}")))
            .collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let (got, more, probes) = page(&refs, &q("b/", Some("/"), 1000));
        assert_eq!(got.len(), 50);
        assert!(!more);
        assert_eq!(probes, 51);
        let (got, more, _) = page(&refs, &q("b/", None, 1000));
        assert_eq!(got.len(), 1000);
        assert!(!more);
        let (got, more, _) = page(&refs, &q("b/", None, 999));
        assert_eq!(got.len(), 999);
        assert!(more);
    }

    #[test]
    fn max_zero_reads_nothing() {
        let (got, more, probes) = page(&["b/a"], &q("b/", Some("/"), 0));
        assert!(got.is_empty() && !more);
        assert_eq!(probes, 0);
    }

    #[test]
    fn merge_keeps_order_and_bound() {
        let a = vec![("a".to_string(), 1), ("c".to_string(), 3)];
        let b = vec![("b".to_string(), 2), ("d".to_string(), 4)];
        let m: Vec<i32> = merge(a, b, 3).into_iter().map(|x| x.1).collect();
        assert_eq!(m, [1, 2, 3]);
    }
}
