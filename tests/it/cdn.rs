//! The CDN routes and signed URLs: public and private access, signatures
//! (tamper, expiry), Range, conditional requests, safe headers, bandwidth.

use crate::common::get_bytes;
use crate::common::{error_code, Backend, TestOptions, TestServer};
use std::time::Duration;

both_stores!(
    public_file_headers_and_ranges,
    private_files_need_a_valid_signature,
    signed_url_errors,
    bandwidth_counts_bytes_sent_only,
    bandwidth_is_flushed_in_batches_and_at_shutdown,
    a_change_on_this_node_reaches_the_cdn_at_once,
    a_hot_files_answer_is_the_full_paths,
);

/// A public file served in the last second is answered from memory before
/// the router (`server::hot`): header for header, and byte for byte, what
/// the full path answers (which a conditional request still takes), with
/// its bytes counted the same.
async fn a_hot_files_answer_is_the_full_paths(b: Backend) {
    let srv = TestServer::on(b).await;
    let body = pattern(3_000);
    // A name sent as it is (a percent-encoded one takes the full path).
    let f = srv.upload_ok("hot.txt", body.clone(), &[]).await;
    let url = f["url"].as_str().unwrap().to_string();
    assert!(!url.contains('%'), "{url}");
    let answer = |method: reqwest::Method, full: bool| hot_or_full(&srv, method, &url, None, full);
    let first = answer(reqwest::Method::GET, false).await;
    let hot = answer(reqwest::Method::GET, false).await;
    let full = answer(reqwest::Method::GET, true).await;
    assert_eq!(first.0, 200);
    assert_eq!(hot, full);
    assert_eq!(hot, first);
    assert_eq!(hot.2, body);
    assert!(hot
        .1
        .iter()
        .any(|(k, _)| k == "access-control-allow-origin"));
    assert!(hot.1.iter().any(|(k, _)| k == "content-digest"));
    assert!(hot
        .1
        .iter()
        .any(|(k, v)| k == "x-request-id" && v == "hot-or-full"));
    let head = answer(reqwest::Method::HEAD, false).await;
    let full_head = answer(reqwest::Method::HEAD, true).await;
    assert_eq!(head, full_head);
    assert_eq!((head.0, head.2.len()), (200, 0));
    // Three GETs of the whole file; the HEADs count nothing.
    srv.eventually(5, "bandwidth of three GETs", || async {
        srv.usage().await["bandwidth_bytes"] == 9_000
    })
    .await;
}

/// Status, headers (but `Date`) sorted, and body of a request.
pub(crate) type Answer = (u16, Vec<(String, String)>, Vec<u8>);

/// A `method` request of `url` (with `accept`, if given) as the hot path
/// takes it, or as it goes the full way (`full`: a conditional header, not
/// modified since long before, which still answers 200); the same request
/// id each time, which both paths answer with.
pub(crate) async fn hot_or_full(
    srv: &TestServer,
    method: reqwest::Method,
    url: &str,
    accept: Option<&str>,
    full: bool,
) -> Answer {
    let mut req = srv
        .http
        .request(method, url)
        .header("x-request-id", "hot-or-full");
    if let Some(accept) = accept {
        req = req.header("accept", accept);
    }
    if full {
        req = req.header("if-modified-since", "Sat, 01 Jan 2000 00:00:00 GMT");
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let mut headers: Vec<(String, String)> = r
        .headers()
        .iter()
        .filter(|(k, _)| k.as_str() != "date")
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string()))
        .collect();
    headers.sort();
    (status, headers, r.bytes().await.unwrap().to_vec())
}

