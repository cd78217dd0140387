//! The 1/8-scale JPEG decoder against a full decode by `jpeg-decoder` (each
//! of its pixels is its 8×8 block's mean), and at 1/4 and 1/2 against its
//! scaled decode, at 3/8 against the full decode's means over each
//! sample's 8/3 pixels, for every layout it takes on; the
//! layouts it leaves alone are left; hostile bytes are refused, never a
//! panic.

use image::DynamicImage;
use jpeg_encoder::{ColorType, Encoder, SamplingFactor};
use proptest::prelude::*;

use super::super::jpeg_dc::decode as decode_eighths;
use super::super::ImageError;

/// Our decode at 1/`denominator` scale (8, 4 or 2), as `jpeg-decoder`
/// names its scales.
fn decode(bytes: &[u8], max: u64, denominator: u32) -> Result<Option<DynamicImage>, ImageError> {
    decode_eighths(bytes, max, 8 / denominator)
}

/// A smooth picture with a little noise: what a photo's blocks look like.
fn picture(w: u16, h: u16, channels: usize) -> Vec<u8> {
    let mut seed = 12_345u32;
    let (w, h) = (u32::from(w), u32::from(h));
    let mut out = Vec::new();
    for y in 0..h {
        for x in 0..w {
            for c in 0..u32::try_from(channels).unwrap() {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                let noise = (seed >> 16) % 9;
                let v = 20 + x * 100 / w + y * 60 / h + c * 20 + noise;
                out.push(u8::try_from(v).unwrap());
            }
        }
    }
    out
}

struct Layout {
    color: ColorType,
    sampling: SamplingFactor,
    restart: u16,
    optimized: bool,
    progressive: bool,
}

fn jpeg(w: u16, h: u16, layout: &Layout) -> Vec<u8> {
    let channels = match layout.color {
        ColorType::Luma => 1,
        ColorType::Cmyk => 4,
        _ => 3,
    };
    let mut out = Vec::new();
    let mut encoder = Encoder::new(&mut out, 90);
    encoder.set_sampling_factor(layout.sampling);
    encoder.set_restart_interval(layout.restart);
    encoder.set_optimized_huffman_tables(layout.optimized);
    encoder.set_progressive(layout.progressive);
    encoder
        .encode(&picture(w, h, channels), w, h, layout.color)
        .unwrap();
    out
}

/// `jpeg-decoder`'s full decode of `bytes`: width, height, channels and
/// samples. jpeg-decoder, not the image crate's zune-jpeg: that one decodes
/// a scan a component wrongly.
fn full_decode(bytes: &[u8]) -> (u32, u32, u32, Vec<u8>) {
    let mut decoder = jpeg_decoder::Decoder::new(bytes);
    let full = decoder.decode().unwrap();
    let info = decoder.info().unwrap();
    let (w, h) = (u32::from(info.width), u32::from(info.height));
    let channels = u32::try_from(full.len()).unwrap() / (w * h);
    (w, h, channels, full)
}

/// The full decode's mean over each 8×8 block, per channel; `None` for a
/// block within 32 pixels of the right or bottom edge, where the encoder's
/// padding weighs in the block (or its MCU's chroma).
fn block_means(bytes: &[u8]) -> (u32, u32, usize, Vec<Option<u8>>) {
    let (w, h, channels, full) = full_decode(bytes);
    let pixels = image::GrayImage::from_raw(w * channels, h, full).unwrap();
    let (ow, oh) = (w.div_ceil(8), h.div_ceil(8));
    let mut out = Vec::new();
    for by in 0..oh {
        for bx in 0..ow {
            for c in 0..channels {
                if bx * 8 + 32 > w || by * 8 + 32 > h {
                    out.push(None);
                    continue;
                }
                let mut sum = 0u32;
                for y in by * 8..by * 8 + 8 {
                    for x in bx * 8..bx * 8 + 8 {
                        sum += u32::from(pixels.get_pixel(x * channels + c, y).0[0]);
                    }
                }
                out.push(Some(u8::try_from((sum + 32) / 64).unwrap()));
            }
        }
    }
    (ow, oh, usize::try_from(channels).unwrap(), out)
}

