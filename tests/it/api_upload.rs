//! POST /v1/upload: the record, its fields, and every way to get it wrong.

use crate::common::get_bytes;
use crate::common::{error_code, Backend, TestServer};
use reqwest::multipart::{Form, Part};

both_stores!(
    upload_returns_201_with_record_and_location,
    upload_private_and_expiring,
    upload_validation_errors,
    upload_names_are_stripped_of_directories,
    upload_auth_errors,
    public_keys_upload_only_from_their_origins,
    idempotency_key_replays_the_same_file,
    metadata_round_trips_through_upload_get_and_list,
    each_bad_metadata_is_a_400,
);

async fn upload_returns_201_with_record_and_location(b: Backend) {
    let srv = TestServer::on(b).await;
    let r = srv
        .upload(
            "report.pdf",
            b"%PDF-1.4 hello".to_vec(),
            &[("folder", "/docs/2026/")],
        )
        .await;
    assert_eq!(r.status(), 201);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let f: serde_json::Value = r.json().await.unwrap();
    let id = f["id"].as_str().unwrap();
    assert!(id.starts_with("f_") && id.len() >= 24, "{id}");
    assert_eq!(location, format!("/v1/files/{id}"));
    assert_eq!(f["name"], "report.pdf");
    assert_eq!(f["folder"], "docs/2026");
    assert_eq!(f["size"], 14);
    assert_eq!(f["type"], "application/pdf");
    assert_eq!(f["private"], false);
    assert_eq!(f["expires_at"], serde_json::Value::Null);
    let created = f["created_at"].as_str().unwrap();
    assert!(created.ends_with('Z') && chrono::DateTime::parse_from_rfc3339(created).is_ok());
    let url = f["url"].as_str().unwrap();
    assert_eq!(
        url,
        format!("{}/live/{}/{id}/report.pdf", srv.base_url, srv.account_id)
    );
    // The CDN serves exactly what was stored.
    let body = get_bytes(&srv.http, url).await;
    assert_eq!(&body[..], b"%PDF-1.4 hello");
    // get returns the same record.
    let (status, got) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
        .await;
    assert_eq!((status, &got), (200, &f));
    // The part's own type wins when it is specific; no type and no known extension gives octet-stream.
    let form = Form::new().part(
        "file",
        Part::bytes(b"{}".to_vec())
            .file_name("data")
            .mime_str("application/json")
            .unwrap(),
    );
    let r = srv.post_form(&srv.secret_key, form).await;
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap()["type"],
        "application/json"
    );
    let f = srv.upload_ok("blob.zzunknown", vec![1, 2, 3], &[]).await;
    assert_eq!(f["type"], "application/octet-stream");
    assert_eq!(f["folder"], serde_json::Value::Null);
    // An empty file is a file.
    let f = srv.upload_ok("empty.txt", vec![], &[]).await;
    assert_eq!(f["size"], 0);
}

