//! A public key's upload that receives no byte for 10 minutes expires (and
//! its reservation with it); a PATCH receiving bytes keeps it alive.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_keys_upload_expires_after_ten_minutes_without_a_byte() {
    let srv = TestServer::start().await;
    let public = Client::public(&srv).await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let url = public.created(100).await;
    let kept = secret.created(100).await;
    let r = public.head(&url).await;
    expires_in(&srv, &r, 600);
    // A secret key's upload keeps the day.
    expires_in(&srv, &secret.head(&kept).await, 24 * 3600);
    // Bytes after 9 minutes: 10 more minutes from then.
    srv.clock.advance(Duration::from_mins(9));
    let r = public.patch(&url, 0, vec![1; 10]).await;
    assert_eq!(r.status(), 204);
    expires_in(&srv, &r, 600);
    // A PATCH without bytes does not keep it.
    srv.clock.advance(Duration::from_mins(5));
    let r = public.patch(&url, 10, Vec::new()).await;
    assert_eq!(r.status(), 204);
    expires_in(&srv, &r, 300);
    // 10 minutes after its last byte it is gone, its reservation with it;
    // the secret key's upload, as old, is not.
    srv.clock.advance(Duration::from_mins(5));
    // Expired, or (the collector may take it at any moment now) gone.
    let status = public.head(&url).await.status();
    assert!(status == 410 || status == 404, "{status}");
    let r = public.patch(&url, 10, vec![1; 10]).await;
    let refused = error_code(r).await;
    assert!(
        refused == (410, "upload_expired".into()) || refused == (404, "not_found".into()),
        "{refused:?}"
    );
    assert_eq!(secret.head(&kept).await.status(), 200);
    srv.eventually(10, "the expired upload is removed", || async {
        public.head(&url).await.status() == 404
    })
    .await;
    assert_eq!(srv.usage().await["reserved_bytes"], 100);
    srv.stop().await;
}

/// The attack: a page's public key reserves what it can of the storage
/// quota (its share, half: `strangers::strangers_reserve_at_most_half_the_storage`)
/// with uploads that never send a byte. Those reservations hold only until
/// a secret key ends them, or for the 10 minutes they live untouched, not
/// for a day.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_keys_untouched_reservations_hold_the_quota_for_minutes_only() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nstorage = 2000\n".into()),
        reap_interval: Some(Duration::from_millis(100)),
        ..Default::default()
    })
    .await;
    let public = Client::public(&srv).await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let refused = || async {
        let r = srv.upload("mine.txt", vec![1; 10], &[]).await;
        error_code(r).await == (413, "storage_limit_exceeded".into())
    };
    // The public keys reserve their share (half), the account's own key the rest.
    public.created(1000).await;
    secret.created(1000).await;
    assert!(refused().await, "the reservations hold the quota");
    // A secret key ends them at once.
    let (_, body) = secret.list().await;
    for u in body["uploads"].as_array().unwrap() {
        let url = srv.url(&format!("/v1/uploads/{}", u["id"].as_str().unwrap()));
        assert_eq!(secret.delete(&url).await.status(), 204);
    }
    assert_eq!(srv.upload("mine.txt", vec![1; 10], &[]).await.status(), 201);
    // Or, left alone, they go 10 minutes later.
    srv.clock.advance(Duration::from_secs(1));
    public.created(1000).await;
    secret.created(990).await;
    assert!(refused().await);
    srv.clock.advance(Duration::from_mins(9));
    assert!(refused().await, "still held after 9 minutes");
    srv.clock.advance(Duration::from_mins(1));
    srv.eventually(10, "the untouched reservation expires", || async {
        srv.upload("later.txt", vec![1; 10], &[]).await.status() == 201
    })
    .await;
    assert_eq!(
        srv.usage().await["reserved_bytes"],
        990,
        "the account's own stays"
    );
    srv.stop().await;
}

/// One PATCH that takes longer than a public key's 10 minutes of idle time
/// (a whole file in one PATCH, on a slow link): its upload does not expire
/// under it, and it completes with every byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_receiving_bytes_keeps_its_upload_alive_past_the_idle_time() {
    let srv = TestServer::start().await;
    let public = Client::public(&srv).await;
    let bytes: Vec<u8> = (0..100u8).collect();
    let url = public.created(100).await;
    let id = id_of(&url);
    let (tx, patching) = trickling(&srv, &public, &url, &bytes[..10]).await;
    // 12 minutes pass while the PATCH runs: at each renewal of its lease,
    // the upload lives 10 more minutes.
    for (step, part) in [(0, 10..40), (1, 40..70)] {
        srv.clock.advance(Duration::from_mins(6));
        let now = srv.clock.now_ms();
        srv.eventually(10, "a renewal keeps the upload alive", || async {
            stored_expiry(&srv, &id) >= now + 600_000
        })
        .await;
        tx.send(Ok(bytes::Bytes::from(bytes[part].to_vec())))
            .await
            .unwrap_or_else(|_| panic!("the PATCH ended at step {step}"));
    }
    tx.send(Ok(bytes::Bytes::from(bytes[70..].to_vec())))
        .await
        .unwrap();
    drop(tx);
    let r = ended(patching, "the PATCH").await;
    assert_eq!(r.status(), 204, "{:?}", r.text().await);
    holds(&srv, &r, &bytes).await;
    srv.stop().await;
}
