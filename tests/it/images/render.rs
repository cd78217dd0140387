//! What a variant holds: each fit's size, each format, `format=auto` by
//! `Accept`, EXIF orientation applied and metadata gone, a GIF's first frame,
//! WebP sources (lossy, lossless with alpha, animated, damaged).

use super::{dimensions, get, jpeg, picture, png, two_frame_gif, with, with_orientation};
use crate::common::{Backend, TestServer};
use image::GenericImageView;

both_stores!(
    fits_and_sizes,
    formats_and_accept,
    avif_sources,
    webp_sources
);

async fn fits_and_sizes(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv.upload_ok("photo.png", png(400, 300), &[]).await;
    let url = f["url"].as_str().unwrap();
    for (query, want) in [
        ("w=100", (100, 75)),
        ("h=150", (200, 150)),
        ("w=100&h=100", (100, 75)),
        ("w=100&h=100&fit=inside", (100, 75)),
        ("w=100&h=100&fit=cover", (100, 100)),
        ("w=100&h=100&fit=contain", (100, 100)),
        ("w=100&h=40&fit=fill", (100, 40)),
        // Inside never enlarges.
        ("w=1000", (400, 300)),
        ("w=1000&h=1000", (400, 300)),
        // Only a format: the same size, re-encoded.
        ("format=png", (400, 300)),
    ] {
        let (status, headers, body) = get(&srv, &with(url, query), None).await;
        assert_eq!(status, 200, "{query}: {}", String::from_utf8_lossy(&body));
        assert_eq!(headers["content-type"], "image/png", "{query}");
        assert_eq!(dimensions(&body), want, "{query}");
        assert_eq!(headers["content-length"], body.len().to_string().as_str());
        assert!(headers.get("vary").is_none(), "{query}");
    }
    // A cover crop keeps the middle: the left and right edges are cut.
    let (_, _, body) = get(&srv, &with(url, "w=30&h=30&fit=cover"), None).await;
    let img = image::load_from_memory(&body).unwrap().to_rgb8();
    let left = img.get_pixel(0, 15)[0];
    assert!(left > 30, "the crop starts past the left edge: red {left}");

    // A thin image covering a large square: only the kept part is scaled
    // (scaled whole, 8000×1 covering 2048² is 16,384,000×2048, 100 GB).
    let thin = super::encoded(
        &image::DynamicImage::new_luma8(8000, 1),
        image::ImageFormat::Png,
    );
    let f = srv.upload_ok("thin.png", thin, &[]).await;
    let url = f["url"].as_str().unwrap();
    let (status, _, body) = get(&srv, &with(url, "w=2048&h=2048&fit=cover"), None).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(dimensions(&body), (2048, 2048));
}

async fn formats_and_accept(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv.upload_ok("photo.jpg", jpeg(320, 240), &[]).await;
    let url = f["url"].as_str().unwrap();
    for (query, accept, want) in [
        ("w=64&format=webp", None, "image/webp"),
        ("w=64&format=avif", None, "image/avif"),
        ("w=64&format=png", None, "image/png"),
        ("w=64&format=jpeg", None, "image/jpeg"),
        ("w=64", None, "image/jpeg"),
        (
            "w=64&format=auto",
            Some("image/avif,image/webp,image/apng,image/*,*/*;q=0.8"),
            "image/avif",
        ),
        ("w=64&format=auto", Some("image/webp,*/*"), "image/webp"),
        ("w=64&format=auto", Some("image/*"), "image/jpeg"),
        ("w=64&format=auto", None, "image/jpeg"),
    ] {
        let (status, headers, body) = get(&srv, &with(url, query), accept).await;
        assert_eq!(status, 200, "{query} {accept:?}");
        assert_eq!(headers["content-type"], want, "{query} {accept:?}");
        assert_eq!(dimensions(&body), (64, 48), "{query} {accept:?}");
        let auto = query.contains("auto");
        assert_eq!(
            headers.get("vary").map(|v| v.to_str().unwrap()),
            auto.then_some("Accept"),
            "{query}"
        );
        let ext = want.trim_start_matches("image/");
        assert!(
            headers["content-disposition"]
                .to_str()
                .unwrap()
                .contains(&format!("photo.{ext}")),
            "{query}"
        );
    }
    // EXIF orientation 6 (a phone held upright): the variant is turned, and
    // carries no EXIF of its own.
    let rotated = srv
        .upload_ok("upright.jpg", with_orientation(&jpeg(320, 240), 6), &[])
        .await;
    let url = rotated["url"].as_str().unwrap();
    for format in ["jpeg", "png", "webp"] {
        let (status, _, body) =
            get(&srv, &with(url, &format!("w=120&format={format}")), None).await;
        assert_eq!(status, 200);
        assert_eq!(dimensions(&body), (120, 160), "{format}");
        assert!(
            !body.windows(6).any(|w| w == b"Exif\0\0"),
            "{format}: metadata stripped"
        );
    }
    // A GIF gives its first frame (red), as PNG by default.
    let gif = srv.upload_ok("anim.gif", two_frame_gif(40, 20), &[]).await;
    let (status, headers, body) =
        get(&srv, &with(gif["url"].as_str().unwrap(), "w=20"), None).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "image/png");
    let img = image::load_from_memory(&body).unwrap().to_rgb8();
    assert_eq!((img.width(), img.height()), (20, 10));
    let p = img.get_pixel(10, 5);
    assert!(p[0] > 200 && p[2] < 50, "first frame is red: {p:?}");
}

