//! Rows straight into a metadata store (no server), for the tests of the
//! stores' own rules on either database (`postgres`, `outbox`).

use super::pg;
use filestore::testing::config::DEFAULT_STATEMENT_TIMEOUT;
use filestore::testing::db::{
    Account, CommitContext, CommitOutcome, DynMetaStore, FileRow, MetaStore, Quota, UploadRow,
    WebhookRow,
};

/// A new account (on the free plan) in `store`; its id.
pub async fn account(store: &dyn MetaStore) -> String {
    let id = filestore::testing::domain::ids::account_id();
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
    let id = filestore::testing::domain::ids::file_id();
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
        md5: None,
        created_at: 1000 + i as i64,
        expires_at,
        inline: true,
        metadata: std::collections::BTreeMap::new(),
        attrs: filestore::testing::domain::object::ObjectAttrs::default(),
        damaged_at: None,
        crc32: None,
    }
}

/// Commits inline file `f` (its bytes made up) in period 2026-11.
pub async fn commit(store: DynMetaStore, f: FileRow, limits: Quota) -> CommitOutcome {
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

/// `n` stores on one new database (on SQLite: one file, `n` handles).
pub async fn stores(n: usize) -> (tempfile::TempDir, Vec<DynMetaStore>) {
    let dir = tempfile::tempdir().unwrap();
    let url = pg::database_for(dir.path()).await;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(
            filestore::testing::db::open(dir.path(), url.as_deref(), DEFAULT_STATEMENT_TIMEOUT)
                .await
                .unwrap(),
        );
    }
    (dir, out)
}

/// A subscription of `account` to `events` (at an address nothing answers).
pub async fn webhook(store: &DynMetaStore, account: &str, events: &[&str]) -> String {
    let id = filestore::testing::domain::ids::webhook_id();
    store
        .create_webhook(WebhookRow {
            id: id.clone(),
            account_id: account.into(),
            url: "http://127.0.0.1:9/".into(),
            events: events.iter().map(ToString::to_string).collect(),
            secret: filestore::testing::domain::secret::Secret::new(
                filestore::testing::domain::webhooks::new_secret(),
            ),
            created_at: 1,
        })
        .await
        .unwrap();
    id
}

/// A resumable upload `id` of `account` created by `created_by` at 1 000,
/// expiring at `expires_at`.
pub fn upload(account: &str, id: &str, created_by: &str, expires_at: i64) -> UploadRow {
    UploadRow {
        id: id.into(),
        account_id: account.into(),
        file_id: format!("f_{id}"),
        blob_key: format!("{account}/f_{id}"),
        length: 10,
        received: 0,
        name: "x".into(),
        content_type: None,
        folder: None,
        private: false,
        expires_ms: None,
        hash_state: String::new(),
        md5_state: None,
        store_state: String::new(),
        created_at: 1_000,
        expires_at,
        completed_at: None,
        idempotency_key: None,
        created_by: Some(created_by.into()),
        idle_ms: 600_000,
        metadata: std::collections::BTreeMap::new(),
        at_path: filestore::testing::domain::filepath::AtPath::default(),
    }
}
