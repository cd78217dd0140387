//! A benchmark run by hand.

use std::time::Instant;

use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use rand::{Rng, SeedableRng};

use super::*;

/// Times a 12-megapixel photo (noise, the worst case for a codec) rendered
/// to a 256-px (or $FILESTORE_BENCH_WIDTH) WebP and AVIF, the two at once as two requests would be.
/// By hand, in release: `cargo test --release --lib render_12_megapixels --
/// --ignored --nocapture`; the photo is made on the first run (at
/// $FILESTORE_12MP_JPEG, else in the temporary folder) so that a second run,
/// under `/usr/bin/time -v`, measures the renders' memory alone.
#[test]
#[ignore = "a benchmark, run by hand in release"]
#[allow(clippy::print_stderr, reason = "the benchmark's report")]
fn render_12_megapixels() {
    let path = std::env::var_os("FILESTORE_12MP_JPEG").map_or_else(
        || std::env::temp_dir().join("filestore-12mp.jpg"),
        std::path::PathBuf::from,
    );
    if !path.exists() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(12);
        let photo = RgbImage::from_fn(4000, 3000, |x, y| {
            let base = u8::try_from((x / 16 + y / 12) % 256).unwrap();
            Rgb([
                base,
                rng.random(),
                base.wrapping_add(rng.random_range(0..64)),
            ])
        });
        std::fs::write(
            &path,
            encoded(&DynamicImage::ImageRgb8(photo), ImageFormat::Jpeg),
        )
        .unwrap();
        eprintln!(
            "made {}; run again to measure the renders alone",
            path.display()
        );
    }
    // FILESTORE_BENCH_WIDTH: another width (2100 decodes the JPEG at full size).
    let width = std::env::var("FILESTORE_BENCH_WIDTH")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(256);
    let t = transform(Some(width), None, Fit::Inside);
    let one = |output: Output| {
        let started = Instant::now();
        let (out, _) = render(&path, &t, output, &Limits::default()).unwrap();
        assert_eq!(dimensions(&out, output), (width, width * 3 / 4));
        (output, started.elapsed(), out.len())
    };
    for output in [Output::Webp, Output::Avif] {
        let (_, took, len) = one(output);
        eprintln!("{output:?} alone: {took:?}, {len} bytes");
    }
    let both = std::thread::scope(|s| {
        let a = s.spawn(|| one(Output::Webp));
        let b = s.spawn(|| one(Output::Avif));
        [a.join().unwrap(), b.join().unwrap()]
    });
    for (output, took, len) in both {
        eprintln!("{output:?} in parallel: {took:?}, {len} bytes");
    }
}
