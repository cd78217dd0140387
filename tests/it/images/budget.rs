//! Renders under a byte budget (`images.memory`), sources that cannot hold
//! what their header claims refused from it, and the fair queue across
//! accounts (CONTRACT §23).

use super::{encoded, get, png, png_claiming, with};
use crate::common::process::Serve;
use crate::common::{error_code, TestOptions, TestServer};
use image::{DynamicImage, ImageFormat, RgbImage, RgbaImage};
use std::time::{Duration, Instant};

/// A small JPEG's headers with its frame saying `w`×`h`, a few bytes of
/// its scan, and its end marker: what a decoder padded with grey.
fn jpeg_claiming(w: u16, h: u16) -> Vec<u8> {
    let mut out = encoded(
        &DynamicImage::ImageRgb8(RgbImage::from_pixel(64, 48, image::Rgb([9, 99, 199]))),
        ImageFormat::Jpeg,
    );
    let sof = out.windows(2).position(|p| p == [0xFF, 0xC0]).unwrap();
    out[sof + 5..sof + 7].copy_from_slice(&h.to_be_bytes());
    out[sof + 7..sof + 9].copy_from_slice(&w.to_be_bytes());
    let sos = out.windows(2).position(|p| p == [0xFF, 0xDA]).unwrap();
    let len = usize::from(u16::from_be_bytes([out[sos + 2], out[sos + 3]]));
    out.truncate(sos + 2 + len + 8);
    out.extend_from_slice(&[0xFF, 0xD9]);
    out
}

/// A GIF whose screen and first frame say `w`×`h`, with a 64×48 frame's
/// data (a header over a few kilobytes).
fn gif_claiming(w: u16, h: u16) -> Vec<u8> {
    let mut out = encoded(
        &DynamicImage::ImageRgba8(RgbaImage::from_pixel(64, 48, image::Rgba([1, 2, 3, 255]))),
        ImageFormat::Gif,
    );
    let at = out.iter().position(|b| *b == 0x2C).unwrap();
    for start in [6, at + 5] {
        out[start..start + 2].copy_from_slice(&w.to_le_bytes());
        out[start + 2..start + 4].copy_from_slice(&h.to_le_bytes());
    }
    out
}

/// The error's body for a GET of `url`.
async fn refused(srv: &TestServer, url: &str) -> (u16, String) {
    let r = srv.http.get(url).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sources_too_short_for_their_header_are_refused_unread() {
    let srv = TestServer::start().await;
    let jpeg = jpeg_claiming(7000, 7000);
    assert!(jpeg.len() < 1024, "{} bytes", jpeg.len());
    for (name, bytes) in [
        ("claims.jpg", jpeg),
        ("claims.png", png_claiming(7000, 7000)),
        ("claims.gif", gif_claiming(7000, 7000)),
    ] {
        let f = srv.upload_ok(name, bytes, &[]).await;
        let url = f["url"].as_str().unwrap();
        for query in ["w=4096", "w=100"] {
            let (status, body) = refused(&srv, &with(url, query)).await;
            assert_eq!(status, 400, "{name} {query}: {body}");
            assert!(body.contains("bad_request"), "{body}");
            // From the header: never decoded, never padded with grey.
            assert!(body.contains("end before its image data"), "{name}: {body}");
        }
    }
    // A PNG and a GIF cut short inside their data.
    let whole = png(300, 200);
    let gif = encoded(&super::picture(300, 200), ImageFormat::Gif);
    for (name, bytes) in [
        ("cut.png", whole[..whole.len() / 2].to_vec()),
        ("cut.gif", gif[..gif.len() / 2].to_vec()),
    ] {
        let f = srv.upload_ok(name, bytes, &[]).await;
        let (status, body) = refused(&srv, &with(f["url"].as_str().unwrap(), "w=50")).await;
        assert_eq!(status, 400, "{name}: {body}");
        assert!(
            body.contains("end before") || body.contains("ends too soon"),
            "{name}: {body}"
        );
    }
    assert_eq!(srv.count("SELECT COUNT(*) FROM image_variants"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_render_over_the_budget_is_refused_and_a_smaller_one_served() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[images]\nmemory = \"16MiB\"\n".into()),
        ..Default::default()
    })
    .await;
    let big = srv.upload_ok("big.png", png(2000, 1500), &[]).await;
    let url = big["url"].as_str().unwrap();
    let r = srv.http.get(with(url, "format=png")).send().await.unwrap();
    let body_code = error_code(r).await;
    assert_eq!(body_code, (400, "bad_request".into()));
    let (status, body) = refused(&srv, &with(url, "w=1999")).await;
    assert_eq!(status, 400);
    assert!(body.contains("images.memory"), "{body}");
    // A small variant of a small image fits.
    let small = srv.upload_ok("small.png", png(200, 150), &[]).await;
    let (status, _, _) = get(&srv, &with(small["url"].as_str().unwrap(), "w=50"), None).await;
    assert_eq!(status, 200);
}

