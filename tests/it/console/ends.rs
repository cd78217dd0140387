//! The ends of a session: sign-out, idle time, revoking its key.

use super::{ended, list, page, server_with, sign_in, MINUTE};
use crate::common::TestServer;
use filestore::testing::domain::ids::key_hash;
use filestore::testing::service::admin;
use reqwest::Method;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_out_ends_the_session() {
    let srv = TestServer::start().await;
    let cookie = sign_in(&srv, &srv.secret_key).await;
    let other = sign_in(&srv, &srv.secret_key).await;
    let r = page(&srv, Method::DELETE, "/console/session", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let set = r.headers()["set-cookie"].to_str().unwrap();
    assert!(
        set.starts_with("filestore_console=;") && set.contains("Max-Age=0"),
        "{set}"
    );
    ended(&srv, &cookie).await;
    // Another session of the same key lives on.
    assert_eq!(list(&srv, &other).await.0, 200);
    // Signing out again is harmless.
    let r = page(&srv, Method::DELETE, "/console/session", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_ends() {
    let srv = server_with("[console]\nsession_idle = \"10m\"\n").await;
    let cookie = sign_in(&srv, &srv.secret_key).await;
    // Each request within the idle time keeps it alive.
    for _ in 0..3 {
        srv.clock.advance(6 * MINUTE);
        assert_eq!(list(&srv, &cookie).await.0, 200);
    }
    srv.clock.advance(11 * MINUTE);
    ended(&srv, &cookie).await;
    assert_eq!(srv.count("SELECT COUNT(*) FROM console_sessions"), 0);
    // A new sign-in sweeps the sessions idle too long.
    let stale = sign_in(&srv, &srv.secret_key).await;
    srv.clock.advance(11 * MINUTE);
    let _fresh = sign_in(&srv, &srv.secret_key).await;
    assert_eq!(srv.count("SELECT COUNT(*) FROM console_sessions"), 1);
    ended(&srv, &stale).await;
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_the_key_ends_its_sessions_at_once() {
    let srv = TestServer::start().await;
    let key = srv.new_key("secret", &[]).await;
    let cookie = sign_in(&srv, &key).await;
    let mine = sign_in(&srv, &srv.secret_key).await;
    assert_eq!(list(&srv, &cookie).await.0, 200);
    let (record, _) = srv
        .app
        .meta
        .key_by_hash(key_hash(&key))
        .await
        .unwrap()
        .expect("the key is live");
    admin::revoke_key(&*srv.app.meta, &record.id, srv.clock.now_ms())
        .await
        .unwrap();
    ended(&srv, &cookie).await;
    let r = page(&srv, Method::GET, "/console/session", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    // The other key's session is untouched.
    assert_eq!(list(&srv, &mine).await.0, 200);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_time_under_two_minutes_is_refused() {
    let file: filestore::testing::config::FileConfig =
        toml::from_str("[console]\nsession_idle = \"30s\"\n").unwrap();
    let e = filestore::testing::config::Config::resolve(
        file,
        &filestore::testing::config::Env::empty(),
        &filestore::testing::config::Overrides::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("console.session_idle"), "{e}");
}
