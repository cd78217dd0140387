//! `max_uploads` holds exactly: 20 uploads at once with a token of 5 make
//! exactly 5 files (the rest 401) — multipart and tus on one node, and
//! multipart on two `serve` nodes on one PostgreSQL database (skipped,
//! saying why, without PostgreSQL and S3, as the multinode tests are).

use super::*;
use crate::common::cluster::{Cluster, A, B, ROOMY as CLUSTER_PLAN};
use futures_util::future::join_all;

both_stores!(
    twenty_multipart_uploads_at_once_make_exactly_five_files,
    twenty_tus_creations_at_once_hold_exactly_five_uses,
);

/// Tallies statuses: (number of 201s, the refusals' (status, code)).
async fn tally(rs: Vec<Response>) -> (Vec<Value>, Vec<(u16, String)>) {
    let mut ok = Vec::new();
    let mut refused = Vec::new();
    for r in rs {
        if r.status() == 201 {
            ok.push(r.json::<Value>().await.unwrap_or(Value::Null));
        } else {
            refused.push(code_of(r).await);
        }
    }
    (ok, refused)
}

async fn twenty_multipart_uploads_at_once_make_exactly_five_files(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    for round in 0..2 {
        let t = token(
            &srv,
            json!({"max_uploads": 5, "folder": format!("race{round}")}),
        )
        .await;
        let before = srv.count("SELECT COUNT(*) FROM files") as usize;
        let rs = join_all((0..20).map(|i| {
            let (srv, t) = (&srv, &t.token);
            let via = if i % 2 == 0 { Via::Query } else { Via::Bearer };
            // Sizes over and under the inline limit.
            let bytes = binary(if i % 3 == 0 { 200_000 } else { 50 }, i as u8);
            async move { upload_with(srv, t, via, &format!("r{i}.bin"), bytes, &[]).await }
        }))
        .await;
        let (ok, refused) = tally(rs).await;
        assert_eq!(
            ok.len(),
            5,
            "round {round}: exactly 5 created; refused {refused:?}"
        );
        // Used up (401), or refused at once because as many of its bodies
        // as it has uploads left were arriving (429).
        assert_eq!(refused.len(), 15, "round {round}");
        assert!(
            refused
                .iter()
                .all(|(status, code)| (*status == 401 && code == "unauthorized")
                    || (*status == 429 && code == "rate_limit_exceeded")),
            "round {round}: {refused:?}"
        );
        let files = listed(&srv, &format!("folder=race{round}")).await;
        assert_eq!(files.len(), 5);
        assert_eq!(srv.count("SELECT COUNT(*) FROM files") as usize, before + 5);
        let rec = token_record(&srv, &t.id).await;
        assert_eq!(rec["uploads_left"], 0, "{rec}");
        let r = upload_with(&srv, &t.token, Via::Query, "late.bin", vec![1], &[]).await;
        refused_401(r).await;
    }
    // The refused uploads left nothing.
    let usage = srv.usage().await;
    let before = Held {
        files: 10,
        storage_bytes: usage["storage_bytes"].as_u64().unwrap(),
        upload_count: 10,
    };
    nothing_stored(&srv, &before, s3.as_ref()).await;
}

async fn refused_401(r: Response) {
    assert_eq!(code_of(r).await, (401, "unauthorized".into()));
}

async fn twenty_tus_creations_at_once_hold_exactly_five_uses(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    let t = token(&srv, json!({"max_uploads": 5})).await;
    let rs = join_all((0..20).map(|i| {
        let (srv, t) = (&srv, &t.token);
        async move { tus_create(srv, t, None, 100, &[("filename", &format!("c{i}.bin"))]).await }
    }))
    .await;
    let mut urls = Vec::new();
    let mut refused = Vec::new();
    for r in rs {
        if r.status() == 201 {
            urls.push(r.headers()["location"].to_str().unwrap().to_string());
        } else {
            refused.push(code_of(r).await);
        }
    }
    assert_eq!(urls.len(), 5, "exactly 5 created; refused {refused:?}");
    assert_eq!(refused, vec![(401, "unauthorized".to_string()); 15]);
    assert_eq!(uploads_left(&srv, &t.id).await, 0);
    // All five complete at once, and a multipart upload races them: it is
    // refused (every use is held).
    let patches = join_all(urls.iter().enumerate().map(|(i, url)| {
        let (srv, t) = (&srv, &t.token);
        async move { tus_patch(srv, url, t, 0, binary(100, i as u8)).await }
    }));
    let multipart = upload_with(&srv, &t.token, Via::Bearer, "m.bin", vec![1; 10], &[]);
    let (patches, multipart) = futures_util::join!(patches, multipart);
    for r in patches {
        assert_eq!(r.status(), 204);
        assert!(r.headers().contains_key("x-file-id"));
    }
    refused_401(multipart).await;
    assert_eq!(listed(&srv, "").await.len(), 5);
    assert_eq!(uploads_left(&srv, &t.id).await, 0);
    let before = Held {
        files: 5,
        storage_bytes: 500,
        upload_count: 5,
    };
    nothing_stored(&srv, &before, s3.as_ref()).await;
}

