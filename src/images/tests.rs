//! The pipeline end to end, on images made here.

use std::io::{Cursor, Write};
use std::time::{Duration, Instant};

use image::codecs::gif::GifEncoder;
use image::{DynamicImage, Frame, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use rand::{Rng, SeedableRng};
use tempfile::NamedTempFile;

use super::decode::{jpeg_scale, Source};
use super::*;
use crate::domain::transform::Fit;

fn file(bytes: &[u8]) -> NamedTempFile {
    let mut f = NamedTempFile::new().unwrap();
    f.write_all(bytes).unwrap();
    f
}

fn encoded(image: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).unwrap();
    out.into_inner()
}

/// A `w`×`h` image: red on the left half, blue on the right, opaque.
fn halves(w: u32, h: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(w, h, |x, _| {
        if x < w / 2 {
            Rgb([255, 0, 0])
        } else {
            Rgb([0, 0, 255])
        }
    }))
}

/// A JPEG with an EXIF APP1 segment (big-endian TIFF, one IFD entry: the
/// orientation) inserted after its SOI.
fn jpeg_with_orientation(image: &DynamicImage, orientation: u16) -> Vec<u8> {
    let jpeg = encoded(image, ImageFormat::Jpeg);
    let mut tiff = b"MM\0\x2a\0\0\0\x08\0\x01".to_vec();
    tiff.extend_from_slice(&[0x01, 0x12, 0, 3, 0, 0, 0, 1]);
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    let mut app1 = b"Exif\0\0".to_vec();
    app1.extend_from_slice(&tiff);
    let len = u16::try_from(app1.len() + 2).unwrap();
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&app1);
    out.extend_from_slice(&jpeg[2..]);
    out
}

fn transform(w: Option<u32>, h: Option<u32>, fit: Fit) -> Transform {
    Transform {
        w,
        h,
        fit,
        ..Transform::default()
    }
}

fn render_bytes(bytes: &[u8], t: &Transform, output: Output) -> Result<Vec<u8>, ImageError> {
    render(file(bytes).path(), t, output, &Limits::default())
}

/// The dimensions an encoded variant says: decoded for all but AVIF, whose
/// `ispe` box is read (no AVIF decoder here).
fn dimensions(bytes: &[u8], output: Output) -> (u32, u32) {
    if output == Output::Avif {
        let at = bytes.windows(4).position(|w| w == b"ispe").unwrap() + 8;
        let word = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
        return (word(at), word(at + 4));
    }
    let image = image::load_from_memory(bytes).unwrap();
    (image.width(), image.height())
}

fn has_metadata(bytes: &[u8]) -> bool {
    [&b"Exif"[..], b"eXIf", b"EXIF", b"iCCP", b"ICCP", b"XMP"]
        .iter()
        .any(|tag| bytes.windows(tag.len()).any(|w| w == *tag))
}

#[test]
fn every_fit_end_to_end() {
    let png = encoded(&halves(400, 200), ImageFormat::Png);
    for (w, h, fit, want) in [
        (Some(100), Some(100), Fit::Inside, (100, 50)),
        (Some(1000), Some(1000), Fit::Inside, (400, 200)),
        (None, Some(50), Fit::Inside, (100, 50)),
        (Some(100), Some(100), Fit::Cover, (100, 100)),
        (Some(100), Some(100), Fit::Contain, (100, 100)),
        (Some(100), Some(30), Fit::Fill, (100, 30)),
        (Some(800), None, Fit::Contain, (800, 400)),
        (None, None, Fit::Inside, (400, 200)),
    ] {
        let out = render_bytes(&png, &transform(w, h, fit), Output::Png).unwrap();
        assert_eq!(dimensions(&out, Output::Png), want, "{w:?} {h:?} {fit:?}");
    }
}

#[test]
fn contain_pads_transparent_or_white() {
    let png = encoded(&halves(400, 200), ImageFormat::Png);
    let t = transform(Some(100), Some(100), Fit::Contain);
    let out = render_bytes(&png, &t, Output::Png).unwrap();
    let image = image::load_from_memory(&out).unwrap().into_rgba8();
    assert_eq!(image.get_pixel(50, 2)[3], 0, "the pad is transparent");
    assert_eq!(image.get_pixel(10, 50).0, [255, 0, 0, 255]);
    let out = render_bytes(&png, &t, Output::Jpeg).unwrap();
    let image = image::load_from_memory(&out).unwrap().into_rgb8();
    assert!(
        image.get_pixel(50, 2).0.iter().all(|c| *c > 240),
        "white pad"
    );
}

