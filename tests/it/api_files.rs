//! GET/DELETE /v1/files/{id}, GET /v1/files (pages, folders, cursors),
//! and cross-account isolation.

use crate::common::{error_code, Backend, TestServer};
use std::collections::HashSet;

both_stores!(
    get_and_delete,
    accounts_are_isolated,
    list_filters_and_validates,
    pagination_sees_each_file_once_under_concurrent_inserts,
);

async fn get_and_delete(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv.upload_ok("a.txt", b"hello".to_vec(), &[]).await;
    let id = f["id"].as_str().unwrap();
    let url = f["url"].as_str().unwrap().to_string();
    assert_eq!(srv.usage().await["storage_bytes"], 5);
    assert_eq!(srv.blob_count().await, 1);
    let r = srv.delete_as(&srv.secret_key, id).await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap(),
        serde_json::json!({"success": true})
    );
    // Gone at once and for good: the record, the bytes, the blob, the CDN URL.
    let (status, body) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found"))
    );
    let r = srv.delete_as(&srv.secret_key, id).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    assert_eq!(srv.http.get(&url).send().await.unwrap().status(), 404);
    assert_eq!(srv.usage().await["storage_bytes"], 0);
    assert_eq!(srv.blob_count().await, 0);
    assert_eq!(srv.leftovers(), (0, 0, 0));
    // Unknown ids and malformed ids are 404, never 500.
    for id in ["f_0000", "nothing", "%E2%82%AC", "f_x%00y"] {
        let (status, _) = srv
            .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
            .await;
        assert_eq!(status, 404, "{id}");
    }
    // No key: 401 on every authenticated endpoint.
    for (method, path) in [
        ("GET", "/v1/files"),
        ("GET", "/v1/files/f_1"),
        ("DELETE", "/v1/files/f_1"),
        ("GET", "/v1/usage"),
        ("POST", "/v1/files/f_1/signed-url"),
    ] {
        let r = srv
            .http
            .request(method.parse().unwrap(), srv.url(path))
            .send()
            .await
            .unwrap();
        assert_eq!(
            error_code(r).await,
            (401, "unauthorized".into()),
            "{method} {path}"
        );
    }
}

async fn accounts_are_isolated(b: Backend) {
    let srv = TestServer::on(b).await;
    let mine = srv
        .upload_ok("mine.txt", b"mine".to_vec(), &[("private", "true")])
        .await;
    let id = mine["id"].as_str().unwrap();
    let (other_acc, other) = srv.new_account("mallory", "free").await;
    let (status, _) = srv.get_json(&other, &format!("/v1/files/{id}")).await;
    assert_eq!(status, 404);
    let r = srv.delete_as(&other, id).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    let r = srv
        .sign_as(&other, id, serde_json::json!({"expires_in": 60}))
        .await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    let (_, list) = srv.get_json(&other, "/v1/files").await;
    assert_eq!(list["files"].as_array().unwrap().len(), 0);
    let usage: serde_json::Value = srv
        .http
        .get(srv.url("/v1/usage"))
        .bearer_auth(&other)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(usage["storage_bytes"], 0);
    // The CDN path with the other account's id does not reach the file either.
    let forged = srv
        .signed_url(id, 60)
        .await
        .replace(&srv.account_id, &other_acc);
    assert_eq!(srv.http.get(forged).send().await.unwrap().status(), 404);
    // And the owner still has it.
    let (status, _) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{id}"))
        .await;
    assert_eq!(status, 200);
}

