//! Replace (docs/api.md, "Paths and stable links"): an upload with
//! `replace=true` (a form field, tus metadata, an upload token's policy)
//! replaces every file at its path in the transaction that creates it:
//! each a `file.deleted` event, its bytes out of `storage_bytes` at once,
//! its blob kept a while for the reads in flight, then collected.

use crate::common::meta::webhook;
use crate::common::{error_code, Backend, TestServer};
use base64::Engine as _;
use serde_json::{json, Value};
use std::time::Duration;

both_stores!(replace_takes_every_file_at_the_path);

/// The ids of the files in `folder`, newest first.
pub(super) async fn ids_in(srv: &TestServer, folder: &str) -> Vec<String> {
    let url = super::api::with_query(srv, "/v1/files", &[("folder", folder)]);
    let list: Value = srv
        .http
        .get(url)
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    list["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn id(f: &Value) -> String {
    f["id"].as_str().unwrap().to_string()
}

async fn replace_takes_every_file_at_the_path(b: Backend) {
    let blobs = !matches!(b, Backend::Local);
    let srv = TestServer::on(b).await;
    webhook(&srv.app.meta, &srv.account_id, &["file.deleted"]).await;
    let rel = [("folder", "rel")];
    let old1 = id(&srv.upload_ok("app.tgz", b"one".to_vec(), &rel).await);
    let old2 = id(&srv.upload_ok("app.tgz", b"two!".to_vec(), &rel).await);
    let other = id(&srv.upload_ok("other.tgz", b"x".to_vec(), &rel).await);
    assert_eq!(ids_in(&srv, "rel").await, [other.as_str(), &old2, &old1]);
    assert_eq!(srv.usage().await["storage_bytes"], 3 + 4 + 1);
    let stored = srv.blob_count().await;
    let new = srv
        .upload_ok(
            "app.tgz",
            b"three".to_vec(),
            &[("folder", "rel"), ("replace", "true")],
        )
        .await;
    let new = id(&new);
    assert_eq!(ids_in(&srv, "rel").await, [new.as_str(), &other]);
    // Their bytes are out at once; each is a file.deleted.
    assert_eq!(srv.usage().await["storage_bytes"], 5 + 1);
    let deleted = |id: &str| {
        srv.count(&format!(
            "SELECT COUNT(*) FROM webhook_events WHERE type = 'file.deleted' AND file_id = '{id}'"
        ))
    };
    assert_eq!((deleted(&old1), deleted(&old2), deleted(&other)), (1, 1, 0));
    // The event carries the file as it was (written in SQL on PostgreSQL).
    let data: Value = serde_json::from_str(&srv.text(&format!(
        "SELECT data FROM webhook_events WHERE type = 'file.deleted' AND file_id = '{old1}'"
    )))
    .unwrap();
    assert_eq!(
        (&data["id"], &data["folder"], &data["name"], &data["size"]),
        (&json!(old1), &json!("rel"), &json!("app.tgz"), &json!(3))
    );
    assert_eq!(data["metadata"], json!({}));
    assert_eq!(data["md5"].as_str().map(str::len), Some(32), "{data}");
    for old in [&old1, &old2] {
        let (status, _) = srv
            .get_json(&srv.secret_key, &format!("/v1/files/{old}"))
            .await;
        assert_eq!(status, 404);
    }
    if blobs {
        // Their blobs stay for the reads that found their rows, a while.
        assert_eq!(srv.blob_count().await, stored + 1);
        assert_eq!(srv.count("SELECT COUNT(*) FROM blob_deletions"), 2);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(srv.blob_count().await, stored + 1, "kept a while");
        srv.clock.advance(Duration::from_secs(301));
        srv.eventually(10, "the replaced blobs collected", || async {
            srv.blob_count().await == stored - 1
                && srv.count("SELECT COUNT(*) FROM blob_deletions") == 0
        })
        .await;
    } else {
        // Inline bytes go with their rows.
        assert_eq!(srv.blob_count().await, stored - 1);
    }
    // Replacing a path that holds nothing just stores.
    let r = srv
        .upload("new.txt", b"n".to_vec(), &[("replace", "true")])
        .await;
    assert_eq!(r.status(), 201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_by_tus_metadata_and_by_a_tokens_policy() {
    let srv = TestServer::start().await;
    let first = id(&srv
        .upload_ok("v.txt", b"1".to_vec(), &[("folder", "t")])
        .await);
    // tus: the rule is kept from the creation to the completion.
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&srv.secret_key)
        .header("tus-resumable", "1.0.0")
        .header("upload-length", "2")
        .header(
            "upload-metadata",
            format!(
                "filename {},folder {},replace {}",
                b64("v.txt"),
                b64("t"),
                b64("true")
            ),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(
        ids_in(&srv, "t").await,
        [first.as_str()],
        "not before it completes"
    );
    let r = srv
        .http
        .patch(&location)
        .bearer_auth(&srv.secret_key)
        .header("tus-resumable", "1.0.0")
        .header("upload-offset", "0")
        .header("content-type", "application/offset+octet-stream")
        .body(b"22".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let now = ids_in(&srv, "t").await;
    assert_eq!(now.len(), 1);
    assert_ne!(now[0], first);
    // A token whose policy replaces: each upload replaces the one before.
    let (status, token) = {
        let r = srv
            .http
            .post(srv.url("/v1/upload-tokens"))
            .bearer_auth(&srv.secret_key)
            .json(&json!({"folder": "t", "max_uploads": 5, "replace": true}))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap())
    };
    assert_eq!(status, 201, "{token}");
    assert_eq!(token["policy"]["replace"], true);
    let secret = token["token"].as_str().unwrap();
    let (_, shown) = srv
        .get_json(
            &srv.secret_key,
            &format!("/v1/upload-tokens/{}", token["id"].as_str().unwrap()),
        )
        .await;
    assert_eq!(shown["policy"]["replace"], true);
    for body in [b"a".to_vec(), b"bb".to_vec()] {
        let r = srv.upload_as(secret, "v.txt", body, &[]).await;
        assert_eq!(r.status(), 201);
    }
    assert_eq!(ids_in(&srv, "t").await.len(), 1);
    assert_eq!(srv.usage().await["storage_bytes"], 2);
    // A request may repeat the policy, not say otherwise.
    let r = srv
        .upload_as(secret, "v.txt", b"c".to_vec(), &[("replace", "true")])
        .await;
    assert_eq!(r.status(), 201);
    let r = srv
        .upload_as(secret, "v.txt", b"c".to_vec(), &[("replace", "false")])
        .await;
    assert_eq!(r.status(), 400);
    // if_absent is a secret key's alone (a probe of which paths hold files).
    let r = srv
        .upload_as(secret, "v.txt", b"c".to_vec(), &[("if_absent", "true")])
        .await;
    assert_eq!(error_code(r).await, (403, "forbidden".into()));
}

/// A public key or an upload token is in strangers' hands: it may not
/// replace the account's files by path (unless the token's policy says so)
/// nor ask `if_absent`, by the form or by tus; the file at the path stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_may_not_replace_files_or_probe_paths() {
    let srv = TestServer::start().await;
    let origin = "https://app.example.com";
    let pk = srv.new_key("public", &[origin]).await;
    // In the root: an upload token without a folder uploads there.
    let kept = id(&srv.upload_ok("index.html", b"mine".to_vec(), &[]).await);
    let token = {
        let r = srv
            .http
            .post(srv.url("/v1/upload-tokens"))
            .bearer_auth(&srv.secret_key)
            .json(&json!({"max_uploads": 5}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        r.json::<Value>().await.unwrap()["token"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let asks: [&[(&str, &str)]; 2] = [&[("replace", "true")], &[("if_absent", "true")]];
    for fields in asks {
        let r = srv
            .http
            .post(srv.url("/v1/upload"))
            .bearer_auth(&pk)
            .header("origin", origin)
            .multipart(TestServer::form("index.html", b"defaced".to_vec(), fields))
            .send()
            .await
            .unwrap();
        assert_eq!(error_code(r).await, (403, "forbidden".into()), "{fields:?}");
        let r = srv
            .upload_as(&token, "index.html", b"defaced".to_vec(), fields)
            .await;
        assert_eq!(error_code(r).await, (403, "forbidden".into()), "{fields:?}");
    }
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    for rule in ["replace", "if_absent"] {
        let r = srv
            .http
            .post(srv.url("/v1/uploads"))
            .bearer_auth(&pk)
            .header("origin", origin)
            .header("tus-resumable", "1.0.0")
            .header("upload-length", "7")
            .header(
                "upload-metadata",
                format!("filename {},{rule} {}", b64("index.html"), b64("true")),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(error_code(r).await, (403, "forbidden".into()), "tus {rule}");
    }
    assert_eq!(ids_in(&srv, "/").await, [kept]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_and_if_absent_are_booleans_and_not_both() {
    let srv = TestServer::start().await;
    for fields in [
        vec![("replace", "maybe")],
        vec![("if_absent", "2")],
        vec![("replace", "true"), ("if_absent", "true")],
    ] {
        let r = srv.upload("x.txt", b"x".to_vec(), &fields).await;
        assert_eq!(
            error_code(r).await,
            (400, "bad_request".into()),
            "{fields:?}"
        );
    }
    assert_eq!(srv.count("SELECT COUNT(*) FROM files"), 0);
}