/// The CDN answers a file it served in the last second from memory; a/// The CDN answers a file it served in the last second from memory; a
/// delete, bulk delete, folder delete or rename made on this node is seen
/// by the next request all the same, and an expiry at its time.
async fn a_change_on_this_node_reaches_the_cdn_at_once(b: Backend) {
    let srv = TestServer::on(b).await;
    let status = |url: String| {
        let http = srv.http.clone();
        async move { http.get(url).send().await.unwrap().status().as_u16() }
    };
    let url = |f: &serde_json::Value| f["url"].as_str().unwrap().to_string();
    let id = |f: &serde_json::Value| f["id"].as_str().unwrap().to_string();
    let one = srv.upload_ok("one.txt", b"one".to_vec(), &[]).await;
    let two = srv.upload_ok("two.bin", vec![2; 140_000], &[]).await;
    let three = srv
        .upload_ok("three.txt", b"three".to_vec(), &[("folder", "gone")])
        .await;
    let four = srv.upload_ok("four.txt", b"four".to_vec(), &[]).await;
    let five = srv
        .upload_ok("five.txt", b"five".to_vec(), &[("expires", "1h")])
        .await;
    for f in [&one, &two, &three, &four, &five] {
        assert_eq!(status(url(f)).await, 200);
        assert_eq!(status(url(f)).await, 200);
    }
    assert_eq!(
        srv.delete_as(&srv.secret_key, &id(&one)).await.status(),
        200
    );
    assert_eq!(status(url(&one)).await, 404);
    let r = srv
        .http
        .post(srv.url("/v1/files/delete"))
        .bearer_auth(&srv.secret_key)
        .json(&serde_json::json!({"ids": [id(&two)]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(status(url(&two)).await, 404);
    let r = srv
        .http
        .delete(srv.url("/v1/folders?folder=gone"))
        .bearer_auth(&srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(status(url(&three)).await, 404);
    let r = srv
        .http
        .patch(srv.url(&format!("/v1/files/{}", id(&four))))
        .bearer_auth(&srv.secret_key)
        .json(&serde_json::json!({"name": "renamed.txt"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let renamed: serde_json::Value = r.json().await.unwrap();
    assert_eq!(status(url(&four)).await, 404);
    let r = srv.http.get(url(&renamed)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(&r.bytes().await.unwrap()[..], b"four");
    srv.clock.advance(Duration::from_secs(3601));
    assert_eq!(status(url(&five)).await, 404);
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 251) as u8).collect()
}

async fn public_file_headers_and_ranges(b: Backend) {
    let srv = TestServer::on(b).await;
    let data = pattern(100_000);
    let f = srv.upload_ok("page.html", data.clone(), &[]).await;
    let url = f["url"].as_str().unwrap().to_string();
    let r = srv.http.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let headers = r.headers().clone();
    assert_eq!(headers["content-type"], "text/html");
    assert_eq!(headers["content-length"], "100000");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["content-security-policy"], "sandbox");
    assert_eq!(headers["accept-ranges"], "bytes");
    // Any page may fetch() it (no credentials travel to the CDN).
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert!(headers["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .contains("content-range"));
    let preflight = srv
        .http
        .request(reqwest::Method::OPTIONS, &url)
        .header("origin", "https://app.example.com")
        .header("access-control-request-method", "GET")
        .header("access-control-request-headers", "range")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 204);
    assert_eq!(preflight.headers()["access-control-allow-origin"], "*");
    assert!(preflight.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .contains("range"));
    let missing = srv.http.get(format!("{url}x")).send().await.unwrap();
    assert_eq!(missing.headers()["access-control-allow-origin"], "*");
    assert!(headers["content-disposition"]
        .to_str()
        .unwrap()
        .contains("filename=\"page.html\""));
    let etag = headers["etag"].to_str().unwrap().to_string();
    let last_modified = headers["last-modified"].to_str().unwrap().to_string();
    assert!(last_modified.ends_with("GMT"));
    assert_eq!(&r.bytes().await.unwrap()[..], &data[..]);
    // Ranges.
    for (range, start, end) in [
        ("bytes=0-9", 0, 9),
        ("bytes=99990-", 99_990, 99_999),
        ("bytes=-5", 99_995, 99_999),
        ("bytes=500-999999", 500, 99_999),
    ] {
        let r = srv
            .http
            .get(&url)
            .header("range", range)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 206, "{range}");
        assert_eq!(
            r.headers()["content-range"],
            format!("bytes {start}-{end}/100000").as_str()
        );
        assert_eq!(&r.bytes().await.unwrap()[..], &data[start..=end], "{range}");
    }
    let r = srv
        .http
        .get(&url)
        .header("range", "bytes=100000-")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-range"], "bytes */100000");
    assert_eq!(error_code(r).await.0, 416);
    // If-Range with another validator: the whole file.
    let r = srv
        .http
        .get(&url)
        .header("range", "bytes=0-9")
        .header("if-range", "\"other\"")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // Conditional requests.
    let r = srv
        .http
        .get(&url)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);
    assert!(r.bytes().await.unwrap().is_empty());
    let r = srv
        .http
        .get(&url)
        .header("if-modified-since", &last_modified)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);
    let r = srv
        .http
        .get(&url)
        .header("if-none-match", "\"nope\"")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // HEAD: the headers, no body.
    let r = srv.http.head(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-length"], "100000");
    // A wrong name, file or account in the path: 404 envelope.
    let wrong_name = url.replace("page.html", "other.html");
    assert_eq!(
        error_code(srv.http.get(&wrong_name).send().await.unwrap()).await,
        (404, "not_found".into())
    );
    let wrong_file = format!("{}/live/{}/f_nope/page.html", srv.base_url, srv.account_id);
    assert_eq!(
        error_code(srv.http.get(&wrong_file).send().await.unwrap()).await,
        (404, "not_found".into())
    );
    // Zero-byte files serve fine and refuse any range.
    let e = srv.upload_ok("empty.bin", vec![], &[]).await;
    let eu = e["url"].as_str().unwrap();
    let r = srv.http.get(eu).send().await.unwrap();
    assert_eq!(
        (r.status().as_u16(), r.bytes().await.unwrap().len()),
        (200, 0)
    );
    assert_eq!(
        srv.http
            .get(eu)
            .header("range", "bytes=0-")
            .send()
            .await
            .unwrap()
            .status(),
        416
    );
}

async fn sign(srv: &TestServer, id: &str, expires_in: serde_json::Value) -> reqwest::Response {
    srv.sign_as(
        &srv.secret_key,
        id,
        serde_json::json!({ "expires_in": expires_in }),
    )
    .await
}

async fn private_files_need_a_valid_signature(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv
        .upload_ok("secret.txt", b"top secret".to_vec(), &[("private", "true")])
        .await;
    let id = f["id"].as_str().unwrap();
    let bare = format!("{}/live/{}/{id}/secret.txt", srv.base_url, srv.account_id);
    assert_eq!(
        error_code(srv.http.get(&bare).send().await.unwrap()).await,
        (403, "forbidden".into())
    );
    let r = sign(&srv, id, serde_json::json!(60)).await;
    assert_eq!(r.status(), 200);
    let s: serde_json::Value = r.json().await.unwrap();
    let url = s["url"].as_str().unwrap().to_string();
    assert!(
        url.starts_with(&format!("{bare}?expires=")) && url.contains("&signature="),
        "{url}"
    );
    let expires_at =
        chrono::DateTime::parse_from_rfc3339(s["expires_at"].as_str().unwrap()).unwrap();
    let ahead = expires_at.timestamp() - chrono::Utc::now().timestamp();
    assert!((58..=61).contains(&ahead), "{ahead}");
    let r = srv.http.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "private, no-store");
    assert_eq!(&r.bytes().await.unwrap()[..], b"top secret");
    // Tampering: another expiry, another signature, a truncated one, another file.
    let (base, query) = url.split_once('?').unwrap();
    let expires: i64 = query
        .split('&')
        .next()
        .unwrap()
        .trim_start_matches("expires=")
        .parse()
        .unwrap();
    let sig = query.split("signature=").nth(1).unwrap();
    let tampered = [
        format!("{base}?expires={}&signature={sig}", expires + 3600),
        format!(
            "{base}?expires={expires}&signature={}",
            sig.replace(&sig[..2], if &sig[..2] == "00" { "11" } else { "00" })
        ),
        format!("{base}?expires={expires}&signature={}", &sig[..32]),
        format!("{base}?expires=never&signature={sig}"),
        format!("{base}?signature={sig}"),
    ];
    for t in &tampered {
        assert_eq!(
            error_code(srv.http.get(t).send().await.unwrap()).await,
            (403, "forbidden".into()),
            "{t}"
        );
    }
    let other = srv
        .upload_ok("other.txt", b"other".to_vec(), &[("private", "true")])
        .await;
    let other_url = format!(
        "{}/live/{}/{}/other.txt?{query}",
        srv.base_url,
        srv.account_id,
        other["id"].as_str().unwrap()
    );
    assert_eq!(srv.http.get(other_url).send().await.unwrap().status(), 403);
    // Expiry: move the server's clock past it.
    srv.clock.advance(Duration::from_secs(61));
    assert_eq!(
        error_code(srv.http.get(&url).send().await.unwrap()).await,
        (403, "forbidden".into())
    );
    // Signed URLs work for public files too.
    let public_file = srv.upload_ok("pub.txt", b"pub".to_vec(), &[]).await;
    let signed = srv
        .signed_url(public_file["id"].as_str().unwrap(), 604_800)
        .await;
    assert_eq!(srv.http.get(&signed).send().await.unwrap().status(), 200);
}

async fn signed_url_errors(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv.upload_ok("a.txt", b"a".to_vec(), &[]).await;
    let id = f["id"].as_str().unwrap();
    for bad in [
        serde_json::json!(0),
        serde_json::json!(604_801),
        serde_json::json!(-5),
        serde_json::json!("60"),
        serde_json::json!(1.5),
        serde_json::Value::Null,
    ] {
        assert_eq!(
            error_code(sign(&srv, id, bad.clone()).await).await,
            (400, "bad_request".into()),
            "{bad}"
        );
    }
    let path = srv.url(&format!("/v1/files/{id}/signed-url"));
    let key = &srv.secret_key;
    // Bodies that are not {"expires_in": n}.
    let bodies: [(&str, Option<&str>, &str); 4] = [
        ("no expires_in", Some("application/json"), "{}"),
        ("not JSON", Some("application/json"), "{not json"),
        ("a form", None, "expires_in=60"),
        ("an array", Some("application/json"), "[60]"),
    ];
    for (what, content_type, body) in bodies {
        let mut req = srv.http.post(&path).bearer_auth(key).body(body);
        if let Some(t) = content_type {
            req = req.header("content-type", t);
        }
        let r = req.send().await.unwrap();
        assert_eq!(error_code(r).await, (400, "bad_request".into()), "{what}");
    }
    assert_eq!(
        error_code(sign(&srv, "f_missing", serde_json::json!(60)).await).await,
        (404, "not_found".into())
    );
    let r = srv
        .http
        .post(&path)
        .json(&serde_json::json!({"expires_in": 60}))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));
}

async fn bandwidth_counts_bytes_sent_only(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv.upload_ok("b.bin", pattern(10_000), &[]).await;
    let url = f["url"].as_str().unwrap().to_string();
    assert_eq!(srv.usage().await["bandwidth_bytes"], 0);
    get_bytes(&srv.http, &url).await;
    srv.http
        .get(&url)
        .header("range", "bytes=0-99")
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    srv.http.head(&url).send().await.unwrap();
    let etag = srv.http.head(&url).send().await.unwrap().headers()["etag"].clone();
    assert_eq!(
        srv.http
            .get(&url)
            .header("if-none-match", etag)
            .send()
            .await
            .unwrap()
            .status(),
        304
    );
    srv.eventually(5, "bandwidth 10100", || async {
        srv.usage().await["bandwidth_bytes"] == 10_100
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        srv.usage().await["bandwidth_bytes"],
        10_100,
        "HEAD and 304 count nothing"
    );
}

/// Bandwidth is counted in memory and written once a second, not per
/// download: usage is exact at once, the database catches up within seconds,
/// and what is counted when the server stops is written before it exits.
async fn bandwidth_is_flushed_in_batches_and_at_shutdown(b: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let opts = TestOptions {
        backend: Some(b),
        data_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let srv = TestServer::start_with(opts.clone()).await;
    let f = srv.upload_ok("b.bin", pattern(1000), &[]).await;
    let url = f["url"].as_str().unwrap().to_string();
    let download = |n: usize| {
        let (http, url) = (srv.http.clone(), url.clone());
        async move {
            for _ in 0..n {
                let body = get_bytes(&http, &url).await;
                assert_eq!(body.len(), 1000);
            }
        }
    };
    download(3).await;
    assert_eq!(srv.usage().await["bandwidth_bytes"], 3000, "exact at once");
    let stored = |srv: &TestServer| {
        srv.count("SELECT CAST(COALESCE(SUM(bandwidth_bytes), 0) AS BIGINT) FROM usage_periods")
    };
    srv.eventually(5, "the flush of 3000 bytes", || async {
        stored(&srv) == 3000
    })
    .await;
    download(2).await;
    srv.stop().await;
    let srv = TestServer::start_with(opts).await;
    assert_eq!(stored(&srv), 5000, "flushed at shutdown");
    assert_eq!(srv.usage().await["bandwidth_bytes"], 5000);
}

/// Files up to `storage.inline_max` keep their bytes in the database, larger
/// ones go to the blob store; the boundary is exact, both serve the same
/// bytes and ranges, and deleting either leaves nothing behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_files_are_inline_up_to_the_limit_exactly() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[storage]\ninline_max = \"1KiB\"\n".into()),
        ..Default::default()
    })
    .await;
    let inline_rows = |srv: &TestServer| srv.count("SELECT COUNT(*) FROM inline_blobs");
    let at = srv.upload_ok("at.bin", pattern(1024), &[]).await;
    assert_eq!((inline_rows(&srv), srv.blob_count().await), (1, 1));
    let over = srv.upload_ok("over.bin", pattern(1025), &[]).await;
    assert_eq!((inline_rows(&srv), srv.blob_count().await), (1, 2));
    for (f, len) in [(&at, 1024), (&over, 1025)] {
        let url = f["url"].as_str().unwrap();
        let body = get_bytes(&srv.http, url).await;
        assert_eq!(body.clone(), pattern(len));
        let r = srv
            .http
            .get(url)
            .header("range", "bytes=1000-")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 206);
        assert_eq!(r.bytes().await.unwrap().to_vec(), pattern(len)[1000..]);
    }
    for f in [&at, &over] {
        let r = srv
            .delete_as(&srv.secret_key, f["id"].as_str().unwrap())
            .await;
        assert_eq!(r.status(), 200);
    }
    srv.eventually(5, "no bytes left", || async {
        srv.blob_count().await == 0 && srv.leftovers() == (0, 0, 0)
    })
    .await;
    assert_eq!(srv.usage().await["storage_bytes"], 0);
}
