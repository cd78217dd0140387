//! GET /v1/folders: the immediate subfolders holding a live file at any
//! depth, by name, paged; isolation, validation and keys.

use crate::common::{error_code, Backend, TestServer};
use serde_json::Value;
use std::time::Duration;

both_stores!(
    subfolders_by_name_and_depth,
    pages_expiry_isolation_and_errors
);

async fn names(srv: &TestServer, key: &str, query: &str) -> (Vec<String>, Value) {
    let (status, body) = srv.get_json(key, &format!("/v1/folders{query}")).await;
    assert_eq!(status, 200, "{query}: {body}");
    let names = body["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_string())
        .collect();
    (names, body)
}

async fn put(srv: &TestServer, folder: &str, extra: &[(&str, &str)]) {
    let mut fields = vec![("folder", folder)];
    fields.extend_from_slice(extra);
    srv.upload_ok("f.txt", b"x".to_vec(), &fields).await;
}

async fn subfolders_by_name_and_depth(b: Backend) {
    let srv = TestServer::on(b).await;
    let key = srv.secret_key.clone();
    assert_eq!(names(&srv, &key, "").await.0, Vec::<String>::new());
    // Bytewise "a-b" and "a.c" lie between "a" and "a/x": still by name.
    for f in ["a/x", "a-b", "a.c/d", "ab/c/d/e", "B", "deep/1/2/3"] {
        put(&srv, f, &[]).await;
    }
    srv.upload_ok("root.txt", b"r".to_vec(), &[]).await;
    let (root, body) = names(&srv, &key, "").await;
    assert_eq!(root, ["B", "a", "a-b", "a.c", "ab", "deep"]);
    assert_eq!(body["has_more"], false);
    assert!(body["cursor"].is_null());
    assert_eq!(
        body["folders"][1],
        serde_json::json!({"path": "a", "name": "a"})
    );
    // A folder holding only deeper files is listed; paths carry the parent.
    let (sub, body) = names(&srv, &key, "?parent=ab").await;
    assert_eq!(sub, ["c"]);
    assert_eq!(body["folders"][0]["path"], "ab/c");
    assert_eq!(names(&srv, &key, "?parent=/ab/c/").await.0, ["d"]);
    assert_eq!(names(&srv, &key, "?parent=deep/1/2").await.0, ["3"]);
    assert!(names(&srv, &key, "?parent=deep/1/2/3").await.0.is_empty());
    assert!(names(&srv, &key, "?parent=nothing").await.0.is_empty());
    assert_eq!(names(&srv, &key, "?parent=").await.0, root);
}

async fn pages_expiry_isolation_and_errors(b: Backend) {
    let srv = TestServer::on(b).await;
    let key = srv.secret_key.clone();
    for i in (0..7).rev() {
        put(&srv, &format!("p/d{i}/leaf"), &[]).await;
        put(&srv, &format!("p/d{i}"), &[]).await;
    }
    let mut seen = Vec::new();
    let mut query = "?parent=p&limit=3".to_string();
    loop {
        let (page, body) = names(&srv, &key, &query).await;
        assert!(page.len() <= 3);
        seen.extend(page);
        if body["has_more"] == false {
            assert!(body["cursor"].is_null());
            break;
        }
        let cursor = body["cursor"].as_str().unwrap();
        query = format!("?parent=p&limit=3&cursor={cursor}");
    }
    assert_eq!(seen, (0..7).map(|i| format!("d{i}")).collect::<Vec<_>>());
    // Folders whose only files have expired are hidden.
    put(&srv, "gone/soon", &[("expires", "1h")]).await;
    put(&srv, "kept", &[("expires", "1d")]).await;
    assert_eq!(names(&srv, &key, "").await.0, ["gone", "kept", "p"]);
    srv.clock.advance(Duration::from_hours(2));
    assert_eq!(names(&srv, &key, "").await.0, ["kept", "p"]);
    // Another account sees none of them.
    let (_, other) = srv.new_account("mallory", "free").await;
    assert!(names(&srv, &other, "").await.0.is_empty());
    assert!(names(&srv, &other, "?parent=p").await.0.is_empty());
    // Bad input: 400.
    for q in [
        "?limit=0",
        "?limit=1001",
        "?limit=x",
        "?parent=a/../b",
        "?parent=a%09b",
        "?cursor=!!",
        "?cursor=YS9i",
    ] {
        let r = srv
            .http
            .get(srv.url(&format!("/v1/folders{q}")))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(error_code(r).await.0, 400, "{q}");
    }
    assert_eq!(names(&srv, &key, "?limit=1000").await.0, ["kept", "p"]);
    // A public key may only upload; no key is 401.
    let public = srv.new_key("public", &["https://example.com"]).await;
    let r = srv
        .http
        .get(srv.url("/v1/folders"))
        .bearer_auth(&public)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await.0, 403);
    let r = srv.http.get(srv.url("/v1/folders")).send().await.unwrap();
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
}

/// Names that extend others with `-` or `.` (bytewise between a folder and
/// its subtree), paged by one and two and whole, under the root and a
/// parent: the same names in the same order on each database (PostgreSQL
/// fetches the seek's probes ahead, SQLite asks them one by one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_extending_others_page_in_order() {
    let srv = TestServer::start().await;
    let key = srv.secret_key.clone();
    let tree = [
        "a/x", "a-b", "a.c/d", "a0", "ab/c/d", "b", "a-b-c/q", "a-b.d", "z/y", "a-/k",
    ];
    for f in tree {
        put(&srv, f, &[]).await;
        put(&srv, &format!("p/{f}"), &[]).await;
    }
    let want = [
        "a", "a-", "a-b", "a-b-c", "a-b.d", "a.c", "a0", "ab", "b", "z",
    ];
    for (parent, extra) in [("", vec!["p"]), ("p", vec![])] {
        let mut all: Vec<String> = want.iter().map(|s| (*s).to_string()).collect();
        all.extend(extra.into_iter().map(str::to_string));
        all.sort_unstable();
        for limit in [1, 2, 3, 1000] {
            let mut seen = Vec::new();
            let mut query = format!("?parent={parent}&limit={limit}");
            loop {
                let (page, body) = names(&srv, &key, &query).await;
                assert!(page.len() <= limit, "{query}");
                seen.extend(page);
                let Some(cursor) = body["cursor"].as_str() else {
                    break;
                };
                query = format!("?parent={parent}&limit={limit}&cursor={cursor}");
            }
            assert_eq!(seen, all, "parent {parent:?}, limit {limit}");
        }
    }
}
