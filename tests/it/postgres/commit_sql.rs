//! `filestore_commit` (migration 0018), the one function that inserts into
//! `files`: called with several accounts at once against called for each
//! account alone, the same uploads
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
    /// Its `created_at`.
    at: i64,
}

const ACCOUNTS: [&str; 4] = ["acc_sql_a", "acc_sql_b", "acc_sql_c", "acc_sql_d"];

fn uploads() -> Vec<Up> {
    let up = |account, size, inline, token, max_storage, max_uploads| Up {
        account,
        size,
        inline,
        token,
        max_storage,
        max_uploads,
        at: if account == 2 { 2_000 } else { 1_000 },
    };
    vec![
        // a (two subscriptions): its token's one use, then the token spent,
        // then two without (one empty).
        up(0, 10, true, Some("tok_a"), 1000, 100),
        up(0, 10, true, Some("tok_a"), 1000, 100),
        up(0, 5, true, None, 1000, 100),
        up(0, 0, true, None, 1000, 100),
        // b (30 stored, one subscription): a guarded blob, a blob whose
        // guard is gone, the quota passed, the quota just met, a revoked
        // token.
        up(1, 20, false, None, 60, 100),
        up(1, 20, false, None, 60, 100),
        up(1, 20, true, None, 60, 100),
        up(1, 10, true, None, 60, 100),
        up(1, 1, true, Some("tok_b"), 1000, 100),
        // c (2 uploads this month; at 2 000, one resumable upload of 50
        // open, one that expired at 1 500 since the others' time): the
        // count with the open one, then past it; storage with what it
        // holds.
        up(2, 10, true, None, 1000, 4),
        up(2, 1, true, None, 1000, 4),
        up(2, 1, true, None, 60, 100),
        // d: its only upload refused.
        up(3, 1, true, None, 0, 100),
    ]
}

/// The accounts, tokens, subscriptions, guards and counts the uploads meet.
async fn setup(c: &impl GenericClient) {
    c.batch_execute(
        "INSERT INTO accounts (id, name, plan, storage_bytes, created_at) VALUES
             ('acc_sql_a', 'sql-a', 'free', 0, 1), ('acc_sql_b', 'sql-b', 'free', 30, 1),
             ('acc_sql_c', 'sql-c', 'free', 0, 1), ('acc_sql_d', 'sql-d', 'free', 0, 1);
         INSERT INTO upload_tokens (id, account_id, created_by, token_hash, max_uploads,
             created_at, expires_at, revoked_at) VALUES
             ('tok_a', 'acc_sql_a', 'k', '\\x01', 1, 1, 9999999999999, NULL),
             ('tok_b', 'acc_sql_b', 'k', '\\x02', 5, 1, 9999999999999, 2);
         INSERT INTO webhooks (id, account_id, url, events, secret, created_at) VALUES
             ('wh_a1', 'acc_sql_a', 'http://x', 'file.created,file.deleted', 's', 1),
             ('wh_a2', 'acc_sql_a', 'http://y', 'file.created', 's', 1),
             ('wh_b', 'acc_sql_b', 'http://w', 'file.created', 's', 1),
             ('wh_c', 'acc_sql_c', 'http://z', 'file.deleted', 's', 1);
         INSERT INTO blob_deletions (blob_key, due_at, owner) VALUES ('blob_4', 9999999999999, 1);
         INSERT INTO usage_periods (account_id, period, upload_count) VALUES
             ('acc_sql_c', '2026-11', 2);
         INSERT INTO tus_uploads (id, account_id, file_id, blob_key, length, name, private,
             hash_state, store_state, created_at, expires_at) VALUES
             ('tus_open', 'acc_sql_c', 'f_open', 'tb_open', 50, 'o', false, '', '', 1,
              9999999999999),
             ('tus_gone', 'acc_sql_c', 'f_gone', 'tb_gone', 500, 'g', false, '', '', 1, 5),
             ('tus_mid', 'acc_sql_c', 'f_mid', 'tb_mid', 7, 'm', false, '', '', 1, 1500);",
    )
    .await
    .unwrap();
}

/// One upload's outcome row.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    n: i32,
    code: Option<String>,
    detail: Option<String>,
    message: Option<String>,
    queued: i32,
}

/// The columns of `ups[range]` (of `account`s, each once, in order) as the
/// node binds them; bounded by `lock_timeout` when `several` (as the bus's).
async fn call(
    c: &impl GenericClient,
    ups: &[Up],
    range: std::ops::Range<usize>,
    several: bool,
) -> Result<Vec<Outcome>, tokio_postgres::Error> {
    call_at(c, ups, range, several, None).await
}

