//! Termination under a PATCH: a DELETE ends a PATCH in progress; an upload
//! ended under its last PATCH answers 410.

use super::*;

/// A page's public key trickles a PATCH just fast enough to be kept: a
/// secret key of the account still cancels the upload at once, and the
/// PATCH stops (recording nothing) without waiting for its next byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_ends_a_patch_in_progress() {
    let srv = TestServer::start().await;
    let public = Client::public(&srv).await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let url = public.created(100).await;
    let (tx, patching) = trickling(&srv, &public, &url, &[1; 10]).await;
    let deleting = secret.delete(&url);
    let r = tokio::time::timeout(Duration::from_secs(30), deleting)
        .await
        .expect("the DELETE waited behind the PATCH");
    assert_eq!(r.status(), 204);
    let r = ended(patching, "the PATCH").await;
    let (status, _) = error_code(r).await;
    assert!([404, 423].contains(&status), "{status}");
    drop(tx);
    assert_eq!(secret.head(&url).await.status(), 404);
    assert_eq!(srv.usage().await["reserved_bytes"], 0);

    // A request on another node holding the upload does not stop a
    // termination either: it loses its lease (its next renewal says so).
    let url = secret.created(10).await;
    let id = id_of(&url);
    let now = srv.clock.now_ms();
    let meta = &srv.app.meta;
    assert!(meta
        .lease_upload(&id, "elsewhere", now, now + 60_000)
        .await
        .unwrap());
    assert_eq!(secret.delete(&url).await.status(), 204);
    assert!(!meta
        .lease_upload(&id, "elsewhere", now, now + 60_000)
        .await
        .unwrap());
    assert_eq!(secret.head(&url).await.status(), 404);
    srv.stop().await;
}

/// An upload that ends while its last PATCH runs (here its time is made to
/// run out under it) answers that PATCH 410, not a server error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_ended_under_its_last_patch_answers_410() {
    let srv = TestServer::start().await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let url = secret.created(20).await;
    let id = id_of(&url);
    let (tx, patching) = trickling(&srv, &secret, &url, &[1; 10]).await;
    let past = format!("UPDATE tus_uploads SET expires_at = 1 WHERE id = '{id}'");
    match srv.sqlite() {
        Some(db) => {
            db.execute(&past, []).unwrap();
        }
        None => pg::execute(srv.database_url(), &past),
    }
    tx.send(Ok(bytes::Bytes::from(vec![2; 10]))).await.unwrap();
    drop(tx);
    let r = ended(patching, "the PATCH").await;
    assert_eq!(error_code(r).await, (410, "upload_expired".into()));
    srv.stop().await;
}