fn samples(image: &DynamicImage) -> Vec<u8> {
    match image {
        DynamicImage::ImageLuma8(g) => g.as_raw().clone(),
        DynamicImage::ImageRgb8(rgb) => rgb.as_raw().clone(),
        other => panic!("unexpected pixels {:?}", other.color()),
    }
}

/// Whether our decode of `bytes` is within `tolerance` (by channels: 1
/// or 3) of the full decode's block means; the worst difference if not.
fn off_by(bytes: &[u8]) -> Option<u8> {
    let image = decode(bytes, u64::MAX, 8).unwrap().unwrap();
    let (ow, oh, channels, means) = block_means(bytes);
    assert_eq!((image.width(), image.height()), (ow, oh));
    let ours = samples(&image);
    assert_eq!(ours.len(), means.len());
    // Luma is exact but for rounding; colour differs by the chroma's
    // spread over its (larger) block.
    let tolerance = if channels == 1 { 2 } else { 8 };
    let worst = ours
        .iter()
        .zip(&means)
        .filter_map(|(a, b)| Some(a.abs_diff((*b)?)))
        .max()
        .unwrap_or(0);
    (worst > tolerance).then_some(worst)
}

/// Every layout the tests encode, with its name: 4 sizes (odd, whole MCUs,
/// smaller than an MCU, one pixel), grey and colour, 6 samplings, restart
/// intervals, one scan a component (optimised tables) and progressive.
fn every_layout() -> Vec<(String, u16, u16, Layout)> {
    let samplings = [
        SamplingFactor::F_1_1,
        SamplingFactor::F_2_1,
        SamplingFactor::F_1_2,
        SamplingFactor::F_2_2,
        SamplingFactor::F_4_1,
        SamplingFactor::F_4_2,
    ];
    let mut layouts = Vec::new();
    for (w, h) in [(203, 157), (64, 48), (9, 17), (1, 1)] {
        for color in [ColorType::Rgb, ColorType::Luma] {
            for sampling in samplings {
                for (restart, optimized, progressive) in [
                    (0, false, false),
                    (1, false, false),
                    (7, false, false),
                    (0, true, false),
                    (0, false, true),
                    (5, false, true),
                    (0, true, true),
                ] {
                    let name = format!(
                        "{w}x{h} {color:?} {sampling:?} restart {restart} progressive {progressive}"
                    );
                    let layout = Layout {
                        color,
                        sampling,
                        restart,
                        // jpeg-encoder's optimised tables (one scan a component) fail on small images.
                        optimized: optimized && w >= 64,
                        progressive,
                    };
                    layouts.push((name, w, h, layout));
                }
            }
        }
    }
    layouts
}

