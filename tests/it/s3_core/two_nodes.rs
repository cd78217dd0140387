//! A multipart upload's parts to two nodes of one PostgreSQL database (and
//! one blob store): all its state is in the database and the store.

use super::*;
use crate::common::cluster::second_node;
use crate::common::pg;

async fn parts_to_two_nodes(backend: Backend) {
    if pg::admin_url().is_none() {
        eprintln!("skipped: set FILESTORE_TEST_DATABASE_URL to run this two-node test");
        return;
    }
    let a = server(backend.clone()).await;
    let b = second_node(
        &a,
        TestOptions {
            // One blob store: the local one is in the shared data dir.
            data_dir: Some(a.data_dir.clone()),
            backend: Some(backend),
            plans_toml: Some(PLAN.into()),
            ..Default::default()
        },
    )
    .await;
    let (sa, sb) = (
        session(&a).await,
        Session::of_secret(&b.app, &a.secret_key).await,
    );
    sa.create_bucket("b").await.unwrap();
    let id = sa
        .create_multipart("b", "two.bin", template())
        .await
        .unwrap();
    let (p1, p2, p3) = (data(5 * MIB, 1), data(5 * MIB, 2), data(777, 3));
    let (r2, r1, r3) = tokio::join!(
        sb.upload_part(&id, 2, vec![p2.clone()]),
        sa.upload_part(&id, 1, vec![p1.clone()]),
        sb.upload_part(&id, 3, vec![p3.clone()]),
    );
    let parts = vec![
        (1, r1.unwrap().md5),
        (2, r2.unwrap().md5),
        (3, r3.unwrap().md5),
    ];
    assert_eq!(sa.list_parts(&id, 0, 10).await.unwrap().1.items.len(), 3);
    let file = sb.complete(&id, parts.clone()).await.unwrap();
    assert_eq!(sa.read(&file).await, [p1, p2, p3].concat());
    // Repeated on the other node: the same file.
    assert_eq!(sa.complete(&id, parts).await.unwrap().id, file.id);
    assert_eq!(stored(&a).await, file.size);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parts_sent_to_two_nodes_make_one_object_local() {
    Box::pin(parts_to_two_nodes(Backend::LocalBlobs)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parts_sent_to_two_nodes_make_one_object_s3() {
    let Some(backend) = Backend::s3("mp_two_nodes") else {
        return;
    };
    Box::pin(parts_to_two_nodes(backend)).await;
}
