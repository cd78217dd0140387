//! A token's uses while bodies stream: revoked or used up meanwhile (the
//! commit refuses, nothing stays), a retry of its last upload, and no more
//! bodies arriving at once than it has uploads left.

use super::*;
use std::time::Duration;

both_stores!(
    a_token_revoked_during_an_upload_stores_nothing,
    a_retry_of_a_tokens_last_upload_gets_what_it_stored,
    a_token_has_no_more_bodies_arriving_than_uploads_left,
);

/// Revoked while its upload streams: the commit is refused (401) and
/// nothing stays; the same with the last use taken meanwhile by another
/// upload.
async fn a_token_revoked_during_an_upload_stores_nothing(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    for revoke in [true, false] {
        let t = token(&srv, json!({"max_uploads": 1})).await;
        let before = held(&srv).await;
        let (tx, upload) = slow_upload(&srv, &t.token);
        tx.send(bytes::Bytes::from(binary(200_000, 1)))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut resumable = None;
        if revoke {
            assert_eq!(
                delete_token_as(&srv, &srv.secret_key, &t.id).await.status(),
                200
            );
        } else {
            // The token's one use, taken by a resumable upload (a second
            // multipart body would be refused at once: the token has as
            // many arriving as it has uploads left).
            let r = tus_create(&srv, &t.token, None, 10, &[]).await;
            assert_eq!(r.status(), 201);
            resumable = Some(r.headers()["location"].to_str().unwrap().to_string());
        }
        tx.send(bytes::Bytes::from(binary(100_000, 2)))
            .await
            .unwrap();
        drop(tx);
        let r = upload.await.unwrap();
        assert_eq!(
            code_of(r).await,
            (401, "unauthorized".into()),
            "revoked: {revoke}"
        );
        if let Some(location) = resumable {
            // The resumable upload holds the one use; ended, it gives it
            // back, and its bytes go.
            assert_eq!(uploads_left(&srv, &t.id).await, 0);
            let r = srv
                .http
                .delete(location)
                .bearer_auth(&t.token)
                .header(TUS.0, TUS.1)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 204);
        }
        nothing_stored(&srv, &before, s3.as_ref()).await;
        // The refused upload spent no use (a revoked token is gone from
        // the API: the store says).
        let row = srv.count(&format!(
            "SELECT CAST(uploads_used + uploads_open AS BIGINT) FROM upload_tokens WHERE id = '{}'",
            t.id
        ));
        assert_eq!(row, 0, "revoked: {revoke}");
    }
}

/// A client whose answer was lost retries with its `Idempotency-Key`: the
/// token's last use already made the file (or the resumable upload), and
/// the retry is answered with it, not refused as used up. Another upload
/// with the spent token is still refused, and stores nothing.
async fn a_retry_of_a_tokens_last_upload_gets_what_it_stored(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    let one = token(&srv, json!({})).await;
    let send = |key: &'static str, via: Via| {
        let req = match via {
            Via::Query => srv
                .http
                .post(format!("{}?token={}", srv.url("/v1/upload"), one.token)),
            Via::Bearer => srv.http.post(srv.url("/v1/upload")).bearer_auth(&one.token),
        };
        req.header("idempotency-key", key)
            .multipart(TestServer::form("once.txt", b"once".to_vec(), &[]))
            .send()
    };
    let first = send("k1", Via::Query).await.unwrap();
    assert_eq!(first.status(), 201);
    let first: Value = first.json().await.unwrap();
    assert_eq!(uploads_left(&srv, &one.id).await, 0);
    for via in BOTH_WAYS {
        let again = send("k1", via).await.unwrap();
        assert_eq!(again.status(), 201, "{via:?}");
        let again: Value = again.json().await.unwrap();
        assert_eq!(again["id"], first["id"]);
    }
    let before = held(&srv).await;
    refused(send("k2", Via::Query).await.unwrap(), 401, "unauthorized").await;
    nothing_stored(&srv, &before, s3.as_ref()).await;
    // The same for a resumable upload: the retried creation gets its upload.
    let tus = token(&srv, json!({})).await;
    let create = || {
        srv.http
            .post(srv.url("/v1/uploads"))
            .bearer_auth(&tus.token)
            .header(TUS.0, TUS.1)
            .header("upload-length", 10)
            .header("idempotency-key", "t1")
            .send()
    };
    let made = create().await.unwrap();
    assert_eq!(made.status(), 201);
    let again = create().await.unwrap();
    assert_eq!(again.status(), 201);
    assert_eq!(made.headers()["location"], again.headers()["location"]);
    assert_eq!(uploads_left(&srv, &tus.id).await, 0);
    // A key is never taken from the query string: only a token is.
    let r = srv
        .http
        .post(format!(
            "{}?token={}",
            srv.url("/v1/upload"),
            srv.secret_key
        ))
        .multipart(TestServer::form("key.txt", b"k".to_vec(), &[]))
        .send()
        .await
        .unwrap();
    refused(r, 401, "unauthorized").await;
}

/// Slow bodies sent with one token cannot hold the account's
/// `concurrent_uploads`: a token has at most as many bodies arriving as it
/// has uploads left, and the account's own keys upload meanwhile.
async fn a_token_has_no_more_bodies_arriving_than_uploads_left(b: Backend) {
    let srv = server(b).await;
    let one = token(&srv, json!({})).await;
    let (tx, slow) = slow_upload(&srv, &one.token);
    tx.send(bytes::Bytes::from(binary(1000, 1))).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    for via in BOTH_WAYS {
        let r = upload_with(&srv, &one.token, via, "second.txt", b"2".to_vec(), &[]).await;
        let (status, code) = code_of(r).await;
        assert_eq!(
            (status, code.as_str()),
            (429, "rate_limit_exceeded"),
            "{via:?}"
        );
    }
    let f = srv.upload("mine.txt", b"mine".to_vec(), &[]).await;
    assert_eq!(f.status(), 201);
    drop(tx);
    assert_eq!(slow.await.unwrap().status(), 201);
    assert_eq!(uploads_left(&srv, &one.id).await, 0);
}

/// A multipart upload with token `t` whose file part arrives as the test
/// sends it: the sender (dropped: the body ends) and the request's answer.
fn slow_upload(
    srv: &TestServer,
    t: &str,
) -> (
    tokio::sync::mpsc::Sender<bytes::Bytes>,
    tokio::task::JoinHandle<Response>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(4);
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, std::io::Error>(b), rx))
    });
    let form = Form::new().part(
        "file",
        Part::stream(reqwest::Body::wrap_stream(body)).file_name("slow.bin"),
    );
    let (http, url) = (
        srv.http.clone(),
        format!("{}?token={t}", srv.url("/v1/upload")),
    );
    let answer = tokio::spawn(async move { http.post(url).multipart(form).send().await.unwrap() });
    (tx, answer)
}
