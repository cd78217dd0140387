//! A baseline block at 1/4, 3/8 or 1/2 scale (2×2, 3×3 or 4×4 samples; a
//! subsampled component's block at up to 8×8, so that its samples land on
//! the luma's without upsampling): the coefficients it needs decoded and
//! dequantised, the rest skipped as at 1/8 ([`super::skip_ac`]), then an
//! IDCT of that size from the low frequencies (libjpeg's scaled IDCT: the
//! block's DCT read as an `n`-point one). Cheaper than `jpeg-decoder`'s
//! scaled path, which decodes every coefficient, and on one thread.

use std::f32::consts::PI;
use std::io::Read;

use super::bits::{Bits, Input};
use super::header::{FastAc, EOB, LOOKAHEAD, MASK};
use super::{corrupt, dc_first, skip_ac, Part};
use crate::images::ImageError;

/// The natural (row-major) index of each coefficient in zigzag order.
const ZIGZAG: [u8; 64] = [
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20,
    13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59,
    52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
];

/// Not a coefficient the block's size needs.
pub(super) const UNWANTED: u8 = 255;

/// A component's block size at this scale: which coefficients it needs and
/// its IDCT's two matrices.
pub(super) struct Geometry {
    /// Samples a block, across and down (1 to 8).
    pub nx: usize,
    pub ny: usize,
    /// By zigzag index: the coefficient's natural index, or [`UNWANTED`].
    slot: [u8; 64],
    /// By zigzag index: its place among the `nx`×`ny` kept ones (row by
    /// row), or [`UNWANTED`]; and by that place, its zigzag index.
    pub compact: [u8; 64],
    zigzag_of: [u8; 64],
    /// The kept ones' zigzag indices, as bits.
    pub kept: u64,
    /// The last zigzag index needed: past it, the block is skipped.
    last: usize,
    /// `n`-point IDCT matrices: across as `[u][x]`, down as `[y][v]`.
    across_t: [[f32; 8]; 8],
    down: [[f32; 8]; 8],
}

impl Geometry {
    pub(super) fn new(nx: usize, ny: usize) -> Geometry {
        let mut slot = [UNWANTED; 64];
        let mut compact = [UNWANTED; 64];
        let mut zigzag_of = [0u8; 64];
        let mut kept = 0u64;
        let mut last = 0;
        for (k, &natural) in ZIGZAG.iter().enumerate() {
            let (row, col) = (usize::from(natural) / 8, usize::from(natural) % 8);
            if row < ny && col < nx {
                slot[k] = natural;
                let place = row * nx + col;
                compact[k] = u8::try_from(place).unwrap_or(UNWANTED);
                zigzag_of[place] = u8::try_from(k).unwrap_or(0);
                kept |= 1 << k;
                last = k;
            }
        }
        Geometry {
            nx,
            ny,
            slot,
            compact,
            zigzag_of,
            kept,
            last,
            across_t: transposed(matrix(nx)),
            down: matrix(ny),
        }
    }
}

/// The `n`-point IDCT of the first `n` of an 8-point DCT's coefficients,
/// scaled as the 8-point one (a flat block keeps its mean):
/// `½ C(u) cos((2x + 1) u π / 2n)`, with `C(0) = 1/√2`.
fn matrix(n: usize) -> [[f32; 8]; 8] {
    let mut m = [[0f32; 8]; 8];
    for (x, row) in m.iter_mut().enumerate().take(n) {
        for (u, cell) in row.iter_mut().enumerate().take(n) {
            let c = if u == 0 { 0.5f32.sqrt() } else { 1.0 };
            let angle = small(2 * x + 1) * small(u) * PI / small(2 * n);
            *cell = 0.5 * c * angle.cos();
        }
    }
    m
}

/// A small count (an index in a block) as a float.
fn small(v: usize) -> f32 {
    f32::from(u16::try_from(v).unwrap_or(u16::MAX))
}

