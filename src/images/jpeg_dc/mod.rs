//! A JPEG at reduced scale, for the renders smaller than the source (most
//! of them: `srcset` widths of a camera's photo).
//!
//! At 1/8, one pixel a block, each the block's mean, from its DC
//! coefficients alone: the AC coefficients are only skipped (one table
//! lookup for one or two of them, no dequantising, no IDCT). At 1/4, 3/8
//! and 1/2 ([`scaled`]), 2×2, 3×3 or 4×4 samples a luma block: the coefficients of
//! that low-frequency corner decoded and dequantised, the rest skipped the
//! same way, then a scaled IDCT of that size (libjpeg's method); a
//! subsampled component's blocks give more samples (up to 8×8), so that
//! every plane lands on the luma's grid and none is upsampled. All on the
//! calling thread: `jpeg-decoder`'s scaled path decodes every coefficient
//! and hands rows to a worker thread (its switches, faults and copies were
//! 42% of a render's time at 640 px).
//!
//! Baseline sequential Huffman JPEGs (SOF0, SOF1), 8-bit, grey or three
//! components, in one interleaved scan or a scan a component, are decoded
//! here; so are progressive ones (SOF2) of the same kinds: at 1/8 only
//! their DC scans are decoded and the AC scans skipped unread (a tenth of
//! the bits, where `jpeg-decoder` decodes and keeps every coefficient: some
//! 20 times the time); at 1/4, 3/8 and 1/2 every scan, keeping only the
//! coefficients the scaled IDCT reads ([`progressive`]). Anything else
//! (arithmetic, 12-bit, CMYK, a sampling that does not divide the largest)
//! is left to `jpeg-decoder` ([`decode`] answers `None`).

mod bits;
mod header;
mod layout;
mod progressive;
mod scaled;

pub(super) use layout::{layout, JpegLayout};

use crate::images::zeroed::zeroed;
use std::io::Read;

use image::{DynamicImage, GrayImage, RgbImage};

use self::bits::{Bits, Input};
use self::header::{Header, Huffman, Pass, Scan, Skip, ENTRIES, LOOKAHEAD, MASK};
use self::progressive::{Run, Spectra};
use self::scaled::Geometry;
use super::ImageError;

/// Decodes the JPEG read from `input` at `eighths`/8 scale (1, 2, 3 or 4:
/// as many samples a luma block's side): `ceil(width × eighths / 8)` ×
/// `ceil(height × eighths / 8)` pixels.
/// `None` when the file uses a feature this decoder leaves to
/// `jpeg-decoder` (and a progressive one above 1/8); an error when it is
/// malformed or has more than `max_pixels`.
pub(super) fn decode(
    input: impl Read,
    max_pixels: u64,
    eighths: u32,
) -> Result<Option<DynamicImage>, ImageError> {
    let n = match eighths {
        1..=4 => usize::try_from(eighths).unwrap_or(1),
        _ => return Ok(None),
    };
    let mut input = Input::new(input);
    let mut header = Header::default();
    let mut planes: Vec<Plane> = Vec::new();
    let mut scans = 0usize;
    if input.marker()? != 0xD8 {
        return Err(corrupt("no start of image"));
    }
    loop {
        match input.marker()? {
            code @ (0xC0..=0xC2) => {
                if !header.frame(&input.segment()?, code == 0xC2)? {
                    return Ok(None);
                }
                let side = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
                super::check_pixels(side(header.width), side(header.height), max_pixels)?;
                let Some(all) = Plane::all(&header, n) else {
                    return Ok(None);
                };
                planes = all;
            }
            // Lossless, hierarchical, arithmetic: not here.
            0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF => return Ok(None),
            0xC4 => header.huffman(&input.segment()?)?,
            0xDB => header.quantization(&input.segment()?)?,
            0xDD => header.restart_interval(&input.segment()?)?,
            0xEE => header.adobe(&input.segment()?),
            0xDA => {
                let scan = header.scan(&input.segment()?)?;
                scans += 1;
                if header.progressive && scans > MAX_PROGRESSIVE_SCANS {
                    return Err(corrupt("more scans than a decoder passes over"));
                }
                let ac = match scan.pass {
                    Pass::Ac(band) => Some(band),
                    _ => None,
                };
                if ac.is_some_and(|band| n > 1 && (!band.valid() || scan.components.len() > 1)) {
                    // Malformed (libjpeg refuses it too): not left to
                    // `jpeg-decoder`, which would hold every coefficient
                    // first, more than the render's estimate counted.
                    return Err(corrupt("a progressive AC scan no decoder reads"));
                }
                if ac.is_some() && n == 1 {
                    // Its data, through its restart markers, unread.
                    input.skip_to_marker()?;
                    while matches!(input.peek_marker(), Some(0xD0..=0xD7)) {
                        input.marker()?;
                        input.skip_to_marker()?;
                    }
                } else {
                    decode_scan(&mut input, &header, &scan, &mut planes)?;
                }
                // Past the scan's last bits, to the next marker.
                input.skip_to_marker()?;
            }
            0xD9 => break,
            0xD0..=0xD7 | 0x01 => {}
            _ => {
                input.segment()?;
            }
        }
    }
    if planes.is_empty() || planes.iter().any(|p| !p.decoded) {
        return Err(corrupt("the image ends before its pixels"));
    }
    if header.progressive && n > 1 {
        for (plane, component) in planes.iter_mut().zip(&header.components) {
            progressive::finish(plane, &header.steps[component.quant].0);
        }
    } else if header.progressive {
        for plane in &mut planes {
            let quant = plane.quant;
            for (value, &dc) in plane.values.iter_mut().zip(&plane.coefficients) {
                *value = mean(dc, quant);
            }
        }
    }
    Ok(Some(image_of(&planes, &header, n)))
}

