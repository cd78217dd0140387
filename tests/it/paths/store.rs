//! The path index through the store itself (`files_at`, `list_paths`), on
//! whichever database the suite runs: byte order (with the `-` before `/`
//! trap), non-ASCII, prefixes, start-after keys, limits, expiry, accounts.

use crate::common::meta::{account, commit, inline_file, stores};
use filestore::testing::db::{CommitOutcome, DynMetaStore, FileRow, Quota};
use filestore::testing::domain::filepath;

const NOW: i64 = 1_000_000;

/// Stores a file of `acc` at `folder`/`name`, made at `at`; its id.
async fn put(
    s: &DynMetaStore,
    acc: &str,
    (folder, name): (Option<&str>, &str),
    at: i64,
    expires_at: Option<i64>,
) -> String {
    let mut f = inline_file(acc, 0, 1, expires_at);
    f.folder = folder.map(str::to_string);
    f.name = name.to_string();
    f.created_at = at;
    let id = f.id.clone();
    let out = commit(s.clone(), f, Quota::UNLIMITED).await;
    assert!(matches!(out, CommitOutcome::Committed(_)), "{out:?}");
    id
}

fn paths(rows: &[FileRow]) -> Vec<String> {
    rows.iter()
        .map(|r| filepath::join(r.folder.as_deref(), &r.name))
        .collect()
}

async fn list(
    s: &DynMetaStore,
    acc: &str,
    prefix: Option<&str>,
    after: Option<&str>,
    limit: u32,
) -> Vec<String> {
    paths(&s.list_paths(acc, prefix, after, limit, NOW).await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paths_list_in_byte_order_from_any_key() {
    let (_dir, s) = stores(1).await;
    let s = &s[0];
    let acc = account(&**s).await;
    let other = account(&**s).await;
    // As (folder, name) pairs ("a", "b") comes before ("a-b", "c"); as paths
    // "a-b/c" comes first ('-' 0x2D < '/' 0x2F).
    for (i, at) in [
        (Some("a"), "b"),
        (Some("a-b"), "c"),
        (None, "a.b"),
        (None, "a"),
        (None, "ab"),
        (Some("é"), "x"),
        (None, "z"),
        (Some("my docs/ünï+%"), "a b.txt"),
        (Some("a"), "c"),
    ]
    .into_iter()
    .enumerate()
    {
        put(s, &acc, at, 1000 + i as i64, None).await;
    }
    // Another account's files are never listed.
    put(s, &other, (Some("a"), "a"), 1000, None).await;
    let all = [
        "a",
        "a-b/c",
        "a.b",
        "a/b",
        "a/c",
        "ab",
        "my docs/ünï+%/a b.txt",
        "z",
        "é/x",
    ];
    assert_eq!(list(s, &acc, None, None, 100).await, all);
    // Pages from any key, exclusive, of any size.
    assert_eq!(list(s, &acc, None, None, 3).await, all[..3]);
    assert_eq!(list(s, &acc, None, Some("a.b"), 3).await, all[3..6]);
    assert_eq!(list(s, &acc, None, Some("a/"), 100).await, all[3..]);
    assert_eq!(list(s, &acc, None, Some("z"), 100).await, all[8..]);
    assert!(list(s, &acc, None, Some("é/x"), 100).await.is_empty());
    // A key that is no path, with a NUL or past every path.
    assert_eq!(list(s, &acc, None, Some("a\0b"), 2).await, all[1..3]);
    assert!(list(s, &acc, None, Some("\u{10FFFF}"), 9).await.is_empty());
    // Prefixes, with and without a key.
    assert_eq!(list(s, &acc, Some("a/"), None, 100).await, all[3..5]);
    assert_eq!(list(s, &acc, Some("a"), None, 100).await, all[..6]);
    assert_eq!(list(s, &acc, Some("a"), Some("a.b"), 2).await, all[3..5]);
    assert_eq!(list(s, &acc, Some("a/"), Some("a/b"), 100).await, all[4..5]);
    assert_eq!(list(s, &acc, Some("a/"), Some("a0"), 100).await.len(), 0);
    assert_eq!(list(s, &acc, Some("my docs/"), None, 100).await, all[6..7]);
    assert_eq!(list(s, &acc, Some("é"), None, 100).await, all[8..]);
    assert!(list(s, &acc, Some("b"), None, 100).await.is_empty());
    // Skipping every path below a common prefix (a delimiter listing).
    let past = filepath::past_prefix("a/");
    assert_eq!(list(s, &acc, None, Some(&past), 2).await, all[5..7]);
    let past = filepath::past_prefix("a");
    assert_eq!(list(s, &acc, None, Some(&past), 100).await, all[6..]);
    assert_eq!(list(s, &other, None, None, 100).await, ["a/a"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_files_at_a_path_newest_first_and_listed_once() {
    let (_dir, s) = stores(1).await;
    let s = &s[0];
    let acc = account(&**s).await;
    let at = (Some("rel/v1"), "app.tar.gz");
    let first = put(s, &acc, at, 1000, None).await;
    let second = put(s, &acc, at, 2000, None).await;
    // The same instant: the greater id is the newer.
    let third = put(s, &acc, at, 2000, None).await;
    // The newest of all has expired: it is nowhere.
    put(s, &acc, at, 3000, Some(NOW - 1)).await;
    put(s, &acc, (Some("rel"), "v1"), 2500, None).await;
    put(s, &acc, (None, "app.tar.gz"), 2500, None).await;
    let rows = s
        .files_at(&acc, Some("rel/v1"), "app.tar.gz", NOW)
        .await
        .unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    let (lo, hi) = if second < third {
        (&second, &third)
    } else {
        (&third, &second)
    };
    assert_eq!(ids, [hi.as_str(), lo.as_str(), first.as_str()]);
    assert!(rows.iter().all(|r| r.account_id == acc));
    let root = s.files_at(&acc, None, "app.tar.gz", NOW).await.unwrap();
    assert_eq!(paths(&root), ["app.tar.gz"]);
    assert!(s
        .files_at(&acc, Some("rel"), "app.tar.gz", NOW)
        .await
        .unwrap()
        .is_empty());
    assert!(s
        .files_at(&acc, Some("rel/v1"), "app.tar.gz\0", NOW)
        .await
        .unwrap()
        .is_empty());
    // A listing gives the newest live file at each path, once.
    let page = s.list_paths(&acc, None, None, 10, NOW).await.unwrap();
    assert_eq!(paths(&page), ["app.tar.gz", "rel/v1", "rel/v1/app.tar.gz"]);
    assert_eq!(&page[2].id, hi);
    // Before its expiry, the expired one was the file at the path.
    let before = s
        .list_paths(&acc, Some("rel/v1/"), None, 10, NOW - 2)
        .await
        .unwrap();
    assert_eq!(before.len(), 1);
    assert_eq!(before[0].created_at, 3000);
}
