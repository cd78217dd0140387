//! `filestore_commit_accounts` (migration 0016) against
//! `filestore_commit_uploads` (0013) run for each account: the same uploads
//! of several accounts, every kind of outcome among them (a token used and
//! then spent, a revoked token, a guard gone, the storage quota with and
//! without what resumable uploads hold, the monthly count), give the same
//! outcomes and leave the same rows; and a held token names its account.

use super::*;
use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;

/// One upload's columns, as the node sends them.
struct Up {
    account: usize,
    size: i64,
    inline: bool,
    token: Option<&'static str>,
    max_storage: i64,
    max_uploads: i64,
}

const ACCOUNTS: [&str; 3] = ["acc_sql_a", "acc_sql_b", "acc_sql_c"];

fn uploads() -> Vec<Up> {
    let up = |account, size, inline, token, max_storage, max_uploads| Up {
        account,
        size,
        inline,
        token,
        max_storage,
        max_uploads,
    };
    vec![
        // a: its token's one use, then the token spent, then one without.
        up(0, 10, true, Some("tok_a"), 1000, 100),
        up(0, 10, true, Some("tok_a"), 1000, 100),
        up(0, 5, true, None, 1000, 100),
        // b (30 stored): a guarded blob, a blob whose guard is gone, the
        // quota passed, the quota just met, a revoked token.
        up(1, 20, false, None, 60, 100),
        up(1, 20, false, None, 60, 100),
        up(1, 20, true, None, 60, 100),
        up(1, 10, true, None, 60, 100),
        up(1, 1, true, Some("tok_b"), 1000, 100),
        // c (2 uploads this month, one resumable upload of 50 open): the
        // count with the open one, then past it; storage with what it holds.
        up(2, 10, true, None, 1000, 4),
        up(2, 1, true, None, 1000, 4),
        up(2, 1, true, None, 60, 100),
    ]
}

/// The accounts, tokens, subscriptions, guards and counts the uploads meet.
async fn setup(c: &impl GenericClient) {
    c.batch_execute(
        "INSERT INTO accounts (id, name, plan, storage_bytes, created_at) VALUES
             ('acc_sql_a', 'sql-a', 'free', 0, 1), ('acc_sql_b', 'sql-b', 'free', 30, 1),
             ('acc_sql_c', 'sql-c', 'free', 0, 1);
         INSERT INTO upload_tokens (id, account_id, created_by, token_hash, max_uploads,
             created_at, expires_at, revoked_at) VALUES
             ('tok_a', 'acc_sql_a', 'k', '\\x01', 1, 1, 9999999999999, NULL),
             ('tok_b', 'acc_sql_b', 'k', '\\x02', 5, 1, 9999999999999, 2);
         INSERT INTO webhooks (id, account_id, url, events, secret, created_at) VALUES
             ('wh_a1', 'acc_sql_a', 'http://x', 'file.created,file.deleted', 's', 1),
             ('wh_a2', 'acc_sql_a', 'http://y', 'file.created', 's', 1),
             ('wh_c', 'acc_sql_c', 'http://z', 'file.deleted', 's', 1);
         INSERT INTO blob_deletions (blob_key, due_at, owner) VALUES ('blob_3', 9999999999999, 1);
         INSERT INTO usage_periods (account_id, period, upload_count) VALUES
             ('acc_sql_c', '2026-11', 2);
         INSERT INTO tus_uploads (id, account_id, file_id, blob_key, length, name, private,
             hash_state, store_state, created_at, expires_at) VALUES
             ('tus_open', 'acc_sql_c', 'f_open', 'tb_open', 50, 'o', false, '', '', 1,
              9999999999999),
             ('tus_gone', 'acc_sql_c', 'f_gone', 'tb_gone', 500, 'g', false, '', '', 1, 5);",
    )
    .await
    .unwrap();
}

/// The columns of `ups[range]` (of `account`s, each once, in order) as the
/// node binds them; `accounts` and `ends` first when `several`.
async fn call(
    c: &impl GenericClient,
    ups: &[Up],
    range: std::ops::Range<usize>,
    several: bool,
) -> Result<Vec<(i32, Option<String>, Option<String>, i32)>, tokio_postgres::Error> {
    let ids: Vec<String> = range.clone().map(|i| format!("file_{i}")).collect();
    let part = &ups[range.clone()];
    let mut names = Vec::new();
    let mut ends = Vec::new();
    for (k, u) in part.iter().enumerate() {
        let name = ACCOUNTS[u.account].to_string();
        if names.last() == Some(&name) {
            *ends.last_mut().unwrap() += 1;
        } else {
            names.push(name);
            ends.push(i32::try_from(k).unwrap() + 1);
        }
    }
    let text = |s: &str| -> Vec<String> { part.iter().map(|_| s.to_string()).collect() };
    let folder: Vec<Option<String>> = part.iter().map(|_| None).collect();
    let size: Vec<i64> = part.iter().map(|u| u.size).collect();
    let private: Vec<bool> = part.iter().map(|_| false).collect();
    let blob: Vec<String> = range.clone().map(|i| format!("blob_{i}")).collect();
    let at: Vec<i64> = part.iter().map(|_| 1_000).collect();
    let expires: Vec<Option<i64>> = part.iter().map(|_| None).collect();
    let inline: Vec<bool> = part.iter().map(|u| u.inline).collect();
    let data: Vec<Option<Vec<u8>>> = part
        .iter()
        .map(|u| {
            u.inline
                .then(|| vec![b'x'; usize::try_from(u.size).unwrap()])
        })
        .collect();
    let token: Vec<Option<String>> = part.iter().map(|u| u.token.map(String::from)).collect();
    let storage: Vec<i64> = part.iter().map(|u| u.max_storage).collect();
    let count: Vec<i64> = part.iter().map(|u| u.max_uploads).collect();
    let (n, t, m, sha, ev) = (
        text("n"),
        text("text/plain"),
        text("{}"),
        text("00"),
        text("{}"),
    );
    let period = "2026-11";
    let columns: [&(dyn ToSql + Sync); 18] = [
        &ids, &n, &folder, &size, &t, &private, &sha, &blob, &at, &expires, &inline, &m, &data,
        &ev, &period, &token, &storage, &count,
    ];
    let rows = if several {
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&names, &ends];
        params.extend(columns);
        c.query(
            "SELECT n, code, detail, message, queued FROM filestore_commit_accounts(
                $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                $18, $19, $20)",
            &params,
        )
        .await?
    } else {
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&ids, &names[0]];
        params.extend(&columns[1..]);
        c.query(
            "SELECT n, code, detail, message, queued FROM filestore_commit_uploads(
                $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                $18, $19)",
            &params,
        )
        .await?
    };
    let start = i32::try_from(range.start).unwrap();
    Ok(rows
        .iter()
        .map(|r| (start + r.get::<_, i32>(0), r.get(1), r.get(2), r.get(4)))
        .collect())
}

