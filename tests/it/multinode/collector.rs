//! Expiry and blob deletion with both nodes' collectors running: each
//! file expired once, each blob deleted once.

use crate::common::cluster::*;
use futures_util::future::join_all;
use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expiry_and_blob_deletion_run_once_on_both_nodes() {
    let Some(c) = Cluster::start("expiry", ROOMY, false).await else {
        return;
    };
    // 16 files expiring in 2 s and 6 permanent ones, uploaded half on each
    // node, while both nodes' collectors run every 200 ms.
    let records = join_all((0..22).map(|i| {
        let c = &c;
        async move {
            let fields: &[(&str, &str)] = if i < 16 { &[("expires", "2s")] } else { &[] };
            (
                i,
                c.upload_ok(i % 2, &format!("e{i}.bin"), data(500 + i, i as u8), fields)
                    .await,
            )
        }
    }))
    .await;
    let (expiring, permanent): (Vec<_>, Vec<_>) = records.into_iter().partition(|(i, _)| *i < 16);
    let last = expiring
        .iter()
        .map(|(_, r)| millis(r["expires_at"].as_str().unwrap()))
        .max()
        .unwrap();
    for (i, r) in &expiring {
        let id = r["id"].as_str().unwrap();
        let (status, _) = c
            .get_json(other(i % 2), &c.key, &format!("/v1/files/{id}"))
            .await;
        if now_ms() + 300 < millis(r["expires_at"].as_str().unwrap()) {
            assert_eq!(status, 200, "{id} before its expiry, on the other node");
        }
    }
    // Every object is there while no file has expired yet (on a loaded machine the
    // uploads themselves can outlast the first expiry: then the count can't be known).
    let first = expiring
        .iter()
        .map(|(_, r)| millis(r["expires_at"].as_str().unwrap()))
        .min()
        .unwrap();
    let objects = c.objects().await;
    if now_ms() + 300 < first {
        assert_eq!(objects, 22);
    }
    // Past the expiry: 404 on both nodes at once (reaped or not yet).
    tokio::time::sleep(Duration::from_millis((last - now_ms() + 100).max(0) as u64)).await;
    for (_, r) in &expiring {
        let id = r["id"].as_str().unwrap();
        for n in [A, B] {
            let (status, _) = c.get_json(n, &c.key, &format!("/v1/files/{id}")).await;
            assert_eq!(status, 404, "{id} expired, on node {n}");
            let (status, _) = c.fetch(&c.at(n, r["url"].as_str().unwrap())).await;
            assert_eq!(status, 404, "{id}'s CDN URL, on node {n}");
        }
    }
    let kept: BTreeSet<String> = permanent
        .iter()
        .map(|(_, r)| r["id"].as_str().unwrap().to_string())
        .collect();
    let kept_bytes: u64 = permanent
        .iter()
        .map(|(_, r)| r["size"].as_u64().unwrap())
        .sum();
    c.eventually(
        20,
        "expired files reaped: rows, queue and objects",
        || async {
            c.count("SELECT COUNT(*) FROM files") == 6
                && c.count("SELECT COUNT(*) FROM blob_deletions") == 0
                && c.objects().await == 6
        },
    )
    .await;
    for n in [A, B] {
        assert_eq!(
            c.listed(n, &c.key).await,
            kept,
            "node {n} lists the permanent files only"
        );
        assert_eq!(c.usage(n, &c.key).await["storage_bytes"], kept_bytes);
    }
    // Each expired file was reaped by one node, and its blob deleted once.
    c.eventually(5, "collector log lines of the 16 files", || async {
        c.collector_totals().iter().map(|t| t.1).sum::<u64>() >= 16
    })
    .await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let totals = c.collector_totals();
    let _ = writeln!(
        std::io::stderr(),
        "collector (expired, deleted) per node: {totals:?}"
    );
    let sum = totals.iter().fold((0, 0), |s, t| (s.0 + t.0, s.1 + t.1));
    assert_eq!(
        sum,
        (16, 16),
        "each file expired once, each blob deleted once: {totals:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_on_both_nodes_remove_each_blob_once() {
    let Some(c) = Cluster::start("deletes", ROOMY, false).await else {
        return;
    };
    let records = join_all((0..40).map(|i| {
        let c = &c;
        async move {
            c.upload_ok(i % 2, &format!("d{i}.bin"), data(700, i as u8), &[])
                .await
        }
    }))
    .await;
    let ids: Vec<String> = records
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(c.objects().await, 40);
    // Deleted in 4 streams, alternating nodes, while both collectors run
    // every 200 ms: each file gone everywhere, each object removed.
    let streams = join_all((0..4).map(|s| {
        let (c, ids) = (&c, &ids);
        async move {
            let mut statuses = Vec::new();
            for (i, id) in ids.iter().enumerate().filter(|(i, _)| i % 4 == s) {
                let r = c
                    .http
                    .delete(c.url(i % 2, &format!("/v1/files/{id}")))
                    .bearer_auth(&c.key)
                    .send()
                    .await
                    .unwrap();
                statuses.push(r.status().as_u16());
            }
            statuses
        }
    }))
    .await;
    assert!(streams.iter().flatten().all(|s| *s == 200), "{streams:?}");
    for (i, id) in ids.iter().enumerate().take(6) {
        let r = c
            .http
            .delete(c.url(other(i % 2), &format!("/v1/files/{id}")))
            .bearer_auth(&c.key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "{id} deleted on the other node already");
        let (status, _) = c
            .get_json(other(i % 2), &c.key, &format!("/v1/files/{id}"))
            .await;
        assert_eq!(status, 404);
    }
    c.eventually(15, "deleted files' objects removed", || async {
        c.objects().await == 0 && c.count("SELECT COUNT(*) FROM blob_deletions") == 0
    })
    .await;
    for n in [A, B] {
        assert!(c.listed(n, &c.key).await.is_empty());
        let u = c.usage(n, &c.key).await;
        assert_eq!(
            (&u["storage_bytes"], &u["upload_count"]),
            (&0.into(), &40.into())
        );
    }
    assert_eq!(c.count("SELECT COUNT(*) FROM files"), 0);
    // Each DELETE removed its object itself: no collector, on either node,
    // deleted one of them a second time.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let totals = c.collector_totals();
    assert!(
        totals.iter().all(|t| *t == (0, 0)),
        "blobs of DELETEd files deleted again by a collector (expired, deleted per node): {totals:?}"
    );
}
