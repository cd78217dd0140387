//! The geometry of a variant ([`plan`], in the displayed orientation) and its
//! making ([`apply`]): cut the part a crop keeps, resize as stored, orient,
//! then pad, so the quarter turn and the flips touch the small image, not
//! the source, and nothing larger than the variant is made.

use super::zeroed::zeroed;
use fast_image_resize::images::{TypedImage, TypedImageRef};
use fast_image_resize::pixels::{U8x3, U8x4};
use fast_image_resize::{FilterType, PixelTrait, ResizeAlg, ResizeOptions, Resizer};
use image::imageops;
use image::metadata::Orientation;
use image::{DynamicImage, GenericImageView, Rgb, RgbImage, Rgba, RgbaImage};

use super::decode::swaps_axes;
use super::ImageError;
use crate::domain::transform::{Fit, Output, Transform};

/// What is done to the whole image, in the displayed orientation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    /// The whole image is scaled to this size (aspect kept or not); with a
    /// crop, only the part it keeps is made.
    pub scale_to: (u32, u32),
    /// Then cropped, centred, to this size (`cover`).
    pub crop: Option<(u32, u32)>,
    /// Then padded, centred, to this size (`contain`).
    pub canvas: Option<(u32, u32)>,
}

impl Plan {
    fn scaled(width: u32, height: u32) -> Plan {
        Plan {
            scale_to: (width, height),
            crop: None,
            canvas: None,
        }
    }

    /// The size of the variant.
    pub(super) fn output_size(&self) -> (u32, u32) {
        self.canvas.or(self.crop).unwrap_or(self.scale_to)
    }

    /// The size the stored (not yet oriented) image is scaled to.
    pub(super) fn source_size(&self, orientation: Orientation) -> (u32, u32) {
        transpose_if(self.scale_to, swaps_axes(orientation))
    }
}

/// The plan for an image displayed `width`×`height` and the variant `t`.
pub(super) fn plan(width: u32, height: u32, t: &Transform) -> Plan {
    let never_enlarge = t.fit == Fit::Inside;
    // A side of 0 is refused where the query is read; here it is 1.
    match (t.w.map(|w| w.max(1)), t.h.map(|h| h.max(1))) {
        (None, None) => Plan::scaled(width, height),
        (Some(w), None) => {
            let w = if never_enlarge { w.min(width) } else { w };
            Plan::scaled(w, ratio(height, w, width))
        }
        (None, Some(h)) => {
            let h = if never_enlarge { h.min(height) } else { h };
            Plan::scaled(ratio(width, h, height), h)
        }
        (Some(w), Some(h)) => match t.fit {
            Fit::Fill => Plan::scaled(w, h),
            Fit::Inside if width <= w && height <= h => Plan::scaled(width, height),
            Fit::Inside => {
                let (w, h) = within(width, height, w, h);
                Plan::scaled(w, h)
            }
            Fit::Contain => Plan {
                scale_to: within(width, height, w, h),
                crop: None,
                canvas: Some((w, h)),
            },
            Fit::Cover => Plan {
                scale_to: covering(width, height, w, h),
                crop: Some((w, h)),
                canvas: None,
            },
        },
    }
}

/// `side × num / den`, rounded, at least 1.
fn ratio(side: u32, num: u32, den: u32) -> u32 {
    let (side, num, den) = (u64::from(side), u64::from(num), u64::from(den.max(1)));
    u32::try_from((2 * side * num + den) / (2 * den))
        .unwrap_or(u32::MAX)
        .max(1)
}

/// The largest size of `width`×`height`'s aspect within `w`×`h`.
fn within(width: u32, height: u32, w: u32, h: u32) -> (u32, u32) {
    if u64::from(width) * u64::from(h) <= u64::from(height) * u64::from(w) {
        (ratio(width, h, height).min(w), h)
    } else {
        (w, ratio(height, w, width).min(h))
    }
}

/// The smallest size of `width`×`height`'s aspect that covers `w`×`h`.
fn covering(width: u32, height: u32, w: u32, h: u32) -> (u32, u32) {
    if u64::from(width) * u64::from(h) >= u64::from(height) * u64::from(w) {
        (ratio(width, h, height).max(w), h)
    } else {
        (w, ratio(height, w, width).max(h))
    }
}

