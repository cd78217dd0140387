//! An account holds at most its plan's `open_uploads`; a refused creation
//! does no store work.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_holds_at_most_its_plans_open_uploads() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nopen_uploads = 2\n".into()),
        // The collector would reap the expired upload between the clock's
        // step and the HEAD below (a 404 instead of the 410 checked).
        reap_interval: Some(Duration::from_hours(1)),
        ..Default::default()
    })
    .await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let public = Client::public(&srv).await;
    let first = secret.created(10).await;
    let second = public.created(10).await;
    // A third, whoever asks: 429 with Retry-After until the first of the
    // open ones expires (the public key's, 10 minutes from now).
    for c in [&secret, &public] {
        let r = c.create(10).await;
        assert_eq!(r.status(), 429);
        let wait = seconds(&r, "retry-after");
        assert!((599..=600).contains(&wait), "Retry-After {wait}");
        assert_eq!(r.headers()["x-ratelimit-limit"], "2");
        assert_eq!(
            error_code(r).await,
            (429, "rate_limit_exceeded".into()),
            "past open_uploads"
        );
    }
    // Another account is not held by this one's uploads.
    let (_, other_key) = srv.new_account("other", "free").await;
    let other = Client::secret(&srv, &other_key);
    other.created(10).await;
    // Completing one frees its place at once; so does ending one.
    assert_eq!(secret.patch(&first, 0, vec![1; 10]).await.status(), 204);
    let third = secret.created(10).await;
    assert_eq!(secret.create(10).await.status(), 429);
    assert_eq!(secret.delete(&third).await.status(), 204);
    secret.created(10).await;
    assert_eq!(secret.create(10).await.status(), 429);
    // And so does one expiring (the public key's, untouched for 10 minutes).
    srv.clock.advance(Duration::from_secs(601));
    assert_eq!(public.head(&second).await.status(), 410);
    secret.created(10).await;
    srv.stop().await;
}

/// Creations at once never pass `open_uploads` together: the count is
/// checked in the transaction that creates the upload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creations_at_once_never_pass_open_uploads_together() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nopen_uploads = 3\n".into()),
        ..Default::default()
    })
    .await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let creating: Vec<_> = (0..20).map(|_| secret.create(10)).collect();
    let mut statuses: Vec<u16> = futures_util::future::join_all(creating)
        .await
        .iter()
        .map(|r| r.status().as_u16())
        .collect();
    statuses.sort_unstable();
    assert_eq!(statuses[..3], [201; 3]);
    assert_eq!(statuses[3..], [429; 17]);
    let (_, body) = secret.list().await;
    assert_eq!(body["uploads"].as_array().unwrap().len(), 3);
    srv.stop().await;
}

/// A creation the account's limits refuse is refused before any work in
/// the blob store (not even the guard of a blob to come).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_creation_does_no_store_work() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nopen_uploads = 1\nstorage = 1000\n".into()),
        ..Default::default()
    })
    .await;
    let secret = Client::secret(&srv, &srv.secret_key);
    secret.created(10).await;
    let blobs = srv.blob_count().await;
    refuse(&srv, "no_store_work", "INSERT", "blob_deletions");
    let r = secret.create(10).await;
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    let r = secret.create(5000).await;
    assert_eq!(error_code(r).await, (413, "storage_limit_exceeded".into()));
    allow(&srv, "no_store_work", "blob_deletions");
    assert_eq!(srv.blob_count().await, blobs);
    srv.stop().await;
}