/// Two real `serve` nodes on one PostgreSQL database: 20 multipart uploads
/// with one token of max_uploads 5, alternated between the nodes, at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_uploads_on_two_nodes_make_exactly_five_files() {
    let plans = format!("{CLUSTER_PLAN}concurrent_uploads = 200\nopen_uploads = 200\n");
    let Some(c) = Cluster::start("tokens-exact", &plans, false).await else {
        return;
    };
    for round in 0..3 {
        // The token made on one node, used on both.
        let r = c
            .http
            .post(c.url(round % 2, "/v1/upload-tokens"))
            .bearer_auth(&c.key)
            .json(&json!({"max_uploads": 5, "folder": format!("race{round}")}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        let rec: Value = r.json().await.unwrap();
        let (id, t) = (
            rec["id"].as_str().unwrap().to_string(),
            rec["token"].as_str().unwrap().to_string(),
        );
        let rs = join_all((0..20).map(|i| {
            let (c, t) = (&c, &t);
            async move {
                let node = if i % 2 == 0 { A } else { B };
                c.http
                    .post(format!("{}?token={t}", c.url(node, "/v1/upload")))
                    .multipart(crate::common::upload_form(
                        &format!("n{i}.bin"),
                        binary(if i % 4 == 0 { 100_000 } else { 64 }, i as u8),
                        &[],
                    ))
                    .send()
                    .await
                    .unwrap()
            }
        }))
        .await;
        let (ok, refused) = tally(rs).await;
        assert_eq!(ok.len(), 5, "round {round}: exactly 5; refused {refused:?}");
        assert_eq!(refused.len(), 15, "round {round}");
        assert!(
            refused
                .iter()
                .all(|(status, code)| (*status == 401 && code == "unauthorized")
                    || (*status == 429 && code == "rate_limit_exceeded")),
            "round {round}: {refused:?}"
        );
        assert_eq!(
            c.count(&format!(
                "SELECT COUNT(*) FROM files WHERE folder = 'race{round}'"
            )),
            5
        );
        for n in [A, B] {
            let (status, rec) = c
                .get_json(n, &c.key, &format!("/v1/upload-tokens/{id}"))
                .await;
            assert_eq!(status, 200);
            assert_eq!(rec["uploads_left"], 0, "node {n}: {rec}");
            let (status, page) = c
                .get_json(
                    n,
                    &c.key,
                    &format!("/v1/files?limit=100&folder=race{round}"),
                )
                .await;
            assert_eq!(status, 200);
            assert_eq!(page["files"].as_array().unwrap().len(), 5, "node {n}");
        }
    }
    assert_eq!(c.count("SELECT COUNT(*) FROM files"), 15);
    c.eventually(15, "only the 15 files' objects left in S3", || async {
        c.objects().await == 15 && c.count("SELECT COUNT(*) FROM blob_deletions") == 0
    })
    .await;
    c.no_multipart_left().await;
    // tus across nodes: 10 creations at once with a token of 3, half on
    // each node: exactly 3 held.
    let r = c
        .http
        .post(c.url(A, "/v1/upload-tokens"))
        .bearer_auth(&c.key)
        .json(&json!({"max_uploads": 3}))
        .send()
        .await
        .unwrap();
    let rec: Value = r.json().await.unwrap();
    let t = rec["token"].as_str().unwrap().to_string();
    let rs = join_all((0..10).map(|i| {
        let (c, t) = (&c, &t);
        async move {
            c.http
                .post(c.url(i % 2, "/v1/uploads"))
                .bearer_auth(t)
                .header(TUS.0, TUS.1)
                .header("upload-length", 10)
                .header("upload-metadata", encode_metadata(&[("filename", "t.bin")]))
                .send()
                .await
                .unwrap()
        }
    }))
    .await;
    let statuses: Vec<u16> = rs.iter().map(|r| r.status().as_u16()).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 201).count(),
        3,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 401).count(),
        7,
        "{statuses:?}"
    );
}
