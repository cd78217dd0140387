//! The memory a render takes, estimated from the source's header and the
//! variant asked for before any pixel is allocated: each stage's buffers
//! (pixels × bytes per pixel), the peak of those alive at once. The render
//! takes this many bytes from the render budget (`[images] memory`)
//! before it starts; one over the whole budget is refused.
//!
//! Each figure is an upper bound of what the code allocates (the tests in
//! `tests::estimate` check it against the peak RSS of a process rendering
//! one image): the JPEG decoder at the scale it decodes at, with its
//! coefficient rows (which may queue whole for its IDCT threads) and, for a
//! progressive file, every coefficient kept; a PNG at its bit depth and
//! channels, expanded; a GIF's canvas and first frame; the conversion to
//! 8-bit RGB(A); each resampling step with its alpha-premultiplied copy;
//! the output's turn, flattening or canvas; and the encoder's working set.

use super::decode::{
    eighths_of, jpeg_decoder_denominator, jpeg_eighths, shrink_factor, swaps_axes,
};
use super::layout::Layout;
use super::png_source::by_rows;
use super::resize;
use super::shrink::BoxShrink;
use super::{settle_output, ImageError, Probe};
use crate::domain::transform::{Output, SourceFormat, Transform};
use image::metadata::Orientation;

/// What any render takes beyond its pixels: decoder state and tables,
/// the resizer's coefficients, I/O buffers, a thread's stack.
pub(super) const BASE: u64 = 8 << 20;

/// Bytes a pixel of the AVIF decoder's child process takes at most (YUV
/// planes of up to 16 bits and alpha, and its RGBA answer), and the
/// server's side of it (the answer read, and a crop of it).
const AVIF_CHILD_PER_PIXEL: u64 = 16;
const AVIF_SERVER_PER_PIXEL: u64 = 8;
/// An animated WebP's decoder (`image-webp`, in the server): the pixels
/// (RGBA), YUV and alpha planes or a lossless decoder's ARGB words and
/// transforms, the animation's canvas.
const WEBP_DECODE_PER_PIXEL: u64 = 24;
/// A still WebP's decoder (libwebp, in a child) a source pixel: the file
/// (at most 4 bytes a pixel beyond [`super::layout::WEBP_SLACK`], checked
/// before it starts), a lossless picture's ARGB words or a lossy one's
/// alpha (its ARGB words and the plane: 5); its answer and the server's
/// copy of it, 4 bytes each a pixel of the shrunk picture.
const WEBP_CHILD_PER_PIXEL: u64 = 10;
/// The encoders' working set a pixel of the variant, beyond its 8-bit
/// pixels and their output: libwebp's YUVA picture and tokens, rav1e's
/// frames and lookahead (an AVIF variant is at most 1 MP), the JPEG and
/// PNG writers' output as it grows (twice the raw pixels at worst).
const WEBP_ENCODE_PER_PIXEL: u64 = 24;
const AVIF_ENCODE_PER_PIXEL: u64 = 160;
const OTHER_ENCODE_PER_PIXEL: u64 = 8;

/// The bytes the render of `t` as `output` of the source `header` takes
/// at most. The EXIF orientation is read only when decoding: the larger of
/// the upright and the turned plan is taken (one whose variant would be
/// refused, too large to write, takes what opening the source takes). Its
/// refusal when both would be.
pub(crate) fn estimate(
    header: &Probe,
    t: &Transform,
    output: Output,
    max_pixels: u64,
) -> Result<u64, ImageError> {
    let upright = oriented(header, t, output, Orientation::NoTransforms, max_pixels);
    let turned = oriented(header, t, output, Orientation::Rotate90, max_pixels);
    match (upright, turned) {
        (Err(e), Err(_)) => Err(e),
        (a, b) => Ok(a.unwrap_or(BASE).max(b.unwrap_or(BASE)).max(opened(header))),
    }
}

fn px(w: u32, h: u32) -> u64 {
    u64::from(w) * u64::from(h)
}

/// What opening the source takes before its variant is settled: an AVIF
/// is decoded then.
fn opened(header: &Probe) -> u64 {
    match header.layout {
        Layout::Avif => BASE.saturating_add(decode(header, 1, 1).peak),
        _ => BASE,
    }
}