/// The most scans a progressive JPEG may have: encoders write about ten
/// (libjpeg's default script 10, mozjpeg's about 12); each costs a pass over
/// every block, and a scan of made-up bits takes a few bytes.
pub(super) const MAX_PROGRESSIVE_SCANS: usize = 64;

/// Walks the JPEG's markers (not decoding a bit) and refuses one with more
/// scans than a decoder should pass over: a sequential frame with more
/// scans than components, a progressive one with more than
/// [`MAX_PROGRESSIVE_SCANS`]. For the files left to `jpeg-decoder`, which
/// would decode each.
pub(super) fn check_scans(input: impl Read) -> Result<(), ImageError> {
    match count_scans(&mut Input::new(input)) {
        Ok(true) => Err(corrupt("more scans than a decoder passes over")),
        // A file cut short or malformed is the decoder's to judge.
        Ok(false) | Err(_) => Ok(()),
    }
}

/// Whether the scans go past the frame's limit.
fn count_scans<R: Read>(input: &mut Input<R>) -> Result<bool, ImageError> {
    if input.marker()? != 0xD8 {
        return Ok(false);
    }
    let (mut limit, mut scans) = (None, 0usize);
    loop {
        match input.marker()? {
            code @ (0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF) => {
                let frame = input.segment()?;
                let components = usize::from(*frame.get(5).unwrap_or(&0));
                let progressive = matches!(code, 0xC2 | 0xC6 | 0xCA | 0xCE);
                limit = Some(if progressive {
                    MAX_PROGRESSIVE_SCANS
                } else {
                    components
                });
            }
            0xDA => {
                input.segment()?;
                scans += 1;
                if limit.is_some_and(|limit| scans > limit) {
                    return Ok(true);
                }
                input.skip_to_marker()?;
            }
            0xD9 => return Ok(false),
            0xD0..=0xD7 | 0x01 => {}
            _ => {
                input.segment()?;
            }
        }
    }
}

fn corrupt(what: &str) -> ImageError {
    ImageError::Corrupt(format!("JPEG: {what}"))
}

/// One component's samples: its blocks' means at 1/8, else `nx`×`ny`
/// samples a block.
struct Plane {
    /// Blocks across, padded to whole MCUs.
    width: usize,
    values: Vec<u8>,
    /// Above 1/8: the block's size and IDCT, and the samples a row; of a
    /// progressive frame, its coefficients so far.
    geometry: Option<Geometry>,
    stride: usize,
    spectra: Option<Spectra>,
    /// A progressive frame's DC coefficients (their bits so far), made
    /// means once all its scans are read; and the DC step they take, as
    /// the component's first scan found it.
    coefficients: Vec<i32>,
    quant: i32,
    /// Its sampling (1×1 in a frame of one component).
    h: usize,
    v: usize,
    /// Its blocks, across and down, in a scan of its own.
    blocks: (usize, usize),
    decoded: bool,
}

