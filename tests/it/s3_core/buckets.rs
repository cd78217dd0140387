//! Buckets are top-level folders; folder markers are their own rows.

use super::*;

both_stores!(
    buckets_are_created_ones_and_folders_with_files_and_markers,
    a_bucket_is_deleted_only_when_empty_and_takes_its_uploads_with_it,
    markers_list_in_byte_order_and_are_never_files,
    an_accounts_removal_takes_its_buckets_markers_and_uploads,
);

async fn buckets_are_created_ones_and_folders_with_files_and_markers(backend: Backend) {
    let srv = server(backend).await;
    let s = session(&srv).await;
    assert!(s.create_bucket("made").await.unwrap());
    assert!(!s.create_bucket("made").await.unwrap(), "again: not new");
    srv.upload_ok("x.txt", b"x".to_vec(), &[("folder", "photos/2024")])
        .await;
    srv.upload_ok("root.txt", b"r".to_vec(), &[]).await;
    s.put_marker("marked/dir/").await.unwrap();
    let names: Vec<String> = s
        .buckets()
        .await
        .unwrap()
        .into_iter()
        .map(|b| b.name)
        .collect();
    // Sorted by name; a file in the root makes no bucket.
    assert_eq!(names, ["made", "marked", "photos"]);
    for b in ["made", "marked", "photos"] {
        assert!(s.bucket_exists(b).await.unwrap(), "{b}");
    }
    assert!(!s.bucket_exists("nothing").await.unwrap());
    assert!(
        !s.bucket_exists("phot").await.unwrap(),
        "a prefix is no bucket"
    );
    // Another account sees none of them.
    let (_other, key) = srv.new_account("other", "free").await;
    let other = Session::of_secret(&srv.app, &key).await;
    assert!(other.buckets().await.unwrap().is_empty());
    assert!(!other.bucket_exists("made").await.unwrap());
}

async fn a_bucket_is_deleted_only_when_empty_and_takes_its_uploads_with_it(backend: Backend) {
    let srv = server(backend).await;
    let s = session(&srv).await;
    let err = s.delete_bucket("ghost").await.unwrap_err();
    assert_eq!(kind(&err), "NoSuchBucket");
    s.create_bucket("b").await.unwrap();
    let file = srv
        .upload_ok("f.txt", b"f".to_vec(), &[("folder", "b/sub")])
        .await;
    assert_eq!(
        kind(&s.delete_bucket("b").await.unwrap_err()),
        "BucketNotEmpty"
    );
    let r = srv
        .delete_as(&srv.secret_key, file["id"].as_str().unwrap())
        .await;
    assert!(r.status().is_success());
    s.put_marker("b/keep/").await.unwrap();
    assert_eq!(
        kind(&s.delete_bucket("b").await.unwrap_err()),
        "BucketNotEmpty"
    );
    assert!(s.delete_marker("b/keep/").await.unwrap());
    // An incomplete upload does not keep it: it is aborted with it.
    let id = s
        .create_multipart("b", "big.bin", template())
        .await
        .unwrap();
    s.upload_part(&id, 1, vec![data(1000, 1)]).await.unwrap();
    assert_eq!(stored(&srv).await, 1000);
    s.delete_bucket("b").await.unwrap();
    assert!(!s.bucket_exists("b").await.unwrap());
    assert_eq!(
        kind(&s.list_parts(&id, 0, 10).await.unwrap_err()),
        "NoSuchUpload"
    );
    assert_eq!(stored(&srv).await, 0, "the part's bytes are given back");
    assert_eq!(srv.count("SELECT COUNT(*) FROM s3_parts"), 0);
    // Its part's blob goes to the collector.
    srv.eventually(10, "the part's blob collected", || async {
        srv.blob_count().await == 0
    })
    .await;
    assert_eq!(
        kind(&s.delete_bucket("b").await.unwrap_err()),
        "NoSuchBucket"
    );
}

async fn markers_list_in_byte_order_and_are_never_files(backend: Backend) {
    let srv = server(backend).await;
    let s = session(&srv).await;
    // Byte order: 'Z' < 'a' < 'é' (0xC3 …) < '中' (0xE4 …).
    for p in ["b/中/", "b/a/", "b/é/", "b/Z/", "b/a/x/", "c/d/"] {
        s.put_marker(p).await.unwrap();
    }
    let first = s.put_marker("b/a/").await.unwrap();
    let paths = |ms: Vec<filestore::testing::s3::Marker>| -> Vec<String> {
        ms.into_iter().map(|m| m.path).collect()
    };
    assert_eq!(
        paths(s.markers(Some("b/"), None, 10).await.unwrap()),
        ["b/Z/", "b/a/", "b/a/x/", "b/é/", "b/中/"]
    );
    assert_eq!(
        paths(s.markers(Some("b/"), Some("b/a/x/"), 2).await.unwrap()),
        ["b/é/", "b/中/"]
    );
    assert_eq!(
        paths(s.markers(None, None, 2).await.unwrap()),
        ["b/Z/", "b/a/"]
    );
    // Putting one again keeps its first time; deleting is idempotent.
    let again = s.put_marker("b/a/").await.unwrap();
    assert_eq!(again.created_at, first.created_at);
    assert!(s.delete_marker("b/a/").await.unwrap());
    assert!(!s.delete_marker("b/a/").await.unwrap());
    assert_eq!(srv.count("SELECT COUNT(*) FROM files"), 0, "never a file");
    let listed = srv.get_json(&srv.secret_key, "/v1/files").await.1;
    assert_eq!(
        listed["files"].as_array().map(Vec::len),
        Some(0),
        "{listed}"
    );
}

async fn an_accounts_removal_takes_its_buckets_markers_and_uploads(backend: Backend) {
    let srv = server(backend).await;
    let (acc, key) = srv.new_account("leaving", "free").await;
    let s = Session::of_secret(&srv.app, &key).await;
    s.create_bucket("b").await.unwrap();
    s.put_marker("b/m/").await.unwrap();
    let id = s.create_multipart("b", "x", template()).await.unwrap();
    s.upload_part(&id, 1, vec![data(1000, 1)]).await.unwrap();
    assert_eq!(srv.blob_count().await, 1);
    let now = srv.clock.now_ms();
    srv.app
        .meta
        .delete_account(&acc, now)
        .await
        .unwrap()
        .unwrap();
    for table in ["s3_buckets", "s3_markers", "s3_uploads", "s3_parts"] {
        assert_eq!(
            srv.count(&format!("SELECT COUNT(*) FROM {table}")),
            0,
            "{table}"
        );
    }
    srv.eventually(10, "the part's blob collected", || async {
        srv.blob_count().await == 0
    })
    .await;
}