fn oriented(
    header: &Probe,
    t: &Transform,
    output: Output,
    orientation: Orientation,
    max_pixels: u64,
) -> Result<u64, ImageError> {
    let (w, h) = (header.width, header.height);
    let displayed = if swaps_axes(orientation) {
        (h, w)
    } else {
        (w, h)
    };
    let plan = resize::plan(displayed.0, displayed.1, t);
    let output = settle_output(&plan, t, output, max_pixels)?;
    let (out_w, out_h) = plan.output_size();
    let out_px = px(out_w, out_h);
    let (need_w, need_h) = plan.source_size(orientation);
    let decoded = decode(header, need_w, need_h);
    let resized = resize_stage(&decoded, &plan, orientation);
    // The variant as made (turned, flattened, padded: three copies of it
    // at most at once, 4 bytes a pixel), then encoded.
    let finish = out_px.saturating_mul(12);
    let encode = out_px.saturating_mul(
        4 + 4
            + match output {
                Output::Webp => WEBP_ENCODE_PER_PIXEL,
                Output::Avif => AVIF_ENCODE_PER_PIXEL,
                Output::Jpeg | Output::Png => OTHER_ENCODE_PER_PIXEL,
            },
    );
    Ok(BASE.saturating_add(decoded.peak.max(resized).max(finish).max(encode)))
}

/// The decode stage: its peak, and the image it leaves.
struct Decoded {
    peak: u64,
    width: u32,
    height: u32,
    bytes_per_pixel: u64,
}

fn decode(header: &Probe, need_w: u32, need_h: u32) -> Decoded {
    let (w, h) = (header.width, header.height);
    let all = px(w, h);
    // What a still WebP or a PNG read by rows is shrunk by on load.
    let k = shrink_factor(w, h, need_w, need_h);
    let whole = |peak: u64, bytes_per_pixel: u64| Decoded {
        peak,
        width: w,
        height: h,
        bytes_per_pixel,
    };
    match (header.format, header.layout) {
        (SourceFormat::Jpeg, Layout::Jpeg(jpeg)) => {
            let eighths = jpeg_eighths(w, h, need_w, need_h);
            let (hmax, vmax) = (u32::from(jpeg.sampling.0), u32::from(jpeg.sampling.1));
            // Each component's blocks, padded to whole MCUs (the sampled
            // ones have fewer: counted as many, a bound).
            let blocks = u64::from(w.div_ceil(8 * hmax) * hmax)
                * u64::from(h.div_ceil(8 * vmax) * vmax)
                * u64::from(jpeg.components);
            // Samples a luma block's side: `jpeg_dc`'s scale, or the one
            // `jpeg-decoder` takes for a file left to it.
            let ours = jpeg.scaled.filter(|&(rx, ry)| {
                eighths == 1
                    || (u64::from(eighths) * u64::from(rx) <= 8
                        && u64::from(eighths) * u64::from(ry) <= 8)
            });
            let (scale, (dw, dh)) = if ours.is_some() || eighths == 8 {
                let at = |side: u32| eighths_of(side, eighths);
                (u64::from(eighths), (at(w), at(h)))
            } else {
                let d = jpeg_decoder_denominator(eighths);
                (u64::from(8 / d), (w.div_ceil(d), h.div_ceil(d)))
            };
            // Coefficient rows queued for the IDCT (all of them at worst),
            // a progressive file's coefficients, and the planes decoded.
            let coefficients = blocks * 128 * if jpeg.progressive { 2 } else { 1 };
            let planes = blocks * scale * scale;
            let (channels, kept) = match jpeg.components {
                1 if jpeg.lossless => (2, 2),
                1 => (1, 1),
                // CMYK, then converted to RGB beside it.
                4 => (4 + 3, 3),
                _ => (3, 3),
            };
            let image = px(dw, dh) * channels;
            // A frame `jpeg_dc` decodes: at 1/8 a byte a block (and a
            // progressive one's DC coefficient, 4 more); above, its planes
            // (a subsampled component's blocks give more samples, as many
            // as the luma's: within `planes`) and, of a progressive frame,
            // the coefficients kept (2 bytes each, `scale`² a luma block's
            // worth), a word a block saying which are nonzero and its DC
            // coefficient (4 bytes).
            let peak = match ours {
                Some(_) if scale == 1 => blocks * if jpeg.progressive { 5 } else { 1 } + image,
                Some(_) if jpeg.progressive => planes + image + blocks * (12 + 2 * scale * scale),
                Some(_) => planes + image,
                None => coefficients + planes + image,
            };
            Decoded {
                peak,
                width: dw,
                height: dh,
                bytes_per_pixel: kept,
            }
        }
        (
            _,
            Layout::Png {
                bytes_per_pixel,
                stored_bits,
                interlaced,
                wide,
            },
        ) if by_rows(interlaced, wide, k) => {
            // Read a row at a time: the decoder's rows; the row handed out
            // (as decoded) and the column sums (2 bytes a sample) as wide;
            // a row of block sums (8 bytes a sample); the shrunk picture in
            // 8 bits (as many bytes a pixel at most). A very wide PNG's
            // rows count.
            let bpp = u64::from(bytes_per_pixel);
            let (dw, dh) = (BoxShrink::out_side(w, k), BoxShrink::out_side(h, k));
            Decoded {
                peak: png_decoder(w, h, stored_bits)
                    + u64::from(w) * bpp * 3
                    + u64::from(dw) * 4 * 8
                    + px(dw, dh) * bpp,
                width: dw,
                height: dh,
                bytes_per_pixel: bpp,
            }
        }
        (
            _,
            Layout::Png {
                bytes_per_pixel,
                stored_bits,
                wide,
                ..
            },
        ) => {
            let bpp = u64::from(bytes_per_pixel);
            // 16-bit samples are copied into words beside the bytes.
            let copies = if wide { 2 } else { 1 };
            whole(all * bpp * copies + png_decoder(w, h, stored_bits), bpp)
        }
        (_, Layout::Gif { frame }) => whole((all + px(frame.0, frame.1)) * 4, 4),
        (SourceFormat::Avif, _) => whole(all * (AVIF_CHILD_PER_PIXEL + AVIF_SERVER_PER_PIXEL), 4),
        (_, Layout::Webp { animated: false }) if super::isolated::webp_in_child() => {
            let (dw, dh) = filestore_webp::shrunk_size(w, h, k);
            Decoded {
                peak: (all * WEBP_CHILD_PER_PIXEL)
                    .saturating_add(super::layout::WEBP_SLACK)
                    .saturating_add(px(dw, dh) * 8),
                width: dw,
                height: dh,
                bytes_per_pixel: 4,
            }
        }
        _ => whole(all * WEBP_DECODE_PER_PIXEL, 4),
    }
}

