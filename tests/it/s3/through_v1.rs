//! One file, two doors: an object put through S3 is the file /v1 lists
//! and the CDN serves, and a file uploaded through /v1 is an object.

use super::harness::{bytes, tools, Door};
use crate::common::sha256_hex;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_read_object_is_a_v1_file_served_by_the_cdn() {
    if !tools(
        "a_public_read_object_is_a_v1_file",
        &[&["aws", "--version"]],
    ) {
        return;
    }
    let door = Door::start("a_public_read_object_is_a_v1_file").await;
    door.bucket("pub");
    let body = bytes(20, 123_457);
    let f = door.write("pic.bin", &body);
    door.aws(&[
        "s3api",
        "put-object",
        "--bucket",
        "pub",
        "--key",
        "dir/sub/pic.bin",
        "--body",
        f.to_str().unwrap(),
        "--acl",
        "public-read",
    ])
    .ok();
    door.aws(&[
        "s3api",
        "put-object",
        "--bucket",
        "pub",
        "--key",
        "dir/sub/secret.bin",
        "--body",
        f.to_str().unwrap(),
    ])
    .ok();
    let files = door.v1_files("pub/dir/sub").await;
    assert_eq!(files.len(), 2, "{files:#?}");
    let public = files
        .iter()
        .find(|f| f["name"] == "pic.bin")
        .expect("pic.bin listed");
    assert_eq!(public["folder"], "pub/dir/sub");
    assert_eq!(public["size"], body.len());
    assert_eq!(public["sha256"], sha256_hex(&body).as_str());
    assert_eq!(public["private"], false, "x-amz-acl: public-read: {public}");
    let url = public["url"].as_str().expect("a public file has a CDN url");
    let r = door.srv.http.get(url).send().await.unwrap();
    assert_eq!(r.status(), 200, "{url}");
    assert!(r.bytes().await.unwrap() == body, "the CDN serves the bytes");
    let private = files.iter().find(|f| f["name"] == "secret.bin").unwrap();
    assert_eq!(private["private"], true, "no ACL: private: {private}");
    assert!(private["url"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1_upload_into_a_bucket_folder_is_an_object() {
    if !tools("a_v1_upload_is_an_object", &[&["aws", "--version"]]) {
        return;
    }
    let door = Door::start("a_v1_upload_is_an_object").await;
    let body = bytes(21, 40_000);
    let file = door
        .srv
        .upload_ok("n.txt", body.clone(), &[("folder", "shelf/x")])
        .await;
    let ls = door.aws(&["s3", "ls", "s3://shelf/x/"]);
    assert!(ls.ok().stdout.contains(" 40000 n.txt"), "{ls:#?}");
    let buckets = door.aws(&["s3", "ls"]);
    assert!(
        buckets.ok().stdout.trim().ends_with(" shelf"),
        "{buckets:#?}"
    );
    let down = door.path("n.txt");
    door.aws(&["s3", "cp", "s3://shelf/x/n.txt", down.to_str().unwrap()])
        .ok();
    assert!(std::fs::read(&down).unwrap() == body);
    let head = door.aws(&[
        "s3api",
        "head-object",
        "--bucket",
        "shelf",
        "--key",
        "x/n.txt",
    ]);
    let head = head.ok().json();
    assert_eq!(head["ContentLength"], 40_000);
    assert_eq!(head["ContentType"], file["type"], "{head}");
}
