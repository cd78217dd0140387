//! boto3 through the door (tests/it/s3/clients.py): presigned GET and PUT
//! URLs, a POST policy upload, list_objects_v2 paging and delimiters,
//! delete_objects with Quiet.

use super::harness::{tools, Door};

const BOTO3: &[&[&str]] = &[&["python3", "-c", "import boto3"]];

async fn case(case: &str, bucket: &str) {
    if !tools(case, BOTO3) {
        return;
    }
    let door = Door::start(case).await;
    door.bucket(bucket);
    let out = door.python(case, &[bucket]);
    assert_eq!(out.status, 0, "clients.py {case}: {out:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boto3_presigned_get_and_put_urls() {
    case("presign", "presigned").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boto3_post_policy_upload() {
    case("post_policy", "forms").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boto3_list_objects_v2_pages_by_two_with_and_without_delimiter() {
    case("listing", "listing").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boto3_delete_objects_quiet() {
    case("delete_quiet", "deletes").await;
}
