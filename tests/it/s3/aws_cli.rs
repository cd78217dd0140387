//! aws-cli (v1, its default checksums left on: CRC32 in an aws-chunked
//! trailer) through the door: `s3 cp|sync|ls|rm|presign|mb|rb`, `s3api
//! put-object|get-object|head-object`.

use super::harness::{bytes, tools, Door};
use crate::common::Backend;

const AWS: &[&[&str]] = &[&["aws", "--version"]];

/// The `KEY` column of `aws s3 ls` lines (last word), sorted.
fn listed(out: &str) -> Vec<String> {
    let mut v: Vec<String> = out
        .lines()
        .filter_map(|l| l.split_whitespace().last().map(String::from))
        .collect();
    v.sort();
    v
}

async fn cp_ls_rm_presign(door: &Door) {
    door.bucket("docs");
    let body = bytes(1, 300_000);
    let up = door.write("up/a.bin", &body);
    door.write("up/b.txt", b"bee");
    door.aws(&["s3", "cp", up.to_str().unwrap(), "s3://docs/dir/a.bin"])
        .ok();
    door.aws(&[
        "s3",
        "cp",
        door.path("up/b.txt").to_str().unwrap(),
        "s3://docs/dir/sub/b.txt",
    ])
    .ok();
    door.aws(&[
        "s3",
        "cp",
        "s3://docs/dir/a.bin",
        door.path("down/a.bin").to_str().unwrap(),
    ])
    .ok();
    assert!(
        std::fs::read(door.path("down/a.bin")).unwrap() == body,
        "s3 cp down gives the bytes s3 cp up sent"
    );
    let top = door.aws(&["s3", "ls", "s3://docs/"]);
    assert_eq!(top.ok().stdout.trim(), "PRE dir/", "{top:#?}");
    let dir = door.aws(&["s3", "ls", "s3://docs/dir/"]);
    assert_eq!(listed(&dir.ok().stdout), ["a.bin", "sub/"], "{dir:#?}");
    assert!(dir.stdout.contains(" 300000 a.bin"), "{dir:#?}");
    let all = door.aws(&["s3", "ls", "--recursive", "s3://docs/"]);
    assert_eq!(listed(&all.ok().stdout), ["dir/a.bin", "dir/sub/b.txt"]);
    let buckets = door.aws(&["s3", "ls"]);
    assert_eq!(listed(&buckets.ok().stdout), ["docs"], "{buckets:#?}");

    let url = door.aws(&[
        "s3",
        "presign",
        "s3://docs/dir/a.bin",
        "--expires-in",
        "300",
    ]);
    let url = url.ok().stdout.trim().to_string();
    let r = door.srv.http.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 200, "the presigned URL {url}");
    assert!(
        r.bytes().await.unwrap() == body,
        "the presigned URL gives the bytes"
    );

    door.aws(&["s3", "rm", "s3://docs/dir/a.bin"]).ok();
    let all = door.aws(&["s3", "ls", "--recursive", "s3://docs/"]);
    assert_eq!(listed(&all.ok().stdout), ["dir/sub/b.txt"]);
    door.aws(&["s3", "cp", up.to_str().unwrap(), "s3://docs/dir/a.bin"])
        .ok();
    let rm = door.aws(&["s3", "rm", "--recursive", "s3://docs/dir/"]);
    assert_eq!(rm.ok().stdout.matches("delete: ").count(), 2, "{rm:#?}");
    let all = door.aws(&["s3", "ls", "--recursive", "s3://docs/"]);
    assert_eq!(
        all.stdout.trim(),
        "",
        "nothing left after rm --recursive: {all:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_cli_cp_ls_rm_presign() {
    if !tools("aws_cli_cp_ls_rm_presign", AWS) {
        return;
    }
    cp_ls_rm_presign(&Door::start("aws_cli_cp_ls_rm_presign").await).await;
}