/// [`call`] with a path rule (`absent`, `replace`) for its one upload.
async fn call_at(
    c: &impl GenericClient,
    ups: &[Up],
    range: std::ops::Range<usize>,
    several: bool,
    rule: Option<&str>,
) -> Result<Vec<Outcome>, tokio_postgres::Error> {
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
    let at: Vec<i64> = part.iter().map(|u| u.at).collect();
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
    let ev: Vec<String> = range.clone().map(|i| format!("{{\"n\":{i}}}")).collect();
    let (n, t, m, sha) = (text("n"), text("text/plain"), text("{}"), text("00"));
    let period = "2026-11";
    let md5: Vec<Option<String>> = range.clone().map(|i| Some(format!("{i:032x}"))).collect();
    let (no_key, no_since): (Option<String>, Option<i64>) = (None, None);
    // A path rule (migration 0020) goes with one upload alone.
    let at_path: Vec<Option<String>> = part.iter().map(|_| rule.map(String::from)).collect();
    let kept_ms = 300_000i64;
    // No S3 attributes (migration 0023).
    let attrs: Vec<Option<String>> = part.iter().map(|_| None).collect();
    let params: [&(dyn ToSql + Sync); 29] = [
        &names, &ends, &ids, &n, &folder, &size, &t, &private, &sha, &md5, &blob, &at, &expires,
        &inline, &m, &attrs, &data, &ev, &period, &token, &storage, &count, &no_key, &no_since,
        &false, &false, &several, &at_path, &kept_ms,
    ];
    let rows = c
        .query(
            "SELECT n, code, detail, message, queued FROM filestore_commit(
                $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29)",
            &params,
        )
        .await?;
    let start = i32::try_from(range.start).unwrap();
    Ok(rows
        .iter()
        .map(|r| Outcome {
            n: start + r.get::<_, i32>(0),
            code: r.get(1),
            detail: r.get(2),
            message: r.get(3),
            queued: r.get(4),
        })
        .collect())
}

