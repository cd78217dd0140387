//! The estimate is an upper bound of what a render takes: each case is
//! rendered in a process of its own (this test binary again), whose peak
//! RSS (VmHWM, reset before the render) grows by at most the estimate.

use std::path::Path;
use std::process::Command;

use image::codecs::gif::GifEncoder;
use image::codecs::png::PngEncoder;
use image::{ExtendedColorType, ImageBuffer, ImageEncoder, Rgba};
use rand::{Rng, SeedableRng};

use super::*;

/// The environment variable that makes [`one_render`] render a case.
const CASE: &str = "FILESTORE_ESTIMATE_CASE";

/// Noise (the worst case for a codec), with alpha or not.
fn noise(w: u32, h: u32, alpha: bool) -> DynamicImage {
    let mut rng = rand::rngs::StdRng::seed_from_u64(u64::from(w ^ h));
    let rgba = RgbaImage::from_fn(w, h, |x, _| {
        let a = if alpha { rng.random() } else { 255 };
        Rgba([
            rng.random(),
            u8::try_from(x % 256).unwrap(),
            rng.random(),
            a,
        ])
    });
    if alpha {
        DynamicImage::ImageRgba8(rgba)
    } else {
        DynamicImage::ImageRgb8(DynamicImage::ImageRgba8(rgba).into_rgb8())
    }
}

fn gif(w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let frame = Frame::new(noise(w, h, false).into_rgba8());
    GifEncoder::new_with_speed(&mut out, 30)
        .encode_frame(frame)
        .unwrap();
    out
}

fn png16(w: u32, h: u32) -> Vec<u8> {
    let image: ImageBuffer<image::Rgb<u16>, Vec<u16>> = ImageBuffer::from_fn(w, h, |x, y| {
        image::Rgb([
            u16::try_from(x * 13).unwrap(),
            u16::try_from(y * 7).unwrap(),
            999,
        ])
    });
    let bytes: Vec<u8> = image
        .as_raw()
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let mut out = Vec::new();
    PngEncoder::new(&mut out)
        .write_image(&bytes, w, h, ExtendedColorType::Rgb16)
        .unwrap();
    out
}

/// A `w`×`h` 8-bit RGB PNG of stripes (small on disk, wide rows).
fn wide_png(w: u32, h: u32) -> Vec<u8> {
    encoded(
        &DynamicImage::ImageRgb8(stripes(w, h).into_rgb8()),
        ImageFormat::Png,
    )
}

/// The same in RGBA.
fn wide_rgba_png(w: u32, h: u32) -> Vec<u8> {
    encoded(&stripes(w, h), ImageFormat::Png)
}

fn stripes(w: u32, h: u32) -> DynamicImage {
    DynamicImage::ImageRgba8(RgbaImage::from_fn(w, h, |x, y| {
        let v = u8::try_from(x % 251).unwrap();
        Rgba([v, u8::try_from(y).unwrap(), 7, v])
    }))
}

/// A progressive 4:2:0 JPEG of noise (as cameras' and libjpeg's scripts
/// write them: bands, then their bits).
fn progressive_jpeg(w: u16, h: u16) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = jpeg_encoder::Encoder::new(&mut out, 90);
    encoder.set_progressive(true);
    encoder.set_sampling_factor(jpeg_encoder::SamplingFactor::F_2_2);
    let pixels = noise(u32::from(w), u32::from(h), false).into_rgb8();
    encoder
        .encode(pixels.as_raw(), w, h, jpeg_encoder::ColorType::Rgb)
        .unwrap();
    out
}

