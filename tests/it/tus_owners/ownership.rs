//! Whose an upload is: its creating key's and its account's secret keys';
//! secret keys list and end them; an `Idempotency-Key` is its creator's.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_is_its_creators_and_the_accounts_secret_keys() {
    let srv = TestServer::start().await;
    let owner = Client::public(&srv).await;
    let other_public = Client::public(&srv).await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let (_, foreign_key) = srv.new_account("other", "free").await;
    let foreign = Client::secret(&srv, &foreign_key);

    // A public key's upload: no other public key of the account, and no
    // key of another account, can see, continue, read or end it.
    let url = owner.created(10).await;
    for c in [&other_public, &foreign] {
        assert_eq!(c.head(&url).await.status(), 404);
        let r = c.status(&url).await;
        assert_eq!(error_code(r).await, (404, "not_found".into()));
        let r = c.patch(&url, 0, vec![1; 4]).await;
        assert_eq!(error_code(r).await, (404, "not_found".into()));
        let r = c.delete(&url).await;
        assert_eq!(error_code(r).await, (404, "not_found".into()));
    }
    // Its creator continues it; a secret key of the account may too.
    assert_eq!(owner.patch(&url, 0, vec![1; 4]).await.status(), 204);
    let r = secret.head(&url).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["upload-offset"], "4");
    assert_eq!(secret.patch(&url, 4, vec![2; 3]).await.status(), 204);
    let r = owner.head(&url).await;
    assert_eq!(r.headers()["upload-offset"], "7");

    // A secret key's upload is not a public key's to touch.
    let theirs = secret.created(5).await;
    assert_eq!(owner.head(&theirs).await.status(), 404);
    let r = owner.patch(&theirs, 0, vec![3; 5]).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    let r = owner.delete(&theirs).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    assert_eq!(secret.head(&theirs).await.headers()["upload-offset"], "0");

    // The completing PATCH by the creator; the status is the creator's and
    // the secret key's only.
    let r = owner.patch(&url, 7, vec![4; 3]).await;
    assert_eq!(r.status(), 204);
    let file_id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    for c in [&owner, &secret] {
        let body: Value = c.status(&url).await.json().await.unwrap();
        assert_eq!(body["file"]["id"], file_id.as_str());
    }
    assert_eq!(other_public.status(&url).await.status(), 404);

    // A secret key ends a public key's upload.
    let abandoned = owner.created(8).await;
    assert_eq!(secret.delete(&abandoned).await.status(), 204);
    assert_eq!(owner.head(&abandoned).await.status(), 404);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_keys_list_and_end_the_accounts_open_uploads() {
    let srv = TestServer::start().await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let public = Client::public(&srv).await;
    let (_, other_key) = srv.new_account("other", "free").await;
    let other = Client::secret(&srv, &other_key);
    assert_eq!(srv.usage().await["reserved_bytes"], 0);

    let by_secret = secret.created(1000).await;
    srv.clock.advance(Duration::from_secs(1));
    let by_public = public.created(300).await;
    assert_eq!(
        public.patch(&by_public, 0, vec![7; 120]).await.status(),
        204
    );
    srv.clock.advance(Duration::from_secs(1));
    let done = secret.created(5).await;
    assert_eq!(secret.patch(&done, 0, vec![1; 5]).await.status(), 204);
    other.created(50).await;

    // Newest first; complete uploads and other accounts' are not listed.
    let (status, body) = secret.list().await;
    assert_eq!(status, 200, "{body}");
    let uploads = body["uploads"].as_array().unwrap();
    let ids: Vec<&str> = uploads.iter().map(|u| u["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [id_of(&by_public), id_of(&by_secret)]);
    let p = &uploads[0];
    assert_eq!((&p["offset"], &p["length"]), (&120.into(), &300.into()));
    assert_eq!(p["created_by"], key_id(&srv, &public.key).await.as_str());
    assert_eq!(
        uploads[1]["created_by"],
        key_id(&srv, &srv.secret_key).await.as_str()
    );
    assert!(p["expires_at"].as_str().unwrap().ends_with('Z'));
    // What they hold against the quota.
    let usage = srv.usage().await;
    assert_eq!(
        (&usage["reserved_bytes"], &usage["storage_bytes"]),
        (&1300.into(), &5.into())
    );

    // Public keys may not list (403), no key is 401.
    let (status, _) = public.list().await;
    assert_eq!(status, 403);
    let r = srv.http.get(srv.url("/v1/uploads")).send().await.unwrap();
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));

    // The secret key cancels the public key's reservation.
    assert_eq!(secret.delete(&by_public).await.status(), 204);
    let (_, body) = secret.list().await;
    assert_eq!(body["uploads"].as_array().unwrap().len(), 1);
    assert_eq!(srv.usage().await["reserved_bytes"], 1000);
    srv.stop().await;
}

/// An `Idempotency-Key` answers its upload to the key that created it (or a
/// secret key of the account) only: another public key of the account gets
/// 400, no upload, and cannot append to it with its creation's body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_replays_only_to_a_key_that_may_use_its_upload() {
    let srv = TestServer::start().await;
    let owner = Client::public(&srv).await;
    let other = Client::public(&srv).await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let create = |c: &Client<'_>, body: Option<Vec<u8>>| {
        let mut r = c
            .request(reqwest::Method::POST, &srv.url("/v1/uploads"))
            .header("upload-length", 10)
            .header("idempotency-key", "one-key");
        if let Some(body) = body {
            r = r.header(OCTETS.0, OCTETS.1).body(body);
        }
        r.send()
    };
    let r = create(&owner, None).await.unwrap();
    assert_eq!(r.status(), 201);
    let url = r.headers()["location"].to_str().unwrap().to_string();
    for body in [None, Some(vec![9; 4])] {
        let r = create(&other, body).await.unwrap();
        assert_eq!(error_code(r).await, (400, "bad_request".into()));
    }
    assert_eq!(owner.head(&url).await.headers()["upload-offset"], "0");
    let (_, listed) = secret.list().await;
    assert_eq!(listed["uploads"].as_array().unwrap().len(), 1);
    // Its creator and the account's secret keys get it back.
    for c in [&owner, &secret] {
        let r = create(c, None).await.unwrap();
        assert_eq!(r.status(), 201);
        assert_eq!(r.headers()["location"], url.as_str());
    }
    let r = create(&owner, Some(vec![1; 10])).await.unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["upload-offset"], "10");
    srv.stop().await;
}
