//! Idempotency keys across nodes.

use crate::common::cluster::*;
use crate::common::sha256_hex;
use serde_json::Value;
use std::collections::BTreeSet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_keys_hold_across_nodes() {
    let Some(c) = Cluster::start("idempotency", ROOMY, false).await else {
        return;
    };
    let body = data(2000, 1);
    // On A, then the retry on B: the same file, stored once.
    let r = c
        .upload(A, &c.key, "once.bin", body.clone(), &[], Some("retry-1"))
        .await;
    assert_eq!(r.status(), 201);
    let first: Value = r.json().await.unwrap();
    let r = c
        .upload(B, &c.key, "once.bin", body.clone(), &[], Some("retry-1"))
        .await;
    assert_eq!(r.status(), 201);
    assert_eq!(
        header(&r, "location"),
        format!("/v1/files/{}", first["id"].as_str().unwrap())
    );
    let mut again: Value = r.json().await.unwrap();
    again["url"] = c.at(A, again["url"].as_str().unwrap()).into();
    again["path_url"] = c.at(A, again["path_url"].as_str().unwrap()).into();
    assert_eq!(again, first, "B answers A's file (its urls on B)");
    // A key names its first file, even with other bytes, on either node.
    let r = c
        .upload(B, &c.key, "other.bin", data(10, 2), &[], Some("retry-1"))
        .await;
    assert_eq!(r.status(), 201);
    assert_eq!(r.json::<Value>().await.unwrap()["id"], first["id"]);
    // The same key on both nodes at the same moment, five times over.
    let mut ids = BTreeSet::from([first["id"].as_str().unwrap().to_string()]);
    for k in 0..5u8 {
        let key = format!("race-{k}");
        let bytes = data(3000, 10 + k);
        let (ra, rb) = tokio::join!(
            c.upload(A, &c.key, "race.bin", bytes.clone(), &[], Some(&key)),
            c.upload(B, &c.key, "race.bin", bytes.clone(), &[], Some(&key)),
        );
        assert_eq!(
            (ra.status().as_u16(), rb.status().as_u16()),
            (201, 201),
            "{key}"
        );
        let (ra, rb): (Value, Value) = (ra.json().await.unwrap(), rb.json().await.unwrap());
        assert_eq!(ra["id"], rb["id"], "{key}: one file for both nodes");
        assert_eq!(ra["sha256"], sha256_hex(&bytes).as_str());
        ids.insert(ra["id"].as_str().unwrap().to_string());
    }
    // Six files, counted once each, one object each.
    for n in [A, B] {
        assert_eq!(c.listed(n, &c.key).await, ids, "node {n}");
        let u = c.usage(n, &c.key).await;
        assert_eq!(
            (&u["upload_count"], &u["storage_bytes"]),
            (&6.into(), &(2000 + 5 * 3000).into())
        );
    }
    c.eventually(
        15,
        "one object per file (the race's loser removed)",
        || async { c.objects().await == 6 && c.count("SELECT COUNT(*) FROM blob_deletions") == 0 },
    )
    .await;
    assert_eq!(c.count("SELECT COUNT(*) FROM files"), 6);
}
