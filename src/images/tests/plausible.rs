//! Sources whose bytes cannot hold what their header claims are refused
//! from the header, before any pixel is allocated; highly compressible
//! real images are not; a render over the budget is refused.

use image::{GrayImage, Luma};

use super::*;

/// `jpeg` (baseline, from the `image` crate) with its frame header saying
/// `w`×`h`, cut `extra` bytes after its scan header, then `tail`.
fn jpeg_claiming(jpeg: &[u8], w: u16, h: u16, extra: usize, tail: &[u8]) -> Vec<u8> {
    let mut out = jpeg.to_vec();
    let sof = out.windows(2).position(|p| p == [0xFF, 0xC0]).unwrap();
    out[sof + 5..sof + 7].copy_from_slice(&h.to_be_bytes());
    out[sof + 7..sof + 9].copy_from_slice(&w.to_be_bytes());
    let sos = out.windows(2).position(|p| p == [0xFF, 0xDA]).unwrap();
    let len = usize::from(u16::from_be_bytes([out[sos + 2], out[sos + 3]]));
    out.truncate(sos + 2 + len + extra);
    out.extend_from_slice(tail);
    out
}

fn prepared(bytes: &[u8], t: &Transform) -> Result<u64, ImageError> {
    prepare(file(bytes).path(), t, Output::Png, &Limits::default()).map(|j| j.bytes())
}

fn short(e: &Result<u64, ImageError>) -> bool {
    matches!(e, Err(ImageError::Corrupt(ref m)) if m.contains("end before its image data"))
}

#[test]
fn a_jpeg_header_claiming_7000_squared_is_refused_unread() {
    let jpeg = encoded(&halves(64, 48), ImageFormat::Jpeg);
    let t = transform(Some(4096), None, Fit::Inside);
    // Headers alone, then the end of the image (jpeg-decoder drew 147 MB
    // of grey from them), or the end of the file.
    let eoi = jpeg_claiming(&jpeg, 7000, 7000, 40, &[0xFF, 0xD9]);
    assert!(eoi.len() < 1024, "{}", eoi.len());
    assert!(short(&prepared(&eoi, &t)), "{:?}", prepared(&eoi, &t));
    let cut = jpeg_claiming(&jpeg, 7000, 7000, 40, &[]);
    assert!(matches!(prepared(&cut, &t), Err(ImageError::Corrupt(_))));
    // The whole small file is fine; cut short, it is refused before decoding.
    assert!(prepared(&jpeg, &t).is_ok());
    let half = &jpeg[..jpeg.len() / 2];
    assert!(matches!(prepared(half, &t), Err(ImageError::Corrupt(_))));
}

#[test]
fn pngs_and_gifs_too_short_for_their_pixels_are_refused_unread() {
    let png = encoded(&halves(64, 48), ImageFormat::Png);
    let mut claim = png.clone();
    claim[16..20].copy_from_slice(&7000u32.to_be_bytes());
    claim[20..24].copy_from_slice(&7000u32.to_be_bytes());
    let e = prepared(&claim, &Transform::default());
    assert!(short(&e), "{e:?}");
    let gif = encoded(
        &DynamicImage::ImageRgba8(halves(64, 48).to_rgba8()),
        ImageFormat::Gif,
    );
    // The first frame's descriptor says 7000×7000, its data is 64×48's.
    let at = gif.iter().position(|b| *b == 0x2C).unwrap();
    let mut big = gif.clone();
    big[6..10].copy_from_slice(&[0x58, 0x1B, 0x58, 0x1B]);
    big[at + 5..at + 9].copy_from_slice(&[0x58, 0x1B, 0x58, 0x1B]);
    assert!(short(&prepared(&big, &Transform::default())));
    // Cut inside its frame's data: refused before the canvas is made.
    let cut = &gif[..gif.len() - 20];
    assert!(matches!(
        prepared(cut, &Transform::default()),
        Err(ImageError::Corrupt(_))
    ));
    assert!(prepared(&gif, &Transform::default()).is_ok());
}

#[test]
fn highly_compressible_images_pass() {
    let grey = DynamicImage::ImageLuma8(GrayImage::from_pixel(4000, 4000, Luma([128])));
    let t = transform(Some(100), None, Fit::Inside);
    for format in [ImageFormat::Jpeg, ImageFormat::Png] {
        let bytes = encoded(&grey, format);
        assert!(
            prepared(&bytes, &t).is_ok(),
            "{format:?} of {} bytes",
            bytes.len()
        );
    }
    let gif = encoded(
        &DynamicImage::ImageRgba8(RgbaImage::from_pixel(2000, 2000, Rgba([9, 9, 9, 255]))),
        ImageFormat::Gif,
    );
    assert!(prepared(&gif, &t).is_ok(), "a GIF of {} bytes", gif.len());
}

#[test]
fn a_render_over_the_budget_is_refused_before_decoding() {
    let png = encoded(&halves(2000, 2000), ImageFormat::Png);
    let small = Limits {
        memory: 24 << 20,
        ..Limits::default()
    };
    let path = file(&png);
    let e = prepare(path.path(), &Transform::default(), Output::Png, &small).unwrap_err();
    let ImageError::OverBudget { bytes, budget } = e else {
        panic!("{e:?}");
    };
    assert!(bytes > budget && budget == 24 << 20);
    // A small variant of a JPEG decodes at 1/8: within it.
    let jpeg = encoded(&halves(2000, 2000), ImageFormat::Jpeg);
    let t = transform(Some(100), None, Fit::Inside);
    assert!(prepare(file(&jpeg).path(), &t, Output::Png, &small).is_ok());
}

/// A still WebP padded past 4 bytes a pixel and the metadata allowance is
/// refused before its decoder reads it (the estimate counts the file); one
/// within it is taken.
#[test]
fn a_still_webp_longer_than_its_pixels_can_be_is_refused() {
    let px = vec![90u8; 16 * 16 * 3];
    let webp = webp::Encoder::from_rgb(&px, 16, 16).encode(80.0).to_vec();
    let t = transform(Some(8), None, Fit::Inside);
    let padded = |extra: usize| {
        // An unknown chunk after the image, the RIFF size made to match.
        let mut out = webp.clone();
        out.extend_from_slice(b"JUNK");
        out.extend_from_slice(&u32::try_from(extra).unwrap().to_le_bytes());
        out.resize(out.len() + extra, 0);
        let riff = u32::try_from(out.len() - 8).unwrap();
        out[4..8].copy_from_slice(&riff.to_le_bytes());
        out
    };
    assert!(prepared(&padded(1 << 20), &t).is_ok());
    let e = prepared(&padded(9 << 20), &t);
    assert!(
        matches!(e, Err(ImageError::Corrupt(ref m)) if m.contains("longer than its pixels")),
        "{e:?}"
    );
}