/// What png 0.18's decoder holds besides the pixels: up to 4 used rows,
/// the previous and the current one, as stored (with their filter byte), in
/// a vector that doubles as it grows (twice that), and its 32 KiB window.
fn png_decoder(w: u32, h: u32, stored_bits: u8) -> u64 {
    let stored_row = (u64::from(w) * u64::from(stored_bits)).div_ceil(8) + 1;
    2 * u64::from(h.min(7)) * stored_row + (40 << 10)
}

/// The resize stage: the decoded image and its 8-bit RGB(A) conversion
/// (a crop's part of it first), then each resampling step's image beside
/// its input, an alpha-premultiplied copy of the largest input, and the
/// result.
fn resize_stage(decoded: &Decoded, plan: &resize::Plan, orientation: Orientation) -> u64 {
    let source = px(decoded.width, decoded.height);
    let held = source * decoded.bytes_per_pixel;
    // 8-bit RGBA at most: 4 bytes a pixel from here on.
    let converted = source * 4;
    let to = resize::step_target(plan, orientation);
    let (sampled, between) = resize::steps((decoded.width, decoded.height), to);
    let sampled = sampled.map_or(0, |(w, h)| px(w, h) * 4);
    let between = between.map_or(0, |(w, h)| px(w, h) * 4);
    let out = px(to.0, to.1) * 4;
    let largest_input = converted.max(sampled).max(between);
    // A crop's part is copied from the decoded image (at most as large),
    // which goes then; the image (or the part) is converted beside itself.
    let cropping = if plan.crop.is_some() { held * 2 } else { 0 };
    let converting = held + converted;
    cropping
        .max(converting)
        .max(converted + sampled + between + out + largest_input)
}
