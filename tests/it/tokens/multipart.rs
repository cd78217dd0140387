//! `POST /v1/upload` with a token (`?token=` and `Authorization: Bearer`):
//! the policy decides folder, private and expires, metadata is merged (the
//! token's keys win), each use counts once; every refusal (a contradicting
//! field 400, over `max_size` 413, a sniffed type not allowed 415, an
//! expired, revoked or used-up token 401) stores nothing and spends no use;
//! a token can do nothing but upload.

use super::*;
use std::time::Duration;

both_stores!(
    a_token_uploads_under_its_policy,
    a_contradicting_field_is_a_400_and_spends_no_use,
    over_max_size_is_a_413_and_stores_nothing,
    the_sniffed_type_decides,
    expired_revoked_and_used_up_tokens_are_401,
    a_token_does_nothing_but_upload,
);

async fn a_token_uploads_under_its_policy(b: Backend) {
    let srv = server(b).await;
    for via in BOTH_WAYS {
        let t = token(
            &srv,
            json!({
                "folder": format!("inbox/{via:?}").to_lowercase(),
                "private": true,
                "file_expires": "7d",
                "max_uploads": 3,
                "metadata": {"source": "token", "tenant": "t-1"}
            }),
        )
        .await;
        let folder = format!("inbox/{via:?}").to_lowercase();
        // Only the file part: the policy's folder, private, expires.
        let before = srv.clock.now_ms();
        let f = upload_ok_with(&srv, &t.token, via, "a.txt", b"hello".to_vec(), &[]).await;
        assert_eq!(f["folder"], folder.as_str(), "{f}");
        assert_eq!(f["private"], true, "{f}");
        assert_eq!(f["name"], "a.txt");
        assert_eq!(f["size"], 5);
        let expires = chrono::DateTime::parse_from_rfc3339(f["expires_at"].as_str().unwrap())
            .unwrap()
            .timestamp_millis();
        let week = 7 * 86_400_000;
        assert!(
            (before + week - 5000..=srv.clock.now_ms() + week + 5000).contains(&expires),
            "expires in 7 days: {f}"
        );
        assert_eq!(f["metadata"], json!({"source": "token", "tenant": "t-1"}));
        assert_eq!(uploads_left(&srv, &t.id).await, 2);
        // The same record for the account's secret key.
        let id = f["id"].as_str().unwrap();
        let (status, got) = srv
            .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
            .await;
        assert_eq!((status, &got), (200, &f));
        // Fields that repeat the policy are fine; metadata is merged, the
        // token's keys winning.
        let f = upload_ok_with(
            &srv,
            &t.token,
            via,
            "b.txt",
            b"b".to_vec(),
            &[
                ("folder", &folder),
                ("private", "true"),
                ("expires", "7d"),
                ("metadata", r#"{"source":"form","note":"from the page"}"#),
            ],
        )
        .await;
        assert_eq!(f["folder"], folder.as_str());
        assert_eq!(
            f["metadata"],
            json!({"source": "token", "tenant": "t-1", "note": "from the page"})
        );
        assert_eq!(uploads_left(&srv, &t.id).await, 1);
    }
    // A token without a policy: the root, public, permanent, the form's
    // metadata; the bytes served at the url.
    let t = token(&srv, json!({})).await;
    let f = upload_ok_with(
        &srv,
        &t.token,
        Via::Query,
        "plain.bin",
        b"plain bytes".to_vec(),
        &[("metadata", r#"{"a":"b"}"#)],
    )
    .await;
    assert_eq!(f["folder"], Value::Null);
    assert_eq!(f["private"], false);
    assert_eq!(f["expires_at"], Value::Null);
    assert_eq!(f["metadata"], json!({"a": "b"}));
    let got = crate::common::get_bytes(&srv.http, f["url"].as_str().unwrap()).await;
    assert_eq!(got, b"plain bytes");
    assert_eq!(uploads_left(&srv, &t.id).await, 0);
    // The token's files count in the account's usage like any other.
    let usage = srv.usage().await;
    assert_eq!(usage["upload_count"], 5);
    assert_eq!(listed(&srv, "").await.len(), 5);
    // With an Authorization header, ?token= is not used: a secret key's
    // upload is the key's (the root, no use spent).
    let t = token(&srv, json!({"folder": "tok", "max_uploads": 2})).await;
    let r = srv
        .http
        .post(format!("{}?token={}", srv.url("/v1/upload"), t.token))
        .bearer_auth(&srv.secret_key)
        .multipart(TestServer::form("k.txt", b"k".to_vec(), &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let f: Value = r.json().await.unwrap();
    assert_eq!(f["folder"], Value::Null);
    assert_eq!(uploads_left(&srv, &t.id).await, 2);
}

async fn a_contradicting_field_is_a_400_and_spends_no_use(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    let public = token(
        &srv,
        json!({"folder": "inbox", "file_expires": "7d", "max_uploads": 2,
               "metadata": (0..10).map(|i| (format!("t{i}"), "v".to_string()))
                   .collect::<std::collections::BTreeMap<_, _>>()}),
    )
    .await;
    let private = token(&srv, json!({"private": true, "max_uploads": 2})).await;
    let before = held(&srv).await;
    let seven: String =
        Value::Object((0..7).map(|i| (format!("f{i}"), json!("v"))).collect()).to_string();
    for via in BOTH_WAYS {
        for fields in [
            vec![("folder", "elsewhere")],
            vec![("folder", "inbox/sub")],
            vec![("private", "true")],
            vec![("expires", "1d")],
            vec![("expires", "8d")],
            // 10 keys of the token's and 7 of the form's: 17 once merged.
            vec![("metadata", seven.as_str())],
            // A bad field is still a 400.
            vec![("metadata", r#"{"Bad":"x"}"#)],
        ] {
            let r = upload_with(&srv, &public.token, via, "c.txt", b"c".to_vec(), &fields).await;
            assert_eq!(
                code_of(r).await,
                (400, "bad_request".into()),
                "{via:?} {fields:?}"
            );
        }
        for fields in [vec![("private", "false")]] {
            let r = upload_with(&srv, &private.token, via, "c.txt", b"c".to_vec(), &fields).await;
            assert_eq!(
                code_of(r).await,
                (400, "bad_request".into()),
                "private token, {via:?} {fields:?}"
            );
        }
    }
    // A token that names no folder and no lifetime decides them too: the
    // root, permanent files.
    let bare = token(&srv, json!({})).await;
    for via in BOTH_WAYS {
        for fields in [vec![("folder", "releases/v1.2")], vec![("expires", "1s")]] {
            let r = upload_with(&srv, &bare.token, via, "c.txt", b"c".to_vec(), &fields).await;
            assert_eq!(
                code_of(r).await,
                (400, "bad_request".into()),
                "bare token, {via:?} {fields:?}"
            );
        }
    }
    assert_eq!(uploads_left(&srv, &bare.id).await, 1, "no use spent");
    nothing_stored(&srv, &before, s3.as_ref()).await;
    assert_eq!(uploads_left(&srv, &public.id).await, 2, "no use spent");
    assert_eq!(uploads_left(&srv, &private.id).await, 2, "no use spent");
    // Both uses still there.
    for via in BOTH_WAYS {
        let f = upload_ok_with(&srv, &public.token, via, "ok.txt", b"ok".to_vec(), &[]).await;
        assert_eq!(f["folder"], "inbox");
    }
    assert_eq!(uploads_left(&srv, &public.id).await, 0);
}

async fn over_max_size_is_a_413_and_stores_nothing(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    let t = token(&srv, json!({"max_size": 1000, "max_uploads": 2})).await;
    let before = held(&srv).await;
    for via in BOTH_WAYS {
        // Known length (Content-Length): refused before reading.
        let r = upload_with(&srv, &t.token, via, "big.bin", binary(1001, 1), &[]).await;
        refused(r, 413, "file_too_large").await;
        // Far over, known length.
        let r = upload_with(&srv, &t.token, via, "big.bin", binary(300_000, 2), &[]).await;
        refused(r, 413, "file_too_large").await;
        // A chunked body (no Content-Length): refused as it streams.
        for total in [1001usize, 2_000_000] {
            let chunk = 500;
            let chunks = futures_util::stream::iter((0..total.div_ceil(chunk)).map(move |i| {
                let n = chunk.min(total - i * chunk);
                Ok::<_, std::io::Error>(bytes::Bytes::from(binary(n, i as u8)))
            }));
            let form = Form::new().part(
                "file",
                Part::stream(reqwest::Body::wrap_stream(chunks)).file_name("stream.bin"),
            );
            let r = post_with(&srv, &t.token, via, form).await;
            refused(r, 413, "file_too_large").await;
        }
    }
    nothing_stored(&srv, &before, s3.as_ref()).await;
    assert_eq!(uploads_left(&srv, &t.id).await, 2, "no use spent");
    // Exactly max_size passes, known length or streamed.
    upload_ok_with(&srv, &t.token, Via::Query, "edge.bin", binary(1000, 3), &[]).await;
    let chunks = futures_util::stream::iter(
        (0..4).map(|i| Ok::<_, std::io::Error>(bytes::Bytes::from(binary(250, i)))),
    );
    let form = Form::new().part(
        "file",
        Part::stream(reqwest::Body::wrap_stream(chunks)).file_name("edge-stream.bin"),
    );
    let r = post_with(&srv, &t.token, Via::Bearer, form).await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    assert_eq!(uploads_left(&srv, &t.id).await, 0);
    // The plan's limit still applies under a token without max_size.
    let t = token(&srv, json!({})).await;
    let r = upload_with(
        &srv,
        &t.token,
        Via::Query,
        "plan.bin",
        binary(PLAN_MAX as usize + 1, 4),
        &[],
    )
    .await;
    refused(r, 413, "file_too_large").await;
    assert_eq!(uploads_left(&srv, &t.id).await, 1);
}

async fn the_sniffed_type_decides(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    let png_only = token(&srv, json!({"types": ["image/png"], "max_uploads": 10})).await;
    let images = token(&srv, json!({"types": ["image/*"], "max_uploads": 10})).await;
    let text = token(
        &srv,
        json!({"types": ["text/plain", "application/json"], "max_uploads": 10}),
    )
    .await;
    let svg_ok = token(&srv, json!({"types": ["image/svg+xml"], "max_uploads": 10})).await;
    let before = held(&srv).await;
    // Refused: what the bytes are, whatever the name or the declared type.
    let refusals: Vec<(&Token, &str, Vec<u8>, &str)> = vec![
        (&png_only, "x.png", elf(), "image/png"),
        (&png_only, "x.png", html(), "image/png"),
        (&png_only, "x.png", html(), "text/html"),
        (&png_only, "x.png", jpeg(), "image/png"),
        (&png_only, "x.png", b"tiny".to_vec(), "image/png"),
        (&images, "x.jpg", mz(), "image/jpeg"),
        (&images, "x.png", elf(), "image/png"),
        (&images, "x.svg", svg(), "image/svg+xml"),
        (&images, "x.png", html(), "image/png"),
        (&images, "x.bin", binary(100, 0), "image/png"),
        (&text, "x.txt", elf(), "text/plain"),
        (&text, "x.txt", binary(100, 0), "text/plain"),
        (&svg_ok, "x.svg", png(), "image/svg+xml"),
    ];
    for (i, (t, name, bytes, declared)) in refusals.into_iter().enumerate() {
        for via in BOTH_WAYS {
            let r = post_with(
                &srv,
                &t.token,
                via,
                form_declaring(name, bytes.clone(), declared),
            )
            .await;
            assert_eq!(
                code_of(r).await,
                (415, "unsupported_media_type".into()),
                "refusal #{i}: {name} ({declared}) under {} via {via:?}",
                t.record["policy"]["types"]
            );
        }
    }
    nothing_stored(&srv, &before, s3.as_ref()).await;
    for t in [&png_only, &images, &text, &svg_ok] {
        assert_eq!(uploads_left(&srv, &t.id).await, 10, "no use spent");
    }
    // Taken, stored with the sniffed type, not the declared one.
    let taken: Vec<(&Token, &str, Vec<u8>, &str, &str)> = vec![
        (&png_only, "x.png", png(), "text/html", "image/png"),
        (
            &png_only,
            "photo.jpg",
            png_of(5000),
            "image/jpeg",
            "image/png",
        ),
        (
            &images,
            "x.png",
            png(),
            "application/octet-stream",
            "image/png",
        ),
        (&images, "x.jpg", jpeg(), "image/jpeg", "image/jpeg"),
        (&images, "x.gif", gif(), "text/plain", "image/gif"),
        (
            &text,
            "notes.txt",
            b"hello, world\n".to_vec(),
            "text/html",
            "text/plain",
        ),
        (
            &text,
            "d.json",
            br#"{"a":1}"#.to_vec(),
            "application/json",
            "application/json",
        ),
        (&svg_ok, "x.svg", svg(), "text/plain", "image/svg+xml"),
    ];
    let mut files = 0;
    for (t, name, bytes, declared, want) in taken {
        let r = post_with(
            &srv,
            &t.token,
            Via::Query,
            form_declaring(name, bytes.clone(), declared),
        )
        .await;
        assert_eq!(
            r.status(),
            201,
            "{name} ({declared}) under {}: {:?}",
            t.record["policy"]["types"],
            r.text().await
        );
        let f: Value = r.json().await.unwrap();
        files += 1;
        assert_eq!(f["type"], want, "{name} declared {declared}: {f}");
        assert_eq!(f["size"], bytes.len());
        // The CDN serves it with that type.
        let got = srv
            .http
            .get(f["url"].as_str().unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(got.status(), 200);
        assert!(
            got.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with(want),
            "{name}: {:?}",
            got.headers()["content-type"]
        );
        assert_eq!(got.bytes().await.unwrap().to_vec(), bytes);
    }
    assert_eq!(listed(&srv, "").await.len(), files);
    assert_eq!(uploads_left(&srv, &png_only.id).await, 8);
    assert_eq!(uploads_left(&srv, &images.id).await, 7);
    assert_eq!(uploads_left(&srv, &text.id).await, 8);
    assert_eq!(uploads_left(&srv, &svg_ok.id).await, 9);
}

async fn expired_revoked_and_used_up_tokens_are_401(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    // Expired: the server's clock moved past expires_in.
    let hour = token(&srv, json!({"max_uploads": 5})).await;
    let second = token(&srv, json!({"max_uploads": 5, "expires_in": 1})).await;
    upload_ok_with(&srv, &hour.token, Via::Query, "a.txt", b"a".to_vec(), &[]).await;
    upload_ok_with(
        &srv,
        &second.token,
        Via::Bearer,
        "b.txt",
        b"b".to_vec(),
        &[],
    )
    .await;
    srv.clock.advance(Duration::from_secs(2));
    for via in BOTH_WAYS {
        let r = upload_with(&srv, &second.token, via, "late.txt", b"l".to_vec(), &[]).await;
        refused(r, 401, "unauthorized").await;
    }
    upload_ok_with(&srv, &hour.token, Via::Query, "c.txt", b"c".to_vec(), &[]).await;
    srv.clock.advance(Duration::from_hours(1));
    for via in BOTH_WAYS {
        let r = upload_with(&srv, &hour.token, via, "late.txt", b"l".to_vec(), &[]).await;
        refused(r, 401, "unauthorized").await;
    }
    // Revoked: DELETE, then every use is 401.
    let revoked = token(&srv, json!({"max_uploads": 5})).await;
    upload_ok_with(
        &srv,
        &revoked.token,
        Via::Query,
        "d.txt",
        b"d".to_vec(),
        &[],
    )
    .await;
    assert_eq!(
        delete_token_as(&srv, &srv.secret_key, &revoked.id)
            .await
            .status(),
        200
    );
    for via in BOTH_WAYS {
        let r = upload_with(&srv, &revoked.token, via, "e.txt", b"e".to_vec(), &[]).await;
        refused(r, 401, "unauthorized").await;
    }
    // Used up: max_uploads files, then 401.
    let two = token(&srv, json!({"max_uploads": 2})).await;
    upload_ok_with(&srv, &two.token, Via::Query, "f.txt", b"f".to_vec(), &[]).await;
    upload_ok_with(&srv, &two.token, Via::Bearer, "g.txt", b"g".to_vec(), &[]).await;
    assert_eq!(uploads_left(&srv, &two.id).await, 0);
    let before = held(&srv).await;
    assert_eq!(before.files, 6);
    for via in BOTH_WAYS {
        let r = upload_with(&srv, &two.token, via, "h.txt", b"h".to_vec(), &[]).await;
        refused(r, 401, "unauthorized").await;
    }
    // Refused before anything is read: a large body is a 401 too, and
    // nothing stays. (The guard reads no rest of a body for a caller it
    // refuses — src/server/mod.rs, by design — so the client may see the
    // connection closed while it still sends, instead of the 401; a client
    // of its own, as that connection is not to be used again.)
    let r = reqwest::Client::new()
        .post(format!("{}?token={}", srv.url("/v1/upload"), two.token))
        .multipart(TestServer::form("huge.bin", binary(2_000_000, 9), &[]))
        .send()
        .await;
    match r {
        Ok(r) => refused(r, 401, "unauthorized").await,
        Err(e) => assert!(e.is_request(), "{e}"),
    }
    nothing_stored(&srv, &before, s3.as_ref()).await;
    assert_eq!(uploads_left(&srv, &two.id).await, 0);
}

async fn a_token_does_nothing_but_upload(b: Backend) {
    let srv = server(b).await;
    let t = token(&srv, json!({"max_uploads": 5})).await;
    let f = upload_ok_with(&srv, &t.token, Via::Query, "mine.txt", b"m".to_vec(), &[]).await;
    let id = f["id"].as_str().unwrap().to_string();
    let tus_url = tus_created(&srv, &srv.secret_key, 10, &[("filename", "s.bin")]).await;
    let calls: Vec<(reqwest::Method, String, Option<Value>)> = vec![
        (reqwest::Method::GET, "/v1/files".into(), None),
        (reqwest::Method::GET, format!("/v1/files/{id}"), None),
        (reqwest::Method::DELETE, format!("/v1/files/{id}"), None),
        (
            reqwest::Method::POST,
            format!("/v1/files/{id}/signed-url"),
            Some(json!({"expires_in": 60})),
        ),
        (reqwest::Method::GET, "/v1/usage".into(), None),
        (reqwest::Method::GET, "/v1/uploads".into(), None),
        (
            reqwest::Method::POST,
            "/v1/upload-tokens".into(),
            Some(json!({})),
        ),
        (
            reqwest::Method::GET,
            format!("/v1/upload-tokens/{}", t.id),
            None,
        ),
        (
            reqwest::Method::DELETE,
            format!("/v1/upload-tokens/{}", t.id),
            None,
        ),
    ];
    for (method, path, body) in &calls {
        for via in BOTH_WAYS {
            let mut req = srv.http.request(method.clone(), srv.url(path));
            req = match via {
                Via::Bearer => req.bearer_auth(&t.token),
                Via::Query => srv.http.request(
                    method.clone(),
                    format!("{}?token={}", srv.url(path), t.token),
                ),
            };
            if let Some(b) = body {
                req = req.json(b);
            }
            let r = req.send().await.unwrap();
            assert_eq!(
                code_of(r).await,
                (401, "unauthorized".into()),
                "{method} {path} with the token ({via:?})"
            );
        }
    }
    // A secret key's tus upload is not the token's either.
    for method in [
        reqwest::Method::HEAD,
        reqwest::Method::GET,
        reqwest::Method::DELETE,
    ] {
        let r = tus_request(&srv, method.clone(), &tus_url, &t.token)
            .send()
            .await
            .unwrap();
        assert!(
            [401, 404].contains(&r.status().as_u16()),
            "{method} of a secret key's tus upload with a token: {}",
            r.status()
        );
    }
    // Nothing happened: the file is there, the token live with its uses.
    let (status, _) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
        .await;
    assert_eq!(status, 200);
    let rec = token_record(&srv, &t.id).await;
    assert!(rec.get("revoked_at").is_none(), "{rec}");
    assert_eq!(rec["uploads_left"], 4);
    assert_eq!(srv.count("SELECT COUNT(*) FROM upload_tokens"), 1);
    let (status, _) = srv
        .get_json(&srv.secret_key, &tus_url.replace(&srv.base_url, ""))
        .await;
    assert_eq!(status, 200, "the secret key's tus upload is still there");
}