/// What the commits left, as text (every row the uploads could touch).
async fn state(c: &impl GenericClient) -> Vec<String> {
    let mut out = Vec::new();
    for sql in [
        "SELECT id || ' ' || storage_bytes || ' ' || file_count FROM accounts ORDER BY id",
        // Each account's count is its files (migrations 0021, 0029).
        "SELECT 'miscounted ' || id FROM accounts a
             WHERE file_count <> (SELECT count(*) FROM files f WHERE f.account_id = a.id)",
        "SELECT account_id || ' ' || upload_count FROM usage_periods ORDER BY account_id",
        "SELECT id || ' ' || account_id || ' ' || size || ' ' || inline || ' ' || md5
             FROM files ORDER BY id",
        "SELECT blob_key FROM inline_blobs ORDER BY blob_key",
        "SELECT blob_key FROM blob_deletions ORDER BY blob_key",
        "SELECT id || ' ' || uploads_used FROM upload_tokens ORDER BY id",
        "SELECT file_id || ' ' || webhook_id || ' ' || type || ' ' || data || ' '
             || created_at || ' ' || next_at FROM webhook_events ORDER BY file_id, webhook_id",
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
    // The call's setting does not outlive it: a delete after it in the
    // same transaction is counted.
    tx.execute("DELETE FROM files WHERE id = 'file_0'", &[])
        .await
        .unwrap();
    assert!(
        !state(&tx).await.iter().any(|r| r.starts_with("miscounted")),
        "a delete after the call is counted"
    );
    tx.rollback().await.unwrap();

    let tx = c.transaction().await.unwrap();
    let mut alone = Vec::new();
    for range in [0..4, 4..9, 9..12, 12..13] {
        alone.extend(call(&tx, &ups, range, false).await.unwrap());
    }
    let after_alone = state(&tx).await;
    tx.rollback().await.unwrap();

    assert_eq!(together, alone);
    assert_eq!(after_together, after_alone);
    assert!(!after_together.iter().any(|r| r.starts_with("miscounted")));
    let codes: Vec<Option<&str>> = together.iter().map(|o| o.code.as_deref()).collect();
    let (fs1, fs2, fs3) = (Some("FS001"), Some("FS002"), Some("FS003"));
    assert_eq!(
        codes,
        [None, fs2, None, None, None, fs3, fs1, None, fs2, None, fs1, fs1, fs1]
    );
    // The quota's DETAIL: stored, counted, reserved and pending then.
    let detail = |i: usize| together[i].detail.as_deref();
    assert_eq!(detail(6), Some("50 1 0 0"));
    assert_eq!(detail(10), Some("10 3 50 1"));
    assert_eq!(detail(11), Some("10 3 50 1"));
    assert_eq!(detail(12), Some("0 0 0 0"));
    // a's two subscriptions to file.created, b's one, c's none.
    let queued: Vec<i32> = together.iter().map(|o| o.queued).collect();
    assert_eq!(queued, [2, 0, 2, 2, 1, 0, 0, 1, 0, 0, 0, 0, 0]);
    for row in [
        "acc_sql_a 15 3",
        "acc_sql_b 60 2",
        "acc_sql_c 10 1",
        "acc_sql_d 0 0",
        "acc_sql_a 3",
        "acc_sql_b 2",
        "acc_sql_c 3",
        "tok_a 1",
        "tok_b 0",
        "file_7 wh_b file.created {\"n\":7} 1000 1000",
        "file_7 acc_sql_b 10 true 00000000000000000000000000000007",
    ] {
        assert!(
            after_together.contains(&row.to_string()),
            "{row} in {after_together:?}"
        );
    }
    assert_eq!(
        after_together
            .iter()
            .filter(|r| r.contains(" file.created "))
            .count(),
        8
    );
}

/// An upload with a path rule is judged before its rows are written (its
/// check of the path must not see itself) and counted by the triggers; one
/// without is written first and counted by the call (migration 0029): the
/// counts stay each account's files either way, refusals included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_rule_is_judged_before_its_rows_and_every_file_is_counted_once() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let c = stores[0].pool().get().await.unwrap();
    setup(&c).await;
    let ups = uploads();
    // Uploads 2 and 3 are a's, both at the path "n"; d's only upload is
    // refused (a quota of 0) without a rule: nothing of it left.
    for (range, rule, code) in [
        (2..3, Some("absent"), None),
        (3..4, Some("absent"), Some("FS004")),
        (3..4, Some("replace"), None),
        (12..13, None, Some("FS001")),
    ] {
        let outcome = call_at(&c, &ups, range.clone(), false, rule).await.unwrap();
        assert_eq!(outcome[0].code.as_deref(), code, "{range:?} {rule:?}");
    }
    let after = state(&c).await;
    for row in [
        "acc_sql_a 0 1",
        "acc_sql_d 0 0",
        "file_3 acc_sql_a 0 true 00000000000000000000000000000003",
    ] {
        assert!(after.contains(&row.to_string()), "{row} in {after:?}");
    }
    assert!(
        !after.iter().any(|r| r.starts_with("miscounted")),
        "{after:?}"
    );
    // The replaced file and the refused one's rows are gone; the replaced
    // one's events stay (created, then deleted).
    assert!(!after
        .iter()
        .any(|r| r.starts_with("file_2 acc_") || r.starts_with("file_12 acc_")));
    assert!(after
        .iter()
        .any(|r| r.starts_with("file_2 wh_a1 file.deleted ")));
    assert!(!after.contains(&"blob_12".to_string()), "{after:?}");
}

/// A call writes its rows before it waits for its accounts' rows (migration
/// 0029), so another node's commit in its turn holds up only the judging;
/// but not while someone waits to take a row `FOR UPDATE` (an account's
/// removal, a node of an older release): then it locks first, as before,
/// and queues behind that waiter instead of keeping it waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_go_before_the_lock_unless_someone_waits_for_the_row_for_update() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let pool = stores[0].pool().clone();
    setup(&pool.get().await.unwrap()).await;
    let watch = pool.get().await.unwrap();
    // c's uploads, a different one each time (their ids are their places).
    for (removal_waits, range) in [(false, 9..10), (true, 10..11)] {
        // Another node's commit in its turn.
        let mut holder = pool.get().await.unwrap();
        let hold = holder.transaction().await.unwrap();
        hold.execute(
            "SELECT 1 FROM accounts WHERE id = 'acc_sql_c' FOR NO KEY UPDATE",
            &[],
        )
        .await
        .unwrap();
        let remover = removal_waits.then(|| {
            let pool = pool.clone();
            tokio::spawn(async move {
                let mut c = pool.get().await.unwrap();
                let tx = c.transaction().await.unwrap();
                tx.execute(
                    "SELECT 1 FROM accounts WHERE id = 'acc_sql_c' FOR UPDATE",
                    &[],
                )
                .await
                .unwrap();
                tx.rollback().await.unwrap();
            })
        });
        if removal_waits {
            let tuple_waiter = "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'tuple'
                AND relation = 'accounts'::regclass AND mode = 'AccessExclusiveLock')";
            assert!(until(&watch, tuple_waiter, &[]).await, "the removal waits");
        }
        let caller = pool.get().await.unwrap();
        let pid: i32 = caller
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .unwrap()
            .get(0);
        let statement = tokio::spawn(async move {
            call(&caller, &uploads(), range, false)
                .await
                .map(|outcomes| outcomes.len())
        });
        let waits = "SELECT EXISTS (SELECT 1 FROM pg_stat_activity
                     WHERE pid = $1 AND wait_event_type = 'Lock')";
        assert!(
            until(&watch, waits, &[&pid]).await,
            "the call waits for c's row"
        );
        let wrote_first: bool = watch
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1
                     AND relation = 'files'::regclass AND mode = 'RowExclusiveLock')",
                &[&pid],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(
            wrote_first, !removal_waits,
            "removal waits: {removal_waits}"
        );
        hold.rollback().await.unwrap();
        if let Some(remover) = remover {
            remover.await.unwrap();
        }
        assert_eq!(statement.await.unwrap().unwrap(), 1);
    }
}

