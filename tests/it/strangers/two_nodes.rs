//! The strangers' share on two nodes of one PostgreSQL database: counted
//! across them, not per node (each node held its own half before).

use super::*;
use crate::common::cluster::second_node;
use crate::common::pg;

/// Two in-process nodes on one PostgreSQL database, with `plan`; None
/// (skipped, saying why) without one.
async fn two_nodes(plan: &str) -> Option<(TestServer, TestServer)> {
    if pg::admin_url().is_none() {
        eprintln!(
            "skipped: set FILESTORE_TEST_DATABASE_URL to run this PostgreSQL (two-node) test; \
             SQLite serves one node"
        );
        return None;
    }
    let a = TestServer::start_with(options(plan)).await;
    let b = second_node(
        &a,
        TestOptions {
            data_dir: Some(a.data_dir.clone()),
            ..options(plan)
        },
    )
    .await;
    Some((a, b))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_share_the_concurrent_uploads_across_nodes() {
    let Some((a, b)) = two_nodes("concurrent_uploads = 4").await else {
        return;
    };
    let (page, token) = strangers(&a, 100).await;
    // One body on each node: the share (2) is taken.
    let held = [held_upload(&a, &page), held_upload(&b, &token)];
    arriving(&a, 1).await;
    arriving_on(&b, &a.account_id, 1).await;
    for (srv, who) in [(&a, &page), (&b, &page), (&a, &token), (&b, &token)] {
        let (retry, message) = refused(upload(srv, who, b"more").await).await;
        assert_eq!(retry, 1, "{message}");
    }
    // The owner uploads on both.
    let own = Who::Owner(a.secret_key.clone());
    created(upload(&a, &own, b"a").await).await;
    created(upload(&b, &own, b"b").await).await;
    drop(held);
    a.eventually(10, "the slots are given back", || async {
        a.count("SELECT COUNT(*) FROM stranger_slots") == 0
    })
    .await;
    created(upload(&b, &page, b"again").await).await;
    b.stop().await;
    a.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_share_the_months_uploads_across_nodes() {
    let Some((a, b)) = two_nodes("uploads = 6").await else {
        return;
    };
    let (page, token) = strangers(&a, 100).await;
    created(upload(&a, &page, b"1").await).await;
    created(upload(&b, &token, b"2").await).await;
    created(tus_create(&b, &page, 3).await).await;
    for (srv, who) in [(&a, &page), (&b, &page), (&a, &token), (&b, &token)] {
        let (_, message) = refused(upload(srv, who, b"4").await).await;
        assert!(message.contains("3 of the 3"), "{message}");
    }
    let own = Who::Owner(a.secret_key.clone());
    for srv in [&a, &b, &a] {
        created(upload(srv, &own, b"mine").await).await;
    }
    refused(upload(&b, &own, b"7").await).await;
    b.stop().await;
    a.stop().await;
}

/// Waits until `n` upload bodies of `account` are arriving on `srv`.
async fn arriving_on(srv: &TestServer, account: &str, n: u64) {
    let (app, account) = (srv.app.clone(), account.to_string());
    srv.eventually(10, "the bodies are arriving", move || {
        let (app, account) = (app.clone(), account.clone());
        async move { app.in_flight.uploads_of(&account) == n }
    })
    .await;
}
