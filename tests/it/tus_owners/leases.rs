//! Leases: one held elsewhere answers 423, one taken or lapsed stops its
//! PATCH, one of a node whose database session is gone is free at once.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_leased_elsewhere_answers_423_with_retry_after() {
    let srv = TestServer::start().await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let url = secret.created(10).await;
    let id = id_of(&url);
    // A request elsewhere holds the upload's lease.
    let now = srv.clock.now_ms();
    let meta = &srv.app.meta;
    assert!(meta
        .lease_upload(&id, "elsewhere", now, now + 60_000)
        .await
        .unwrap());
    let r = secret.patch(&url, 0, vec![1; 10]).await;
    assert_eq!(r.status(), 423);
    assert_eq!(seconds(&r, "retry-after"), 1);
    assert_eq!(error_code(r).await, (423, "locked".into()));
    // Reading it is not held up; nothing was written.
    assert_eq!(secret.head(&url).await.headers()["upload-offset"], "0");
    // Once it is given back, the retried PATCH goes through.
    meta.release_upload(&id, "elsewhere").await.unwrap();
    let r = secret.patch(&url, 0, vec![1; 10]).await;
    assert_eq!(r.status(), 204);
    assert!(r.headers().contains_key("x-file-id"));
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_whose_lease_was_taken_stops_and_records_nothing() {
    let srv = TestServer::start().await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let bytes: Vec<u8> = (0..100u8).collect();
    let url = secret.created(100).await;
    let id = id_of(&url);
    // A PATCH whose body trickles in.
    let (tx, patching) = trickle(&secret, &url);
    tx.send(Ok(bytes::Bytes::from(bytes[..10].to_vec())))
        .await
        .unwrap();
    let lease = format!("SELECT COALESCE(lease_token, '') FROM tus_uploads WHERE id = '{id}'");
    srv.eventually(10, "the PATCH holds the lease", || async {
        !srv.text(&lease).is_empty()
    })
    .await;
    // It stalls past its lease, and another request takes the upload.
    srv.clock.advance(Duration::from_secs(11));
    let now = srv.clock.now_ms();
    assert!(srv
        .app
        .meta
        .lease_upload(&id, "taker", now, now + 60_000)
        .await
        .unwrap());
    // Its next bytes are refused once it has seen that (at its renewal).
    let mut sent = 10;
    while !patching.is_finished() && sent < 60 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if tx
            .send(Ok(bytes::Bytes::from(vec![bytes[sent]])))
            .await
            .is_err()
        {
            break;
        }
        sent += 1;
    }
    drop(tx);
    let r = patching.await.unwrap().unwrap();
    assert_eq!(error_code(r).await, (423, "locked".into()));
    assert_eq!(secret.head(&url).await.headers()["upload-offset"], "0");
    // The taker's turn ends; the upload goes on from what was recorded.
    srv.app.meta.release_upload(&id, "taker").await.unwrap();
    let r = secret.patch(&url, 0, bytes.clone()).await;
    assert_eq!(r.status(), 204);
    holds(&srv, &r, &bytes).await;
    srv.stop().await;
}

