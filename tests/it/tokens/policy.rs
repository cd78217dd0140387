//! Public keys with an upload policy, made as an operator makes them:
//! `filestore admin key create --kind public --origin O --max-size S
//! --type T… --folder F`. The same refusals as a token's (413, 415, 400),
//! storing nothing; a passing upload lands in F with its sniffed type; the
//! Origin rule is unchanged; a secret key refuses the flags.

use super::*;
use crate::common::process;

both_stores!(
    a_public_keys_policy_refuses_and_places_uploads,
    the_policy_flags_are_for_public_keys_only,
);

/// `filestore admin ARGS` on the server's metadata (its data dir, or its
/// PostgreSQL database).
fn admin(srv: &TestServer, args: &[&str]) -> std::process::Output {
    let url = srv.on_postgres().then(|| srv.database_url().to_string());
    process::admin(&srv.data_dir, url.as_deref(), args)
}

/// `admin key create --kind public …` with the policy flags `more`: the
/// key (`pk_…`) and its JSON record.
fn public_key(srv: &TestServer, more: &[&str]) -> (String, Value) {
    let mut args = vec![
        "key",
        "create",
        "--account",
        &srv.account_id,
        "--kind",
        "public",
        "--origin",
        ORIGIN,
        "--json",
    ];
    args.extend_from_slice(more);
    let out = admin(srv, &args);
    assert!(
        out.status.success(),
        "admin {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let rec: Value = serde_json::from_slice(&out.stdout).expect("admin --json prints JSON");
    let key = rec["key"]
        .as_str()
        .expect("the record has the key")
        .to_string();
    assert!(key.starts_with("pk_"), "{rec}");
    (key, rec)
}

async fn from_origin(srv: &TestServer, key: &str, origin: &str, form: Form) -> Response {
    srv.http
        .post(srv.url("/v1/upload"))
        .bearer_auth(key)
        .header("origin", origin)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

async fn a_public_keys_policy_refuses_and_places_uploads(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    let (pk, rec) = public_key(
        &srv,
        &[
            "--max-size",
            "1000",
            "--type",
            "image/png",
            "--type",
            "image/jpeg",
            "--folder",
            "avatars",
        ],
    );
    // The record (--json) shows the policy.
    let text = rec.to_string();
    assert!(
        text.contains("avatars") && text.contains("image/png") && text.contains("1000"),
        "the key's record shows its policy: {rec}"
    );
    let before = held(&srv).await;
    // 413: over max-size, with or without Content-Length.
    let r = from_origin(
        &srv,
        &pk,
        ORIGIN,
        TestServer::form("big.png", png_of(1001), &[]),
    )
    .await;
    refused(r, 413, "file_too_large").await;
    let big = png_of(5000);
    let chunks = futures_util::stream::iter(
        big.chunks(700)
            .map(|c| Ok::<_, std::io::Error>(bytes::Bytes::from(c.to_vec())))
            .collect::<Vec<_>>(),
    );
    let form = Form::new().part(
        "file",
        Part::stream(reqwest::Body::wrap_stream(chunks)).file_name("big.png"),
    );
    let r = from_origin(&srv, &pk, ORIGIN, form).await;
    refused(r, 413, "file_too_large").await;
    // 415: what the bytes are, whatever the name.
    for (name, bytes) in [
        ("x.png", elf()),
        ("x.png", html()),
        ("x.jpg", mz()),
        ("x.png", gif()),
        ("x.svg", svg()),
    ] {
        let r = from_origin(&srv, &pk, ORIGIN, form_declaring(name, bytes, "image/png")).await;
        assert_eq!(
            code_of(r).await,
            (415, "unsupported_media_type".into()),
            "{name}"
        );
    }
    // 400: another folder.
    for folder in ["other", "avatars/sub"] {
        let r = from_origin(
            &srv,
            &pk,
            ORIGIN,
            TestServer::form("a.png", png(), &[("folder", folder)]),
        )
        .await;
        assert_eq!(code_of(r).await, (400, "bad_request".into()), "{folder}");
    }
    // The Origin rule is unchanged: another origin, or none, is 403.
    let r = from_origin(
        &srv,
        &pk,
        "https://evil.example",
        TestServer::form("a.png", png(), &[]),
    )
    .await;
    refused(r, 403, "forbidden").await;
    let r = srv
        .http
        .post(srv.url("/v1/upload"))
        .bearer_auth(&pk)
        .multipart(TestServer::form("a.png", png(), &[]))
        .send()
        .await
        .unwrap();
    refused(r, 403, "forbidden").await;
    // tus: Upload-Length over max-size is 413 at creation; an ELF is 415.
    let r = tus_create(&srv, &pk, Some(ORIGIN), 1001, &[("filename", "t.png")]).await;
    refused(r, 413, "file_too_large").await;
    let r = tus_create(&srv, &pk, Some(ORIGIN), 128, &[("filename", "t.png")]).await;
    assert_eq!(r.status(), 201);
    let url = r.headers()["location"].to_str().unwrap().to_string();
    let r = tus_request(&srv, reqwest::Method::PATCH, &url, &pk)
        .header("origin", ORIGIN)
        .header(OCTETS.0, OCTETS.1)
        .header("upload-offset", 0)
        .body(elf())
        .send()
        .await
        .unwrap();
    refused(r, 415, "unsupported_media_type").await;
    let r = tus_create(
        &srv,
        &pk,
        Some(ORIGIN),
        100,
        &[("filename", "t.png"), ("folder", "other")],
    )
    .await;
    refused(r, 400, "bad_request").await;
    nothing_stored(&srv, &before, s3.as_ref()).await;
    // What passes lands in the key's folder, typed by its bytes.
    let r = from_origin(
        &srv,
        &pk,
        ORIGIN,
        form_declaring("me.gif", png_of(1000), "image/gif"),
    )
    .await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        ORIGIN,
        "the origin rule's CORS, unchanged"
    );
    let f: Value = r.json().await.unwrap();
    assert_eq!(f["folder"], "avatars");
    assert_eq!(f["type"], "image/png");
    let r = from_origin(
        &srv,
        &pk,
        ORIGIN,
        TestServer::form("me.jpg", jpeg(), &[("folder", "avatars")]),
    )
    .await;
    assert_eq!(r.status(), 201);
    let f: Value = r.json().await.unwrap();
    assert_eq!(
        (&f["folder"], &f["type"]),
        (&json!("avatars"), &json!("image/jpeg"))
    );
    let r = tus_create(&srv, &pk, Some(ORIGIN), 300, &[("filename", "t.png")]).await;
    assert_eq!(r.status(), 201);
    let url = r.headers()["location"].to_str().unwrap().to_string();
    let r = tus_request(&srv, reqwest::Method::PATCH, &url, &pk)
        .header("origin", ORIGIN)
        .header(OCTETS.0, OCTETS.1)
        .header("upload-offset", 0)
        .body(png_of(300))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    let (_, f) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
        .await;
    assert_eq!(
        (&f["folder"], &f["type"]),
        (&json!("avatars"), &json!("image/png"))
    );
    assert_eq!(listed(&srv, "folder=avatars").await.len(), 3);
    // A public key without a policy is as before: any type, any folder.
    let (plain, _) = public_key(&srv, &[]);
    let r = from_origin(
        &srv,
        &plain,
        ORIGIN,
        TestServer::form("x.bin", elf(), &[("folder", "anything")]),
    )
    .await;
    assert_eq!(r.status(), 201);
    // The secret key is not bound by a public key's policy.
    let f = srv
        .upload_ok("x.bin", elf(), &[("folder", "elsewhere")])
        .await;
    assert_eq!(f["folder"], "elsewhere");
}

async fn the_policy_flags_are_for_public_keys_only(b: Backend) {
    let srv = server(b).await;
    let keys_before = srv.count("SELECT COUNT(*) FROM api_keys");
    for flags in [
        vec!["--max-size", "1000"],
        vec!["--type", "image/png"],
        vec!["--folder", "x"],
    ] {
        let mut args = vec![
            "key",
            "create",
            "--account",
            srv.account_id.as_str(),
            "--kind",
            "secret",
        ];
        args.extend_from_slice(&flags);
        let out = admin(&srv, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flags:?} on a secret key: refused");
        assert!(
            err.contains("public keys only"),
            "{flags:?}: says why: {err}"
        );
    }
    // Bad values: refused too.
    for flags in [vec!["--type", "png"], vec!["--folder", "../x"]] {
        let mut args = vec![
            "key",
            "create",
            "--account",
            srv.account_id.as_str(),
            "--kind",
            "public",
            "--origin",
            ORIGIN,
        ];
        args.extend_from_slice(&flags);
        let out = admin(&srv, &args);
        assert!(!out.status.success(), "{flags:?}: refused");
    }
    assert_eq!(
        srv.count("SELECT COUNT(*) FROM api_keys"),
        keys_before,
        "no refused command made a key"
    );
}