/// Of a side `side` long that scales to `scaled`, the part (its start and
/// length, at least 1) that a centred `crop` of the scaled side keeps.
fn kept(side: u32, scaled: u32, crop: u32) -> (u32, u32) {
    let (side64, scaled64) = (u64::from(side), u64::from(scaled.max(1)));
    let at = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let len = at((2 * u64::from(crop) * side64 + scaled64) / (2 * scaled64)).clamp(1, side.max(1));
    // Centred, as the crop is.
    ((side - len.min(side)) / 2, len.min(side))
}

/// The size the stored image (or a crop's part of it) is resampled to.
pub(super) fn step_target(plan: &Plan, orientation: Orientation) -> (u32, u32) {
    let swap = swaps_axes(orientation);
    let (w, h) = transpose_if(plan.scale_to, swap);
    match plan.crop {
        Some(crop) => {
            let (cw, ch) = transpose_if(crop, swap);
            (cw.min(w), ch.min(h))
        }
        None => (w, h),
    }
}

fn transpose_if((w, h): (u32, u32), swap: bool) -> (u32, u32) {
    if swap {
        (h, w)
    } else {
        (w, h)
    }
}

/// Makes the variant of the stored (not yet oriented) `image` per `plan`:
/// 8-bit RGB or RGBA, alpha flattened onto white for a JPEG.
pub(super) fn apply(
    image: DynamicImage,
    plan: &Plan,
    orientation: Orientation,
    output: Output,
) -> Result<DynamicImage, ImageError> {
    let (w, h) = transpose_if(plan.scale_to, swaps_axes(orientation));
    let (cw, ch) = step_target(plan, orientation);
    let mut image = if plan.crop.is_some() {
        // The part the crop keeps is cut first, then scaled to the crop's
        // size: the whole scaled (`scale_to`) is never made, and can be
        // far larger than the variant (8000×1 covering 4096×4096 scales
        // to 32,768,000×4096). The source goes once its part is copied.
        let (iw, ih) = image.dimensions();
        let (x, rw) = kept(iw, w, cw);
        let (y, rh) = kept(ih, h, ch);
        let part = image.crop_imm(x, y, rw, rh);
        drop(image);
        resize(part, cw, ch)?
    } else {
        resize(image, w, h)?
    };
    image.apply_orientation(orientation);
    if output == Output::Jpeg {
        image = DynamicImage::ImageRgb8(flatten(image));
    }
    let Some((cw, ch)) = plan.canvas else {
        return Ok(image);
    };
    let (x, y) = (
        i64::from((cw - image.width().min(cw)) / 2),
        i64::from((ch - image.height().min(ch)) / 2),
    );
    Ok(if output == Output::Jpeg {
        let mut canvas = RgbImage::from_pixel(cw, ch, Rgb([255, 255, 255]));
        imageops::replace(&mut canvas, &image.into_rgb8(), x, y);
        DynamicImage::ImageRgb8(canvas)
    } else {
        let mut canvas = RgbaImage::from_pixel(cw, ch, Rgba([0, 0, 0, 0]));
        imageops::replace(&mut canvas, &image.into_rgba8(), x, y);
        DynamicImage::ImageRgba8(canvas)
    })
}

/// `image` as 8-bit RGB or RGBA (as it has alpha or not), scaled to `w`×`h`
/// (Lanczos3, alpha premultiplied while resampling). Only these two pixel
/// types: `fast_image_resize`'s generic code is built in this crate, some
/// 20 s of release build for each type asked for.
fn resize(image: DynamicImage, w: u32, h: u32) -> Result<DynamicImage, ImageError> {
    let alpha = image.color().has_alpha();
    let (sw, sh) = image.dimensions();
    if alpha {
        let source = image.into_rgba8();
        if (sw, sh) == (w, h) {
            return Ok(DynamicImage::ImageRgba8(source));
        }
        let pixels = resample::<U8x4>(source.as_raw(), (sw, sh), (w, h), true)?;
        RgbaImage::from_raw(w, h, pixels).map(DynamicImage::ImageRgba8)
    } else {
        let source = image.into_rgb8();
        if (sw, sh) == (w, h) {
            return Ok(DynamicImage::ImageRgb8(source));
        }
        let pixels = resample::<U8x3>(source.as_raw(), (sw, sh), (w, h), false)?;
        RgbImage::from_raw(w, h, pixels).map(DynamicImage::ImageRgb8)
    }
    .ok_or_else(|| ImageError::Encode("resizing: the buffer has the wrong size".into()))
}