/// What the commits left, as text (every row the uploads could touch).
async fn state(c: &impl GenericClient) -> Vec<String> {
    let mut out = Vec::new();
    for sql in [
        "SELECT id || ' ' || storage_bytes FROM accounts ORDER BY id",
        "SELECT account_id || ' ' || upload_count FROM usage_periods ORDER BY account_id",
        "SELECT id || ' ' || account_id || ' ' || size || ' ' || inline FROM files ORDER BY id",
        "SELECT blob_key FROM inline_blobs ORDER BY blob_key",
        "SELECT blob_key FROM blob_deletions ORDER BY blob_key",
        "SELECT id || ' ' || uploads_used FROM upload_tokens ORDER BY id",
        "SELECT file_id || ' ' || webhook_id || ' ' || type FROM webhook_events
         ORDER BY file_id, webhook_id",
    ] {
        for r in c.query(sql, &[]).await.unwrap() {
            out.push(r.get(0));
        }
        out.push("--".into());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_accounts_at_once_judge_and_write_as_each_alone() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let mut c = stores[0].pool().get().await.unwrap();
    setup(&c).await;
    let ups = uploads();

    let tx = c.transaction().await.unwrap();
    let together = call(&tx, &ups, 0..ups.len(), true).await.unwrap();
    let after_together = state(&tx).await;
    tx.rollback().await.unwrap();

    let tx = c.transaction().await.unwrap();
    let mut alone = Vec::new();
    for range in [0..3, 3..8, 8..11] {
        alone.extend(call(&tx, &ups, range, false).await.unwrap());
    }
    let after_alone = state(&tx).await;
    tx.rollback().await.unwrap();

    assert_eq!(together, alone);
    assert_eq!(after_together, after_alone);
    let codes: Vec<Option<&str>> = together.iter().map(|o| o.1.as_deref()).collect();
    assert_eq!(
        codes,
        [
            None,
            Some("FS002"),
            None,
            None,
            Some("FS003"),
            Some("FS001"),
            None,
            Some("FS002"),
            None,
            Some("FS001"),
            Some("FS001"),
        ]
    );
    // The quota's DETAIL: stored, counted, reserved and pending then.
    assert_eq!(together[5].2.as_deref(), Some("50 1 0 0"));
    assert_eq!(together[10].2.as_deref(), Some("10 3 50 1"));
    assert_eq!(together[9].2.as_deref(), Some("10 3 50 1"));
    // a's two subscriptions to file.created, each of a's two files.
    let queued: Vec<i32> = together.iter().map(|o| o.3).collect();
    assert_eq!(queued, [2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert!(after_together.contains(&"acc_sql_b 60".to_string()));
    assert!(after_together.contains(&"acc_sql_c 3".to_string()));
    assert!(after_together.contains(&"tok_a 1".to_string()));
    assert_eq!(
        after_together
            .iter()
            .filter(|r| r.ends_with("file.created"))
            .count(),
        4
    );
}

/// An upload token held by another transaction past `lock_timeout`: the
/// statement fails as a whole (nothing written) and names the token's
/// account, not the first of the statement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_token_names_its_own_account() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let mut holder = stores[0].pool().get().await.unwrap();
    setup(&holder).await;
    let hold = holder.transaction().await.unwrap();
    hold.execute(
        "SELECT 1 FROM upload_tokens WHERE id = 'tok_b' FOR UPDATE",
        &[],
    )
    .await
    .unwrap();
    let c = stores[0].pool().get().await.unwrap();
    let ups = uploads();
    let err = call(&c, &ups, 0..ups.len(), true)
        .await
        .expect_err("a lock held past lock_timeout");
    let db = err.as_db_error().expect("a database error");
    assert_eq!(
        db.code(),
        &tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE
    );
    assert_eq!(db.detail(), Some("acc_sql_b"));
    hold.rollback().await.unwrap();
    let stored = c
        .query_one("SELECT count(*) FROM files", &[])
        .await
        .unwrap()
        .get::<_, i64>(0);
    assert_eq!(stored, 0, "nothing written");
}
