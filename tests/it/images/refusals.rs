//! Refusals: 400 in the envelope, quickly and without decoding: not an
//! image, a parameter out of range, a source over the pixel cap (a bomb),
//! a file past its cap of variants, variants turned off.

use super::{get, png, png_claiming, with};
use crate::common::{error_code, Backend, TestOptions, TestServer};
use std::time::{Duration, Instant};

both_stores!(refusals_are_400s_and_store_nothing);

async fn refusals_are_400s_and_store_nothing(b: Backend) {
    let srv = TestServer::start_with(TestOptions {
        backend: Some(b),
        plans_toml: Some("[images]\nvariants_per_file = 2\n".into()),
        ..Default::default()
    })
    .await;
    let img = srv.upload_ok("p.png", png(64, 48), &[]).await;
    let url = img["url"].as_str().unwrap();
    for query in [
        "w=0",
        "w=4097",
        "h=-1",
        "w=",
        "w=1.5",
        "fit=stretch",
        "format=gif",
        "format=",
        "q=0",
        "q=101",
        "w=10&w=20",
    ] {
        let r = srv.http.get(with(url, query)).send().await.unwrap();
        assert_eq!(error_code(r).await, (400, "bad_request".into()), "{query}");
    }
    // Not an image: by its type, and by its bytes under an image's type.
    let text = srv.upload_ok("a.txt", b"hello".to_vec(), &[]).await;
    let r = srv
        .http
        .get(with(text["url"].as_str().unwrap(), "w=10"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body = r.text().await.unwrap();
    assert!(body.contains("not an image"), "{body}");
    let fake = srv
        .upload_ok("fake.png", b"\x89PNG\r\n\x1a\nnot really".to_vec(), &[])
        .await;
    let (status, _, _) = get(&srv, &with(fake["url"].as_str().unwrap(), "w=10"), None).await;
    assert_eq!(status, 400);
    // An AVIF variant of p.png: the first of its two.
    let (status, _, _) = get(&srv, &with(url, "format=avif"), None).await;
    assert_eq!(status, 200);
    // A broken AVIF: an AVIF's first bytes, then nothing of its boxes.
    let broken = srv
        .upload_ok(
            "broken.avif",
            b"\0\0\0\x1cftypavif\0\0\0\0mif1avif".to_vec(),
            &[],
        )
        .await;
    let r = srv
        .http
        .get(with(broken["url"].as_str().unwrap(), "w=10"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("AVIF"));
    // A bomb: a PNG of a few dozen bytes claiming 30000×30000 pixels is
    // refused from its header, at once.
    let bomb = srv
        .upload_ok("bomb.png", png_claiming(30_000, 30_000), &[])
        .await;
    let started = Instant::now();
    let r = srv
        .http
        .get(with(bomb["url"].as_str().unwrap(), "w=10"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body = r.text().await.unwrap();
    assert!(body.contains("30000"), "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "refused from the header"
    );
    // The original is still served as it is.
    let (status, _, original) = get(&srv, bomb["url"].as_str().unwrap(), None).await;
    assert_eq!(
        (status, original.len() as u64),
        (200, bomb["size"].as_u64().unwrap())
    );
    assert_eq!(srv.count("SELECT COUNT(*) FROM image_variants"), 1);
    // Two variants per file here (the AVIF one above is the first of p.png's): a third is refused, the two still served.
    assert_eq!(get(&srv, &with(url, "w=10"), None).await.0, 200);
    let r = srv.http.get(with(url, "w=30")).send().await.unwrap();
    assert_eq!(r.status(), 400);
    let body = r.text().await.unwrap();
    assert!(body.contains("variants_per_file"), "{body}");
    assert_eq!(get(&srv, &with(url, "format=avif"), None).await.0, 200);
    assert_eq!(srv.count("SELECT COUNT(*) FROM image_variants"), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variants_can_be_turned_off() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[images]\nenabled = false\n".into()),
        ..Default::default()
    })
    .await;
    let img = srv.upload_ok("p.png", png(64, 48), &[]).await;
    let r = srv
        .http
        .get(with(img["url"].as_str().unwrap(), "w=10"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("images.enabled"));
    // Other query keys than the image parameters are not ours: served as is.
    let (status, _, body) = get(&srv, &with(img["url"].as_str().unwrap(), "v=2"), None).await;
    assert_eq!(
        (status, body.len() as u64),
        (200, img["size"].as_u64().unwrap())
    );
}

/// AVIF is slow to encode: past images::MAX_AVIF_PIXELS an explicit
/// `format=avif` is a 400, and `format=auto` writes WebP instead (its type
/// and name say so, and the same request gets the same variant again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_avif_variants_are_refused_or_written_as_webp() {
    let srv = TestServer::start().await;
    let img = srv.upload_ok("tiny.png", png(20, 10), &[]).await;
    let url = img["url"].as_str().unwrap();
    let r = srv
        .http
        .get(with(url, "w=2048&h=1024&fit=fill&format=avif"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body = r.text().await.unwrap();
    assert!(body.contains("AVIF") && body.contains("2048"), "{body}");
    let avif = "image/avif,image/webp,*/*";
    for _ in 0..2 {
        let (status, headers, body) = get(
            &srv,
            &with(url, "w=2048&h=1024&fit=fill&format=auto"),
            Some(avif),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(headers["content-type"], "image/webp");
        assert!(headers["content-disposition"]
            .to_str()
            .unwrap()
            .contains("tiny.webp"));
        assert_eq!(super::dimensions(&body), (2048, 1024));
    }
    // A small one is AVIF as asked.
    let (_, headers, _) = get(
        &srv,
        &with(url, "w=64&h=32&fit=fill&format=auto"),
        Some(avif),
    )
    .await;
    assert_eq!(headers["content-type"], "image/avif");
    assert_eq!(srv.count("SELECT COUNT(*) FROM image_variants"), 2);
}
