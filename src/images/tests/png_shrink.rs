//! PNGs shrunk on load: the variant matches a Lanczos3 resize of the whole
//! picture, with alpha and 16-bit samples, at small and large factors.

use image::imageops::{self, FilterType};
use image::{DynamicImage, ImageFormat, Rgba, RgbaImage};

use super::{encoded, render_bytes, transform};
use crate::domain::transform::{Fit, Output};

/// Soft gradients, a disc and (with `alpha`) a transparent-to-opaque ramp.
fn picture(width: u32, height: u32, alpha: bool) -> RgbaImage {
    let ramp = |v: u32, of: u32| u8::try_from(255 * v / of).unwrap();
    RgbaImage::from_fn(width, height, |x, y| {
        let (dx, dy) = (
            i64::from(2 * x) - i64::from(width),
            i64::from(2 * y) - i64::from(height),
        );
        // Within a fifth of the width of the centre (twice the distances).
        let disc = 25 * (dx * dx + dy * dy) < 4 * i64::from(width) * i64::from(width);
        let a = if alpha { ramp(x, width) } else { 255 };
        if disc {
            Rgba([250, 240, 20, a])
        } else {
            Rgba([ramp(x, width), ramp(y, height), 120, a])
        }
    })
}

/// Mean (in hundredths) and largest absolute difference, channel by
/// channel, colour premultiplied by alpha (a nearly transparent pixel's
/// colour is not seen).
fn difference(a: &RgbaImage, b: &RgbaImage) -> (u64, u32) {
    assert_eq!(a.dimensions(), b.dimensions());
    let (mut sum, mut max) = (0u64, 0u32);
    for (p, q) in a.pixels().zip(b.pixels()) {
        for c in 0..4 {
            let seen = |p: &Rgba<u8>| {
                let v = u32::from(p[c]);
                if c == 3 {
                    v
                } else {
                    v * u32::from(p[3]) / 255
                }
            };
            let d = seen(p).abs_diff(seen(q));
            sum += u64::from(d);
            max = max.max(d);
        }
    }
    (
        100 * sum / (4 * u64::from(a.width()) * u64::from(a.height())),
        max,
    )
}

fn check(source: &DynamicImage, reference: &RgbaImage, width: u32) {
    let png = encoded(source, ImageFormat::Png);
    let out = render_bytes(
        &png,
        &transform(Some(width), None, Fit::Inside),
        Output::Png,
    )
    .unwrap();
    let got = image::load_from_memory(&out).unwrap().into_rgba8();
    let h = (2 * reference.height() * width + reference.width()) / (2 * reference.width());
    let want = imageops::resize(reference, width, h, FilterType::Lanczos3);
    let (mean, max) = difference(&got, &want);
    assert!(
        mean < 200 && max < 64,
        "{width} px wide: mean difference {mean}/100, largest {max}"
    );
}

#[test]
fn an_rgb_png_shrunk_by_8_and_by_2_matches_a_whole_resize() {
    let p = picture(800, 600, false);
    let rgb = DynamicImage::ImageRgba8(p.clone()).into_rgb8();
    for width in [100, 390] {
        check(&DynamicImage::ImageRgb8(rgb.clone()), &p, width);
    }
}

#[test]
fn an_rgba_png_keeps_its_alpha_and_lends_no_colour_from_transparent_pixels() {
    let p = picture(800, 600, true);
    check(&DynamicImage::ImageRgba8(p.clone()), &p, 130);
    // A fully transparent stripe of bright green beside opaque blue: the
    // blue half's edge takes no green.
    let two = RgbaImage::from_fn(800, 100, |x, _| {
        if x < 400 {
            Rgba([0, 255, 0, 0])
        } else {
            Rgba([0, 0, 255, 255])
        }
    });
    let png = encoded(&DynamicImage::ImageRgba8(two), ImageFormat::Png);
    let out = render_bytes(&png, &transform(Some(100), None, Fit::Inside), Output::Png).unwrap();
    let got = image::load_from_memory(&out).unwrap().into_rgba8();
    for (x, _, p) in got.enumerate_pixels() {
        if p[3] > 0 {
            assert!(p[1] < 8, "pixel {x}: {p:?} took the transparent green");
        }
    }
}

#[test]
fn a_16_bit_png_is_shrunk_in_8_bits() {
    let p = picture(800, 600, true);
    let wide = DynamicImage::ImageRgba8(p.clone()).into_rgba16();
    check(&DynamicImage::ImageRgba16(wide), &p, 200);
}
