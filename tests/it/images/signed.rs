//! Private files: a variant needs a signature that covers its parameters;
//! one variant's signature is no signature for another, nor for the
//! original, and the original's is none for a variant.

use super::{dimensions, get, png, with};
use crate::common::{Backend, TestServer};
use serde_json::json;

both_stores!(signatures_cover_the_parameters);

async fn signatures_cover_the_parameters(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv
        .upload_ok("secret.png", png(200, 100), &[("private", "true")])
        .await;
    let id = f["id"].as_str().unwrap();
    // A private file's record has no url: its CDN path, unsigned.
    let url = format!("{}/live/{}/{id}/secret.png", srv.base_url, srv.account_id);
    assert_eq!(get(&srv, &url, None).await.0, 403);
    assert_eq!(get(&srv, &with(&url, "w=50"), None).await.0, 403);
    let r = srv
        .sign_as(
            &srv.secret_key,
            id,
            json!({"expires_in": 600, "transform": {"w": 50, "format": "webp"}}),
        )
        .await;
    assert_eq!(r.status(), 200);
    let signed: serde_json::Value = r.json().await.unwrap();
    let signed = signed["url"].as_str().unwrap().to_string();
    assert!(
        signed.contains("w=50") && signed.contains("format=webp"),
        "{signed}"
    );
    let (status, headers, body) = get(&srv, &signed, None).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "image/webp");
    assert_eq!(dimensions(&body), (50, 25));
    assert_eq!(headers["cache-control"], "private, no-store");
    // Another size on the same signature, or the original: refused.
    let bigger = signed.replace("w=50", "w=4000");
    assert_eq!(get(&srv, &bigger, None).await.0, 403);
    let original = signed.replace("w=50&format=webp&", "");
    assert_ne!(original, signed);
    assert_eq!(get(&srv, &original, None).await.0, 403);
    // The original's signature does not stretch to a variant.
    let plain = srv.signed_url(id, 600).await;
    assert_eq!(get(&srv, &plain, None).await.0, 200);
    assert_eq!(get(&srv, &with(&plain, "w=50"), None).await.0, 403);
    // A bad transform in the request is a 400.
    for bad in [
        json!({"expires_in": 60, "transform": {"w": 0}}),
        json!({"expires_in": 60, "transform": {"width": 5}}),
        json!({"expires_in": 60, "transform": {"fit": "crop"}}),
        json!({"expires_in": 60, "transform": "w=5"}),
    ] {
        let r = srv.sign_as(&srv.secret_key, id, bad.clone()).await;
        assert_eq!(r.status(), 400, "{bad}");
    }
}

/// `filestore sign ID --width …`: the URL of that variant, signed; a bad
/// value is a usage error before any request.
#[tokio::test(flavor = "multi_thread")]
async fn the_cli_signs_a_variant() {
    let srv = TestServer::start().await;
    let cli = crate::cli_common::Cli::new(&srv.base_url, &srv.secret_key);
    let f = srv
        .upload_ok("s.png", png(200, 100), &[("private", "true")])
        .await;
    let id = f["id"].as_str().unwrap();
    let out = cli
        .run(&[
            "sign", id, "--width", "40", "--fit", "cover", "--height", "40", "--format", "webp",
        ])
        .await;
    out.expect(0);
    let url = out.stdout.trim();
    assert!(url.contains("w=40") && url.contains("fit=cover"), "{url}");
    let (status, headers, body) = get(&srv, url, None).await;
    assert_eq!(
        (status, &headers["content-type"]),
        (200, &"image/webp".parse().unwrap())
    );
    assert_eq!(dimensions(&body), (40, 40));
    for bad in [
        vec!["--width", "0"],
        vec!["--width", "4097"],
        vec!["--quality", "101"],
        vec!["--height", "x"],
    ] {
        let mut args = vec!["sign", id];
        args.extend(bad.iter().copied());
        cli.run(&args).await.expect_error(2, "usage");
    }
    cli.run(&["sign", id, "--fit", "crop"]).await.expect(2);
}
