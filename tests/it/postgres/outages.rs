//! The database cut off: a node's session cut holds its lock again; an
//! unreachable database is 503 and the node recovers.

use super::*;

/// A node whose own session is cut (a database restart, a network cut)
/// takes its lock again on a new session, so that other nodes starting
/// never take it for gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_session_is_cut_holds_its_lock_again() {
    let Some((dir, stores)) = nodes(1).await else {
        return skipped();
    };
    let url = pg::database_for(dir.path()).await.unwrap();
    let holders = |url: &str| {
        pg::text(
            url,
            &format!(
                "SELECT COALESCE(string_agg(pid::TEXT || ':' || objid::TEXT, ','), '') FROM pg_locks
                 WHERE locktype = 'advisory' AND classid = {} AND objsubid = 2
                   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                0x6673_6e64
            ),
        )
    };
    let before = holders(&url);
    let (pid, node) = before.split_once(':').expect("the node holds its lock");
    pg::text(&url, &format!("SELECT pg_terminate_backend({pid})::TEXT"));
    let mut after = String::new();
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        after = holders(&url);
        if !after.is_empty() {
            break;
        }
    }
    let (new_pid, new_node) = after.split_once(':').expect("the lock is held again");
    assert_eq!(new_node, node, "the same node number");
    assert_ne!(new_pid, pid, "on a new session");
    drop(stores);
}

/// The database unreachable: requests that need it get 503 `unavailable`
/// (worth a retry), health says `degraded`, and once it is back the node
/// serves again by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_database_is_503_and_the_node_recovers() {
    let Some(admin) = pg::admin_url() else {
        return skipped();
    };
    let srv = TestServer::start().await;
    let name = pg::text(srv.database_url(), "SELECT current_database()::TEXT");
    let cut = |allow: bool| {
        pg::execute(
            &admin,
            &format!("ALTER DATABASE {name} WITH ALLOW_CONNECTIONS {allow}"),
        );
        if !allow {
            pg::text(
                &admin,
                &format!(
                    "SELECT COUNT(pg_terminate_backend(pid))::TEXT FROM pg_stat_activity
                     WHERE datname = '{name}'"
                ),
            );
        }
    };
    cut(false);
    let (status, body) = srv.get_json(&srv.secret_key, "/v1/files").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (503, Some("unavailable")),
        "{body}"
    );
    let r = srv.http.get(srv.url("/v1/health")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    cut(true);
    let mut status = 0;
    for _ in 0..50 {
        (status, _) = srv.get_json(&srv.secret_key, "/v1/files").await;
        if status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "served again once the database is back");
}