impl Plane {
    /// The frame's planes, sized for its MCUs, at `n` samples a luma
    /// block's side (a subsampled component's blocks give it more, up to
    /// 8, so that all share the luma's grid). `None` above 1/8 when a
    /// component's sampling does not divide the largest, or would need
    /// more than 8.
    fn all(header: &Header, n: usize) -> Option<Vec<Plane>> {
        let (hmax, vmax) = header.max_sampling();
        let (mcus_x, mcus_y) = header.mcus();
        let single = header.components.len() == 1;
        header
            .components
            .iter()
            .map(|c| {
                let (h, v) = if single { (1, 1) } else { (c.h, c.v) };
                let across = (header.width * c.h).div_ceil(hmax).div_ceil(8);
                let down = (header.height * c.v).div_ceil(vmax).div_ceil(8);
                let (nx, ny) = if single {
                    (n, n)
                } else {
                    (n * hmax / c.h, n * vmax / c.v)
                };
                let geometry = if n == 1 {
                    None
                } else if single || (hmax % c.h == 0 && vmax % c.v == 0 && nx <= 8 && ny <= 8) {
                    Some(Geometry::new(nx, ny))
                } else {
                    return None;
                };
                let (nx, ny) = geometry.as_ref().map_or((1, 1), |g| (g.nx, g.ny));
                let blocks = mcus_x * h * mcus_y * v;
                let spectra = geometry
                    .as_ref()
                    .filter(|_| header.progressive)
                    .map(|g| Spectra::new(blocks, g));
                Some(Plane {
                    width: mcus_x * h,
                    values: zeroed(blocks * nx * ny),
                    geometry,
                    stride: mcus_x * h * nx,
                    spectra,
                    coefficients: if header.progressive {
                        zeroed(blocks)
                    } else {
                        Vec::new()
                    },
                    quant: 0,
                    h,
                    v,
                    blocks: (across, down),
                    decoded: false,
                })
            })
            .collect()
    }
}

/// One component of a scan, as the block decoder needs it (the tables
/// its pass reads: a DC refinement reads none, a first DC scan no AC one).
struct Part<'a> {
    plane: usize,
    dc: Option<&'a Huffman>,
    ac: Option<&'a Huffman>,
    quant: i32,
    /// Every step of its quantisation table, in zigzag order.
    steps: &'a [i32; 64],
    prediction: i32,
}

/// Decodes one scan (a progressive AC one above 1/8 only) into `planes`:
/// all the components interleaved by MCU, or one component block by block.
fn decode_scan<R: Read>(
    input: &mut Input<R>,
    header: &Header,
    scan: &Scan,
    planes: &mut [Plane],
) -> Result<(), ImageError> {
    let missing = || corrupt("a scan uses a table not defined");
    let mut parts = Vec::with_capacity(scan.components.len());
    for &(index, dc, ac) in &scan.components {
        let refine = matches!(scan.pass, Pass::DcRefine(_) | Pass::Ac(_));
        if planes[index].decoded != refine {
            // Another whole decode for a few bytes of markers; a refinement
            // of nothing yet.
            return Err(corrupt(if refine {
                "a refinement or AC scan before the first DC scan"
            } else {
                "a component in two scans"
            }));
        }
        let component = header.components[index];
        let dc_table = || header.dc_tables[dc].as_ref().ok_or_else(missing);
        let ac_table = || header.ac_tables[ac].as_ref().ok_or_else(missing);
        let (dc_table, ac_table) = match scan.pass {
            Pass::Sequential => (Some(dc_table()?), Some(ac_table()?)),
            Pass::DcFirst(_) => (Some(dc_table()?), None),
            Pass::DcRefine(_) => (None, None),
            Pass::Ac(_) => (None, Some(ac_table()?)),
        };
        let quant = if refine {
            planes[index].quant
        } else {
            header.dc_quant[component.quant].ok_or_else(missing)?
        };
        planes[index].quant = quant;
        parts.push(Part {
            plane: index,
            dc: dc_table,
            ac: ac_table,
            quant,
            steps: &header.steps[component.quant].0,
            prediction: 0,
        });
    }
    // An MCU is every component's blocks, or one block of a lone component.
    let (units_x, units_y) = match parts.as_slice() {
        [one] => planes[one.plane].blocks,
        _ => header.mcus(),
    };
    let interleaved = parts.len() > 1;
    let mut bits = Bits::default();
    let mut run = Run::default();
    let mut until_restart = header.restart_interval;
    for my in 0..units_y {
        for mx in 0..units_x {
            if header.restart_interval > 0 {
                if until_restart == 0 {
                    bits.restart(input)?;
                    for part in &mut parts {
                        part.prediction = 0;
                    }
                    run = Run::default();
                    until_restart = header.restart_interval;
                }
                until_restart -= 1;
            }
            for part in &mut parts {
                let plane = &mut planes[part.plane];
                let (h, v) = if interleaved {
                    (plane.h, plane.v)
                } else {
                    (1, 1)
                };
                for by in 0..v {
                    for bx in 0..h {
                        let at = (my * v + by) * plane.width + mx * h + bx;
                        match scan.pass {
                            Pass::DcFirst(low) => {
                                let dc = dc_first(part, &mut bits, input)?;
                                plane.coefficients[at] = dc.wrapping_shl(u32::from(low));
                            }
                            Pass::DcRefine(low) => {
                                bits.fill(input)?;
                                if bits.peek(1) == 1 {
                                    plane.coefficients[at] |= 1 << low;
                                }
                                bits.consume(1);
                            }
                            Pass::Ac(band) => {
                                let (Some(geometry), Some(spectra), Some(ac)) =
                                    (&plane.geometry, &mut plane.spectra, part.ac)
                                else {
                                    return Err(corrupt("an AC scan not decoded here"));
                                };
                                let decode = if band.high == 0 {
                                    progressive::first
                                } else {
                                    progressive::refine
                                };
                                decode(
                                    ac, &mut bits, input, band, &mut run, geometry, spectra, at,
                                )?;
                            }
                            Pass::Sequential => match &plane.geometry {
                                None => plane.values[at] = block(part, &mut bits, input)?,
                                Some(geometry) => {
                                    let (row, col) = (at / plane.width, at % plane.width);
                                    let start =
                                        row * geometry.ny * plane.stride + col * geometry.nx;
                                    let out = &mut plane.values[start..];
                                    scaled::block(
                                        part,
                                        &mut bits,
                                        input,
                                        geometry,
                                        out,
                                        plane.stride,
                                    )?;
                                }
                            },
                        }
                    }
                }
            }
        }
    }
    if bits.padding > bits.count {
        return Err(corrupt("the file ends too soon"));
    }
    for part in &parts {
        planes[part.plane].decoded = true;
    }
    Ok(())
}