#[test]
fn every_layout_gives_the_block_means() {
    let mut failures = Vec::new();
    for (name, w, h, layout) in every_layout() {
        if let Some(worst) = off_by(&jpeg(w, h, &layout)) {
            failures.push(format!("{name}: off by {worst}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// libjpeg's (and mozjpeg's) progressive script: the DC's high bits in a
/// first scan (successive approximation, Al = 1), its last bit in a
/// refinement scan after the AC scans. Made by sharp (mozjpeg), 203×157, 4:2:0.
#[test]
fn a_progressive_file_with_a_dc_refinement_gives_the_block_means() {
    let bytes = include_bytes!("progressive-dc-refine.jpg");
    assert_eq!(off_by(bytes), None);
}

#[test]
fn cmyk_is_left_to_the_full_decoder() {
    let cmyk = Layout {
        color: ColorType::Cmyk,
        sampling: SamplingFactor::F_2_2,
        restart: 0,
        optimized: false,
        progressive: false,
    };
    assert!(decode(&jpeg(64, 64, &cmyk)[..], u64::MAX, 8)
        .unwrap()
        .is_none());
}

fn baseline() -> Vec<u8> {
    jpeg(
        96,
        80,
        &Layout {
            color: ColorType::Rgb,
            sampling: SamplingFactor::F_2_2,
            restart: 3,
            optimized: false,
            progressive: false,
        },
    )
}

#[test]
fn a_cut_file_is_refused() {
    let bytes = baseline();
    for eighths in [1, 2, 3, 4] {
        for len in [2, 20, 200, bytes.len() / 2, bytes.len() - 40] {
            let result = decode_eighths(&bytes[..len], u64::MAX, eighths);
            assert!(
                matches!(result, Err(ImageError::Corrupt(_))),
                "{eighths}/8 cut at {len}: {result:?}"
            );
        }
    }
}

#[test]
fn more_pixels_than_allowed_are_refused_from_the_header() {
    let bytes = baseline();
    assert!(matches!(
        decode(&bytes[..], 96 * 80 - 1, 8),
        Err(ImageError::TooLarge {
            width: 96,
            height: 80,
            ..
        })
    ));
    assert!(decode(&bytes[..], 96 * 80, 8).unwrap().is_some());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Bytes changed anywhere, of a baseline or a progressive file (its DC
    /// scans with a refinement), and the file cut anywhere, at every scale:
    /// an image or an error, never a panic.
    #[test]
    fn changed_bytes_never_panic(
        progressive in any::<bool>(),
        eighths in prop::sample::select(vec![1u32, 2, 3, 4]),
        changes in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let mut bytes = if progressive {
            include_bytes!("progressive-dc-refine.jpg").to_vec()
        } else {
            baseline()
        };
        for (at, byte) in changes {
            let at = at % bytes.len();
            bytes[at] = byte;
        }
        let _ = decode_eighths(&bytes[..], 1 << 24, eighths);
        let _ = decode_eighths(&bytes[..cut % bytes.len()], 1 << 24, eighths);
    }
}

/// Where each scan (its SOS marker) starts, and where the EOI is.
fn scans_and_end(bytes: &[u8]) -> (Vec<usize>, usize) {
    let sos = bytes
        .windows(2)
        .enumerate()
        .filter(|(_, w)| *w == [0xFF, 0xDA])
        .map(|(i, _)| i)
        .collect();
    (sos, bytes.len() - 2)
}

/// A scan of made-up bits costs a few bytes: a component decoded twice,
/// a restart interval with no data, are refused, not decoded again.
#[test]
fn repeated_scans_and_empty_intervals_are_refused() {
    let grey = Layout {
        color: ColorType::Luma,
        sampling: SamplingFactor::F_1_1,
        restart: 0,
        optimized: false,
        progressive: false,
    };
    let bytes = jpeg(64, 64, &grey);
    let (sos, end) = scans_and_end(&bytes);
    let mut twice = bytes[..end].to_vec();
    twice.extend_from_slice(&bytes[sos[0]..]);
    assert!(matches!(
        decode(&twice[..], u64::MAX, 8),
        Err(ImageError::Corrupt(e)) if e.contains("two scans")
    ));
    assert!(matches!(
        super::super::jpeg_dc::check_scans(&twice[..]),
        Err(ImageError::Corrupt(_))
    ));
    // The first restart interval's data cut out: its blocks would come
    // from made-up bits.
    let bytes = jpeg(64, 64, &Layout { restart: 1, ..grey });
    let (sos, _) = scans_and_end(&bytes);
    let header_len = usize::from(u16::from_be_bytes([bytes[sos[0] + 2], bytes[sos[0] + 3]]));
    let data = sos[0] + 2 + header_len;
    let first_rst = data
        + bytes[data..]
            .windows(2)
            .position(|w| w[0] == 0xFF && (0xD0..=0xD7).contains(&w[1]))
            .unwrap();
    let mut cut = bytes[..data].to_vec();
    cut.extend_from_slice(&bytes[first_rst..]);
    assert!(matches!(
        decode(&cut[..], u64::MAX, 8),
        Err(ImageError::Corrupt(e)) if e.contains("restart interval")
    ));
}

/// A progressive JPEG of many scans (each one more pass over every block
/// for `jpeg-decoder`) is refused from its markers; a usual one is not.
#[test]
fn a_progressive_file_of_too_many_scans_is_refused() {
    let layout = Layout {
        color: ColorType::Rgb,
        sampling: SamplingFactor::F_2_2,
        restart: 0,
        optimized: false,
        progressive: true,
    };
    let bytes = jpeg(64, 64, &layout);
    super::super::jpeg_dc::check_scans(&bytes[..]).unwrap();
    let (sos, end) = scans_and_end(&bytes);
    let last = &bytes[*sos.last().unwrap()..end];
    let mut many = bytes[..end].to_vec();
    for _ in 0..super::super::jpeg_dc::MAX_PROGRESSIVE_SCANS {
        many.extend_from_slice(last);
    }
    many.extend_from_slice(&[0xFF, 0xD9]);
    let e = super::render_bytes(
        &many,
        &super::transform(Some(8), None, crate::domain::transform::Fit::Inside),
        crate::domain::transform::Output::Png,
    )
    .unwrap_err();
    assert!(
        matches!(e, ImageError::Corrupt(ref m) if m.contains("scans")),
        "{e:?}"
    );
    // A file cut short is still the decoder's to judge.
    super::super::jpeg_dc::check_scans(&bytes[..bytes.len() / 2]).unwrap();
}

/// `jpeg-decoder`'s decode of `bytes` at 1/`denominator` scale.
fn scaled_reference(bytes: &[u8], denominator: u16) -> (u32, u32, Vec<u8>) {
    let mut decoder = jpeg_decoder::Decoder::new(bytes);
    decoder.read_info().unwrap();
    let info = decoder.info().unwrap();
    let (w, h) = (
        info.width.div_ceil(denominator),
        info.height.div_ceil(denominator),
    );
    decoder.scale(w, h).unwrap();
    let pixels = decoder.decode().unwrap();
    let info = decoder.info().unwrap();
    (u32::from(info.width), u32::from(info.height), pixels)
}

/// At 1/4 and 1/2 scale, a file's samples (baseline or progressive) are `jpeg-decoder`'s
/// scaled ones but for rounding (luma) and the chroma's upsampling (which
/// `jpeg-decoder` interpolates, where ours decodes it at the luma's size).
#[test]
fn every_layout_at_a_quarter_and_a_half_is_the_scaled_decode() {
    let mut failures = Vec::new();
    for denominator in [4u16, 2] {
        for (name, w, h, layout) in every_layout() {
            let bytes = jpeg(w, h, &layout);
            let ours = decode(&bytes[..], u64::MAX, u32::from(denominator)).unwrap();
            let name = format!("1/{denominator} {name}");
            let Some(ours) = ours else {
                // 4:1:1 at 1/2 would need chroma blocks of 16.
                let wide = denominator == 2
                    && matches!(
                        layout.sampling,
                        SamplingFactor::F_4_1 | SamplingFactor::F_4_2
                    )
                    && layout.color == ColorType::Rgb;
                if !wide {
                    failures.push(format!("{name}: left to jpeg-decoder"));
                }
                continue;
            };
            if let Some(off) = scaled_off(&bytes, &ours, denominator) {
                failures.push(format!("{name}: {off}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// How far our decode `ours` of `bytes` at 1/`denominator` is from
/// `jpeg-decoder`'s, away from the right and bottom edges: the mean and
/// worst difference of a sample, and the channels.
fn scaled_difference(bytes: &[u8], ours: &DynamicImage, denominator: u16) -> (f64, u8, usize) {
    let (rw, rh, reference) = scaled_reference(bytes, denominator);
    assert_eq!((ours.width(), ours.height()), (rw, rh));
    let ours = samples(ours);
    assert_eq!(ours.len(), reference.len());
    let channels = ours.len() / usize::try_from(rw * rh).unwrap();
    let margin = 32 / u32::from(denominator);
    let (mut total, mut count, mut worst) = (0u64, 0u64, 0u8);
    for (i, (a, b)) in ours.iter().zip(&reference).enumerate() {
        let pixel = u32::try_from(i / channels).unwrap();
        let (x, y) = (pixel % rw, pixel / rw);
        if x + margin >= rw || y + margin >= rh {
            continue;
        }
        let diff = a.abs_diff(*b);
        total += u64::from(diff);
        count += 1;
        worst = worst.max(diff);
    }
    let mean = if count == 0 {
        0.0
    } else {
        f64::from(u32::try_from(total).unwrap()) / f64::from(u32::try_from(count).unwrap())
    };
    (mean, worst, channels)
}

/// Whether our decode is over the limits of [`scaled_difference`]:
/// rounding for luma, the chroma's upsampling for colour.
fn scaled_off(bytes: &[u8], ours: &DynamicImage, denominator: u16) -> Option<String> {
    let (mean, worst, channels) = scaled_difference(bytes, ours, denominator);
    let (mean_limit, worst_limit) = if channels == 1 { (0.1, 1) } else { (1.0, 6) };
    (mean > mean_limit || worst > worst_limit).then(|| format!("mean {mean:.2}, worst {worst}"))
}

/// A progressive file with AC refinements (libjpeg's script: bands first
/// by their high bits, then a bit a scan), at 1/4 and 1/2: as close as
/// rounding (its 4:2:0 chroma is scaled as `jpeg-decoder` does; without
/// the refinements' correction bits, the mean was 0.5).
#[test]
fn a_progressive_file_with_ac_refinements_is_the_scaled_decode() {
    let bytes = include_bytes!("progressive-dc-refine.jpg");
    for denominator in [4u16, 2] {
        let ours = decode(&bytes[..], u64::MAX, u32::from(denominator))
            .unwrap()
            .unwrap();
        let (mean, worst, _) = scaled_difference(bytes, &ours, denominator);
        assert!(
            mean <= 0.1 && worst <= 2,
            "1/{denominator}: mean {mean}, worst {worst}"
        );
    }
}

/// The full decode's mean over the pixels of each sample at 3/8 scale (the
/// pixels `x` with `x × 3 / 8` = the sample's column, the same down; 2 or
/// 3 each way), per channel; `None` within 32 pixels of the right or
/// bottom edge, where the encoder's padding weighs in.
fn three_eighths_means(bytes: &[u8]) -> (u32, u32, usize, Vec<Option<f64>>) {
    let (w, h, channels, full) = full_decode(bytes);
    let (ow, oh) = ((w * 3).div_ceil(8), (h * 3).div_ceil(8));
    let span = |o: u32| (o * 8).div_ceil(3)..((o + 1) * 8).div_ceil(3);
    let mut out = Vec::new();
    for oy in 0..oh {
        for ox in 0..ow {
            for c in 0..channels {
                let (xs, ys) = (span(ox), span(oy));
                if xs.end + 32 > w || ys.end + 32 > h {
                    out.push(None);
                    continue;
                }
                let (mut sum, mut count) = (0u32, 0u32);
                for y in ys.clone() {
                    for x in xs.clone() {
                        sum +=
                            u32::from(full[usize::try_from((y * w + x) * channels + c).unwrap()]);
                        count += 1;
                    }
                }
                out.push(Some(f64::from(sum) / f64::from(count)));
            }
        }
    }
    (ow, oh, usize::try_from(channels).unwrap(), out)
}

/// At 3/8 (which `jpeg-decoder` has not), every layout's samples are the
/// full decode's means over their 8/3 pixels but for what a 3-point IDCT
/// drops (the picture's noise, a few levels) and, in colour, the chroma's
/// upsampling: `ceil(side × 3 / 8)` a side; 4:1:1 colour (chroma blocks of
/// 12) is left to `jpeg-decoder`.
#[test]
fn every_layout_at_three_eighths_is_the_means_of_the_full_decode() {
    let mut failures = Vec::new();
    for (name, w, h, layout) in every_layout() {
        let bytes = jpeg(w, h, &layout);
        let Some(ours) = decode_eighths(&bytes[..], u64::MAX, 3).unwrap() else {
            let wide = matches!(
                layout.sampling,
                SamplingFactor::F_4_1 | SamplingFactor::F_4_2
            ) && layout.color == ColorType::Rgb;
            if !wide {
                failures.push(format!("{name}: left to jpeg-decoder"));
            }
            continue;
        };
        let (ow, oh, channels, means) = three_eighths_means(&bytes);
        assert_eq!((ours.width(), ours.height()), (ow, oh), "{name}");
        let ours = samples(&ours);
        assert_eq!(ours.len(), means.len(), "{name}");
        let (mut total, mut count, mut worst) = (0.0, 0u32, 0.0f64);
        for (&a, b) in ours.iter().zip(&means) {
            let Some(b) = b else { continue };
            let diff = (f64::from(a) - b).abs();
            total += diff;
            count += 1;
            worst = worst.max(diff);
        }
        let mean = if count == 0 {
            0.0
        } else {
            total / f64::from(count)
        };
        let (mean_limit, worst_limit) = if channels == 1 {
            (1.0, 5.0)
        } else {
            (1.5, 9.0)
        };
        if mean > mean_limit || worst > worst_limit {
            failures.push(format!("{name}: mean {mean:.2}, worst {worst:.1}"));
        }
    }
    // Seen here: a largest mean of 0.96 and a worst of 4.6 levels.
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A flat picture stays flat at 3/8, at its colour (the 3-point IDCT keeps
/// a block's mean, as the 8-point one does), its chroma subsampled or not.
#[test]
fn a_flat_picture_at_three_eighths_is_its_colour() {
    for sampling in [
        SamplingFactor::F_1_1,
        SamplingFactor::F_2_2,
        SamplingFactor::F_2_1,
    ] {
        let (w, h) = (77u16, 53u16);
        let pixels: Vec<u8> = [200u8, 90, 40].repeat(usize::from(w) * usize::from(h));
        let mut bytes = Vec::new();
        let mut encoder = Encoder::new(&mut bytes, 95);
        encoder.set_sampling_factor(sampling);
        encoder.encode(&pixels, w, h, ColorType::Rgb).unwrap();
        let ours = decode_eighths(&bytes[..], u64::MAX, 3).unwrap().unwrap();
        assert_eq!((ours.width(), ours.height()), (29, 20));
        let mut full = jpeg_decoder::Decoder::new(&bytes[..]);
        let reference = full.decode().unwrap();
        for px in samples(&ours).chunks_exact(3) {
            for (c, (&v, &r)) in px.iter().zip(&reference[..3]).enumerate() {
                assert!(
                    v.abs_diff(r) <= 1,
                    "{sampling:?} channel {c}: {v} against {r}"
                );
            }
        }
    }
}

/// The start of each scan header's band and approximation bytes (Ss, Se,
/// Ah/Al) in `bytes`.
fn scan_bands(bytes: &[u8]) -> Vec<usize> {
    let mut at = Vec::new();
    for i in 0..bytes.len() - 4 {
        if bytes[i] == 0xFF && bytes[i + 1] == 0xDA {
            let components = usize::from(bytes[i + 4]);
            at.push(i + 5 + 2 * components);
        }
    }
    at
}

/// A sequential scan's band and approximation are ignored, as libjpeg
/// and `jpeg-decoder` ignore them: a file whose scan says Se = 0 is the
/// same picture at every scale.
#[test]
fn a_sequential_scans_band_is_ignored() {
    let bytes = baseline();
    let mut odd = bytes.clone();
    let [band] = scan_bands(&bytes)[..] else {
        panic!("one scan")
    };
    assert_eq!((odd[band], odd[band + 1]), (0, 63));
    odd[band + 1] = 0;
    for eighths in [1, 2, 3, 4] {
        let ours = decode_eighths(&odd[..], u64::MAX, eighths)
            .unwrap()
            .unwrap();
        let right = decode_eighths(&bytes[..], u64::MAX, eighths)
            .unwrap()
            .unwrap();
        assert_eq!(samples(&ours), samples(&right), "{eighths}/8");
    }
}

/// A progressive AC scan of an approximation no decoder reads (libjpeg
/// refuses a refinement of two bits) is refused above 1/8, not left to
/// `jpeg-decoder` (which would first hold every coefficient); at 1/8 the
/// AC scans are not read.
#[test]
fn a_malformed_progressive_scan_is_refused_above_an_eighth() {
    let bytes = include_bytes!("progressive-dc-refine.jpg");
    let mut bad = bytes.to_vec();
    let band = scan_bands(bytes)
        .into_iter()
        .find(|&at| bytes[at] > 0)
        .expect("an AC scan");
    bad[band + 2] = 0x31;
    for eighths in [2, 3, 4] {
        let result = decode_eighths(&bad[..], u64::MAX, eighths);
        assert!(
            matches!(result, Err(ImageError::Corrupt(_))),
            "{eighths}/8: {result:?}"
        );
    }
    assert!(decode_eighths(&bad[..], u64::MAX, 1).unwrap().is_some());
}