/// Whether `sql` (one boolean) comes true within 10 s, asked every ms.
async fn until(c: &impl GenericClient, sql: &str, params: &[&(dyn ToSql + Sync)]) -> bool {
    for _ in 0..10_000 {
        if c.query_one(sql, params).await.unwrap().get::<_, bool>(0) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    false
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

/// An account row held past `lock_timeout` is named even when another
/// transaction, queued on an account the statement had locked before it,
/// takes that row the moment the statement lets go of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_account_is_named_though_a_waiter_takes_an_earlier_one() {
    let Some((_dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let pool = stores[0].pool().clone();
    let mut holder = pool.get().await.unwrap();
    setup(&holder).await;
    let hold = holder.transaction().await.unwrap();
    hold.execute(
        "SELECT 1 FROM accounts WHERE id = 'acc_sql_c' FOR UPDATE",
        &[],
    )
    .await
    .unwrap();
    // Every connection open before the statement starts: the waiter must
    // queue within its 100 ms (a try whose statement gave up before the
    // waiter saw it wait is made again).
    let watch = pool.get().await.unwrap();
    let waiting = "SELECT count(*) FROM pg_stat_activity
                   WHERE wait_event_type = 'Lock' AND datname = current_database()";
    // The lock waiters on this database now, until the statement ends:
    // whether `n` of them were seen while it ran.
    let waiters_seen = |statement: &tokio::task::JoinHandle<_>, n: i64| {
        let finished = statement.is_finished();
        let watch = &watch;
        async move {
            !finished
                && watch
                    .query_one(waiting, &[])
                    .await
                    .unwrap()
                    .get::<_, i64>(0)
                    >= n
        }
    };
    for _ in 0..5 {
        let second = pool.get().await.unwrap();
        let statement: tokio::task::JoinHandle<Result<Vec<Outcome>, tokio_postgres::Error>> = {
            let pool = pool.clone();
            tokio::spawn(async move {
                let c = pool.get().await.unwrap();
                call(&c, &uploads(), 0..13, true).await
            })
        };
        // Once the statement waits on c's row (holding a's and b's), a's
        // gets a waiter of its own; the try counts when both were seen
        // waiting at once.
        while !statement.is_finished() && !waiters_seen(&statement, 1).await {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        let waiter = tokio::spawn(async move {
            let mut second = second;
            let tx = second.transaction().await.unwrap();
            tx.execute(
                "SELECT 1 FROM accounts WHERE id = 'acc_sql_a' FOR UPDATE",
                &[],
            )
            .await
            .unwrap();
            // Held while the statement's handler looks for the culprit.
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            tx.rollback().await.unwrap();
        });
        let mut raced = false;
        while !statement.is_finished() {
            if waiters_seen(&statement, 2).await {
                raced = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        let err = statement
            .await
            .unwrap()
            .expect_err("a lock held past lock_timeout");
        waiter.await.unwrap();
        let db = err.as_db_error().expect("a database error");
        assert_eq!(
            db.code(),
            &tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE
        );
        assert_eq!(db.detail(), Some("acc_sql_c"));
        if raced {
            hold.rollback().await.unwrap();
            return;
        }
    }
    panic!("the statement never waited long enough for a waiter to queue");
}