/// The longest side a convolution reads: a longer side that shrinks is
/// first sampled (nearest) down to this, since a convolution's weights
/// number six times the side it reads (6 MB of them here; a 50,000,000×1
/// source would take gigabytes, and seconds). Real panoramas are shorter.
const LONGEST_READ: u32 = 131_072;

/// `pixels` (`from` in size, of pixel type `P`) resampled to `to` with
/// Lanczos3, one axis at a time, the axis whose step leaves the smaller
/// image first. A two-axis convolution keeps a temporary image of the
/// source's width by the target's height, which a thin source stretched
/// (`fit=fill` of 50,000,000×1 to 4096×4096) makes terabytes; one axis at
/// a time, nothing is larger than the source, the target, or their
/// geometric mean.
fn resample<P: PixelTrait>(
    pixels: &[u8],
    from: (u32, u32),
    to: (u32, u32),
    alpha: bool,
) -> Result<Vec<u8>, ImageError> {
    let (sampled_to, between) = steps(from, to);
    let sampled;
    let (pixels, from) = match sampled_to {
        Some(size) => {
            sampled = resize_step::<P>(pixels, from, size, ResizeAlg::Nearest, false)?;
            (sampled.as_slice(), size)
        }
        None => (pixels, from),
    };
    let lanczos = ResizeAlg::Convolution(FilterType::Lanczos3);
    match between {
        Some(between) => {
            let first = resize_step::<P>(pixels, from, between, lanczos, alpha)?;
            resize_step::<P>(&first, between, to, lanczos, alpha)
        }
        None => resize_step::<P>(pixels, from, to, lanczos, alpha),
    }
}

/// Width and height.
pub(super) type Size = (u32, u32);

/// The sizes [`resample`] goes through from `from` to `to`: the sampled
/// source (when a side longer than [`LONGEST_READ`] shrinks), and the
/// image between the two axes' convolutions (when both change).
pub(super) fn steps(from: Size, to: Size) -> (Option<Size>, Option<Size>) {
    let read = |side: u32, target: u32| {
        if side > LONGEST_READ && target < side {
            LONGEST_READ.max(target)
        } else {
            side
        }
    };
    let sampled = (read(from.0, to.0), read(from.1, to.1));
    let at = sampled;
    let wide_first = u64::from(to.0) * u64::from(at.1) <= u64::from(at.0) * u64::from(to.1);
    let between = if wide_first {
        (to.0, at.1)
    } else {
        (at.0, to.1)
    };
    (
        (sampled != from).then_some(sampled),
        (between != at && between != to).then_some(between),
    )
}

/// One resize of `pixels` from `from` to `to` with `alg`.
fn resize_step<P: PixelTrait>(
    pixels: &[u8],
    from: (u32, u32),
    to: (u32, u32),
    alg: ResizeAlg,
    alpha: bool,
) -> Result<Vec<u8>, ImageError> {
    let fail = |e: &dyn std::fmt::Display| ImageError::Encode(format!("resizing: {e}"));
    let len = u64::from(to.0) * u64::from(to.1) * u64::try_from(P::size()).unwrap_or(4);
    let mut out = zeroed::<u8>(usize::try_from(len).map_err(|e| fail(&e))?);
    let src = TypedImageRef::<P>::from_buffer(from.0, from.1, pixels).map_err(|e| fail(&e))?;
    let mut dst = TypedImage::<P>::from_buffer(to.0, to.1, &mut out).map_err(|e| fail(&e))?;
    let options = ResizeOptions::new().resize_alg(alg).use_alpha(alpha);
    Resizer::new()
        .resize_typed(&src, &mut dst, &options)
        .map_err(|e| fail(&e))?;
    drop(dst);
    Ok(out)
}

