//! On PostgreSQL, a session is the database's: made on one node, it works
//! on the other, ends there on sign-out at once, and its key's revocation
//! on one node ends it on the other within the second the nodes keep keys.

use super::{ended, list, page, sign_in};
use crate::common::cluster::second_node;
use crate::common::{pg, TestOptions, TestServer};
use filestore::testing::domain::ids::key_hash;
use filestore::testing::service::admin;
use reqwest::Method;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_works_and_ends_on_every_node() {
    if pg::admin_url().is_none() {
        eprintln!("skipped: set FILESTORE_TEST_DATABASE_URL to run the PostgreSQL tests");
        return;
    }
    let a = TestServer::start().await;
    let b = second_node(&a, TestOptions::default()).await;
    let cookie = sign_in(&a, &a.secret_key).await;
    assert_eq!(list(&b, &cookie).await.0, 200, "made on A, it works on B");
    let r = page(&b, Method::DELETE, "/console/session", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    ended(&a, &cookie).await;
    // Revoked on A: B refuses the session within the second.
    let key = a.new_key("secret", &[]).await;
    let cookie = sign_in(&b, &key).await;
    assert_eq!(list(&a, &cookie).await.0, 200);
    assert_eq!(list(&b, &cookie).await.0, 200);
    let (record, _) = a
        .app
        .meta
        .key_by_hash(key_hash(&key))
        .await
        .unwrap()
        .unwrap();
    admin::revoke_key(&*a.app.meta, &record.id, a.clock.now_ms())
        .await
        .unwrap();
    let revoked = Instant::now();
    ended(&a, &cookie).await;
    loop {
        let (status, _) = list(&b, &cookie).await;
        if status == 401 {
            break;
        }
        assert!(
            revoked.elapsed() < Duration::from_millis(1100),
            "B still serves it"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    b.stop().await;
    a.stop().await;
}