/// The cases: a name, the source, the variant and its format.
fn cases() -> Vec<(&'static str, Vec<u8>, Transform, Output)> {
    let jpeg = encoded(&noise(2000, 1500, false), ImageFormat::Jpeg);
    let png = encoded(&noise(1600, 1200, true), ImageFormat::Png);
    let lossy = render_bytes(&png, &Transform::default(), Output::Webp).unwrap();
    let progressive = progressive_jpeg(2000, 1500);
    vec![
        (
            "jpeg, quarter scale, to webp",
            jpeg.clone(),
            transform(Some(480), None, Fit::Inside),
            Output::Webp,
        ),
        (
            "progressive jpeg, half scale, to webp",
            progressive.clone(),
            transform(Some(900), None, Fit::Inside),
            Output::Webp,
        ),
        (
            "jpeg, 3/8 scale, to webp",
            jpeg.clone(),
            transform(Some(700), None, Fit::Inside),
            Output::Webp,
        ),
        (
            "progressive jpeg, 3/8 scale, to jpeg",
            progressive.clone(),
            transform(Some(700), None, Fit::Inside),
            Output::Jpeg,
        ),
        (
            "progressive jpeg, quarter scale, to jpeg",
            progressive,
            transform(Some(480), None, Fit::Inside),
            Output::Jpeg,
        ),
        (
            "jpeg, full scale, to webp",
            jpeg.clone(),
            transform(Some(1900), None, Fit::Inside),
            Output::Webp,
        ),
        (
            "jpeg, half scale, to jpeg",
            jpeg.clone(),
            transform(Some(900), None, Fit::Inside),
            Output::Jpeg,
        ),
        (
            "jpeg, 1/8 scale, to avif",
            jpeg.clone(),
            transform(Some(200), None, Fit::Inside),
            Output::Avif,
        ),
        (
            "jpeg, contain on 3000x3000, to png",
            jpeg,
            transform(Some(3000), Some(3000), Fit::Contain),
            Output::Png,
        ),
        (
            "png rgba, cover, to png",
            png.clone(),
            transform(Some(1000), Some(1000), Fit::Cover),
            Output::Png,
        ),
        (
            "png rgba, shrunk by 4 on load, to webp",
            png.clone(),
            transform(Some(400), None, Fit::Inside),
            Output::Webp,
        ),
        (
            "png 16-bit, shrunk by 3 on load, to jpeg",
            png16(1600, 1200),
            transform(Some(500), None, Fit::Inside),
            Output::Jpeg,
        ),
        (
            "png 2,000,000x4, shrunk by 4 on load: its rows count",
            wide_png(2_000_000, 4),
            transform(Some(1000), None, Fit::Inside),
            Output::Png,
        ),
        (
            "png 500,000x24, shrunk by 24 on load: the decoder's rows count",
            wide_png(500_000, 24),
            transform(Some(1000), None, Fit::Inside),
            Output::Png,
        ),
        (
            "png rgba 300,000x30, shrunk by 30 on load: the decoder's rows count",
            wide_rgba_png(300_000, 30),
            transform(Some(1000), None, Fit::Inside),
            Output::Webp,
        ),
        (
            "png 16-bit, not shrunk, read by rows into 8 bits",
            png16(1600, 1200),
            transform(None, None, Fit::Inside),
            Output::Jpeg,
        ),
        (
            "png rgba, fill, to jpeg",
            png,
            transform(Some(1500), Some(300), Fit::Fill),
            Output::Jpeg,
        ),
        (
            "png 16-bit, to webp",
            png16(1600, 1200),
            transform(Some(1599), None, Fit::Inside),
            Output::Webp,
        ),
        (
            "gif, to png",
            gif(1500, 1000),
            transform(Some(700), None, Fit::Inside),
            Output::Png,
        ),
        (
            "webp lossless, to jpeg",
            encoded(&noise(1600, 1200, true), ImageFormat::WebP),
            transform(Some(800), None, Fit::Inside),
            Output::Jpeg,
        ),
        (
            "webp lossy, shrunk by 8, to webp",
            lossy.clone(),
            transform(Some(200), None, Fit::Inside),
            Output::Webp,
        ),
        (
            "webp lossy, to png",
            lossy,
            transform(Some(1599), None, Fit::Inside),
            Output::Png,
        ),
        (
            "webp animated, to webp",
            animated_webp(800, 600),
            transform(Some(400), None, Fit::Inside),
            Output::Webp,
        ),
    ]
}