/// `image` without alpha: its pixels composed over white.
fn flatten(image: DynamicImage) -> RgbImage {
    if !image.color().has_alpha() {
        return image.into_rgb8();
    }
    let rgba = image.into_rgba8();
    let (w, h) = rgba.dimensions();
    let len = usize::try_from(u64::from(w) * u64::from(h) * 3).unwrap_or(0);
    let mut rgb = RgbImage::from_raw(w, h, zeroed(len)).unwrap_or_default();
    for (out, px) in rgb.pixels_mut().zip(rgba.pixels()) {
        let a = u32::from(px[3]);
        let over_white = |c: u8| {
            let v = (u32::from(c) * a + 255 * (255 - a) + 127) / 255;
            u8::try_from(v).unwrap_or(u8::MAX)
        };
        *out = Rgb([over_white(px[0]), over_white(px[1]), over_white(px[2])]);
    }
    rgb
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(w: Option<u32>, h: Option<u32>, fit: Fit) -> Transform {
        Transform {
            w,
            h,
            fit,
            ..Transform::default()
        }
    }

    #[test]
    fn output_sizes_per_fit() {
        use Fit::{Contain, Cover, Fill, Inside};
        let cases = [
            // (source, w, h, fit, output)
            ((400, 200), None, None, Inside, (400, 200)),
            ((400, 200), None, None, Cover, (400, 200)),
            ((400, 200), Some(100), Some(100), Inside, (100, 50)),
            ((200, 400), Some(100), Some(100), Inside, (50, 100)),
            ((400, 200), Some(1000), Some(1000), Inside, (400, 200)),
            ((400, 200), Some(1000), None, Inside, (400, 200)),
            ((400, 200), None, Some(50), Inside, (100, 50)),
            ((400, 200), Some(100), Some(100), Cover, (100, 100)),
            ((400, 200), Some(1000), Some(1000), Cover, (1000, 1000)),
            ((400, 200), Some(100), Some(100), Contain, (100, 100)),
            ((400, 200), Some(1000), Some(900), Contain, (1000, 900)),
            ((400, 200), Some(100), Some(30), Fill, (100, 30)),
            ((400, 200), Some(800), None, Contain, (800, 400)),
            ((400, 200), None, Some(100), Cover, (200, 100)),
            ((400, 200), Some(40), None, Fill, (40, 20)),
            ((3, 1000), Some(1), None, Inside, (1, 333)),
            ((1000, 1), Some(10), None, Inside, (10, 1)),
        ];
        for ((sw, sh), w, h, fit, want) in cases {
            let p = plan(sw, sh, &t(w, h, fit));
            assert_eq!(p.output_size(), want, "{sw}x{sh} {w:?} {h:?} {fit:?}");
        }
    }

    #[test]
    fn cover_scales_then_crops_and_contain_pads() {
        let p = plan(400, 200, &t(Some(100), Some(100), Fit::Cover));
        assert_eq!((p.scale_to, p.crop), ((200, 100), Some((100, 100))));
        let p = plan(400, 200, &t(Some(100), Some(100), Fit::Contain));
        assert_eq!((p.scale_to, p.canvas), ((100, 50), Some((100, 100))));
    }

    #[test]
    fn the_part_a_crop_keeps_is_in_the_source_and_never_empty() {
        assert_eq!(kept(400, 200, 100), (100, 200));
        assert_eq!(kept(200, 100, 100), (0, 200));
        // 8000 pixels scaled to 4,096,000, 512 of them kept: one pixel.
        assert_eq!(kept(8000, 4_096_000, 512), (3999, 1));
        assert_eq!(kept(1, u32::MAX, 16_383), (0, 1));
        // 3 pixels scaled to 4, 1 kept: the middle one.
        assert_eq!(kept(3, 4, 1), (1, 1));
        for (side, scaled, crop) in [(7, 3, 3), (3, 7, 2), (1000, 1, 1), (5, 9, 9)] {
            let (start, len) = kept(side, scaled, crop);
            assert!(len >= 1 && start + len <= side, "{side} {scaled} {crop}");
        }
    }

    /// `image` made as `p` says, upright, for a PNG.
    fn made(image: RgbImage, p: &Plan) -> RgbImage {
        apply(
            DynamicImage::ImageRgb8(image),
            p,
            Orientation::NoTransforms,
            Output::Png,
        )
        .unwrap()
        .into_rgb8()
    }

    #[test]
    fn a_cover_crop_of_a_thin_image_makes_only_the_variant() {
        // 8000×1 covering 512×512 scales to 4,096,000×512 (6 GB of RGB):
        // the one kept pixel is what is scaled.
        let mut thin = RgbImage::from_pixel(8000, 1, Rgb([0, 0, 255]));
        thin.put_pixel(3999, 0, Rgb([0, 200, 0]));
        let p = plan(8000, 1, &t(Some(512), Some(512), Fit::Cover));
        assert_eq!(p.scale_to, (4_096_000, 512));
        let out = made(thin, &p);
        assert_eq!(out.dimensions(), (512, 512));
        assert!(out.pixels().all(|px| *px == Rgb([0, 200, 0])));
    }

    #[test]
    fn each_convolution_changes_one_axis_and_nothing_outgrows_source_or_target() {
        let px = |(w, h): (u32, u32)| u64::from(w) * u64::from(h);
        let sizes = [1, 2, 7, 300, 4096, 16_383, 131_073, 400_000, 50_000_000];
        for &fw in &sizes {
            for &fh in &sizes {
                if px((fw, fh)) > 50_000_000 {
                    continue;
                }
                for to in [
                    (1, 1),
                    (100, 1),
                    (1, 100),
                    (512, 512),
                    (4096, 4096),
                    (16_383, 3),
                ] {
                    let from = (fw, fh);
                    let (sampled, between) = steps(from, to);
                    let at = sampled.unwrap_or(from);
                    if let Some(s) = sampled {
                        assert!(s.0 <= from.0 && s.1 <= from.1, "{from:?} → {s:?}");
                        assert!(s.0 <= LONGEST_READ.max(to.0) && s.1 <= LONGEST_READ.max(to.1));
                    }
                    let hops = match between {
                        Some(b) => vec![(at, b), (b, to)],
                        None => vec![(at, to)],
                    };
                    for (a, b) in &hops {
                        if between.is_some() {
                            assert!(a.0 == b.0 || a.1 == b.1, "{from:?}→{to:?}: {a:?}→{b:?}");
                        }
                        let most = px(from).max(px(to));
                        assert!(px(*b) <= most, "{from:?}→{to:?}: {b:?} over {most}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_thin_image_stretched_to_fill_is_made_axis_by_axis() {
        // 200,000×1 filling 512×512: a convolution of both axes at once
        // kept 200,000×512 pixels aside; here nothing outgrows the target.
        let thin = RgbImage::from_pixel(200_000, 1, Rgb([10, 120, 250]));
        let p = plan(200_000, 1, &t(Some(512), Some(512), Fit::Fill));
        assert_eq!(p.scale_to, (512, 512));
        let out = made(thin, &p);
        assert_eq!(out.dimensions(), (512, 512));
        assert!(out.pixels().all(|px| *px == Rgb([10, 120, 250])));
    }

    #[test]
    fn a_cover_crop_keeps_the_middle() {
        // Red, green, blue quarters, halves and quarters of 400×200.
        let image = RgbImage::from_fn(400, 200, |x, _| match x {
            0..100 => Rgb([255, 0, 0]),
            100..300 => Rgb([0, 255, 0]),
            _ => Rgb([0, 0, 255]),
        });
        let p = plan(400, 200, &t(Some(100), Some(100), Fit::Cover));
        let out = apply(
            DynamicImage::ImageRgb8(image),
            &p,
            Orientation::NoTransforms,
            Output::Png,
        )
        .unwrap()
        .into_rgb8();
        assert_eq!(out.dimensions(), (100, 100));
        assert!(out.pixels().all(|px| *px == Rgb([0, 255, 0])));
    }

    #[test]
    fn source_size_is_transposed_for_a_quarter_turn() {
        let p = plan(3000, 4000, &t(Some(300), None, Fit::Inside));
        assert_eq!(p.output_size(), (300, 400));
        assert_eq!(p.source_size(Orientation::Rotate90), (400, 300));
        assert_eq!(p.source_size(Orientation::FlipHorizontal), (300, 400));
    }
}
