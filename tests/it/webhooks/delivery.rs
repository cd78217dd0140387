//! Every event type delivered, signed, with the File record; a slow
//! receiver not slowing uploads.

use super::*;
use crate::common::receiver::*;
use crate::common::sha256_hex;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Every event type reaches the receiver, verified by standardwebhooks, with
/// `data` the File record exactly as GET /v1/files/{id} gave it, and the
/// bytes (size, sha256) at `data.url` when file.created arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_is_delivered_signed_with_the_file_record() {
    if !tools("every_event_is_delivered_signed_with_the_file_record") {
        return;
    }
    let started_ms = (now() * 1000.0) as i64;
    let srv = TestServer::start().await;
    let rx = Receiver::start(&RxOptions {
        read_files: true,
        ..Default::default()
    });
    hook(&srv, &rx, &[]);
    let key = srv.secret_key.clone();

    // file.created: small (inline) and large (blob) multipart uploads, a
    // private one (no url to read), and a tus upload.
    // Each record as GET gives it, read at once (the expiring one is 404
    // from its expiry on).
    let expiring = upload(&srv, &key, "expiring.txt", 100, &[("expires", "2s")]).await;
    let expiring_record = get_file(&srv, &key, s(&expiring["id"])).await;
    let small = upload(
        &srv,
        &key,
        "small.txt",
        5_000,
        &[("folder", "in/box"), ("metadata", r#"{"team":"ops"}"#)],
    )
    .await;
    let big = upload(&srv, &key, "big.bin", 3_000_000, &[]).await;
    let private = upload(&srv, &key, "private.bin", 1_000, &[("private", "true")]).await;
    let tus_id = tus_upload(&srv, "resumable.bin", 200_000).await;
    let mut records = BTreeMap::new();
    records.insert(s(&expiring["id"]).to_string(), expiring_record);
    for id in [&small["id"], &big["id"], &private["id"]]
        .into_iter()
        .map(|v| s(v).to_string())
        .chain([tus_id.clone()])
    {
        let rec = get_file(&srv, &key, &id).await;
        records.insert(id, rec);
    }
    // file.deleted
    let small_id = s(&small["id"]).to_string();
    let before_delete_ms = (now() * 1000.0) as i64;
    delete(&srv, &key, &small_id).await;
    // file.expired: the collector (every 100 ms here) reaps it.
    let expiring_id = s(&expiring["id"]).to_string();

    let created: Vec<String> = records.keys().cloned().collect();
    let mut want: Vec<(&str, &str)> = created.iter().map(|id| (CREATED, id.as_str())).collect();
    want.push((DELETED, &small_id));
    want.push((EXPIRED, &expiring_id));
    let reqs = rx.wait_delivered(60, &want).await;
    health_ok(&srv.http, &srv.base_url).await;
    // Nothing more turns up.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let reqs_later = rx.requests();
    assert_eq!(
        reqs.len(),
        reqs_later.len(),
        "more requests came:\n{}",
        summary(&reqs_later)
    );
    let reqs = reqs_later;
    one_id_per_event(&reqs);
    let got = delivered(&reqs);
    let want_set: BTreeSet<(String, String)> = want
        .iter()
        .map(|(t, i)| (t.to_string(), i.to_string()))
        .collect();
    assert_eq!(got, want_set, "events delivered:\n{}", summary(&reqs));

    for (ty, id) in &want {
        let r = the_delivery(&reqs, ty, id);
        assert_eq!(r["method"], "POST");
        assert_eq!(r["path"], "/hook");
        assert!(
            s(&r["content_type"]).starts_with("application/json"),
            "content-type {}",
            r["content_type"]
        );
        assert_eq!(r["valid"], true, "{r}");
        assert_eq!(r["data"], records[*id], "{ty}: data is the File record");
        let metadata = if *id == small_id {
            serde_json::json!({"team": "ops"})
        } else {
            serde_json::json!({})
        };
        assert_eq!(r["data"]["metadata"], metadata, "{ty}: with its metadata");
        let ts = event_ms(&r["timestamp"]);
        let received_ms = (r["received_at"].as_f64().unwrap() * 1000.0) as i64;
        assert!(
            ts >= started_ms && ts <= received_ms + 5,
            "{ty} of {id}: timestamp {} not between the test start and its receipt",
            r["timestamp"]
        );
        // webhook-timestamp: unix seconds of the attempt.
        let header: i64 = s(&r["webhook_timestamp"]).parse().expect("unix seconds");
        assert!(
            (header - received_ms / 1000).abs() <= 5,
            "webhook-timestamp {header} far from the receipt {received_ms} ms"
        );
        match *ty {
            CREATED => {
                assert!(ts >= rfc3339_ms(&records[*id]["created_at"]) - 1000);
                if *id == s(&private["id"]) {
                    assert!(r["data"]["url"].is_null());
                    assert!(r["read"].is_null());
                } else {
                    let read = &r["read"];
                    assert_eq!(
                        read["ok"], true,
                        "file.created of {id}: the receiver read {read} at {}",
                        r["data"]["url"]
                    );
                    assert_eq!(read["sha256"], records[*id]["sha256"]);
                    assert_eq!(read["size"], records[*id]["size"]);
                }
            }
            DELETED => assert!(ts >= before_delete_ms, "deleted before the DELETE?"),
            EXPIRED => assert!(
                ts >= rfc3339_ms(&records[*id]["expires_at"]),
                "file.expired {} before expires_at {}",
                r["timestamp"],
                records[*id]["expires_at"]
            ),
            _ => unreachable!(),
        }
    }
    // The bytes the receiver read are the bytes uploaded.
    assert_eq!(
        s(&records[s(&big["id"])]["sha256"]),
        sha256_hex(&bytes_for("big.bin", 3_000_000))
    );
    assert_eq!(
        s(&records[&tus_id]["sha256"]),
        sha256_hex(&bytes_for("resumable.bin", 200_000))
    );
}

/// A receiver that takes 3 s to answer: uploads are answered while a
/// delivery hangs, health answers ok, and every event still arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_receiver_does_not_slow_uploads() {
    if !tools("a_slow_receiver_does_not_slow_uploads") {
        return;
    }
    let srv = TestServer::start().await;
    let rx = Receiver::start(&RxOptions {
        delay_ms: 3000,
        ..Default::default()
    });
    hook(&srv, &rx, &[CREATED]);
    let key = srv.secret_key.clone();
    let first = upload(&srv, &key, "slow-0.txt", 10, &[]).await;
    let mut ids = vec![s(&first["id"]).to_string()];
    // A delivery has arrived and is being held.
    rx.wait_arrivals(30, 1, "a delivery").await;
    for i in 1..6 {
        let f = upload(&srv, &key, &format!("slow-{i}.txt"), 10 + i, &[]).await;
        ids.push(s(&f["id"]).to_string());
    }
    health_ok(&srv.http, &srv.base_url).await;
    let answered_all = now();
    let want: Vec<(&str, &str)> = ids.iter().map(|id| (CREATED, id.as_str())).collect();
    let reqs = rx.wait_delivered(120, &want).await;
    one_id_per_event(&reqs);
    let first_answer = reqs
        .iter()
        .map(|r| r["answered_at"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(
        answered_all < first_answer,
        "the uploads were answered only after the receiver answered a delivery \
         (uploads done at {answered_all:.3}, first delivery answered at {first_answer:.3})"
    );
    for id in &ids {
        the_delivery(&reqs, CREATED, id);
    }
}
