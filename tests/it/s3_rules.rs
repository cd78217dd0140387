//! The account's rules at the S3 door (CONTRACT §18 "Rules of the account
//! hold at the door"): the plan's file size, the storage quota, the monthly
//! upload count and the key's rate limit, the grace period, each in S3's
//! words; and an object written through the door is a file like any other
//! (listed by /v1, served by its CDN url with variants).

use crate::common::s3door::{self, failure};
use crate::common::{Backend, TestOptions, TestServer};
use aws_sdk_s3::primitives::ByteStream;

const PLANS: &str = r#"
[plans.tiny]
max_file_size = 1000
storage = 2000
uploads = 1000
rate_limit = 1000
rate_window = "1m"

[plans.few]
max_file_size = 100000
storage = 1000000
uploads = 2
rate_limit = 1000
rate_window = "1m"

[plans.strict]
max_file_size = 100000
storage = 1000000
uploads = 1000
rate_limit = 3
rate_window = "1h"
"#;

both_stores!(
    writes_meet_the_plan_in_s3s_words,
    an_object_put_through_the_door_is_a_file_like_any_other,
);

async fn server(b: Backend) -> (TestServer, aws_sdk_s3::Client) {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some(PLANS.into()),
        backend: Some(b),
        s3: true,
        ..Default::default()
    })
    .await;
    let creds = s3door::credentials(&srv.http, &srv.base_url, &srv.secret_key).await;
    let s3 = s3door::client(&creds);
    for bucket in ["bkt", "pics"] {
        s3.create_bucket().bucket(bucket).send().await.unwrap();
    }
    (srv, s3)
}

async fn put(
    s3: &aws_sdk_s3::Client,
    key: &str,
    len: usize,
) -> Result<(), (Option<u16>, Option<String>)> {
    s3.put_object()
        .bucket("bkt")
        .key(key)
        .body(ByteStream::from(vec![b'x'; len]))
        .send()
        .await
        .map(|_| ())
        .map_err(|e| failure(&e))
}

fn refused(code: u16, what: &str) -> Result<(), (Option<u16>, Option<String>)> {
    Err((Some(code), Some(what.into())))
}