async fn list_filters_and_validates(b: Backend) {
    let srv = TestServer::on(b).await;
    let a = srv
        .upload_ok("1.txt", b"1".to_vec(), &[("folder", "a")])
        .await;
    let b2 = srv
        .upload_ok("2.txt", b"2".to_vec(), &[("folder", "a/b")])
        .await;
    let c = srv.upload_ok("3.txt", b"3".to_vec(), &[]).await;
    let (status, all) = srv.get_json(&srv.secret_key, "/v1/files").await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = all["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec![
            c["id"].as_str().unwrap(),
            b2["id"].as_str().unwrap(),
            a["id"].as_str().unwrap()
        ],
        "newest first"
    );
    assert_eq!(all["has_more"], false);
    assert_eq!(all["cursor"], serde_json::Value::Null);
    let (_, only_a) = srv.get_json(&srv.secret_key, "/v1/files?folder=a").await;
    assert_eq!(
        only_a["files"].as_array().unwrap().len(),
        1,
        "folder is an exact match"
    );
    assert_eq!(only_a["files"][0]["id"], a["id"]);
    let (_, ab) = srv
        .get_json(&srv.secret_key, "/v1/files?folder=/a/b/")
        .await;
    assert_eq!(ab["files"][0]["id"], b2["id"]);
    for q in [
        "limit=0",
        "limit=101",
        "limit=-1",
        "limit=ten",
        "cursor=garbage!",
        "folder=../x",
        "cursor=Zm9vOmJhcg",
    ] {
        let r = srv
            .http
            .get(srv.url(&format!("/v1/files?{q}")))
            .bearer_auth(&srv.secret_key)
            .send()
            .await
            .unwrap();
        assert_eq!(error_code(r).await, (400, "bad_request".into()), "{q}");
    }
    let (status, one) = srv.get_json(&srv.secret_key, "/v1/files?limit=1").await;
    assert_eq!(status, 200);
    assert_eq!(one["has_more"], true);
    assert!(one["cursor"].is_string());
    let (_, full) = srv.get_json(&srv.secret_key, "/v1/files?limit=100").await;
    assert_eq!(full["files"].as_array().unwrap().len(), 3);

    // recursive: the folder and every folder under it, and nothing that only
    // starts with the same letters ("a-b", "ab"); pages through the cursor.
    let ab3 = srv
        .upload_ok("4.txt", b"4".to_vec(), &[("folder", "a/b/c")])
        .await;
    srv.upload_ok("5.txt", b"5".to_vec(), &[("folder", "a-b")])
        .await;
    srv.upload_ok("6.txt", b"6".to_vec(), &[("folder", "ab")])
        .await;
    let names = |v: &serde_json::Value| -> Vec<String> {
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, under_a) = srv
        .get_json(&srv.secret_key, "/v1/files?folder=a&recursive=true")
        .await;
    assert_eq!(names(&under_a), ["4.txt", "2.txt", "1.txt"]);
    let (_, first) = srv
        .get_json(&srv.secret_key, "/v1/files?folder=a/b&recursive=1&limit=1")
        .await;
    assert_eq!(first["files"][0]["id"], ab3["id"]);
    let cursor = first["cursor"].as_str().unwrap();
    let (_, second) = srv
        .get_json(
            &srv.secret_key,
            &format!("/v1/files?folder=a/b&recursive=1&limit=1&cursor={cursor}"),
        )
        .await;
    assert_eq!(names(&second), ["2.txt"]);
    assert_eq!(second["has_more"], false);
    let (_, exact) = srv
        .get_json(&srv.secret_key, "/v1/files?folder=a&recursive=false")
        .await;
    assert_eq!(names(&exact), ["1.txt"]);
    let r = srv
        .http
        .get(srv.url("/v1/files?folder=a&recursive=maybe"))
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (400, "bad_request".into()));
}

async fn pagination_sees_each_file_once_under_concurrent_inserts(b: Backend) {
    let srv = std::sync::Arc::new(TestServer::on(b).await);
    let mut before = HashSet::new();
    for i in 0..23 {
        let f = srv.upload_ok(&format!("{i}.txt"), vec![b'x'; i], &[]).await;
        before.insert(f["id"].as_str().unwrap().to_string());
    }
    // Keep inserting while paging.
    let writer = {
        let srv = srv.clone();
        tokio::spawn(async move {
            for i in 0..15 {
                srv.upload_ok(&format!("new-{i}.txt"), b"n".to_vec(), &[])
                    .await;
            }
        })
    };
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/files?limit=5&cursor={c}"),
            None => "/v1/files?limit=5".to_string(),
        };
        let (status, page) = srv.get_json(&srv.secret_key, &path).await;
        assert_eq!(status, 200, "{page}");
        pages += 1;
        let files = page["files"].as_array().unwrap();
        assert!(files.len() <= 5);
        seen.extend(files.iter().map(|f| f["id"].as_str().unwrap().to_string()));
        if page["has_more"] == false {
            assert_eq!(page["cursor"], serde_json::Value::Null);
            break;
        }
        cursor = Some(page["cursor"].as_str().unwrap().to_string());
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    writer.await.unwrap();
    let unique: HashSet<_> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "no file is seen twice");
    assert!(
        before.is_subset(&unique),
        "every file that existed before paging is seen"
    );
    assert!(pages >= 5);
}
