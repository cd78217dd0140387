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

/// The PNG variant `width` wide of `png`, decoded.
fn variant(png: &[u8], width: u32) -> RgbaImage {
    let t = transform(Some(width), None, Fit::Inside);
    let out = render_bytes(png, &t, Output::Png).unwrap();
    image::load_from_memory(&out).unwrap().into_rgba8()
}

fn check(source: &DynamicImage, reference: &RgbaImage, width: u32) {
    let got = variant(&encoded(source, ImageFormat::Png), width);
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

/// `image` shrunk by `k`: each block's mean, colour weighted by alpha (by
/// the definition, for a width that is a whole division of the source's,
/// where no resize follows the shrink).
fn block_means(image: &RgbaImage, k: u32) -> RgbaImage {
    let (width, height) = image.dimensions();
    RgbaImage::from_fn(width.div_ceil(k), height.div_ceil(k), |bx, by| {
        let (mut sums, mut alpha, mut count) = ([0u64; 3], 0u64, 0u64);
        for y in by * k..((by + 1) * k).min(height) {
            for x in bx * k..((bx + 1) * k).min(width) {
                let pixel = image.get_pixel(x, y);
                let weight = u64::from(pixel[3]);
                for (sum, v) in sums.iter_mut().zip(pixel.0) {
                    *sum += u64::from(v) * weight;
                }
                alpha += weight;
                count += 1;
            }
        }
        let mean = |sum: u64, of: u64| u8::try_from((2 * sum + of) / (2 * of)).unwrap();
        let colour = |sum: u64| if alpha == 0 { 0 } else { mean(sum, alpha) };
        Rgba([
            colour(sums[0]),
            colour(sums[1]),
            colour(sums[2]),
            mean(alpha, count),
        ])
    })
}

/// A `w`×`h` PNG of `colour` at `depth` bits, samples from `sample(x, y, i)`
/// packed as PNG stores them (rows to whole bytes, most significant first).
fn png_of(
    (w, h): (u32, u32),
    (colour, depth): (png::ColorType, png::BitDepth),
    palette: Option<(Vec<u8>, Vec<u8>)>,
    sample: impl Fn(u32, u32, usize) -> u16,
) -> Vec<u8> {
    let bits = depth as usize;
    let samples = colour.samples();
    let mut data = Vec::new();
    for y in 0..h {
        let mut row = vec![0u8; (w as usize * samples * bits).div_ceil(8)];
        for x in 0..w {
            for i in 0..samples {
                let v = sample(x, y, i);
                let at = (x as usize * samples + i) * bits;
                if bits == 16 {
                    row[at / 8..at / 8 + 2].copy_from_slice(&v.to_be_bytes());
                } else {
                    row[at / 8] |= u8::try_from(v).unwrap() << (8 - bits - at % 8);
                }
            }
        }
        data.extend_from_slice(&row);
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(colour);
    encoder.set_depth(depth);
    if let Some((palette, trns)) = palette {
        encoder.set_palette(palette);
        if !trns.is_empty() {
            encoder.set_trns(trns);
        }
    }
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(&data).unwrap();
    writer.finish().unwrap();
    out
}

#[test]
fn palettes_low_bit_depths_and_trns_shrink_as_they_expand() {
    use png::{BitDepth as D, ColorType as C};
    // Square: a width of 400 / k is a shrink by k on both sides, exactly.
    let size = (400, 400);
    let band = |x: u32, y: u32| u16::try_from((x / 25 + y / 30) % 4).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "palette, 2 bits, tRNS",
            png_of(
                size,
                (C::Indexed, D::Two),
                Some((
                    vec![255, 0, 0, 0, 255, 0, 0, 0, 255, 250, 250, 250],
                    vec![255, 128, 0, 255],
                )),
                |x, y, _| band(x, y),
            ),
        ),
        (
            "grey, 1 bit",
            png_of(size, (C::Grayscale, D::One), None, |x, y, _| band(x, y) % 2),
        ),
        (
            "grey, 4 bits",
            png_of(size, (C::Grayscale, D::Four), None, |x, y, _| {
                u16::try_from((x / 10 + y / 20) % 16).unwrap()
            }),
        ),
        (
            "grey, 16 bits",
            png_of(size, (C::Grayscale, D::Sixteen), None, |x, y, _| {
                u16::try_from((x * 163 + y * 11) % 65536).unwrap()
            }),
        ),
        (
            "grey + alpha, 8 bits",
            png_of(size, (C::GrayscaleAlpha, D::Eight), None, |x, y, i| {
                if i == 0 {
                    u16::try_from(y % 256).unwrap()
                } else {
                    u16::try_from(x * 255 / 399).unwrap()
                }
            }),
        ),
    ];
    for (name, png) in cases {
        let whole = image::load_from_memory(&png).unwrap().into_rgba8();
        for k in [8, 4] {
            let width = 400 / k;
            let got = variant(&png, width);
            let (mean, max) = difference(&got, &block_means(&whole, k));
            assert!(
                mean < 10 && max <= 1,
                "{name} at {width} px: mean difference {mean}/100, largest {max}"
            );
        }
    }
}