/// A coefficient times its step, as a float.
#[allow(
    clippy::cast_precision_loss,
    reason = "a well-formed file's products are within 2^24 (16-bit coefficients, \
              8-bit steps); a malformed one's lose low bits, harmlessly"
)]
fn dequantise(value: i32, step: i32) -> f32 {
    value.saturating_mul(step) as f32
}

fn transposed(m: [[f32; 8]; 8]) -> [[f32; 8]; 8] {
    let mut t = [[0f32; 8]; 8];
    for (i, row) in m.iter().enumerate() {
        for (j, &cell) in row.iter().enumerate() {
            t[j][i] = cell;
        }
    }
    t
}

/// Decodes one block of a sequential scan into `out` (`nx`×`ny` samples,
/// rows `stride` apart).
#[inline]
pub(super) fn block<R: Read>(
    part: &mut Part<'_>,
    bits: &mut Bits,
    input: &mut Input<R>,
    geometry: &Geometry,
    out: &mut [u8],
    stride: usize,
) -> Result<(), ImageError> {
    let dc = dc_first(part, bits, input)?;
    let ac = part
        .ac
        .ok_or_else(|| corrupt("a scan uses a table not defined"))?;
    let quant = part.steps;
    let fast: &[FastAc; 1 << LOOKAHEAD] = &ac.values;
    let mut coefficients = [0f32; 64];
    coefficients[0] = dequantise(dc, quant[0]);
    // The extent of the nonzero coefficients, rows and columns.
    let (mut rows, mut cols) = (1usize, 1usize);
    let mut k = 1usize;
    let mut ended = false;
    while k <= geometry.last {
        bits.fill(input)?;
        let entry = fast[bits.peek(LOOKAHEAD) & MASK];
        let (run, value) = if entry.len > 0 {
            bits.consume(u32::from(entry.len));
            if entry.run == EOB {
                ended = true;
                break;
            }
            (usize::from(entry.run), i32::from(entry.value))
        } else {
            let symbol = ac.symbol(bits)?;
            let (run, size) = (usize::from(symbol >> 4), u32::from(symbol & 15));
            if size == 0 && run != 15 {
                ended = true;
                break;
            }
            (run, bits.extend(size))
        };
        k += run;
        if k > 63 {
            // Past the block's end: made-up bits, as `skip_ac` stops.
            ended = true;
            break;
        }
        let natural = geometry.slot[k];
        if natural != UNWANTED && value != 0 {
            let natural = usize::from(natural);
            coefficients[natural] = dequantise(value, quant[k]);
            rows = rows.max(natural / 8 + 1);
            cols = cols.max(natural % 8 + 1);
        }
        k += 1;
    }
    if !ended && k < 64 {
        skip_ac(ac, bits, input, u32::try_from(k).unwrap_or(64))?;
    }
    idct(&coefficients, rows, cols, geometry, out, stride);
    Ok(())
}

/// A progressive block's samples: its DC coefficient and its kept ones
/// (`values`, by [`Geometry::compact`] place), dequantised by `steps`.
pub(super) fn dequantised(
    dc: i32,
    values: &[i16],
    steps: &[i32; 64],
    geometry: &Geometry,
    out: &mut [u8],
    stride: usize,
) {
    let mut coefficients = [0f32; 64];
    coefficients[0] = dequantise(dc, steps[0]);
    let (mut rows, mut cols) = (1usize, 1usize);
    for (place, &value) in values.iter().enumerate() {
        let k = usize::from(geometry.zigzag_of[place]);
        if value == 0 || k == 0 {
            continue;
        }
        let (row, col) = (place / geometry.nx, place % geometry.nx);
        coefficients[row * 8 + col] = dequantise(i32::from(value), steps[k]);
        rows = rows.max(row + 1);
        cols = cols.max(col + 1);
    }
    idct(&coefficients, rows, cols, geometry, out, stride);
}