async fn upload_private_and_expiring(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv
        .upload_ok(
            "secret.txt",
            b"s".to_vec(),
            &[("private", "true"), ("expires", "7d")],
        )
        .await;
    assert_eq!(f["private"], true);
    assert_eq!(f["url"], serde_json::Value::Null);
    let created = chrono::DateTime::parse_from_rfc3339(f["created_at"].as_str().unwrap()).unwrap();
    let expires = chrono::DateTime::parse_from_rfc3339(f["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!((expires - created).num_seconds(), 7 * 86_400);
    for (raw, secs) in [("30s", 30), ("15m", 900), ("1h", 3600), ("2w", 1_209_600)] {
        let f = srv
            .upload_ok("e.txt", b"e".to_vec(), &[("expires", raw)])
            .await;
        let c = chrono::DateTime::parse_from_rfc3339(f["created_at"].as_str().unwrap()).unwrap();
        let e = chrono::DateTime::parse_from_rfc3339(f["expires_at"].as_str().unwrap()).unwrap();
        assert_eq!((e - c).num_seconds(), secs, "{raw}");
    }
    let f = srv
        .upload_ok("p.txt", b"p".to_vec(), &[("private", "false")])
        .await;
    assert!(f["url"].is_string());
}

async fn upload_validation_errors(b: Backend) {
    let srv = TestServer::on(b).await;
    let key = &srv.secret_key;
    // Bodies that are not an upload form at all.
    let not_forms: [(&str, Option<&str>, &[u8]); 3] = [
        ("JSON", Some("application/json"), br#"{"file": "x"}"#),
        ("no body", None, b""),
        (
            "multipart in name only",
            Some("multipart/form-data; boundary=XYZ"),
            b"this is not multipart",
        ),
    ];
    for (what, content_type, body) in not_forms {
        let mut req = srv
            .http
            .post(srv.url("/v1/upload"))
            .bearer_auth(key)
            .body(body.to_vec());
        if let Some(t) = content_type {
            req = req.header("content-type", t);
        }
        let r = req.send().await.unwrap();
        assert_eq!(error_code(r).await, (400, "bad_request".into()), "{what}");
    }
    // Forms without exactly one usable file part.
    let bad_forms = [
        ("no file part", Form::new().text("folder", "docs")),
        (
            "two file parts",
            TestServer::form("a.txt", b"a".to_vec(), &[])
                .part("file", Part::bytes(b"b".to_vec()).file_name("b.txt")),
        ),
        (
            "a name that is only a directory",
            Form::new().part("file", Part::bytes(b"x".to_vec()).file_name("../")),
        ),
    ];
    for (what, form) in bad_forms {
        let r = srv.post_form(key, form).await;
        assert_eq!(error_code(r).await, (400, "bad_request".into()), "{what}");
    }
    for fields in [
        vec![("folder", "../etc")],
        vec![("folder", "a//b")],
        vec![("folder", "has\u{1}control")],
        vec![("expires", "1y")],
        vec![("expires", "0h")],
        vec![("expires", "366d")],
        vec![("expires", "soon")],
        vec![("private", "maybe")],
    ] {
        let r = srv.upload("x.txt", b"x".to_vec(), &fields).await;
        assert_eq!(
            error_code(r).await,
            (400, "bad_request".into()),
            "{fields:?}"
        );
    }
    // Nothing of the refused uploads stayed.
    assert_eq!(srv.leftovers(), (0, 0, 0));
    assert_eq!(srv.blob_count().await, 0);
}

async fn upload_names_are_stripped_of_directories(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv
        .upload_ok("../../etc/passwd", b"root".to_vec(), &[])
        .await;
    assert_eq!(f["name"], "passwd");
    let f = srv.upload_ok("..\\..\\win.ini", b"w".to_vec(), &[]).await;
    assert_eq!(f["name"], "win.ini");
    let f = srv
        .upload_ok("naïve café #1?.txt", b"u".to_vec(), &[])
        .await;
    assert_eq!(f["name"], "naïve café #1?.txt");
    let url = f["url"].as_str().unwrap();
    assert!(
        url.ends_with("/na%C3%AFve%20caf%C3%A9%20%231%3F.txt"),
        "{url}"
    );
    let r = srv.http.get(url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(&r.bytes().await.unwrap()[..], b"u");
}

async fn upload_auth_errors(b: Backend) {
    let srv = TestServer::on(b).await;
    let form = || TestServer::form("a.txt", b"a".to_vec(), &[]);
    let r = srv
        .http
        .post(srv.url("/v1/upload"))
        .multipart(form())
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
    let r = srv.post_form("sk_wrong", form()).await;
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
    let r = srv
        .http
        .post(srv.url("/v1/upload"))
        .header("authorization", "Basic abc")
        .multipart(form())
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
    // A revoked key is refused at once.
    let key = srv.new_key("secret", &[]).await;
    assert_eq!(
        srv.upload_as(&key, "a.txt", b"a".to_vec(), &[])
            .await
            .status(),
        201
    );
    let key_id = srv
        .app
        .meta
        .key_by_hash(filestore::testing::domain::ids::key_hash(&key))
        .await
        .unwrap()
        .expect("the key is live")
        .0
        .id;
    filestore::testing::service::admin::revoke_key(&*srv.app.meta, &key_id, 0)
        .await
        .unwrap();
    let r = srv.upload_as(&key, "a.txt", b"a".to_vec(), &[]).await;
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
    // 401 comes before any other error: a bad body with no key is still 401.
    let r = srv
        .http
        .post(srv.url("/v1/upload"))
        .body("junk")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
}

async fn public_keys_upload_only_from_their_origins(b: Backend) {
    let srv = TestServer::on(b).await;
    let pk = srv
        .new_key(
            "public",
            &["https://app.example.com", "https://*.example.org"],
        )
        .await;
    assert!(pk.starts_with("pk_"));
    let up = |origin: Option<&'static str>, fields: Vec<(&'static str, &'static str)>| {
        let mut req = srv
            .http
            .post(srv.url("/v1/upload"))
            .bearer_auth(&pk)
            .multipart(TestServer::form("a.txt", b"a".to_vec(), &fields));
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        req.send()
    };
    let r = up(Some("https://app.example.com"), vec![]).await.unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "https://app.example.com"
    );
    assert_eq!(
        up(Some("https://cdn.example.org"), vec![])
            .await
            .unwrap()
            .status(),
        201
    );
    assert_eq!(
        error_code(up(Some("https://evil.com"), vec![]).await.unwrap()).await,
        (403, "forbidden".into())
    );
    assert_eq!(
        error_code(up(Some("https://example.org"), vec![]).await.unwrap()).await,
        (403, "forbidden".into())
    );
    assert_eq!(
        error_code(up(None, vec![]).await.unwrap()).await,
        (403, "forbidden".into())
    );
    // Private uploads need a secret key.
    let r = up(Some("https://app.example.com"), vec![("private", "true")])
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    // Public keys may call nothing else.
    for path in ["/v1/files", "/v1/usage", "/v1/whoami", "/v1/files/f_x"] {
        let r = srv
            .http
            .get(srv.url(path))
            .bearer_auth(&pk)
            .header("origin", "https://app.example.com")
            .send()
            .await
            .unwrap();
        assert_eq!(error_code(r).await, (403, "forbidden".into()), "{path}");
    }
    let r = srv
        .http
        .delete(srv.url("/v1/files/f_x"))
        .bearer_auth(&pk)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
    let r = srv
        .sign_as(&pk, "f_x", serde_json::json!({"expires_in": 60}))
        .await;
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
}

async fn idempotency_key_replays_the_same_file(b: Backend) {
    let srv = TestServer::on(b).await;
    let send = |key: &'static str, body: &'static [u8]| {
        srv.http
            .post(srv.url("/v1/upload"))
            .bearer_auth(&srv.secret_key)
            .header("idempotency-key", key)
            .multipart(TestServer::form("a.txt", body.to_vec(), &[]))
            .send()
    };
    let first: serde_json::Value = send("k-1", b"abc").await.unwrap().json().await.unwrap();
    let again = send("k-1", b"abc").await.unwrap();
    assert_eq!(again.status(), 201);
    let again: serde_json::Value = again.json().await.unwrap();
    assert_eq!(first, again);
    let other: serde_json::Value = send("k-2", b"abc").await.unwrap().json().await.unwrap();
    assert_ne!(first["id"], other["id"]);
    let usage = srv.usage().await;
    assert_eq!(usage["upload_count"], 2);
    assert_eq!(usage["storage_bytes"], 6);
    let (files, queued, _) = srv.leftovers();
    assert_eq!(files, 2);
    srv.eventually(5, "replayed blob removed", || async {
        srv.blob_count().await == 2
    })
    .await;
    assert_eq!(queued, 0);
    // Another account's identical key is its own.
    let (_acc, key2) = srv.new_account("other", "free").await;
    let r = srv
        .http
        .post(srv.url("/v1/upload"))
        .bearer_auth(&key2)
        .header("idempotency-key", "k-1")
        .multipart(TestServer::form("a.txt", b"abc".to_vec(), &[]))
        .send()
        .await
        .unwrap();
    let theirs: serde_json::Value = r.json().await.unwrap();
    assert_ne!(theirs["id"], first["id"]);
    // Another key of the same account too: a page's public key that sends
    // the key of a private upload gets a new file of its own, never the
    // private file's record.
    let private = srv
        .http
        .post(srv.url("/v1/upload"))
        .bearer_auth(&srv.secret_key)
        .header("idempotency-key", "payroll-1")
        .multipart(TestServer::form(
            "secret.txt",
            b"salaries".to_vec(),
            &[("private", "true")],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(private.status(), 201);
    let private: serde_json::Value = private.json().await.unwrap();
    let origin = "https://app.example.com";
    let pk = srv.new_key("public", &[origin]).await;
    let send_public = |key: &'static str, body: &'static [u8]| {
        srv.http
            .post(srv.url("/v1/upload"))
            .bearer_auth(&pk)
            .header("origin", origin)
            .header("idempotency-key", key)
            .multipart(TestServer::form("page.txt", body.to_vec(), &[]))
            .send()
    };
    let r = send_public("payroll-1", b"guess").await.unwrap();
    assert_eq!(r.status(), 201);
    let by_page: serde_json::Value = r.json().await.unwrap();
    assert_ne!(by_page["id"], private["id"]);
    assert_eq!(by_page["name"], "page.txt");
    // And a key the page used first is not the secret key's either.
    let r = send_public("order-7", b"page").await.unwrap();
    let page_first: serde_json::Value = r.json().await.unwrap();
    let mine: serde_json::Value = send("order-7", b"mine")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_ne!(mine["id"], page_first["id"]);
    assert_eq!(mine["size"], 4);
    // The page's own retry still replays its own file.
    let again: serde_json::Value = send_public("order-7", b"page")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(again["id"], page_first["id"]);
}

async fn metadata_round_trips_through_upload_get_and_list(b: Backend) {
    let srv = TestServer::on(b).await;
    let key = &srv.secret_key;
    // Whitespace and key order do not matter: the record has it sorted.
    let sent = r#"{ "project": "apollo", "a-b_1": "", "note": "caf\u00e9 \"x\"" }"#;
    let f = srv
        .upload_ok("m.txt", b"m".to_vec(), &[("metadata", sent)])
        .await;
    let want = serde_json::json!({"a-b_1": "", "note": "caf\u{e9} \"x\"", "project": "apollo"});
    assert_eq!(f["metadata"], want);
    let id = f["id"].as_str().unwrap();
    let (status, got) = srv.get_json(key, &format!("/v1/files/{id}")).await;
    assert_eq!((status, &got), (200, &f));
    // None, or an empty field: {}.
    let plain = srv.upload_ok("plain.txt", b"p".to_vec(), &[]).await;
    assert_eq!(plain["metadata"], serde_json::json!({}));
    let empty = srv
        .upload_ok("empty.txt", b"e".to_vec(), &[("metadata", "")])
        .await;
    assert_eq!(empty["metadata"], serde_json::json!({}));
    let (status, list) = srv.get_json(key, "/v1/files").await;
    assert_eq!(status, 200);
    let files = list["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    for listed in files {
        let same = [&f, &plain, &empty]
            .into_iter()
            .find(|r| r["id"] == listed["id"])
            .unwrap();
        assert_eq!(listed, same);
    }
    // Exactly 16 keys and exactly 4096 bytes as compact JSON are taken.
    let sixteen: serde_json::Map<String, serde_json::Value> =
        (0..16).map(|i| (format!("k{i:02}"), "v".into())).collect();
    let sixteen = serde_json::Value::Object(sixteen).to_string();
    let r = srv
        .upload("16.txt", b"x".to_vec(), &[("metadata", &sixteen)])
        .await;
    assert_eq!(r.status(), 201);
    let full = serde_json::json!({ "a": "x".repeat(4096 - 8) }).to_string();
    assert_eq!(full.len(), 4096);
    let r = srv
        .upload("4k.txt", b"x".to_vec(), &[("metadata", &full)])
        .await;
    assert_eq!(r.status(), 201);
}

async fn each_bad_metadata_is_a_400(b: Backend) {
    let srv = TestServer::on(b).await;
    let seventeen: serde_json::Map<String, serde_json::Value> =
        (0..17).map(|i| (format!("k{i:02}"), "v".into())).collect();
    let seventeen = serde_json::Value::Object(seventeen).to_string();
    let over = serde_json::json!({ "a": "x".repeat(4096 - 7) }).to_string();
    let long_key = serde_json::json!({ "k".repeat(65): "v" }).to_string();
    let cases = [
        ("an upper-case key", r#"{"Project":"x"}"#),
        ("a key with a dot", r#"{"a.b":"x"}"#),
        ("an empty key", r#"{"":"x"}"#),
        ("a 65-byte key", long_key.as_str()),
        ("17 keys", seventeen.as_str()),
        ("4097 bytes", over.as_str()),
        ("an array", r#"["a"]"#),
        ("a string", r#""a""#),
        ("not JSON", "project=apollo"),
        ("a number value", r#"{"a":1}"#),
        ("a null value", r#"{"a":null}"#),
        ("an object value", r#"{"a":{"b":"c"}}"#),
    ];
    for (what, raw) in cases {
        // Before and after the file part alike.
        let r = srv
            .upload("bad.txt", b"x".to_vec(), &[("metadata", raw)])
            .await;
        assert_eq!(error_code(r).await, (400, "bad_request".into()), "{what}");
        let form = Form::new()
            .part("file", Part::bytes(b"x".to_vec()).file_name("bad.txt"))
            .text("metadata", raw.to_string());
        let r = srv.post_form(&srv.secret_key, form).await;
        assert_eq!(error_code(r).await, (400, "bad_request".into()), "{what}");
    }
    // Nothing was stored.
    let (_, list) = srv.get_json(&srv.secret_key, "/v1/files").await;
    assert_eq!(list["files"], serde_json::json!([]));
}