/// Two nodes on one PostgreSQL database (and one data dir): node A's PATCH
/// in progress makes node B answer 423; once A's database session is gone
/// (as when A is killed: its session ends with it) B continues the upload at
/// once, and A's PATCH, whenever it ends, records nothing over B's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_of_a_node_whose_session_is_gone_is_free_at_once() {
    if pg::admin_url().is_none() {
        eprintln!(
            "skipped: set FILESTORE_TEST_DATABASE_URL to run this PostgreSQL (two-node) test; \
             on SQLite one node's restart ends every lease"
        );
        return;
    }
    let a = TestServer::start().await;
    let b = second_node(
        &a,
        TestOptions {
            data_dir: Some(a.data_dir.clone()),
            ..Default::default()
        },
    )
    .await;
    let on_a = Client::secret(&a, &a.secret_key);
    let on_b = Client::secret(&b, &a.secret_key);
    let bytes: Vec<u8> = (0..100u8).collect();
    let url = on_a.created(100).await;
    let id = id_of(&url);
    let url_b = url.replace(&a.base_url, &b.base_url);
    let (tx, patching) = trickle(&on_a, &url);
    tx.send(Ok(bytes::Bytes::from(bytes[..10].to_vec())))
        .await
        .unwrap();
    let lease = format!("SELECT COALESCE(lease_node::TEXT, '') FROM tus_uploads WHERE id = '{id}'");
    a.eventually(10, "A's PATCH holds the lease", || async {
        !a.text(&lease).is_empty()
    })
    .await;
    let node = a.text(&lease);
    let r = on_b.patch(&url_b, 0, bytes.clone()).await;
    assert_eq!(r.status(), 423, "held by a live node's request");
    // Node A's session goes (the backend holding its advisory lock; the
    // call returns once it has exited).
    let gone = pg::count(
        a.database_url(),
        &format!(
            "SELECT COUNT(pg_terminate_backend(pid, 5000)) FROM pg_locks
             WHERE locktype = 'advisory' AND objsubid = 2 AND objid = {node} AND granted"
        ),
    );
    assert_eq!(gone, 1, "node A's session");
    let r = on_b.patch(&url_b, 0, bytes.clone()).await;
    assert_eq!(r.status(), 204, "free at once: {:?}", r.text().await);
    let file_id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    // A's PATCH ends: refused (its lease or its offset is gone).
    drop(tx);
    let r = patching.await.unwrap().unwrap();
    let (status, _) = error_code(r).await;
    assert!([409, 423].contains(&status), "{status}");
    let (status, file) = b
        .get_json(&a.secret_key, &format!("/v1/files/{file_id}"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(file["sha256"], crate::common::sha256_hex(&bytes).as_str());
    assert_eq!(file["size"], 100);
    b.stop().await;
    a.stop().await;
}

/// A second PATCH of an upload while one runs on the same node is told to
/// come back (423, Retry-After), not queued behind it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_patch_on_the_same_node_answers_423() {
    let srv = TestServer::start().await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let bytes: Vec<u8> = (0..100u8).collect();
    let url = secret.created(100).await;
    let (tx, patching) = trickling(&srv, &secret, &url, &bytes[..10]).await;
    let second = secret.patch(&url, 0, bytes.clone());
    let r = tokio::time::timeout(Duration::from_secs(30), second)
        .await
        .expect("the second PATCH waited behind the first");
    assert_eq!(r.status(), 423);
    assert_eq!(seconds(&r, "retry-after"), 1);
    assert_eq!(error_code(r).await, (423, "locked".into()));
    // The first goes on undisturbed.
    tx.send(Ok(bytes::Bytes::from(bytes[10..].to_vec())))
        .await
        .unwrap();
    drop(tx);
    let r = ended(patching, "the first PATCH").await;
    assert_eq!(r.status(), 204);
    holds(&srv, &r, &bytes).await;
    srv.stop().await;
}

/// A node cut off from the database (its renewals fail) stops its PATCH
/// once its lease has lapsed (another node may hold the upload by then),
/// even while no byte comes, and records nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_whose_lease_lapsed_unrenewed_stops_and_records_nothing() {
    let srv = TestServer::start().await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let bytes: Vec<u8> = (0..100u8).collect();
    let url = secret.created(100).await;
    let (tx, patching) = trickling(&srv, &secret, &url, &bytes[..10]).await;
    refuse(&srv, "cut_off", "UPDATE OF lease_until", "tus_uploads");
    srv.clock.advance(Duration::from_secs(11));
    let r = ended(patching, "the PATCH").await;
    assert_eq!(error_code(r).await, (423, "locked".into()));
    drop(tx);
    allow(&srv, "cut_off", "tus_uploads");
    assert_eq!(secret.head(&url).await.headers()["upload-offset"], "0");
    // Its lease (not given back: the release failed too) lapses.
    srv.clock.advance(Duration::from_secs(11));
    let r = secret.patch(&url, 0, bytes.clone()).await;
    assert_eq!(r.status(), 204, "{:?}", r.text().await);
    holds(&srv, &r, &bytes).await;
    srv.stop().await;
}
