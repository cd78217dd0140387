//! Resumable uploads continued on, or raced from, the other node.

use crate::common::cluster::*;
use crate::common::sha256_hex;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumable_upload_continues_on_the_other_node() {
    let Some(c) = Cluster::start("tus", ROOMY, false).await else {
        return;
    };
    // Past one 8 MiB S3 part: node B writes a part and leaves a tail that
    // node A carries on from.
    let bytes = data(9 * 1024 * 1024 + 12_345, 3);
    let len = bytes.len() as u64;
    let url = c.tus_create(A, len, "moved.bin").await;
    let cut1 = 8 * 1024 * 1024 + 100;
    let cut2 = cut1 + 700_000;
    let r = c.tus_patch(B, &url, 0, bytes[..cut1].to_vec()).await;
    assert_eq!(r.status(), 204, "{:?}", r.text().await);
    assert_eq!(header_num(&r, "upload-offset"), cut1 as i64);
    assert_eq!(c.tus_offset(A, &url).await, Some(cut1 as u64));
    let r = c
        .tus_patch(A, &url, cut1 as u64, bytes[cut1..cut2].to_vec())
        .await;
    assert_eq!(r.status(), 204);
    assert!(r.headers().get("x-file-id").is_none());
    assert_eq!(c.tus_offset(B, &url).await, Some(cut2 as u64));
    // A stale offset is refused on either node.
    let r = c.tus_patch(B, &url, cut1 as u64, vec![0; 10]).await;
    assert_eq!(r.status(), 409);
    let r = c
        .tus_patch(A, &url, cut2 as u64, bytes[cut2..].to_vec())
        .await;
    assert_eq!(r.status(), 204);
    let file_id = header(&r, "x-file-id");
    // The file, readable on B, with its SHA-256.
    let path = url.strip_prefix(&c.nodes[A].base).unwrap();
    let (status, st) = c.get_json(B, &c.key, path).await;
    assert_eq!(status, 200);
    assert_eq!((&st["offset"], &st["length"]), (&len.into(), &len.into()));
    assert_eq!(st["file"]["id"], file_id.as_str());
    let (status, rec) = c.get_json(B, &c.key, &format!("/v1/files/{file_id}")).await;
    assert_eq!(status, 200);
    assert_eq!(rec["sha256"], sha256_hex(&bytes).as_str());
    assert_eq!(rec["size"], len);
    // Its MD5 too, filled in after the commit by a node's idle-priority
    // pass (a liveness bound: within a minute).
    let until = std::time::Instant::now() + std::time::Duration::from_mins(1);
    let md5 = loop {
        let md5 = crate::common::pg::text(
            &c.db,
            &format!("SELECT COALESCE(md5, '') FROM files WHERE id = '{file_id}'"),
        );
        if !md5.is_empty() || std::time::Instant::now() > until {
            break md5;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(md5, hex::encode(<md5::Md5 as md5::Digest>::digest(&bytes)));
    let (status, got) = c.fetch(&c.at(B, rec["url"].as_str().unwrap())).await;
    assert_eq!(status, 200);
    assert!(
        got == bytes,
        "the bytes read on B are the bytes sent to A and B"
    );
    let u = c.usage(B, &c.key).await;
    assert_eq!(
        (&u["storage_bytes"], &u["upload_count"]),
        (&len.into(), &1.into())
    );
    c.no_multipart_left().await;
    assert_eq!(c.objects().await, 1);

    // Terminated on the other node: gone everywhere, its room given back.
    let url = c.tus_create(B, 1000, "dropped.bin").await;
    assert_eq!(c.tus_patch(A, &url, 0, vec![5; 400]).await.status(), 204);
    let r = c
        .http
        .delete(c.at(A, &url))
        .bearer_auth(&c.key)
        .header(TUS.0, TUS.1)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    for n in [A, B] {
        assert_eq!(c.tus_offset(n, &url).await, None, "terminated, on node {n}");
    }
    assert_eq!(c.count("SELECT COUNT(*) FROM files"), 1);
    c.no_multipart_left().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_patches_on_two_nodes_one_wins_and_the_data_is_intact() {
    let Some(c) = Cluster::start("tus-race", ROOMY, false).await else {
        return;
    };
    // A chunk kept in the database (under one S3 part), then one that
    // writes a part; each PATCH pair carries different bytes, so a loser
    // that wrote anyway would show in the file.
    for (round, chunk) in [(0u8, 100_000usize), (1, 8 * 1024 * 1024 + 1000)] {
        let rest = data(5000, 40 + round);
        let len = (chunk + rest.len()) as u64;
        let url = c.tus_create(A, len, &format!("race{round}.bin")).await;
        let bodies = [data(chunk, 20 + round), data(chunk, 30 + round)];
        let (ra, rb) = tokio::join!(
            c.tus_patch(A, &url, 0, bodies[A].clone()),
            c.tus_patch(B, &url, 0, bodies[B].clone()),
        );
        let statuses = [ra.status().as_u16(), rb.status().as_u16()];
        let mut sorted = statuses;
        sorted.sort_unstable();
        assert!(
            sorted == [204, 409] || sorted == [204, 423],
            "round {round}: one PATCH wins, the other finds the offset moved or the \
             upload leased: {sorted:?}"
        );
        let winner = if statuses[A] == 204 { A } else { B };
        for n in [A, B] {
            assert_eq!(
                c.tus_offset(n, &url).await,
                Some(chunk as u64),
                "round {round}, node {n}"
            );
        }
        let r = c
            .tus_patch(other(winner), &url, chunk as u64, rest.clone())
            .await;
        assert_eq!(r.status(), 204, "round {round}");
        let file_id = header(&r, "x-file-id");
        let whole: Vec<u8> = bodies[winner].iter().chain(&rest).copied().collect();
        for n in [A, B] {
            let (status, rec) = c.get_json(n, &c.key, &format!("/v1/files/{file_id}")).await;
            assert_eq!(status, 200);
            assert_eq!(
                rec["sha256"],
                sha256_hex(&whole).as_str(),
                "round {round}: the winner's bytes"
            );
            let (status, got) = c.fetch(&c.at(n, rec["url"].as_str().unwrap())).await;
            assert_eq!(status, 200);
            assert!(got == whole, "round {round}: bytes served by node {n}");
        }
    }
    c.no_multipart_left().await;
    let u = c.usage(A, &c.key).await;
    assert_eq!(u["upload_count"], 2);
}
