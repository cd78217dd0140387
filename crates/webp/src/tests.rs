use super::*;
use proptest::prelude::*;

/// A smooth RGB picture: red across, green down, blue constant.
fn gradient(width: u32, height: u32) -> Vec<u8> {
    let mut px = Vec::new();
    for y in 0..height {
        for x in 0..width {
            let r = u8::try_from(x * 255 / width.max(2).saturating_sub(1)).unwrap();
            let g = u8::try_from(y * 255 / height.max(2).saturating_sub(1)).unwrap();
            px.extend_from_slice(&[r, g, 100]);
        }
    }
    px
}

fn lossy(px: &[u8], width: u32, height: u32) -> Vec<u8> {
    webp::Encoder::from_rgb(px, width, height)
        .encode(95.0)
        .to_vec()
}

/// The mean absolute difference of two equal-length sample runs.
fn mean_diff(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let sum: u64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| u64::from(x.abs_diff(*y)))
        .sum();
    #[allow(clippy::cast_precision_loss, reason = "test figures")]
    let mean = sum as f64 / a.len() as f64;
    mean
}

/// `px` (RGB) shrunk by `k` by averaging each k × k box (edge boxes
/// cropped), as a reference for the rescaler.
fn box_shrink(px: &[u8], width: u32, height: u32, k: u32) -> Vec<u8> {
    let (w, h) = shrunk_size(width, height, k);
    let mut out = Vec::new();
    for by in 0..h {
        for bx in 0..w {
            for c in 0..3 {
                let (mut sum, mut n) = (0u32, 0u32);
                for y in by * k..((by + 1) * k).min(height) {
                    for x in bx * k..((bx + 1) * k).min(width) {
                        sum += u32::from(px[((y * width + x) * 3 + c) as usize]);
                        n += 1;
                    }
                }
                out.push(u8::try_from(sum / n).unwrap());
            }
        }
    }
    out
}

#[test]
fn a_lossy_webp_decodes_whole_and_shrunk() {
    let (w, h) = (301, 203);
    let px = gradient(w, h);
    let file = lossy(&px, w, h);
    let f = features(&file).unwrap();
    assert_eq!(
        f,
        Features {
            width: w,
            height: h,
            has_alpha: false,
            animated: false
        }
    );
    let whole = decode(&file, 1 << 20, 1).unwrap();
    assert_eq!((whole.width, whole.height, whole.has_alpha), (w, h, false));
    assert!(mean_diff(&whole.pixels, &px) < 2.0);
    for k in [2, 3, 4, 7] {
        let small = decode(&file, 1 << 20, k).unwrap();
        assert_eq!((small.width, small.height), shrunk_size(w, h, k), "{k}");
        let reference = box_shrink(&px, w, h, k);
        let d = mean_diff(&small.pixels, &reference);
        assert!(d < 3.0, "shrink {k}: mean difference {d}");
    }
}

#[test]
fn lossless_and_alpha_come_back_exactly() {
    let (w, h) = (64, 48);
    let px = gradient(w, h);
    let file = webp::Encoder::from_rgb(&px, w, h)
        .encode_lossless()
        .to_vec();
    assert!(
        decode(&file, 1 << 20, 1).unwrap().pixels == px,
        "lossless RGB differs"
    );
    let rgba: Vec<u8> = px
        .chunks_exact(3)
        .enumerate()
        .flat_map(|(i, p)| [p[0], p[1], p[2], u8::try_from(1 + i % 255).unwrap()])
        .collect();
    let file = webp::Encoder::from_rgba(&rgba, w, h)
        .encode_lossless()
        .to_vec();
    let image = decode(&file, 1 << 20, 1).unwrap();
    assert!(image.has_alpha);
    // (alpha never 0: the encoder may drop the colour under it)
    assert!(image.pixels == rgba, "lossless RGBA differs");
    // Shrunk, alpha stays straight: an opaque half stays opaque.
    let half: Vec<u8> = px
        .chunks_exact(3)
        .enumerate()
        .flat_map(|(i, p)| {
            let a = if i % 64 < 32 { 255 } else { 0 };
            [p[0], p[1], p[2], a]
        })
        .collect();
    let file = webp::Encoder::from_rgba(&half, w, h).encode(90.0).to_vec();
    let image = decode(&file, 1 << 20, 4).unwrap();
    assert_eq!((image.width, image.height, image.has_alpha), (16, 12, true));
    for row in image.pixels.chunks_exact(16 * 4) {
        assert_eq!(row[3], 255);
        assert_eq!(row[15 * 4 + 3], 0);
    }
}

#[test]
fn animations_caps_and_other_files_are_refused() {
    let px = gradient(16, 16);
    let config = libwebp_sys::WebPConfig::new().unwrap();
    let mut anim = webp::AnimEncoder::new(16, 16, &config);
    anim.add_frame(webp::AnimFrame::from_rgb(&px, 16, 16, 0));
    let other: Vec<u8> = px.iter().map(|v| 255 - v).collect();
    anim.add_frame(webp::AnimFrame::from_rgb(&other, 16, 16, 100));
    let file = anim.encode().to_vec();
    assert!(features(&file).unwrap().animated);
    assert_eq!(decode(&file, 1 << 20, 1), Err(WebpError::Animated));
    let file = lossy(&px, 16, 16);
    assert_eq!(
        decode(&file, 255, 1),
        Err(WebpError::TooLarge {
            width: 16,
            height: 16
        })
    );
    assert!(decode(&file, 256, 1).is_ok());
    assert_eq!(decode(b"GIF89a", 1 << 20, 1), Err(WebpError::NotWebp));
    assert_eq!(decode(&[], 1 << 20, 1), Err(WebpError::NotWebp));
    // The headers whole, the picture cut short.
    let cut = &file[..file.len() - 20];
    assert!(matches!(
        decode(cut, 1 << 20, 1),
        Err(WebpError::Corrupt(_))
    ));
}

#[test]
fn shrunk_sizes_round_up_and_never_reach_zero() {
    assert_eq!(shrunk_size(4000, 3000, 15), (267, 200));
    assert_eq!(shrunk_size(1, 1, 8), (1, 1));
    assert_eq!(shrunk_size(10, 10, 0), (10, 10));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Changed or cut files are refused or decoded, at any shrink, and
    /// what comes back is the size announced.
    #[test]
    fn damaged_files_never_misbehave(
        at in 0usize..2000,
        byte in any::<u8>(),
        cut in 0usize..2000,
        shrink in 1u32..9,
        lossless in any::<bool>(),
    ) {
        let (w, h) = (40, 30);
        let px = gradient(w, h);
        let mut file = if lossless {
            webp::Encoder::from_rgb(&px, w, h).encode_lossless().to_vec()
        } else {
            lossy(&px, w, h)
        };
        let at = at % file.len();
        file[at] = byte;
        file.truncate(file.len() - cut % file.len());
        if let Ok(image) = decode(&file, 1 << 16, shrink) {
            let channels = if image.has_alpha { 4 } else { 3 };
            prop_assert_eq!(image.pixels.len() as u64, u64::from(image.width) * u64::from(image.height) * channels);
        }
    }
}