/// The block's samples from its coefficients (nonzero only in the first
/// `rows` × `cols`): a flat block filled, else the IDCT of its size.
fn idct(
    coefficients: &[f32; 64],
    rows: usize,
    cols: usize,
    geometry: &Geometry,
    out: &mut [u8],
    stride: usize,
) {
    if rows == 1 && cols == 1 {
        let flat = sample(coefficients[0] / 8.0);
        for y in 0..geometry.ny {
            out[y * stride..y * stride + geometry.nx].fill(flat);
        }
        return;
    }
    let block = Block {
        coefficients,
        rows,
        cols,
        geometry,
    };
    // Each size a loop of fixed length, which the compiler unrolls.
    match (geometry.nx, geometry.ny) {
        (2, 2) => block.idct::<2, 2>(out, stride),
        (4, 4) => block.idct::<4, 4>(out, stride),
        (4, 2) => block.idct::<4, 2>(out, stride),
        (2, 4) => block.idct::<2, 4>(out, stride),
        (8, 4) => block.idct::<8, 4>(out, stride),
        (4, 8) => block.idct::<4, 8>(out, stride),
        (8, 2) => block.idct::<8, 2>(out, stride),
        (2, 8) => block.idct::<2, 8>(out, stride),
        (8, 8) => block.idct::<8, 8>(out, stride),
        // At 3/8: the luma's blocks and a chroma's subsampled by 2.
        (3, 3) => block.idct::<3, 3>(out, stride),
        (6, 6) => block.idct::<6, 6>(out, stride),
        (6, 3) => block.idct::<6, 3>(out, stride),
        (3, 6) => block.idct::<3, 6>(out, stride),
        // A sampling factor of 3 (allowed, rare) gives 6×2, 6×4, 2×6 and
        // the like: sizes of their own, once written as 8×8 past the block.
        (nx, ny) => block.idct_any(nx.min(8), ny.min(8), out, stride),
    }
}

/// A sample from the IDCT's value: around 128, rounded to the nearest (a
/// cast truncates, and is done on a value already in range: no `floor`).
#[inline]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "clamped to 0..=255 first: the cast truncates a value in range"
)]
fn sample(v: f32) -> u8 {
    (v + 128.5).clamp(0.0, 255.0) as u8
}

/// One block's coefficients, as [`idct`] was given them.
struct Block<'a> {
    coefficients: &'a [f32; 64],
    rows: usize,
    cols: usize,
    geometry: &'a Geometry,
}

impl Block<'_> {
    /// The `NX`×`NY` IDCT (`NX`, `NY` the geometry's): [`Block::idct_any`]
    /// of a size known when compiled, whose loops the compiler unrolls.
    #[inline]
    fn idct<const NX: usize, const NY: usize>(&self, out: &mut [u8], stride: usize) {
        self.idct_any(NX, NY, out, stride);
    }

    /// The `nx`×`ny` IDCT (at most 8 each): across each row of
    /// coefficients, then down, each a sum of rows of the matrix weighted
    /// by a coefficient.
    #[allow(
        clippy::inline_always,
        reason = "inlined into each fixed size's `idct`, whose constant sizes then unroll \
                  its loops: renders as fast as the const-generic copy it replaced (A/B)"
    )]
    #[inline(always)]
    fn idct_any(&self, nx: usize, ny: usize, out: &mut [u8], stride: usize) {
        let (rows, cols) = (self.rows.min(ny), self.cols.min(nx));
        let mut across = [[0f32; 8]; 8];
        for (v, row) in across.iter_mut().enumerate().take(rows) {
            for u in 0..cols {
                let c = self.coefficients[v * 8 + u];
                let basis = &self.geometry.across_t[u];
                for x in 0..nx {
                    row[x] += basis[x] * c;
                }
            }
        }
        for y in 0..ny {
            let mut line = [0f32; 8];
            let weights = &self.geometry.down[y];
            for (v, row) in across.iter().enumerate().take(rows) {
                for x in 0..nx {
                    line[x] += weights[v] * row[x];
                }
            }
            let target = &mut out[y * stride..y * stride + nx];
            for (t, v) in target.iter_mut().zip(line) {
                *t = sample(v);
            }
        }
    }
}