/// Decodes one block's DC coefficient (of a sequential scan, or the
/// high bits of a first progressive DC scan).
#[inline]
fn dc_first<R: Read>(
    part: &mut Part<'_>,
    bits: &mut Bits,
    input: &mut Input<R>,
) -> Result<i32, ImageError> {
    bits.fill(input)?;
    let missing = || corrupt("a scan uses a table not defined");
    let size = part.dc.ok_or_else(missing)?.symbol(bits)?;
    if size > 11 {
        return Err(corrupt("a DC difference out of range"));
    }
    let diff = bits.extend(u32::from(size));
    part.prediction = part.prediction.wrapping_add(diff);
    Ok(part.prediction)
}

/// A block's mean, as a sample, from its DC coefficient and step: DC ×
/// step / 8, around 128.
fn mean(dc: i32, quant: i32) -> u8 {
    let mean = i64::from(dc) * i64::from(quant);
    clamp(i32::try_from((mean + 4).div_euclid(8) + 128).unwrap_or(i32::MAX))
}

/// Decodes one block: its mean, as a sample; its AC coefficients skipped.
#[inline]
fn block<R: Read>(
    part: &mut Part<'_>,
    bits: &mut Bits,
    input: &mut Input<R>,
) -> Result<u8, ImageError> {
    dc_first(part, bits, input)?;
    let ac = part
        .ac
        .ok_or_else(|| corrupt("a scan uses a table not defined"))?;
    skip_ac(ac, bits, input, 1)?;
    Ok(mean(part.prediction, part.quant))
}