/// The same errand with the blob store on S3, whatever
/// `FILESTORE_TEST_BLOB_STORE` says (skips without an S3 store, outside CI).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_cli_cp_ls_rm_presign_on_the_s3_blob_store() {
    if !tools("aws_cli_cp_ls_rm_presign_on_the_s3_blob_store", AWS) {
        return;
    }
    let Some(backend) = tokio::task::block_in_place(|| Backend::s3("aws_cli_on_s3")) else {
        return;
    };
    cp_ls_rm_presign(&Door::start_on(backend).await).await;
}

/// 20 MiB: over aws-cli's 8 MiB multipart threshold, so a multipart
/// upload (3 parts) and a ranged, parallel download.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_cli_cp_of_20_mib_goes_multipart() {
    if !tools("aws_cli_cp_of_20_mib_goes_multipart", AWS) {
        return;
    }
    let door = Door::start("aws_cli_cp_of_20_mib_goes_multipart").await;
    door.bucket("big");
    let body = bytes(2, 20 << 20);
    let up = door.write("big.bin", &body);
    door.aws(&["s3", "cp", up.to_str().unwrap(), "s3://big/x/big.bin"])
        .ok();
    let down = door.path("big-down.bin");
    door.aws(&["s3", "cp", "s3://big/x/big.bin", down.to_str().unwrap()])
        .ok();
    assert!(
        std::fs::read(down).unwrap() == body,
        "20 MiB back byte-exact"
    );
    let head = door.aws(&[
        "s3api",
        "head-object",
        "--bucket",
        "big",
        "--key",
        "x/big.bin",
    ]);
    let head = head.ok().json();
    assert_eq!(head["ContentLength"], 20 << 20);
    assert!(
        head["ETag"].as_str().unwrap().ends_with("-3\""),
        "a multipart ETag of 3 parts: {head}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_cli_sync_twice_copies_nothing_the_second_time() {
    if !tools("aws_cli_sync_twice", AWS) {
        return;
    }
    let door = Door::start("aws_cli_sync_twice").await;
    door.bucket("site");
    for i in 0..12 {
        door.write(
            &format!("tree/d{}/f{i}.bin", i % 3),
            &bytes(i, 1_000 + i as usize * 97),
        );
    }
    let tree = door.path("tree");
    let tree = tree.to_str().unwrap();
    let first = door.aws(&["s3", "sync", tree, "s3://site/www/"]);
    assert_eq!(
        first.ok().stdout.matches("upload: ").count(),
        12,
        "{first:#?}"
    );
    let second = door.aws(&["s3", "sync", tree, "s3://site/www/"]);
    assert_eq!(
        second.ok().stdout.trim(),
        "",
        "the second sync copies nothing: {second:#?}"
    );

    door.write("tree/d0/f0.bin", b"changed, and of another size");
    std::fs::remove_file(door.path("tree/d1/f1.bin")).unwrap();
    let third = door.aws(&["s3", "sync", "--delete", tree, "s3://site/www/"]);
    assert_eq!(
        third.ok().stdout.matches("upload: ").count(),
        1,
        "{third:#?}"
    );
    assert_eq!(third.stdout.matches("delete: ").count(), 1, "{third:#?}");

    let back = door.path("back");
    door.aws(&["s3", "sync", "s3://site/www/", back.to_str().unwrap()])
        .ok();
    for i in (0..12u64).filter(|&i| i != 1) {
        let rel = format!("d{}/f{i}.bin", i % 3);
        assert!(
            std::fs::read(door.path("tree").join(&rel)).unwrap()
                == std::fs::read(back.join(&rel)).unwrap(),
            "{rel} back as sent"
        );
    }
    assert!(!back.join("d1/f1.bin").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_s3api_put_get_head_keep_metadata_and_content_headers() {
    if !tools("aws_s3api_put_get_head", AWS) {
        return;
    }
    let door = Door::start("aws_s3api_put_get_head").await;
    door.bucket("meta");
    let body = bytes(3, 5_000);
    let f = door.write("m.json", &body);
    let put = door.aws(&[
        "s3api",
        "put-object",
        "--bucket",
        "meta",
        "--key",
        "a/m.json",
        "--body",
        f.to_str().unwrap(),
        "--metadata",
        "owner=ann,build=42",
        "--content-type",
        "application/json",
        "--cache-control",
        "max-age=60",
        "--content-disposition",
        "attachment; filename=\"m.json\"",
        "--content-language",
        "en",
        "--content-encoding",
        "identity",
        "--expires",
        "2030-01-01T00:00:00Z",
    ]);
    let put = put.ok().json();
    let etag = format!("\"{}\"", hex::encode(md5_of(&body)));
    assert_eq!(put["ETag"], etag.as_str(), "{put}");
    let head = door.aws(&[
        "s3api",
        "head-object",
        "--bucket",
        "meta",
        "--key",
        "a/m.json",
    ]);
    let head = head.ok().json();
    assert_eq!(head["ContentLength"], 5_000, "{head}");
    assert_eq!(head["ETag"], etag.as_str());
    assert_eq!(head["ContentType"], "application/json");
    assert_eq!(head["CacheControl"], "max-age=60");
    assert_eq!(
        head["ContentDisposition"],
        "attachment; filename=\"m.json\""
    );
    assert_eq!(head["ContentLanguage"], "en");
    assert_eq!(
        head["ContentEncoding"], "identity",
        "aws-chunked is not kept: {head}"
    );
    assert!(
        head["Expires"].as_str().is_some_and(|e| e.contains("2030")),
        "{head}"
    );
    assert_eq!(
        head["Metadata"],
        serde_json::json!({"owner": "ann", "build": "42"})
    );
    let out = door.path("m-back.json");
    let get = door.aws(&[
        "s3api",
        "get-object",
        "--bucket",
        "meta",
        "--key",
        "a/m.json",
        out.to_str().unwrap(),
    ]);
    let get = get.ok().json();
    assert_eq!(get["Metadata"], head["Metadata"]);
    assert_eq!(get["ContentType"], "application/json");
    assert!(std::fs::read(out).unwrap() == body);
    let part = door.path("range.bin");
    let ranged = door.aws(&[
        "s3api",
        "get-object",
        "--bucket",
        "meta",
        "--key",
        "a/m.json",
        "--range",
        "bytes=100-199",
        part.to_str().unwrap(),
    ]);
    assert_eq!(ranged.ok().json()["ContentRange"], "bytes 100-199/5000");
    assert!(std::fs::read(part).unwrap() == body[100..200]);
}

fn md5_of(bytes: &[u8]) -> [u8; 16] {
    use md5::Digest;
    md5::Md5::digest(bytes).into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_s3_mb_and_rb() {
    if !tools("aws_s3_mb_and_rb", AWS) {
        return;
    }
    let door = Door::start("aws_s3_mb_and_rb").await;
    door.aws(&["s3", "mb", "s3://fresh-bucket"]).ok();
    let ls = door.aws(&["s3", "ls"]);
    assert_eq!(
        listed(&ls.ok().stdout),
        ["fresh-bucket"],
        "an empty bucket made by mb is listed"
    );
    door.aws(&["s3api", "head-bucket", "--bucket", "fresh-bucket"])
        .ok();
    door.write("one.txt", b"1");
    door.aws(&[
        "s3",
        "cp",
        door.path("one.txt").to_str().unwrap(),
        "s3://fresh-bucket/one.txt",
    ])
    .ok();
    let full = door.aws(&["s3", "rb", "s3://fresh-bucket"]);
    assert!(
        full.status != 0 && full.stderr.contains("BucketNotEmpty"),
        "{full:#?}"
    );
    door.aws(&["s3", "rb", "--force", "s3://fresh-bucket"]).ok();
    let ls = door.aws(&["s3", "ls"]);
    assert_eq!(ls.ok().stdout.trim(), "", "gone after rb: {ls:#?}");
    let bad = door.aws(&["s3", "mb", "s3://Bad_Name"]);
    assert!(
        bad.status != 0,
        "an invalid bucket name is refused: {bad:#?}"
    );
}