#[test]
fn cover_crops_the_centre() {
    // 300×100: a third red, a third green, a third blue; cover 100×100 keeps green.
    let image = RgbImage::from_fn(300, 100, |x, _| match x / 100 {
        0 => Rgb([255, 0, 0]),
        1 => Rgb([0, 255, 0]),
        _ => Rgb([0, 0, 255]),
    });
    let png = encoded(&DynamicImage::ImageRgb8(image), ImageFormat::Png);
    let t = transform(Some(100), Some(100), Fit::Cover);
    let out = image::load_from_memory(&render_bytes(&png, &t, Output::Png).unwrap()).unwrap();
    let out = out.into_rgb8();
    for x in [5, 50, 94] {
        assert_eq!(out.get_pixel(x, 50).0, [0, 255, 0], "x={x}");
    }
}

#[test]
fn each_output_decodes_with_its_size_and_no_metadata() {
    let source = jpeg_with_orientation(&halves(120, 80), 1);
    assert!(has_metadata(&source));
    for output in [Output::Webp, Output::Avif, Output::Jpeg, Output::Png] {
        let t = transform(Some(60), None, Fit::Inside);
        let out = render_bytes(&source, &t, output).unwrap();
        assert_eq!(dimensions(&out, output), (60, 40), "{output:?}");
        assert!(!has_metadata(&out), "{output:?} carries metadata");
    }
    let out = render_bytes(&source, &Transform::default(), Output::Webp).unwrap();
    assert_eq!(&out[8..12], b"WEBP");
    assert_eq!(dimensions(&out, Output::Webp), (120, 80));
}

#[test]
fn exif_orientation_6_and_8_turn_the_image() {
    // Stored 80×40, red left, blue right. 6: turned clockwise, the red half
    // is on top; 8: turned anticlockwise, the red half is below.
    for (orientation, top, bottom) in [(6, [255, 0, 0], [0, 0, 255]), (8, [0, 0, 255], [255, 0, 0])]
    {
        let source = jpeg_with_orientation(&halves(80, 40), orientation);
        let probed = probe(file(&source).path()).unwrap();
        assert_eq!((probed.width, probed.height), (80, 40), "the header's own");
        for t in [Transform::default(), transform(Some(20), None, Fit::Inside)] {
            let out = render_bytes(&source, &t, Output::Png).unwrap();
            let out = image::load_from_memory(&out).unwrap().into_rgb8();
            let (w, h) = out.dimensions();
            assert_eq!(w * 2, h, "orientation {orientation}: {w}x{h}");
            let near = |px: &Rgb<u8>, want: [u8; 3]| {
                px.0.iter().zip(want).all(|(a, b)| a.abs_diff(b) < 60)
            };
            assert!(near(out.get_pixel(w / 2, h / 8), top), "{orientation} top");
            assert!(
                near(out.get_pixel(w / 2, h * 7 / 8), bottom),
                "{orientation}"
            );
        }
    }
}

#[test]
fn a_gif_gives_its_first_frame() {
    let mut gif = Vec::new();
    {
        let mut encoder = GifEncoder::new(&mut gif);
        for colour in [[255, 0, 0, 255], [0, 0, 255, 255]] {
            let frame = Frame::new(RgbaImage::from_pixel(16, 16, Rgba(colour)));
            encoder.encode_frame(frame).unwrap();
        }
    }
    assert_eq!(probe(file(&gif).path()).unwrap().format, SourceFormat::Gif);
    let out = render_bytes(&gif, &Transform::default(), Output::Png).unwrap();
    let out = image::load_from_memory(&out).unwrap().into_rgba8();
    assert_eq!(out.get_pixel(8, 8).0, [255, 0, 0, 255]);
}

/// A PNG claiming `w`×`h` RGBA: its signature, IHDR, a few bytes of IDAT
/// and IEND.
fn png_header(w: u32, h: u32) -> Vec<u8> {
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    for (kind, data) in [
        (b"IHDR", &ihdr[..]),
        (b"IDAT", &b"\x78\x9c\x63\x00\x00"[..]),
        (b"IEND", &[][..]),
    ] {
        let mut chunk = kind.to_vec();
        chunk.extend_from_slice(data);
        out.extend_from_slice(&u32::try_from(data.len()).unwrap().to_be_bytes());
        out.extend_from_slice(&chunk);
        out.extend_from_slice(&crc32fast::hash(&chunk).to_be_bytes());
    }
    out
}

#[test]
fn a_bomb_header_is_too_large_at_once() {
    let bomb = png_header(30_000, 30_000);
    assert!(bomb.len() < 64);
    let f = file(&bomb);
    assert_eq!(probe(f.path()).unwrap().width, 30_000);
    let started = Instant::now();
    let e = render(
        f.path(),
        &Transform::default(),
        Output::Webp,
        &Limits::default(),
    );
    assert!(started.elapsed() < Duration::from_millis(200));
    let Err(ImageError::TooLarge { width, height, max }) = e else {
        panic!("{e:?}");
    };
    assert_eq!((width, height, max), (30_000, 30_000, 50_000_000));
    assert!(ImageError::TooLarge { width, height, max }
        .to_string()
        .contains("30000×30000"));
}

