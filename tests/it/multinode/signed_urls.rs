//! Signed URLs valid on every node, and two nodes starting together on an
//! empty database (migrations, bootstrap and the signing secret race).

use crate::common::cluster::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_urls_are_valid_on_every_node() {
    let Some(c) = Cluster::start("signed", ROOMY, false).await else {
        return;
    };
    let body = data(4096, 7);
    let rec = c
        .upload_ok(A, "secret.bin", body.clone(), &[("private", "true")])
        .await;
    assert_eq!(rec["url"], Value::Null);
    let id = rec["id"].as_str().unwrap();
    let sign = |n: usize, expires_in: u64| {
        let c = &c;
        async move {
            let r = c
                .http
                .post(c.url(n, &format!("/v1/files/{id}/signed-url")))
                .bearer_auth(&c.key)
                .json(&serde_json::json!({ "expires_in": expires_in }))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            let v: Value = r.json().await.unwrap();
            v["url"].as_str().unwrap().to_string()
        }
    };
    // Made on one node, served by both.
    for made_on in [A, B] {
        let url = sign(made_on, 3600).await;
        assert!(
            url.starts_with(&c.url(made_on, &format!("/live/{}/{id}/", c.account))),
            "{url}"
        );
        for n in [A, B] {
            let (status, bytes) = c.fetch(&c.at(n, &url)).await;
            assert_eq!(status, 200, "signed on node {made_on}, served by node {n}");
            assert_eq!(bytes, body);
        }
    }
    // Tampered or unsigned: refused by both.
    let url = sign(A, 3600).await;
    let (path, query) = url.split_once('?').unwrap();
    let params: BTreeMap<&str, &str> = query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .collect();
    let (expires, signature) = (params["expires"], params["signature"]);
    let flipped: String = {
        let mut s = signature.to_string();
        let last = if s.ends_with('0') { "1" } else { "0" };
        s.replace_range(s.len() - 1.., last);
        s
    };
    let later: i64 = expires.parse::<i64>().unwrap() + 60;
    for n in [A, B] {
        for bad in [
            format!("{path}?expires={expires}&signature={flipped}"),
            format!("{path}?expires={later}&signature={signature}"),
            path.to_string(),
        ] {
            let (status, _) = c.fetch(&c.at(n, &bad)).await;
            assert_eq!(status, 403, "{bad} on node {n}");
        }
    }
    // Expired: refused by both (made on B, 1 s).
    let short = sign(B, 1).await;
    let (status, _) = c.fetch(&c.at(A, &short)).await;
    assert_eq!(status, 200, "valid before it expires");
    let expires: i64 = short
        .split("expires=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(
        ((expires + 1) * 1000 - now_ms()).max(0) as u64 + 100,
    ))
    .await;
    for n in [A, B] {
        let (status, _) = c.fetch(&c.at(n, &short)).await;
        assert_eq!(status, 403, "expired signed URL on node {n}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_starting_together_on_an_empty_database_both_serve() {
    // Both nodes start at the same moment on an empty database (migrations,
    // the bootstrap account and the signing secret race), on a fresh
    // database each round: both serve, one of them printed the one key,
    // and a URL signed on either is good on the other.
    for round in 0..6 {
        let Some(c) = Cluster::start(&format!("together-{round}"), ROOMY, true).await else {
            return;
        };
        assert_eq!(c.count("SELECT COUNT(*) FROM accounts"), 1, "round {round}");
        let body = data(100, round);
        let rec = c
            .upload_ok(B, "p.bin", body.clone(), &[("private", "true")])
            .await;
        let id = rec["id"].as_str().unwrap();
        for n in [A, B] {
            let r = c
                .http
                .post(c.url(n, &format!("/v1/files/{id}/signed-url")))
                .bearer_auth(&c.key)
                .json(&serde_json::json!({ "expires_in": 60 }))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            let url = r.json::<Value>().await.unwrap()["url"]
                .as_str()
                .unwrap()
                .to_string();
            let (status, got) = c.fetch(&c.at(other(n), &url)).await;
            assert_eq!(
                (status, got),
                (200, body.clone()),
                "round {round}: signed on node {n}"
            );
        }
    }
}