/// One render slot, two accounts flooding it with slow renders: once both
/// have rendered, a third account's fresh variant is admitted as soon as
/// the render running ends, before the flood's next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_third_accounts_variant_waits_only_for_the_render_running() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[images]\nconcurrency = 1\n".into()),
        ..Default::default()
    })
    .await;
    let heavy = png(400, 300);
    let mut flood_urls = Vec::new();
    for name in ["a", "b"] {
        let (_, key) = srv.new_account(name, "pro").await;
        let r = srv.upload_as(&key, "heavy.png", heavy.clone(), &[]).await;
        assert_eq!(r.status(), 201);
        let f: serde_json::Value = r.json().await.unwrap();
        let url = f["url"].as_str().unwrap().to_string();
        flood_urls.push(
            (0..4)
                .map(|i| with(&url, &format!("w={}&format=webp", 300 + i)))
                .collect::<Vec<_>>(),
        );
    }
    let (_, c_key) = srv.new_account("c", "pro").await;
    let r = srv.upload_as(&c_key, "fresh.png", png(64, 48), &[]).await;
    let fresh: serde_json::Value = r.json().await.unwrap();
    let fresh_url = with(fresh["url"].as_str().unwrap(), "w=32");

    let done = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(Instant, u16)>::new()));
    let mut flood = Vec::new();
    for i in 0..4 {
        for urls in &flood_urls {
            let (http, url, done) = (srv.http.clone(), urls[i].clone(), done.clone());
            flood.push(tokio::spawn(async move {
                let status = http
                    .get(url)
                    .send()
                    .await
                    .map_or(0, |r| r.status().as_u16());
                done.lock().unwrap().push((Instant::now(), status));
            }));
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    // Both floods have rendered (the queue knows them): then the fresh one,
    // as a render starts (it reads its header while that one runs).
    let started = Instant::now();
    while done
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, s)| *s == 200)
        .count()
        < 2
    {
        assert!(
            started.elapsed() < Duration::from_mins(1),
            "the flood renders: {:?}",
            done.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let sent = Instant::now();
    let (status, _, _) = get(&srv, &fresh_url, None).await;
    let answered = Instant::now();
    assert_eq!(status, 200);
    assert!(
        answered - sent < Duration::from_secs(30),
        "took {:?}",
        answered - sent
    );
    let rendered_meanwhile = done
        .lock()
        .unwrap()
        .iter()
        .filter(|(at, s)| *s == 200 && *at > sent && *at < answered)
        .count();
    assert!(
        rendered_meanwhile <= 1,
        "{rendered_meanwhile} flood renders went before the fresh variant"
    );
    for t in flood {
        t.abort();
    }
}

/// VmHWM of the process `pid`, in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    kb * 1024
}

/// A flood of renders of large, highly compressible images (and the
/// attack's implausible ones) at four slots: the server's peak RSS stays
/// under the render budget and a base margin (four at once took four
/// renders' pixels).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_renders_keeps_the_peak_rss_under_the_budget() {
    const BUDGET: u64 = 160 << 20;
    const BASE: u64 = 64 << 20;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("filestore.toml");
    std::fs::write(
        &config,
        format!("[images]\nconcurrency = 4\nmemory = {BUDGET}\n"),
    )
    .unwrap();
    let data = dir.path().join("data");
    let server = Serve::new(&data)
        .config(&config)
        .env("FILESTORE_DEFAULT_PLAN", "pro")
        .start();
    let key = server.key();
    let http = reqwest::Client::new();
    let plain = DynamicImage::ImageRgba8(RgbaImage::from_pixel(
        3000,
        3000,
        image::Rgba([200, 10, 10, 255]),
    ));
    let mut urls = Vec::new();
    for (name, bytes) in [
        ("wide.png", encoded(&plain, ImageFormat::Png)),
        ("claims.jpg", jpeg_claiming(7000, 7000)),
        ("claims.gif", gif_claiming(7000, 7000)),
    ] {
        let form = reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(bytes).file_name(name),
        );
        let r = http
            .post(server.url("/v1/upload"))
            .bearer_auth(&key)
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        let f: serde_json::Value = r.json().await.unwrap();
        let url = f["url"].as_str().unwrap().to_string();
        for q in 50..56 {
            urls.push(with(&url, &format!("format=jpeg&q={q}")));
        }
    }
    let answers = futures_util::future::join_all(urls.iter().map(|u| {
        let http = http.clone();
        async move { http.get(u).send().await.unwrap().status().as_u16() }
    }))
    .await;
    assert!(
        answers.iter().all(|s| [200, 400, 503].contains(s)),
        "{answers:?}"
    );
    assert!(answers.contains(&200), "some rendered: {answers:?}");
    let peak = peak_rss(server.pid());
    assert!(
        peak < BUDGET + BASE,
        "peak RSS {} MiB, over the budget of {} MiB and {} MiB",
        peak >> 20,
        BUDGET >> 20,
        BASE >> 20
    );
}