/// A two-frame animated WebP of noise (decoded in the server by
/// `image-webp`, not by libwebp's child).
fn animated_webp(w: u32, h: u32) -> Vec<u8> {
    let first = noise(w, h, false).into_rgb8();
    let second = noise(w, h, true).into_rgb8();
    let config = webp::WebPConfig::new().unwrap();
    let mut anim = webp::AnimEncoder::new(w, h, &config);
    anim.add_frame(webp::AnimFrame::from_rgb(first.as_raw(), w, h, 0));
    anim.add_frame(webp::AnimFrame::from_rgb(second.as_raw(), w, h, 100));
    anim.encode().to_vec()
}

fn status(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

#[test]
#[allow(clippy::print_stderr, reason = "the figures, for the record")]
fn estimates_bound_the_measured_peak() {
    let exe = std::env::current_exe().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (i, (name, bytes, t, output)) in cases().into_iter().enumerate() {
        let path = dir.path().join(format!("{i}"));
        std::fs::write(&path, &bytes).unwrap();
        let estimate = prepare(&path, &t, output, &Limits::default())
            .unwrap()
            .bytes();
        let run = Command::new(&exe)
            .args([
                "images::tests::estimate::one_render",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            // What a render holds, not what the allocator keeps: jemalloc
            // (the C `malloc` of this binary too) would keep freed pages
            // for 10 s and count them in the peak.
            .env("MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")
            .env(
                CASE,
                format!(
                    "{}|{}|{}|{}|{}",
                    path.display(),
                    t.w.unwrap_or(0),
                    t.h.unwrap_or(0),
                    fit_index(t.fit),
                    output_index(output)
                ),
            )
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&run.stdout);
        let grown: u64 = out
            .lines()
            .find_map(|l| Some(l.split("GROWN ").nth(1)?.trim()))
            .unwrap_or_else(|| panic!("{name}: {out} {}", String::from_utf8_lossy(&run.stderr)))
            .parse()
            .unwrap();
        eprintln!(
            "{name}: {} MiB measured, {} MiB estimated",
            grown >> 20,
            estimate >> 20
        );
        assert!(
            grown <= estimate,
            "{name}: {grown} bytes measured, over the estimate of {estimate}"
        );
    }
}

/// In a process of its own: renders the case `$FILESTORE_ESTIMATE_CASE`
/// names, and prints how much its peak RSS grew.
#[test]
#[ignore = "run by estimates_bound_the_measured_peak, in a process of its own"]
#[allow(clippy::print_stdout, reason = "the answer to the parent")]
fn one_render() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    let parts: Vec<&str> = case.split('|').collect();
    let side = |s: &str| Some(s.parse::<u32>().unwrap()).filter(|n| *n > 0);
    let t = transform(
        side(parts[1]),
        side(parts[2]),
        FITS[parts[3].parse::<usize>().unwrap()],
    );
    let output = OUTPUTS[parts[4].parse::<usize>().unwrap()];
    let path = Path::new(parts[0]);
    let job = prepare(path, &t, output, &Limits::default()).unwrap();
    // The peak from here on.
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = status("VmRSS");
    job.render().unwrap();
    println!("GROWN {}", status("VmHWM").saturating_sub(before));
}

const FITS: [Fit; 4] = [Fit::Inside, Fit::Cover, Fit::Contain, Fit::Fill];
const OUTPUTS: [Output; 4] = [Output::Webp, Output::Avif, Output::Jpeg, Output::Png];

fn fit_index(fit: Fit) -> usize {
    FITS.iter().position(|f| *f == fit).unwrap()
}

fn output_index(output: Output) -> usize {
    OUTPUTS.iter().position(|o| *o == output).unwrap()
}
