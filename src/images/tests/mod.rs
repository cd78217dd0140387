//! The pipeline end to end, on images made here.

mod bench;
mod estimate;
mod jpeg_dc;
mod plausible;
mod png_shrink;
mod safety;

use std::io::{Cursor, Write};

use image::codecs::gif::GifEncoder;
use image::{DynamicImage, Frame, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use tempfile::NamedTempFile;

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
    let (bytes, written) = render(file(bytes).path(), t, output, &Limits::default())?;
    assert_eq!(written, output, "the format asked for is the one written");
    Ok(bytes)
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
        // Full size, 1/2 scale (jpeg-decoder), 1/8 scale (jpeg_dc).
        for t in [
            Transform::default(),
            transform(Some(20), None, Fit::Inside),
            transform(Some(5), None, Fit::Inside),
        ] {
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
