//! The metadata stores keep a file's attributes (`files.attrs`, NULL when
//! empty) through every read, the rename/move by UPDATE, and the events'
//! durable form, including those PostgreSQL writes in SQL (a replace's
//! `file.deleted` in `filestore_commit`, a folder delete's batch).

use super::every_attr;
use crate::common::meta::{account, commit, inline_file, stores, webhook};
use crate::common::pg;
use filestore::testing::db::{
    CommitContext, CommitOutcome, DynMetaStore, FileChange, FileRow, FolderFilter, ListFilter,
    Quota,
};
use filestore::testing::domain::filepath::AtPath;
use filestore::testing::domain::object::ObjectAttrs;
use filestore::testing::domain::webhooks::Budget;
use std::collections::BTreeMap;
use std::path::Path;

/// File number `i` of `account` at `folder/name` with `attrs`.
fn file(account: &str, i: usize, at: (&str, &str), attrs: ObjectAttrs) -> FileRow {
    let mut f = inline_file(account, i, 3, None);
    f.folder = Some(at.0.into());
    f.name = at.1.into();
    f.attrs = attrs;
    f
}

/// Every event due, each marked done once claimed (so a file's next one
/// comes): (file id, kind) → the file as the event carries it.
async fn drain(s: &DynMetaStore) -> BTreeMap<(String, String), FileRow> {
    let mut out = BTreeMap::new();
    for round in 0..10 {
        let at = 10_000 + round;
        let claimed = s
            .claim_events(at, at + 60_000, &Budget::new(100, 100))
            .await
            .unwrap();
        if claimed.is_empty() {
            break;
        }
        for e in claimed {
            s.event_done(e.seq).await.unwrap();
            out.insert((e.file.id.clone(), e.kind.clone()), e.file);
        }
    }
    out
}

/// The number `sql` counts, on the database of `dir`'s stores.
async fn count(dir: &Path, sql: &str) -> i64 {
    match pg::database_for(dir).await {
        Some(url) => pg::count(&url, sql),
        None => rusqlite::Connection::open(dir.join("filestore.db"))
            .unwrap()
            .query_row(sql, [], |r| r.get(0))
            .unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_files_attributes_read_back_through_every_read_and_event() {
    let (dir, s) = stores(1).await;
    let s = &s[0];
    let acc = account(&**s).await;
    webhook(s, &acc, &["file.created", "file.updated", "file.deleted"]).await;
    let attrs = every_attr();
    let f = file(&acc, 0, ("b", "k.txt"), attrs.clone());
    let g = file(&acc, 1, ("c", "g.txt"), attrs.clone());
    let plain = file(&acc, 2, ("b", "p.txt"), ObjectAttrs::default());
    for x in [&f, &g, &plain] {
        let out = commit(s.clone(), x.clone(), Quota::UNLIMITED).await;
        assert!(matches!(out, CommitOutcome::Committed(c) if c == *x));
    }
    // Kept as compact JSON; NULL when empty.
    let nulls = "SELECT COUNT(*) FROM files WHERE attrs IS NULL";
    assert_eq!(count(dir.path(), nulls).await, 1);
    let exact = format!(
        "SELECT COUNT(*) FROM files WHERE attrs = '{}'",
        attrs.stored().unwrap()
    );
    assert_eq!(count(dir.path(), &exact).await, 2);

    let now = 5_000;
    let got = |r: Option<FileRow>| r.expect("the file").attrs;
    assert_eq!(got(s.file(&acc, &f.id, now).await.unwrap()), attrs);
    assert_eq!(
        got(s.file(&acc, &plain.id, now).await.unwrap()),
        ObjectAttrs::default()
    );
    let at = s.files_at(&acc, Some("b"), "k.txt", now).await.unwrap();
    assert_eq!(at.iter().map(|r| &r.attrs).collect::<Vec<_>>(), [&attrs]);
    let paths = s.list_paths(&acc, None, None, 10, now).await.unwrap();
    let by_id = |rows: &[FileRow]| -> BTreeMap<String, ObjectAttrs> {
        rows.iter()
            .map(|r| (r.id.clone(), r.attrs.clone()))
            .collect()
    };
    let want = BTreeMap::from([
        (f.id.clone(), attrs.clone()),
        (g.id.clone(), attrs.clone()),
        (plain.id.clone(), ObjectAttrs::default()),
    ]);
    assert_eq!(by_id(&paths), want);
    let all = ListFilter {
        folder: FolderFilter::All,
        metadata: Vec::new(),
    };
    let page = s.page(&acc, &all, None, 10, now).await.unwrap();
    assert_eq!(by_id(&page), want);
    let (row, data) = s.file_with_data(&acc, &f.id, now).await.unwrap().unwrap();
    assert_eq!(
        (row.attrs, data.as_deref()),
        (attrs.clone(), Some(&b"xxx"[..]))
    );
    let (row, data) = s
        .file_at_with_data(&acc, Some("b"), "k.txt", now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (row.attrs, data.as_deref()),
        (attrs.clone(), Some(&b"xxx"[..]))
    );

    // Renamed and moved by one UPDATE: kept.
    let change = FileChange {
        name: Some("k2.txt".into()),
        moves: true,
        folder: Some("b2".into()),
        private: Some(true),
    };
    let moved = s.update_file(&acc, &f.id, change, now).await.unwrap();
    assert_eq!(got(moved), attrs);
    assert_eq!(got(s.file(&acc, &f.id, now).await.unwrap()), attrs);

    // Replaced at its path (PostgreSQL writes the replaced file's event in
    // SQL), and a folder deleted (a batch written in SQL).
    let r = file(&acc, 3, ("b2", "k2.txt"), ObjectAttrs::default());
    let ctx = CommitContext {
        period: "2026-11".into(),
        at_path: AtPath::Replace,
        ..Default::default()
    };
    let data = bytes::Bytes::from_static(b"xxx");
    let out = s
        .commit_upload(r.clone(), Some(data), Quota::UNLIMITED, ctx)
        .await
        .unwrap();
    assert!(matches!(&out, CommitOutcome::Replaced(_, gone) if *gone == [f.id.clone()]));
    assert_eq!(s.delete_folder(&acc, "c", now).await.unwrap(), 1);

    let events = drain(s).await;
    let kinds: Vec<_> = events.keys().collect();
    let carried = |id: &str, kind: &str| {
        let key = (id.to_string(), kind.to_string());
        events
            .get(&key)
            .unwrap_or_else(|| panic!("no {kind} of {id} in {kinds:?}"))
            .attrs
            .clone()
    };
    for kind in ["file.created", "file.updated", "file.deleted"] {
        assert_eq!(carried(&f.id, kind), attrs, "{kind}");
    }
    for kind in ["file.created", "file.deleted"] {
        assert_eq!(carried(&g.id, kind), attrs, "{kind}");
    }
    assert_eq!(carried(&plain.id, "file.created"), ObjectAttrs::default());
    assert_eq!(carried(&r.id, "file.created"), ObjectAttrs::default());
}
