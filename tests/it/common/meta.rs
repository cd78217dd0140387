//! Rows straight into a metadata store (no server), for the tests of the
//! stores' own rules on either database (`postgres`, `outbox`).

use filestore::db::{
    Account, CommitContext, CommitLimits, CommitOutcome, DynMetaStore, FileRow, MetaStore,
};

/// A new account (on the free plan) in `store`; its id.
pub async fn account(store: &dyn MetaStore) -> String {
    let id = filestore::domain::ids::account_id();
    let created = store
        .create_account(Account {
            id: id.clone(),
            name: format!("n-{id}"),
            plan: "free".into(),
            grace_period: false,
            storage_bytes: 0,
            created_at: 1,
        })
        .await
        .unwrap();
    assert!(created);
    id
}

/// File number `i` of `account`, `size` bytes inline, made at 1000 + `i`.
pub fn inline_file(account: &str, i: usize, size: u64, expires_at: Option<i64>) -> FileRow {
    let id = filestore::domain::ids::file_id();
    FileRow {
        blob_key: format!("{account}/{id}"),
        id,
        account_id: account.into(),
        name: format!("f{i}"),
        folder: None,
        size,
        content_type: "text/plain".into(),
        private: false,
        sha256: String::new(),
        created_at: 1000 + i as i64,
        expires_at,
        inline: true,
    }
}

/// Commits inline file `f` (its bytes made up) in period 2026-11.
pub async fn commit(store: DynMetaStore, f: FileRow, limits: CommitLimits) -> CommitOutcome {
    let data = bytes::Bytes::from(vec![b'x'; f.size as usize]);
    store
        .commit_upload(
            f,
            Some(data),
            limits,
            CommitContext {
                period: "2026-11".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap()
}