#[test]
fn a_variant_too_large_to_write_is_refused() {
    let png = encoded(&halves(2, 200), ImageFormat::Png);
    let t = transform(Some(4096), None, Fit::Contain);
    let e = render_bytes(&png, &t, Output::Png).unwrap_err();
    assert!(
        matches!(e, ImageError::TooLarge { width: 4096, .. }),
        "{e:?}"
    );
}

#[test]
fn not_images_and_broken_images() {
    let text = b"hello, this is a text file and not an image at all\n";
    for bytes in [
        &text[..],
        b"",
        b"\xFF",
        b"\0\0\0\x1cftypavif\0\0\0\0mif1avif",
    ] {
        let e = render_bytes(bytes, &Transform::default(), Output::Png).unwrap_err();
        assert!(matches!(e, ImageError::NotAnImage), "{bytes:?}: {e:?}");
        assert!(matches!(
            probe(file(bytes).path()),
            Err(ImageError::NotAnImage)
        ));
    }
    for format in [
        ImageFormat::Png,
        ImageFormat::Jpeg,
        ImageFormat::Gif,
        ImageFormat::WebP,
    ] {
        let whole = encoded(&halves(64, 48), format);
        for cut in [3, 14, 20, 30] {
            let e = render_bytes(&whole[..cut], &Transform::default(), Output::Png).unwrap_err();
            let short_of_magic = cut < 12 && matches!(e, ImageError::NotAnImage);
            assert!(
                short_of_magic || matches!(e, ImageError::Corrupt(_)),
                "{format:?} cut at {cut}: {e:?}"
            );
        }
        let mut garbage = whole.clone();
        garbage[16..].fill(0xAB);
        match render_bytes(&garbage, &Transform::default(), Output::Png) {
            Err(ImageError::Corrupt(_) | ImageError::TooLarge { .. }) => {}
            other => panic!("{format:?}: {other:?}"),
        }
    }
}

#[test]
fn a_big_jpeg_is_decoded_scaled_down() {
    assert_eq!(jpeg_scale(4000, 3000, 256, 192), 8);
    assert_eq!(jpeg_scale(4000, 3000, 600, 450), 4);
    assert_eq!(jpeg_scale(4000, 3000, 1500, 1125), 2);
    assert_eq!(jpeg_scale(4000, 3000, 3000, 2250), 1);
    // Both sides must be covered (cover of a panorama needs its height).
    assert_eq!(jpeg_scale(4000, 1000, 200, 400), 2);
    let source = encoded(&halves(1600, 1200), ImageFormat::Jpeg);
    let f = file(&source);
    let header = probe(f.path()).unwrap();
    let opened = Source::open(f.path(), header, &Limits::default()).unwrap();
    let decoded = opened.decode(200, 150).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (200, 150));
    let t = transform(Some(256), None, Fit::Inside);
    let out = render_bytes(&source, &t, Output::Jpeg).unwrap();
    assert_eq!(dimensions(&out, Output::Jpeg), (256, 192));
}

#[test]
fn random_bytes_after_a_magic_number_never_panic() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let limits = Limits {
        max_source_pixels: 1_000_000,
    };
    let valid: Vec<Vec<u8>> = [
        ImageFormat::Png,
        ImageFormat::Jpeg,
        ImageFormat::Gif,
        ImageFormat::WebP,
    ]
    .into_iter()
    .map(|format| encoded(&halves(32, 24), format))
    .collect();
    let magics: [&[u8]; 5] = [
        b"\xFF\xD8\xFF",
        b"\x89PNG\r\n\x1a\n",
        b"GIF89a",
        b"RIFF\0\0\0\0WEBPVP8 ",
        b"\0\0\0\x1cftypavif",
    ];
    let t = transform(Some(16), Some(16), Fit::Cover);
    for i in 0..400 {
        let bytes = if i % 2 == 0 {
            let mut bytes = magics[i / 2 % magics.len()].to_vec();
            let len = rng.random_range(0..400);
            bytes.extend((0..len).map(|_| rng.random::<u8>()));
            bytes
        } else {
            let mut bytes = valid[i / 2 % valid.len()].clone();
            for _ in 0..rng.random_range(1..8) {
                let at = rng.random_range(0..bytes.len());
                bytes[at] = rng.random();
            }
            bytes.truncate(rng.random_range(1..=bytes.len()));
            bytes
        };
        let f = file(&bytes);
        if let Err(ImageError::Encode(e)) = render(f.path(), &t, Output::Png, &limits) {
            panic!("case {i}: an internal error for a broken input: {e}");
        }
    }
}

/// Times a 12-megapixel photo (noise, the worst case for a codec) rendered
/// to a 256-px WebP and AVIF, the two at once as two requests would be.
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
    let t = transform(Some(256), None, Fit::Inside);
    let one = |output: Output| {
        let started = Instant::now();
        let out = render(&path, &t, output, &Limits::default()).unwrap();
        assert_eq!(dimensions(&out, output), (256, 192));
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