async fn writes_meet_the_plan_in_s3s_words(b: Backend) {
    let (srv, s3) = server(b).await;
    srv.set_account("default", Some("tiny"), None).await;
    assert_eq!(put(&s3, "big", 1001).await, refused(400, "EntityTooLarge"));
    put(&s3, "one", 900).await.unwrap();
    put(&s3, "two", 900).await.unwrap();
    assert_eq!(put(&s3, "three", 900).await, refused(403, "QuotaExceeded"));
    // Nothing of a refused object is stored.
    let listed = s3.list_objects_v2().bucket("bkt").send().await.unwrap();
    let keys: Vec<_> = listed.contents().iter().filter_map(|o| o.key()).collect();
    assert_eq!(keys, ["one", "two"]);

    // The monthly upload count: 503 SlowDown with Retry-After.
    srv.set_account("default", Some("few"), None).await;
    let r = s3
        .put_object()
        .bucket("bkt")
        .key("month")
        .body(ByteStream::from_static(b"m"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(failure(&r), (Some(503), Some("SlowDown".into())));
    let raw = match &r {
        aws_sdk_s3::error::SdkError::ServiceError(e) => e.raw(),
        other => panic!("{other:?}"),
    };
    let wait: u64 = raw.headers().get("retry-after").unwrap().parse().unwrap();
    assert!(wait > 0);

    // The key's rate limit: each write counts (a fresh key: the writes
    // above are in the first one's window).
    srv.set_account("default", Some("strict"), None).await;
    let key = srv.new_key("secret", &[]).await;
    let fresh = s3door::client(&s3door::credentials(&srv.http, &srv.base_url, &key).await);
    let mut answers = Vec::new();
    for i in 0..3 {
        answers.push(put(&fresh, &format!("r{i}"), 1).await);
    }
    // Three in the window: GET /v1/s3/credentials was the first.
    assert!(answers[..2].iter().all(Result::is_ok), "{answers:?}");
    assert_eq!(answers[2], refused(503, "SlowDown"));

    // The grace period: writes are refused naming it, reads go on.
    srv.set_account("default", Some("tiny"), Some(true)).await;
    let e = s3
        .put_object()
        .bucket("bkt")
        .key("grace")
        .body(ByteStream::from_static(b"g"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(failure(&e), (Some(403), Some("AccessDenied".into())));
    assert!(format!("{e:?}").contains("grace period"), "{e:?}");
    let got = s3
        .get_object()
        .bucket("bkt")
        .key("one")
        .send()
        .await
        .unwrap();
    assert_eq!(got.body.collect().await.unwrap().into_bytes().len(), 900);
    srv.stop().await;
}

async fn an_object_put_through_the_door_is_a_file_like_any_other(b: Backend) {
    let (srv, s3) = server(b).await;
    let png = crate::images::png(64, 48);
    s3.put_object()
        .bucket("pics")
        .key("2026/cat.png")
        .acl(aws_sdk_s3::types::ObjectCannedAcl::PublicRead)
        .content_type("image/png")
        .metadata("team", "ops")
        .body(ByteStream::from(png.clone()))
        .send()
        .await
        .unwrap();
    let (status, page) = srv
        .get_json(&srv.secret_key, "/v1/files?folder=pics/2026")
        .await;
    assert_eq!(status, 200, "{page}");
    let file = &page["files"][0];
    assert_eq!(file["name"], "cat.png");
    assert_eq!(file["folder"], "pics/2026");
    assert_eq!(file["private"], false);
    assert_eq!(file["metadata"]["team"], "ops");
    assert_eq!(file["sha256"], crate::common::sha256_hex(&png));
    let url = file["url"].as_str().unwrap();
    let r = srv.http.get(url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.bytes().await.unwrap().to_vec(), png);
    let r = srv
        .http
        .get(format!("{url}?w=16&format=png"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");

    // A file /v1 uploads into the bucket's folder is an object of it.
    let up = srv
        .upload_ok("note.txt", b"from v1".to_vec(), &[("folder", "pics/notes")])
        .await;
    let got = s3
        .get_object()
        .bucket("pics")
        .key("notes/note.txt")
        .send()
        .await
        .unwrap();
    assert_eq!(
        got.body.collect().await.unwrap().into_bytes().as_ref(),
        b"from v1"
    );
    // A PUT replaces every file at its path: one file, the new bytes.
    s3.put_object()
        .bucket("pics")
        .key("notes/note.txt")
        .body(ByteStream::from_static(b"from s3"))
        .send()
        .await
        .unwrap();
    let (_, page) = srv
        .get_json(&srv.secret_key, "/v1/files?folder=pics/notes")
        .await;
    let files = page["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{page}");
    assert_ne!(files[0]["id"], up["id"]);
    assert_eq!(files[0]["size"], 7);
    srv.stop().await;
}

/// CopyObject: across buckets with the bytes copied by the store, the
/// metadata copied or replaced, onto itself only with REPLACE, and the
/// source's conditions failing with 412.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_object_copies_replaces_and_judges_its_source() {
    let (srv, s3) = server(Backend::Local).await;
    s3.put_object()
        .bucket("bkt")
        .key("src.txt")
        .metadata("team", "ops")
        .content_type("text/x-one")
        .body(ByteStream::from_static(b"copied bytes"))
        .send()
        .await
        .unwrap();
    let copied = s3
        .copy_object()
        .bucket("pics")
        .key("dst/copy.txt")
        .copy_source("bkt/src.txt")
        .send()
        .await
        .unwrap();
    let tag = copied
        .copy_object_result()
        .and_then(|r| r.e_tag())
        .unwrap()
        .to_string();
    let got = s3
        .get_object()
        .bucket("pics")
        .key("dst/copy.txt")
        .send()
        .await
        .unwrap();
    assert_eq!(got.e_tag(), Some(tag.as_str()));
    assert_eq!(got.content_type(), Some("text/x-one"));
    assert_eq!(got.metadata().unwrap()["team"], "ops");
    assert_eq!(
        got.body.collect().await.unwrap().into_bytes().as_ref(),
        b"copied bytes"
    );

    // Onto itself: only with REPLACE, which takes the new metadata.
    let e = s3
        .copy_object()
        .bucket("bkt")
        .key("src.txt")
        .copy_source("bkt/src.txt")
        .send()
        .await
        .unwrap_err();
    assert_eq!(failure(&e), (Some(400), Some("InvalidRequest".into())));
    s3.copy_object()
        .bucket("bkt")
        .key("src.txt")
        .copy_source("bkt/src.txt")
        .metadata_directive(aws_sdk_s3::types::MetadataDirective::Replace)
        .metadata("team", "dev")
        .content_type("text/x-two")
        .send()
        .await
        .unwrap();
    let head = s3
        .head_object()
        .bucket("bkt")
        .key("src.txt")
        .send()
        .await
        .unwrap();
    assert_eq!(head.metadata().unwrap()["team"], "dev");
    assert_eq!(head.content_type(), Some("text/x-two"));
    let (_, page) = srv.get_json(&srv.secret_key, "/v1/files?folder=bkt").await;
    assert_eq!(page["files"].as_array().map(Vec::len), Some(1), "{page}");

    // The source's conditions: a failing one is 412, never 304.
    for fail in [
        s3.copy_object().copy_source_if_match("\"nope\""),
        s3.copy_object().copy_source_if_none_match(tag.as_str()),
    ] {
        let e = fail
            .bucket("pics")
            .key("again.txt")
            .copy_source("bkt/src.txt")
            .send()
            .await
            .unwrap_err();
        assert_eq!(failure(&e), (Some(412), Some("PreconditionFailed".into())));
    }
    let e = s3
        .copy_object()
        .bucket("pics")
        .key("x.txt")
        .copy_source("bkt/missing.txt")
        .send()
        .await
        .unwrap_err();
    assert_eq!(failure(&e), (Some(404), Some("NoSuchKey".into())));
    srv.stop().await;
}

/// A multipart upload through the door whose parts are sent and copied:
/// UploadPart, UploadPartCopy with a range, ListParts, Complete with S3's
/// ETag, and the errors of a wrong part list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multipart_upload_with_a_copied_part_completes_with_s3s_etag() {
    use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
    let (srv, s3) = server(Backend::Local).await;
    let first: Vec<u8> = (0..5 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
    s3.put_object()
        .bucket("bkt")
        .key("source.bin")
        .body(ByteStream::from_static(b"0123456789"))
        .send()
        .await
        .unwrap();
    let id = s3
        .create_multipart_upload()
        .bucket("pics")
        .key("joined.bin")
        .send()
        .await
        .unwrap()
        .upload_id()
        .unwrap()
        .to_string();
    let one = s3
        .upload_part()
        .bucket("pics")
        .key("joined.bin")
        .upload_id(&id)
        .part_number(1)
        .body(ByteStream::from(first.clone()))
        .send()
        .await
        .unwrap();
    let two = s3
        .upload_part_copy()
        .bucket("pics")
        .key("joined.bin")
        .upload_id(&id)
        .part_number(2)
        .copy_source("bkt/source.bin")
        .copy_source_range("bytes=2-5")
        .send()
        .await
        .unwrap();
    let parts = s3
        .list_parts()
        .bucket("pics")
        .key("joined.bin")
        .upload_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(parts.parts().len(), 2);
    // The id under another key or bucket is no upload (S3's NoSuchUpload):
    // nothing is sent, listed, aborted or stored there.
    let no_such = Some((Some(404), Some("NoSuchUpload".into())));
    for (bucket, key) in [
        ("pics", "other.bin"),
        ("bkt", "joined.bin"),
        ("pics", "dir/"),
    ] {
        let e = s3
            .upload_part()
            .bucket(bucket)
            .key(key)
            .upload_id(&id)
            .part_number(3)
            .body(ByteStream::from_static(b"x"))
            .send()
            .await
            .err();
        assert_eq!(
            e.as_ref().map(failure),
            no_such,
            "UploadPart {bucket}/{key}"
        );
        let e = s3
            .upload_part_copy()
            .bucket(bucket)
            .key(key)
            .upload_id(&id)
            .part_number(3)
            .copy_source("bkt/source.bin")
            .send()
            .await
            .err();
        assert_eq!(
            e.as_ref().map(failure),
            no_such,
            "UploadPartCopy {bucket}/{key}"
        );
        let e = s3
            .list_parts()
            .bucket(bucket)
            .key(key)
            .upload_id(&id)
            .send()
            .await
            .err();
        assert_eq!(e.as_ref().map(failure), no_such, "ListParts {bucket}/{key}");
        let e = s3
            .abort_multipart_upload()
            .bucket(bucket)
            .key(key)
            .upload_id(&id)
            .send()
            .await
            .err();
        assert_eq!(e.as_ref().map(failure), no_such, "Abort {bucket}/{key}");
        let e = s3
            .complete_multipart_upload()
            .bucket(bucket)
            .key(key)
            .upload_id(&id)
            .multipart_upload(
                CompletedMultipartUpload::builder()
                    .parts(
                        CompletedPart::builder()
                            .part_number(1)
                            .e_tag(one.e_tag().unwrap())
                            .build(),
                    )
                    .build(),
            )
            .send()
            .await
            .err();
        assert_eq!(e.as_ref().map(failure), no_such, "Complete {bucket}/{key}");
    }
    let e = s3
        .head_object()
        .bucket("pics")
        .key("other.bin")
        .send()
        .await
        .unwrap_err();
    assert_eq!(failure(&e).0, Some(404), "nothing stored at the other key");
    let parts = s3
        .list_parts()
        .bucket("pics")
        .key("joined.bin")
        .upload_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(parts.parts().len(), 2, "the upload is as it was");
    let tags = [
        one.e_tag().unwrap().to_string(),
        two.copy_part_result()
            .and_then(|r| r.e_tag())
            .unwrap()
            .to_string(),
    ];
    let part = |n: i32, tag: &str| CompletedPart::builder().part_number(n).e_tag(tag).build();
    let complete = |list: Vec<CompletedPart>| {
        s3.complete_multipart_upload()
            .bucket("pics")
            .key("joined.bin")
            .upload_id(&id)
            .multipart_upload(
                CompletedMultipartUpload::builder()
                    .set_parts(Some(list))
                    .build(),
            )
            .send()
    };
    let e = complete(vec![part(2, &tags[1]), part(1, &tags[0])])
        .await
        .unwrap_err();
    assert_eq!(failure(&e), (Some(400), Some("InvalidPartOrder".into())));
    let e = complete(vec![part(1, &tags[0]), part(2, "\"0000\"")])
        .await
        .unwrap_err();
    assert_eq!(failure(&e), (Some(400), Some("InvalidPart".into())));
    let done = complete(vec![part(1, &tags[0]), part(2, &tags[1])])
        .await
        .unwrap();
    let etag = done.e_tag().unwrap().to_string();
    assert!(etag.ends_with("-2\""), "{etag}");
    let got = s3
        .get_object()
        .bucket("pics")
        .key("joined.bin")
        .send()
        .await
        .unwrap();
    assert_eq!(got.e_tag(), Some(etag.as_str()));
    let bytes = got.body.collect().await.unwrap().into_bytes();
    assert_eq!(bytes.len(), first.len() + 4);
    assert_eq!(&bytes[first.len()..], b"2345");
    let e = s3
        .abort_multipart_upload()
        .bucket("pics")
        .key("joined.bin")
        .upload_id("mpu_none")
        .send()
        .await
        .unwrap_err();
    assert_eq!(failure(&e), (Some(404), Some("NoSuchUpload".into())));
    srv.stop().await;
}
