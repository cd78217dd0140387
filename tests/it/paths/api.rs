//! Folders of any characters at the /v1 doors: a multipart upload, tus, a
//! move, a copy, listing (`?folder=` URL-encoded), subfolders, the zip and
//! the folder delete take them; every refusal of the rule is 400
//! bad_request; `GET /v1/files/at` finds the newest file at a path.

use crate::common::{error_code, TestServer};
use base64::Engine as _;
use serde_json::{json, Value};

/// `path` on `srv` with `query`, each pair URL-encoded.
pub(super) fn with_query(srv: &TestServer, path: &str, query: &[(&str, &str)]) -> reqwest::Url {
    let mut url = reqwest::Url::parse(&srv.url(path)).unwrap();
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    url
}

const FOLDER: &str = "my docs/ünï+%";

async fn get(srv: &TestServer, path: &str, query: &[(&str, &str)]) -> (u16, Value) {
    let r = srv
        .http
        .get(with_query(srv, path, query))
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

fn ids(list: &Value) -> Vec<&str> {
    list["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect()
}

/// A tus creation whose Upload-Metadata puts the file in `folder`.
async fn tus_into(srv: &TestServer, folder: &str) -> reqwest::Response {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    srv.http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&srv.secret_key)
        .header("tus-resumable", "1.0.0")
        .header("upload-length", "1")
        .header(
            "upload-metadata",
            format!("filename {},folder {}", b64("t.txt"), b64(folder)),
        )
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_of_any_characters_is_stored_and_lists_back() {
    let srv = TestServer::start().await;
    let r = srv
        .upload("a b.txt", b"hello".to_vec(), &[("folder", FOLDER)])
        .await;
    assert_eq!(r.status(), 201);
    let f: Value = r.json().await.unwrap();
    assert_eq!(f["folder"], FOLDER);
    let id = f["id"].as_str().unwrap();
    srv.upload_ok("other.txt", b"o".to_vec(), &[("folder", "my docs")])
        .await;
    // `+` and `%` encoded in the query, as a client must.
    let (status, list) = get(&srv, "/v1/files", &[("folder", FOLDER)]).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(ids(&list), [id]);
    let (_, list) = get(&srv, "/v1/files", &[("folder", "/my docs/ünï+%/")]).await;
    assert_eq!(ids(&list), [id]);
    let (_, list) = get(
        &srv,
        "/v1/files",
        &[("folder", "my docs"), ("recursive", "true")],
    )
    .await;
    assert_eq!(ids(&list).len(), 2);
    let (_, subs) = get(&srv, "/v1/folders", &[("parent", "my docs")]).await;
    assert_eq!(subs["folders"], json!([{"path": FOLDER, "name": "ünï+%"}]));
    // The file at its path.
    let path = format!("{FOLDER}/a b.txt");
    let (status, at) = get(&srv, "/v1/files/at", &[("path", &path)]).await;
    assert_eq!((status, at["id"].as_str()), (200, Some(id)), "{at}");
    // tus, a move and a copy into such folders.
    let r = tus_into(&srv, "tus *\\ dir/ü").await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    let moved = srv
        .http
        .patch(srv.url(&format!("/v1/files/{id}")))
        .bearer_auth(&srv.secret_key)
        .json(&json!({"folder": "my docs/moved here"}))
        .send()
        .await
        .unwrap();
    assert_eq!(moved.status(), 200);
    let copy = srv
        .http
        .post(srv.url(&format!("/v1/files/{id}/copy")))
        .bearer_auth(&srv.secret_key)
        .json(&json!({"folder": FOLDER}))
        .send()
        .await
        .unwrap();
    assert_eq!(copy.status(), 201);
    let copy: Value = copy.json().await.unwrap();
    assert_eq!(copy["folder"], FOLDER);
    // The zip of `my docs` holds both subfolders under their names.
    let r = srv
        .http
        .get(with_query(
            &srv,
            "/v1/folders/zip",
            &[("folder", "my docs")],
        ))
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["content-disposition"],
        "attachment; filename=\"my docs.zip\"; filename*=UTF-8''my%20docs.zip"
    );
    let zip = r.bytes().await.unwrap();
    for entry in ["ünï+%/a b.txt", "moved here/a b.txt", "other.txt"] {
        let found = zip.windows(entry.len()).any(|w| w == entry.as_bytes());
        assert!(found, "{entry} in the zip");
    }
    // The folder delete takes it and below.
    let r = srv
        .http
        .delete(with_query(&srv, "/v1/folders", &[("folder", "my docs")]))
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["deleted"], 3, "{body}");
    let (status, _) = get(&srv, "/v1/files/at", &[("path", &path)]).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_folder_the_rule_refuses_is_400() {
    let srv = TestServer::start().await;
    let long_segment = "é".repeat(128);
    let too_long = vec!["d".repeat(255); 5].join("/");
    let bad = [
        "/",
        "a//b",
        "./a",
        "a/.",
        "a/../b",
        "..",
        "a\u{1}b",
        "a\tb",
        "a/\u{7f}",
        "a\u{85}",
        "a\u{202e}b",
        &long_segment,
        &too_long,
    ];
    for folder in bad {
        let r = srv
            .upload("x.txt", b"x".to_vec(), &[("folder", folder)])
            .await;
        assert_eq!(
            error_code(r).await,
            (400, "bad_request".into()),
            "{folder:?}"
        );
        let r = tus_into(&srv, folder).await;
        assert_eq!(
            error_code(r).await,
            (400, "bad_request".into()),
            "tus {folder:?}"
        );
        // `folder=/` lists the root's own files (CONTRACT §19).
        if folder == "/" {
            continue;
        }
        let (status, body) = get(&srv, "/v1/files", &[("folder", folder)]).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &json!("bad_request")),
            "list {folder:?}"
        );
    }
    // The edges: 255-byte segments, 1024 bytes in all.
    let widest = format!(
        "{}/{}/e",
        vec!["d".repeat(255); 3].join("/"),
        "d".repeat(254)
    );
    assert_eq!(widest.len(), 1024);
    srv.upload_ok("x.txt", b"x".to_vec(), &[("folder", &widest)])
        .await;
    let r = srv
        .upload("x.txt", b"x".to_vec(), &[("folder", &format!("{widest}e"))])
        .await;
    assert_eq!(error_code(r).await, (400, "bad_request".into()));
    // A path no file can have; none; nothing there.
    for path in ["a//b", "a/", "", "a/.."] {
        let (status, body) = get(&srv, "/v1/files/at", &[("path", path)]).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &json!("bad_request")),
            "{path:?}"
        );
    }
    let (status, body) = get(&srv, "/v1/files/at", &[]).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (400, &json!("bad_request"))
    );
    let (status, body) = get(&srv, "/v1/files/at", &[("path", "nothing/here")]).await;
    assert_eq!((status, &body["error"]["code"]), (404, &json!("not_found")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_file_at_a_path_is_the_newest() {
    let srv = TestServer::start().await;
    let first = srv
        .upload_ok(
            "app.tar.gz",
            b"1".to_vec(),
            &[("folder", "releases/latest")],
        )
        .await;
    let second = srv
        .upload_ok(
            "app.tar.gz",
            b"2".to_vec(),
            &[("folder", "releases/latest")],
        )
        .await;
    srv.upload_ok(
        "app.tar.gz",
        b"3".to_vec(),
        &[("folder", "releases-old/latest")],
    )
    .await;
    for path in ["releases/latest/app.tar.gz", "/releases/latest/app.tar.gz"] {
        let (status, f) = get(&srv, "/v1/files/at", &[("path", path)]).await;
        assert_eq!(status, 200, "{f}");
        assert_eq!(f["id"], second["id"]);
        assert_eq!(f["size"], 1);
    }
    let id = second["id"].as_str().unwrap();
    let r = srv
        .http
        .delete(srv.url(&format!("/v1/files/{id}")))
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let (_, f) = get(
        &srv,
        "/v1/files/at",
        &[("path", "releases/latest/app.tar.gz")],
    )
    .await;
    assert_eq!(f["id"], first["id"]);
    // A public key may not; another account sees nothing there.
    let public = srv.new_key("public", &["https://a.example"]).await;
    let (status, _) = srv
        .get_json(&public, "/v1/files/at?path=releases/latest/app.tar.gz")
        .await;
    assert_eq!(status, 403);
    let (_, other) = srv.new_account("other", "free").await;
    let (status, _) = srv
        .get_json(&other, "/v1/files/at?path=releases/latest/app.tar.gz")
        .await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subfolders_of_any_characters_are_listed_by_name() {
    let srv = TestServer::start().await;
    // Space, `+`, `!` and `%` sort before `/`, like `-` and `.`; `~`, `{`
    // and non-ASCII letters after `z`.
    for folder in [
        "a/x", "a b/y", "a+", "a!/z/w", "a%", "é/ü", "~", "{x}", "z", "a b+/v",
    ] {
        srv.upload_ok("f.txt", b"x".to_vec(), &[("folder", folder)])
            .await;
    }
    let names = |body: &Value| -> Vec<String> {
        body["folders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect()
    };
    let want = ["a", "a b", "a b+", "a!", "a%", "a+", "z", "{x}", "~", "é"];
    let (status, body) = get(&srv, "/v1/folders", &[]).await;
    assert_eq!(status, 200, "{body}");
    let mut sorted = want.to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, want);
    assert_eq!(names(&body), want);
    // Page by page through the cursor.
    let mut seen = Vec::new();
    let mut cursor = String::new();
    loop {
        let mut query = vec![("limit", "3")];
        if !cursor.is_empty() {
            query.push(("cursor", cursor.as_str()));
        }
        let (_, page) = get(&srv, "/v1/folders", &query).await;
        seen.extend(names(&page));
        match page["cursor"].as_str() {
            Some(c) => cursor = c.to_string(),
            None => break,
        }
    }
    assert_eq!(seen, want);
    let (_, body) = get(&srv, "/v1/folders", &[("parent", "a b")]).await;
    assert_eq!(names(&body), ["y"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_tokens_folder_follows_the_rule() {
    use crate::tokens::{create_token_as, token, upload_ok_with, upload_with, Via};
    let srv = TestServer::start().await;
    let t = token(
        &srv,
        json!({"folder": format!("/{FOLDER}/"), "max_uploads": 5}),
    )
    .await;
    assert_eq!(t.record["policy"]["folder"], FOLDER);
    let f = upload_ok_with(&srv, &t.token, Via::Query, "a.txt", b"a".to_vec(), &[]).await;
    assert_eq!(f["folder"], FOLDER);
    // Repeating the policy's folder is fine; another one is refused.
    let f = upload_ok_with(
        &srv,
        &t.token,
        Via::Bearer,
        "b.txt",
        b"b".to_vec(),
        &[("folder", FOLDER)],
    )
    .await;
    assert_eq!(f["folder"], FOLDER);
    let r = upload_with(
        &srv,
        &t.token,
        Via::Bearer,
        "c.txt",
        b"c".to_vec(),
        &[("folder", "my docs")],
    )
    .await;
    assert_eq!(error_code(r).await, (400, "bad_request".into()));
    for bad in ["a//b", "a\u{7}", "a/..", "x\u{2066}"] {
        let r = create_token_as(&srv, &srv.secret_key, &json!({ "folder": bad })).await;
        assert_eq!(error_code(r).await, (400, "bad_request".into()), "{bad:?}");
    }
}
