//! Quotas across two nodes: the storage quota under concurrent uploads to
//! both, and the monthly upload count.

use crate::common::cluster::*;
use crate::common::error_code;
use futures_util::future::join_all;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_quota_race_across_nodes_admits_exactly_what_fits() {
    let plans = format!(
        "{ROOMY}\n[plans.small]\nmax_file_size = 5000\nstorage = 10_000\nuploads = 1000\n\
         rate_limit = 100_000\nrate_window = \"1m\"\n"
    );
    let Some(c) = Cluster::start("quota", &plans, false).await else {
        return;
    };
    let (_acc, key) = c.account_with_key("quota", "small");
    // 30 uploads of 1000 bytes at once, half to each node, with room for 10.
    let outcomes = join_all((0..30).map(|i| {
        let (c, key) = (&c, &key);
        async move {
            let r = c
                .upload(
                    i % 2,
                    key,
                    &format!("q{i}.bin"),
                    data(1000, i as u8),
                    &[],
                    None,
                )
                .await;
            match r.status().as_u16() {
                201 => {
                    let rec: Value = r.json().await.unwrap();
                    Ok((i, rec["id"].as_str().unwrap().to_string()))
                }
                _ => Err(error_code(r).await),
            }
        }
    }))
    .await;
    let mut created = BTreeMap::new();
    let mut refused = Vec::new();
    for o in outcomes {
        match o {
            Ok((i, id)) => {
                created.insert(id, i);
            }
            Err(e) => refused.push(e),
        }
    }
    let per_node = |n: usize| created.values().filter(|i| *i % 2 == n).count();
    let _ = writeln!(
        std::io::stderr(),
        "quota race: {} on A, {} on B",
        per_node(A),
        per_node(B)
    );
    assert_eq!(created.len(), 10, "exactly the 10 that fit: {refused:?}");
    assert!(
        refused
            .iter()
            .all(|e| *e == (413, "storage_limit_exceeded".into())),
        "{refused:?}"
    );
    // Both nodes list exactly those files and count their bytes.
    let ids: BTreeSet<String> = created.keys().cloned().collect();
    for n in [A, B] {
        assert_eq!(c.listed(n, &key).await, ids, "files listed on node {n}");
        let u = c.usage(n, &key).await;
        assert_eq!(
            (&u["storage_bytes"], &u["upload_count"]),
            (&10_000.into(), &10.into())
        );
    }
    // Each file is whole, served by the node that did not take it.
    for (id, i) in &created {
        let (status, rec) = c
            .get_json(other(i % 2), &key, &format!("/v1/files/{id}"))
            .await;
        assert_eq!(status, 200);
        let (status, bytes) = c
            .fetch(&c.at(other(i % 2), rec["url"].as_str().unwrap()))
            .await;
        assert_eq!((status, bytes), (200, data(1000, *i as u8)));
    }
    // Full on both nodes; the refused uploads leave no object behind.
    for n in [A, B] {
        let r = c.upload(n, &key, "more.bin", vec![1], &[], None).await;
        assert_eq!(error_code(r).await, (413, "storage_limit_exceeded".into()));
    }
    c.eventually(15, "only the 10 files' objects left in S3", || async {
        c.objects().await == 10 && c.count("SELECT COUNT(*) FROM blob_deletions") == 0
    })
    .await;
    // Room freed on one node is room on the other.
    let (id, _) = created.iter().next().unwrap();
    let r = c
        .http
        .delete(c.url(B, &format!("/v1/files/{id}")))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(c.usage(A, &key).await["storage_bytes"], 9000);
    let r = c
        .upload(A, &key, "again.bin", data(1000, 99), &[], None)
        .await;
    assert_eq!(r.status(), 201);
    let r = c.upload(B, &key, "over.bin", vec![1], &[], None).await;
    assert_eq!(error_code(r).await, (413, "storage_limit_exceeded".into()));
    assert_eq!(c.count("SELECT COUNT(*) FROM files"), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn monthly_upload_count_is_shared_across_nodes() {
    let plans = ROOMY.replace("uploads = 100_000", "uploads = 5");
    let Some(c) = Cluster::start("monthly", &plans, false).await else {
        return;
    };
    // 12 uploads at once, 6 to each node, against 5 a month.
    let statuses = join_all((0..12).map(|i| {
        let c = &c;
        async move {
            let r = c
                .upload(
                    i % 2,
                    &c.key,
                    &format!("m{i}"),
                    data(100, i as u8),
                    &[],
                    None,
                )
                .await;
            let status = r.status().as_u16();
            let reset = r
                .headers()
                .get("x-ratelimit-reset")
                .map(|v| v.to_str().unwrap().to_string());
            let code = if status == 201 {
                String::new()
            } else {
                error_code(r).await.1
            };
            (status, code, reset)
        }
    }))
    .await;
    let ok = statuses.iter().filter(|s| s.0 == 201).count();
    assert_eq!(ok, 5, "exactly the month's 5: {statuses:?}");
    let next = filestore::testing::clock::period_of(chrono::Utc::now())
        .next_start
        .timestamp();
    for (status, code, reset) in statuses.iter().filter(|s| s.0 != 201) {
        assert_eq!((*status, code.as_str()), (429, "rate_limit_exceeded"));
        assert_eq!(
            reset.as_deref(),
            Some(next.to_string().as_str()),
            "reset at the next month"
        );
    }
    for n in [A, B] {
        let r = c.upload(n, &c.key, "late", vec![1], &[], None).await;
        assert_eq!(header_num(&r, "x-ratelimit-reset"), next);
        assert!(header_num(&r, "retry-after") >= 1);
        assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
        let u = c.usage(n, &c.key).await;
        assert_eq!(
            (&u["upload_count"], &u["storage_bytes"]),
            (&5.into(), &500.into())
        );
        assert_eq!(c.listed(n, &c.key).await.len(), 5);
    }
    // Deleting a file on one node gives no upload back on the other.
    let id = c.listed(A, &c.key).await.into_iter().next().unwrap();
    let r = c
        .http
        .delete(c.url(A, &format!("/v1/files/{id}")))
        .bearer_auth(&c.key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = c.upload(B, &c.key, "still", vec![1], &[], None).await;
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    assert_eq!(c.usage(B, &c.key).await["upload_count"], 5);
}
