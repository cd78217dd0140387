//! Trickling uploads and PATCHes, hundreds at once, leave the others
//! answering; an account has at most its `concurrent_uploads` arriving.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_hundred_trickling_uploads_leave_the_others_answering() {
    let srv = wide_server().await;
    let url = cdn_file(&srv).await;
    let tenants = accounts(&srv, 6).await;
    let public = srv.key_for(&tenants[0].0, "public", &[ORIGIN]).await;
    let mut socks = Vec::new();
    for i in 0..600 {
        let (_, key) = &tenants[i % tenants.len()];
        let from_page = i % 300 == 0;
        let (key, origin) = if from_page {
            (&public, Some(ORIGIN))
        } else {
            (key, None)
        };
        socks.push(start_multipart(&srv, key, origin).await);
    }
    arriving(&srv, &tenants, 600).await;
    let trickle = Trickle::start(socks, Duration::from_secs(3));
    let worst = others_answer(&srv, &srv.secret_key, &url, 10).await;
    println!(
        "600 trickling uploads: worst health {:?}, list {:?}, usage {:?}, CDN {:?}",
        worst[0], worst[1], worst[2], worst[3]
    );
    assert!(
        trickle.close().await.iter().all(|n| *n >= 2),
        "all trickled"
    );
    arriving(&srv, &tenants, 0).await;
    for (_, key) in &tenants {
        let (status, list) = srv.get_json(key, "/v1/files").await;
        assert_eq!(status, 200);
        assert_eq!(list["files"].as_array().unwrap().len(), 0, "nothing stored");
    }
    srv.eventually(10, "no spool left", || async {
        srv.leftovers() == (1, 0, 0)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_trickling_patches_leave_the_others_answering() {
    let srv = wide_server().await;
    let url = cdn_file(&srv).await;
    let tenants = accounts(&srv, 6).await;
    let public = srv.key_for(&tenants[0].0, "public", &[ORIGIN]).await;
    let mut uploads = Vec::new();
    for i in 0..300 {
        let (_, key) = &tenants[i % tenants.len()];
        let (key, origin) = if i % 150 == 0 {
            (&public, Some(ORIGIN))
        } else {
            (key, None)
        };
        uploads.push((key.clone(), origin, create_tus(&srv, key, origin).await));
    }
    let mut socks = Vec::new();
    for (key, origin, path) in &uploads {
        socks.push(start_patch(&srv, key, path, *origin).await);
    }
    arriving(&srv, &tenants, 300).await;
    let trickle = Trickle::start(socks, Duration::from_secs(3));
    let worst = others_answer(&srv, &srv.secret_key, &url, 10).await;
    println!(
        "300 trickling PATCHes: worst health {:?}, list {:?}, usage {:?}, CDN {:?}",
        worst[0], worst[1], worst[2], worst[3]
    );
    let sent = trickle.close().await;
    arriving(&srv, &tenants, 0).await;
    // What arrived is kept: each upload is at the bytes its PATCH sent.
    for ((key, origin, path), trickled) in uploads.iter().zip(sent).step_by(25) {
        let mut req = srv.http.head(srv.url(path));
        if let Some(o) = origin {
            req = req.header("Origin", *o);
        }
        let r = req
            .bearer_auth(key)
            .header("Tus-Resumable", "1.0.0")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        let offset: usize = r.headers()["upload-offset"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(offset, HEAD_BYTES + trickled, "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_has_at_most_its_concurrent_uploads_arriving() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some(PAIR.into()),
        ..Default::default()
    })
    .await;
    let (a, key_a) = srv.new_account("a", "pair").await;
    let (_, key_b) = srv.new_account("b", "pair").await;
    let one = start_multipart(&srv, &key_a, None).await;
    let path = create_tus(&srv, &key_a, None).await;
    let two = start_patch(&srv, &key_a, &path, None).await;
    srv.eventually(10, "two arriving", || async {
        srv.app.in_flight.uploads_of(&a) == 2
    })
    .await;
    // A third, multipart or PATCH, is refused before its body is read.
    assert_too_many(srv.upload_as(&key_a, "third.txt", b"x".to_vec(), &[]).await).await;
    let other = create_tus(&srv, &key_a, None).await;
    assert_too_many(patch_small(&srv, &key_a, &other, None).await).await;
    // Another account is not affected.
    let r = srv.upload_as(&key_b, "b.txt", b"b".to_vec(), &[]).await;
    assert_eq!(r.status(), 201);
    // Once the two end, a new one is admitted.
    drop((one, two));
    srv.eventually(10, "none arriving", || async {
        srv.app.in_flight.uploads_of(&a) == 0
    })
    .await;
    let r = srv.upload_as(&key_a, "later.txt", b"l".to_vec(), &[]).await;
    assert_eq!(r.status(), 201);
    assert_eq!(patch_small(&srv, &key_a, &other, None).await.status(), 204);
}

/// A public key (anyone with the page has it) holds at most half of its
/// account's `concurrent_uploads`: its slow bodies leave the account's own
/// uploads room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_key_holds_at_most_half_of_its_accounts_uploads() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some(PAIR.into()),
        ..Default::default()
    })
    .await;
    let (a, key_a) = srv.new_account("a", "pair").await;
    let public = srv.key_for(&a, "public", &[ORIGIN]).await;
    let one = start_multipart(&srv, &public, Some(ORIGIN)).await;
    srv.eventually(10, "one arriving", || async {
        srv.app.in_flight.uploads_of(&a) == 1
    })
    .await;
    // A second body with a public key of the account (this one, or
    // another site's), multipart or PATCH: refused.
    let other = srv.key_for(&a, "public", &[ORIGIN]).await;
    let r = srv
        .http
        .post(srv.url("/v1/upload"))
        .bearer_auth(&other)
        .header("Origin", ORIGIN)
        .multipart(reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(b"x".to_vec()).file_name("x.txt"),
        ))
        .send()
        .await
        .unwrap();
    assert_too_many(r).await;
    let path = create_tus(&srv, &public, Some(ORIGIN)).await;
    let r = patch_small(&srv, &public, &path, Some(ORIGIN)).await;
    assert_too_many(r).await;
    // The account's secret key still has its half.
    let r = srv.upload_as(&key_a, "own.txt", b"own".to_vec(), &[]).await;
    assert_eq!(r.status(), 201);
    drop(one);
    srv.eventually(10, "none arriving", || async {
        srv.app.in_flight.uploads_of(&a) == 0
    })
    .await;
}