/// An AVIF source (made by this server: AVIF is also an output) is read:
/// resized to each format, its colours kept, as AVIF again by default.
async fn avif_sources(b: Backend) {
    let srv = TestServer::on(b).await;
    let f = srv.upload_ok("photo.png", png(160, 120), &[]).await;
    let (status, _, avif) = get(&srv, &with(f["url"].as_str().unwrap(), "format=avif"), None).await;
    assert_eq!(status, 200);
    let a = srv.upload_ok("photo.avif", avif, &[]).await;
    let url = a["url"].as_str().unwrap();
    let (status, headers, body) = get(&srv, &with(url, "w=40&format=png"), None).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(headers["content-type"], "image/png");
    let from_avif = image::load_from_memory(&body).unwrap();
    assert_eq!(from_avif.dimensions(), (40, 30));
    // The same pixels as the PNG's own 40-px variant, but for the AVIF's loss.
    let (_, _, direct) = get(
        &srv,
        &with(f["url"].as_str().unwrap(), "w=40&format=png"),
        None,
    )
    .await;
    let direct = image::load_from_memory(&direct).unwrap().to_rgb8();
    let from_avif = from_avif.to_rgb8();
    let diffs: Vec<u32> = direct
        .pixels()
        .zip(from_avif.pixels())
        .flat_map(|(a, b)| {
            a.0.into_iter()
                .zip(b.0)
                .map(|(x, y)| u32::from(x.abs_diff(y)))
        })
        .collect();
    let mean = diffs.iter().sum::<u32>() / u32::try_from(diffs.len()).unwrap();
    assert!(mean <= 12, "the AVIF's pixels are off by {mean} on average");
    let (status, headers, body) = get(&srv, &with(url, "w=40"), None).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "image/avif");
    assert_eq!(dimensions(&body), (40, 30));
}

/// WebP sources (made with libwebp, as phones and CDNs write them): a lossy
/// one shrunk on load in the sandboxed decoder has the PNG's pixels but for
/// the loss; a lossless one keeps its alpha; an animation gives its first
/// frame; a damaged one is refused as such, and the server goes on.
async fn webp_sources(b: Backend) {
    let srv = TestServer::on(b).await;
    let pixels = picture(400, 300).to_rgb8();
    let lossy = webp::Encoder::from_rgb(&pixels, 400, 300)
        .encode(95.0)
        .to_vec();
    let w = srv.upload_ok("photo.webp", lossy.clone(), &[]).await;
    let p = srv.upload_ok("photo.png", png(400, 300), &[]).await;
    let variant = |f: &serde_json::Value, q: &str| with(f["url"].as_str().unwrap(), q);
    for (q, size) in [
        ("w=40&format=png", (40, 30)),
        ("w=300&h=100&fit=cover&format=png", (300, 100)),
    ] {
        let (status, _, body) = get(&srv, &variant(&w, q), None).await;
        assert_eq!(status, 200, "{q}: {}", String::from_utf8_lossy(&body));
        let from_webp = image::load_from_memory(&body).unwrap().to_rgb8();
        assert_eq!(from_webp.dimensions(), size, "{q}");
        let (_, _, direct) = get(&srv, &variant(&p, q), None).await;
        let direct = image::load_from_memory(&direct).unwrap().to_rgb8();
        let diff: u64 = direct
            .as_raw()
            .iter()
            .zip(from_webp.as_raw())
            .map(|(a, b)| u64::from(a.abs_diff(*b)))
            .sum();
        let mean = diff / direct.as_raw().len() as u64;
        assert!(
            mean <= 12,
            "{q}: the WebP's pixels are off by {mean} on average"
        );
    }
    // Lossless with alpha: the left half transparent, the right opaque.
    let rgba: Vec<u8> = pixels
        .pixels()
        .enumerate()
        .flat_map(|(i, p)| [p[0], p[1], p[2], if i % 400 < 200 { 0 } else { 255 }])
        .collect();
    let lossless = webp::Encoder::from_rgba(&rgba, 400, 300)
        .encode_lossless()
        .to_vec();
    let a = srv.upload_ok("alpha.webp", lossless, &[]).await;
    let (status, headers, body) = get(&srv, &variant(&a, "w=100&format=png"), None).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "image/png");
    let img = image::load_from_memory(&body).unwrap().to_rgba8();
    assert_eq!(img.dimensions(), (100, 75));
    assert_eq!(img.get_pixel(10, 40)[3], 0);
    assert_eq!(img.get_pixel(90, 40)[3], 255);
    // An animation: its first frame (red), by the in-process decoder.
    let red = vec![[250u8, 10, 10]; 64 * 32].concat();
    let blue = vec![[10u8, 10, 250]; 64 * 32].concat();
    let config = webp::WebPConfig::new().unwrap();
    let mut anim = webp::AnimEncoder::new(64, 32, &config);
    anim.add_frame(webp::AnimFrame::from_rgb(&red, 64, 32, 0));
    anim.add_frame(webp::AnimFrame::from_rgb(&blue, 64, 32, 100));
    let animated = srv
        .upload_ok("anim.webp", anim.encode().to_vec(), &[])
        .await;
    let (status, _, body) = get(&srv, &variant(&animated, "w=16&format=png"), None).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let img = image::load_from_memory(&body).unwrap().to_rgb8();
    assert_eq!(img.dimensions(), (16, 8));
    let px = img.get_pixel(8, 4);
    assert!(px[0] > 200 && px[2] < 60, "first frame is red: {px:?}");
    // Damaged: the headers whole, the picture cut short.
    let cut = srv
        .upload_ok("cut.webp", lossy[..lossy.len() / 2].to_vec(), &[])
        .await;
    let (status, _, body) = get(&srv, &variant(&cut, "w=40&format=png"), None).await;
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));
    let (status, _, _) = get(&srv, &variant(&w, "w=41&format=png"), None).await;
    assert_eq!(status, 200);
}