/// Skips a block's AC coefficients from zigzag index `k` on, to its end.
#[inline]
fn skip_ac<R: Read>(
    ac: &Huffman,
    bits: &mut Bits,
    input: &mut Input<R>,
    mut k: u32,
) -> Result<(), ImageError> {
    // The hot loop, on the bits held in locals (a call to refill them hands
    // them back): nearly every code is found by one lookup, often with the
    // next one, and the coefficients' bits are skipped unread.
    let skip: &[Skip; ENTRIES] = &ac.skip;
    let (mut word, mut count) = (bits.word, bits.count);
    while k < 64 {
        if count < 32 {
            (bits.word, bits.count) = (word, count);
            bits.fill(input)?;
            (word, count) = (bits.word, bits.count);
        }
        let entry = skip[usize::try_from(word >> (64 - LOOKAHEAD)).unwrap_or(0) & MASK];
        let (skipped, covers) = entry.first;
        if skipped > 0 {
            // At most 16 + 15 bits, of the 32 or more held.
            word <<= skipped;
            count -= u32::from(skipped);
            if covers == 0 {
                break;
            }
            k += u32::from(covers);
            let (skipped, covers) = entry.second;
            if skipped > 0 && k < 64 {
                // The code within the `LOOKAHEAD` bits, then up to 15 more.
                word <<= skipped;
                count -= u32::from(skipped);
                if covers == 0 {
                    break;
                }
                k += u32::from(covers);
            }
            continue;
        }
        (bits.word, bits.count) = (word, count);
        let symbol = ac.symbol(bits)?;
        let (run, size) = (u32::from(symbol >> 4), u32::from(symbol & 15));
        bits.consume(size);
        (word, count) = (bits.word, bits.count);
        if size == 0 && run != 15 {
            break;
        }
        k += run + 1;
    }
    (bits.word, bits.count) = (word, count);
    Ok(())
}

/// The planes as pixels (`n` a luma block's side): chroma by nearest
/// sample (at 1/8; above, the planes share a grid), YCbCr to RGB (JFIF)
/// unless the file says its components are RGB.
fn image_of(planes: &[Plane], header: &Header, n: usize) -> DynamicImage {
    let (out_w, out_h) = (
        (header.width * n).div_ceil(8),
        (header.height * n).div_ceil(8),
    );
    let (width, height) = (
        u32::try_from(out_w).unwrap_or(0),
        u32::try_from(out_h).unwrap_or(0),
    );
    if let [p] = planes {
        let mut gray = Vec::with_capacity(out_w * out_h);
        for y in 0..out_h {
            gray.extend_from_slice(&p.values[y * p.stride..y * p.stride + out_w]);
        }
        return DynamicImage::ImageLuma8(
            GrayImage::from_raw(width, height, gray).unwrap_or_default(),
        );
    }
    let rgb = header.is_rgb();
    let mut pixels = zeroed::<u8>(out_w * out_h * 3);
    if n > 1 {
        // The planes share the image's grid: sample for sample.
        for (y, line) in pixels.chunks_exact_mut(out_w * 3).enumerate() {
            let [a, b, c] = [0, 1, 2].map(|i| {
                let p = &planes[i];
                &p.values[y * p.stride..y * p.stride + out_w]
            });
            for (((pixel, &a), &b), &c) in line.chunks_exact_mut(3).zip(a).zip(b).zip(c) {
                pixel.copy_from_slice(&colour(rgb, a, b, c));
            }
        }
    } else {
        // A block's mean a pixel: a subsampled plane's nearest.
        let (hmax, vmax) = header.max_sampling();
        for (y, line) in pixels.chunks_exact_mut(out_w * 3).enumerate() {
            let rows: Vec<&[u8]> = planes
                .iter()
                .map(|p| {
                    let row = y * p.v / vmax;
                    &p.values[row * p.width..(row + 1) * p.width]
                })
                .collect();
            for (x, pixel) in line.chunks_exact_mut(3).enumerate() {
                let sample = |i: usize| rows[i][x * planes[i].h / hmax];
                pixel.copy_from_slice(&colour(rgb, sample(0), sample(1), sample(2)));
            }
        }
    }
    DynamicImage::ImageRgb8(RgbImage::from_raw(width, height, pixels).unwrap_or_default())
}

/// One pixel from its three components' samples: as they are when the
/// file says RGB, else YCbCr to RGB.
fn colour(rgb: bool, a: u8, b: u8, c: u8) -> [u8; 3] {
    if rgb {
        [a, b, c]
    } else {
        ycbcr_to_rgb(i32::from(a), i32::from(b), i32::from(c))
    }
}

fn clamp(v: i32) -> u8 {
    u8::try_from(v.clamp(0, 255)).unwrap_or(0)
}

/// JFIF's YCbCr to RGB, in 16-bit fixed point.
fn ycbcr_to_rgb(y: i32, cb: i32, cr: i32) -> [u8; 3] {
    let (cb, cr) = (cb - 128, cr - 128);
    let y = (y << 16) + (1 << 15);
    [
        clamp((y + 91_881 * cr) >> 16),
        clamp((y - 22_554 * cb - 46_802 * cr) >> 16),
        clamp((y + 116_130 * cb) >> 16),
    ]
}
