//! Multipart uploads: parts in any order and at once, the object's bytes
//! and ETag, Complete's refusals, parts sent again, repeated and racing
//! Completes, UploadPartCopy and ListMultipartUploads.

use super::*;
use filestore::testing::s3::{CopySource, StoredFile};

both_stores!(
    three_parts_sent_out_of_order_at_once_make_one_object,
    complete_refuses_what_s3_refuses,
    a_part_sent_again_replaces_the_first,
    a_repeated_or_racing_complete_answers_the_same_file,
    a_part_copied_from_a_file_takes_its_bytes,
    uploads_list_by_key_then_id,
);

/// The ETag S3 gives an object of these parts.
fn s3_etag(parts: &[&[u8]]) -> String {
    let mut bin = Vec::new();
    for p in parts {
        bin.extend(hex::decode(md5_hex(p)).unwrap());
    }
    format!("{}-{}", md5_hex(&bin), parts.len())
}

fn quoted(md5: &str) -> String {
    format!("\"{md5}\"")
}

async fn three_parts_sent_out_of_order_at_once_make_one_object(backend: Backend) {
    let srv = server(backend).await;
    let s = session(&srv).await;
    s.create_bucket("b").await.unwrap();
    // A /v1 file at the same path: the object replaces it.
    let old = srv
        .upload_ok("obj.bin", b"old".to_vec(), &[("folder", "b/dir")])
        .await;
    let id = s
        .create_multipart("b/dir", "obj.bin", template())
        .await
        .unwrap();
    assert!(id.starts_with("mpu_"), "{id}");
    let (p1, p2, p3) = (data(5 * MIB, 1), data(5 * MIB, 2), data(1000, 3));
    // In chunks, the last part first, all three at once.
    let chunked = |d: &[u8]| d.chunks(256 * 1024).map(<[u8]>::to_vec).collect::<Vec<_>>();
    let (r3, r1, r2) = tokio::join!(
        s.upload_part(&id, 3, chunked(&p3)),
        s.upload_part(&id, 1, chunked(&p1)),
        s.upload_part(&id, 2, chunked(&p2)),
    );
    let (r1, r2, r3) = (r1.unwrap(), r2.unwrap(), r3.unwrap());
    assert_eq!(
        (r1.number, r1.size, r1.md5.clone()),
        (1, p1.len() as u64, md5_hex(&p1))
    );
    assert_eq!((r3.number, r3.size), (3, 1000));
    let listed = s.list_parts(&id, 0, 10).await.unwrap().1;
    assert_eq!(
        listed.items.iter().map(|p| p.number).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert!(!listed.truncated);
    let page = s.list_parts(&id, 1, 1).await.unwrap().1;
    assert_eq!((page.items[0].number, page.truncated), (2, true));
    let total = (p1.len() + p2.len() + p3.len()) as u64;
    assert_eq!(stored(&srv).await, total + 3, "parts count as they arrive");
    let file = s
        .complete(
            &id,
            vec![
                (1, quoted(&r1.md5)),
                (2, r2.md5.clone()),
                (3, quoted(&r3.md5)),
            ],
        )
        .await
        .unwrap();
    let whole = [p1.clone(), p2.clone(), p3.clone()].concat();
    assert_eq!(file.size, total);
    assert_eq!(s.read(&file).await, whole);
    assert_eq!(file.md5.as_deref(), Some(md5_hex(&whole).as_str()));
    assert_eq!(file.sha256, crate::common::sha256_hex(&whole));
    assert_eq!(file.attrs.etag, Some(s3_etag(&[&p1, &p2, &p3])));
    assert_eq!(file.attrs.parts, [p1.len() as u64, p2.len() as u64, 1000]);
    assert_eq!(
        (
            file.folder.as_deref(),
            file.name.as_str(),
            file.content_type.as_str()
        ),
        (Some("b/dir"), "obj.bin", "application/x-test")
    );
    // One object at the key: the /v1 file is gone, its bytes too.
    let (status, _) = srv
        .get_json(
            &srv.secret_key,
            &format!("/v1/files/{}", old["id"].as_str().unwrap()),
        )
        .await;
    assert_eq!(status, 404);
    assert_eq!(stored(&srv).await, total);
    assert_eq!(srv.usage().await["upload_count"].as_u64(), Some(2));
    assert_eq!(srv.count("SELECT COUNT(*) FROM s3_parts"), 0);
    assert_eq!(
        kind(&s.list_parts(&id, 0, 10).await.unwrap_err()),
        "NoSuchUpload"
    );
    // The parts' blobs (and the old file's) go to the collector.
    srv.clock.advance(std::time::Duration::from_hours(1));
    srv.eventually(20, "only the object's blob left", || async {
        srv.blob_count().await == 1
    })
    .await;
    assert_eq!(s.read(&file).await.len() as u64, total);
}

async fn complete_refuses_what_s3_refuses(backend: Backend) {
    let srv = server(backend).await;
    let s = session(&srv).await;
    assert_eq!(
        kind(
            &s.create_multipart("nob", "x", template())
                .await
                .unwrap_err()
        ),
        "NoSuchBucket"
    );
    s.create_bucket("b").await.unwrap();
    let id = s.create_multipart("b", "x.bin", template()).await.unwrap();
    let (small, big, last) = (data(1000, 1), data(5 * MIB, 2), data(10, 3));
    for n in [0, 10_001] {
        let e = s
            .upload_part(&id, n, vec![small.clone()])
            .await
            .unwrap_err();
        assert_eq!(kind(&e), "bad_request");
    }
    let e = s
        .upload_part("mpu_nope", 1, vec![small.clone()])
        .await
        .unwrap_err();
    assert_eq!(kind(&e), "NoSuchUpload");
    let p1 = s.upload_part(&id, 1, vec![small.clone()]).await.unwrap();
    let p2 = s.upload_part(&id, 2, vec![big.clone()]).await.unwrap();
    let p3 = s.upload_part(&id, 3, vec![last.clone()]).await.unwrap();
    let complete = |parts: Vec<(u32, String)>| {
        let (s, id) = (&s, &id);
        async move { kind(&s.complete(id, parts).await.unwrap_err()) }
    };
    assert_eq!(complete(vec![]).await, "InvalidPartOrder");
    assert_eq!(
        complete(vec![(2, p2.md5.clone()), (1, p1.md5.clone())]).await,
        "InvalidPartOrder"
    );
    assert_eq!(
        complete(vec![(2, p2.md5.clone()), (2, p2.md5.clone())]).await,
        "InvalidPartOrder"
    );
    assert_eq!(
        complete(vec![(2, p2.md5.clone()), (4, p1.md5.clone())]).await,
        "InvalidPart"
    );
    assert_eq!(
        complete(vec![(2, p1.md5.clone()), (3, p3.md5.clone())]).await,
        "InvalidPart",
        "an ETag that is not the part's"
    );
    assert_eq!(
        complete(vec![(1, p1.md5.clone()), (2, p2.md5.clone())]).await,
        "EntityTooSmall",
        "part 1 is under 5 MiB and not the last"
    );
    // Another account's key finds no such upload.
    let (_other, key) = srv.new_account("other", "free").await;
    let other = Session::of_secret(&srv.app, &key).await;
    let e = other
        .complete(&id, vec![(2, p2.md5.clone())])
        .await
        .unwrap_err();
    assert_eq!(kind(&e), "NoSuchUpload");
    assert_eq!(kind(&other.abort(&id).await.unwrap_err()), "NoSuchUpload");
    // Refusals changed nothing: the parts are all there, and a good list
    // (part 1 left out) completes.
    let file = s
        .complete(&id, vec![(2, p2.md5.clone()), (3, p3.md5.clone())])
        .await
        .unwrap();
    assert_eq!(s.read(&file).await, [big, last].concat());
    assert_eq!(
        stored(&srv).await,
        file.size,
        "the part left out is gone too"
    );
}

async fn a_part_sent_again_replaces_the_first(backend: Backend) {
    let srv = server(backend).await;
    let s = session(&srv).await;
    s.create_bucket("b").await.unwrap();
    let id = s.create_multipart("b", "x.bin", template()).await.unwrap();
    let first = s.upload_part(&id, 1, vec![data(3000, 1)]).await.unwrap();
    let blobs = srv.blob_count().await;
    let second = s.upload_part(&id, 1, vec![data(2000, 2)]).await.unwrap();
    assert_ne!(first.md5, second.md5);
    let parts = s.list_parts(&id, 0, 10).await.unwrap().1.items;
    assert_eq!(parts.len(), 1);
    assert_eq!(
        (parts[0].size, parts[0].md5.clone()),
        (2000, second.md5.clone())
    );
    assert_eq!(stored(&srv).await, 2000);
    // The first one's blob goes to the collector.
    srv.eventually(10, "the first part's blob collected", || async {
        srv.blob_count().await == blobs
    })
    .await;
    let e = s
        .complete(&id, vec![(1, first.md5.clone())])
        .await
        .unwrap_err();
    assert_eq!(kind(&e), "InvalidPart");
    let file = s.complete(&id, vec![(1, second.md5)]).await.unwrap();
    assert_eq!(s.read(&file).await, data(2000, 2));
}

async fn a_repeated_or_racing_complete_answers_the_same_file(backend: Backend) {
    let srv = server(backend).await;
    let s = session(&srv).await;
    s.create_bucket("b").await.unwrap();
    let id = s.create_multipart("b", "x.bin", template()).await.unwrap();
    let (first, second) = (data(5 * MIB, 1), data(100, 2));
    let pa = s.upload_part(&id, 1, vec![first.clone()]).await.unwrap();
    let pb = s.upload_part(&id, 2, vec![second.clone()]).await.unwrap();
    let list = vec![(1, pa.md5.clone()), (2, quoted(&pb.md5))];
    // Two at once: one makes the file, the other answers with it.
    let (one, two) = tokio::join!(s.complete(&id, list.clone()), s.complete(&id, list.clone()));
    let (x, other): (StoredFile, StoredFile) = (one.unwrap(), two.unwrap());
    assert_eq!(x.id, other.id);
    assert_eq!(srv.count("SELECT COUNT(*) FROM files"), 1);
    assert_eq!(stored(&srv).await, x.size);
    assert_eq!(srv.usage().await["upload_count"].as_u64(), Some(1));
    // Repeated: the same answer; with other parts: no such upload.
    let again = s.complete(&id, list.clone()).await.unwrap();
    assert_eq!((again.id, again.size), (x.id.clone(), x.size));
    let e = s
        .complete(&id, vec![(1, pa.md5.clone())])
        .await
        .unwrap_err();
    assert_eq!(kind(&e), "NoSuchUpload");
    assert_eq!(kind(&s.abort(&id).await.unwrap_err()), "NoSuchUpload");
    // Kept an hour, then forgotten by the collector.
    srv.clock.advance(std::time::Duration::from_secs(3601));
    filestore::testing::s3::reap(&srv.app).await;
    let e = s.complete(&id, list).await.unwrap_err();
    assert_eq!(kind(&e), "NoSuchUpload");
    assert_eq!(s.read(&x).await, [first, second].concat());
}

async fn a_part_copied_from_a_file_takes_its_bytes(backend: Backend) {
    let srv = server(backend).await;
    let s = session(&srv).await;
    s.create_bucket("b").await.unwrap();
    let big = data(6 * MIB, 7);
    let src = srv
        .upload_ok("src.bin", big.clone(), &[("folder", "b")])
        .await;
    let small = srv.upload_ok("s.txt", b"hello world".to_vec(), &[]).await;
    let id = s
        .create_multipart("b", "copy.bin", template())
        .await
        .unwrap();
    let from = |v: &serde_json::Value, range| CopySource {
        file_id: v["id"].as_str().unwrap().to_string(),
        range,
    };
    let p1 = s.upload_part_copy(&id, 1, from(&src, None)).await.unwrap();
    assert_eq!((p1.size, p1.md5.clone()), (big.len() as u64, md5_hex(&big)));
    let p2 = s
        .upload_part_copy(&id, 2, from(&small, Some((6, 10))))
        .await
        .unwrap();
    assert_eq!(p2.md5, md5_hex(b"world"));
    let e = s
        .upload_part_copy(&id, 3, from(&small, Some((5, 11))))
        .await
        .unwrap_err();
    assert_eq!(kind(&e), "range_not_satisfiable");
    let e = s
        .upload_part_copy(
            &id,
            3,
            CopySource {
                file_id: "f_nope".into(),
                range: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(kind(&e), "not_found");
    let file = s
        .complete(&id, vec![(1, p1.md5), (2, p2.md5)])
        .await
        .unwrap();
    assert_eq!(s.read(&file).await, [big, b"world".to_vec()].concat());
}

async fn uploads_list_by_key_then_id(backend: Backend) {
    let srv = TestServer::start_with(TestOptions {
        backend: Some(backend),
        plans_toml: Some(PLAN.replace("open_uploads = 3", "open_uploads = 10")),
        ..Default::default()
    })
    .await;
    let s = session(&srv).await;
    s.create_bucket("b").await.unwrap();
    s.create_bucket("c").await.unwrap();
    let mut a_ids = [
        s.create_multipart("b", "a", template()).await.unwrap(),
        s.create_multipart("b", "a", template()).await.unwrap(),
    ];
    a_ids.sort();
    let z = s.create_multipart("b/d", "z", template()).await.unwrap();
    s.create_multipart("c", "a", template()).await.unwrap();
    let keys = |l: filestore::testing::s3::Listed<filestore::testing::s3::MultipartUpload>| {
        l.items
            .into_iter()
            .map(|u| (u.path, u.id))
            .collect::<Vec<_>>()
    };
    let all = s.list_uploads("b/", None, None, 10).await.unwrap();
    assert!(!all.truncated);
    assert_eq!(
        keys(all),
        [
            ("b/a".to_string(), a_ids[0].clone()),
            ("b/a".to_string(), a_ids[1].clone()),
            ("b/d/z".to_string(), z.clone()),
        ]
    );
    let page = s.list_uploads("b/", None, None, 1).await.unwrap();
    assert!(page.truncated);
    let after = s
        .list_uploads("b/", Some("b/a"), Some(&a_ids[0]), 10)
        .await
        .unwrap();
    assert_eq!(keys(after).len(), 2);
    let after_key = s.list_uploads("b/", Some("b/a"), None, 10).await.unwrap();
    assert_eq!(keys(after_key), [("b/d/z".to_string(), z.clone())]);
    let (upload, _) = s.list_parts(&z, 0, 10).await.unwrap();
    assert_eq!(upload.template, template());
    s.abort(&z).await.unwrap();
    assert_eq!(
        keys(s.list_uploads("b/d/", None, None, 10).await.unwrap()),
        []
    );
}
