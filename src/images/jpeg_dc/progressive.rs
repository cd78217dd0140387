//! A progressive JPEG at 1/4, 3/8 or 1/2 scale: its AC scans decoded (first
//! scans and refinements, as libjpeg's `decode_mcu_AC_first` and
//! `decode_mcu_AC_refine`), but of each block only the coefficients its
//! scaled IDCT reads are kept (4, 9 or 16 of 64 for luma), with a bit a
//! coefficient saying which are nonzero (what a refinement scan's bits
//! depend on). `jpeg-decoder` keeps every coefficient, as 16-bit words, and
//! refines them bit by bit: the decode here holds a fraction of its memory.

use crate::images::zeroed::zeroed;
use std::io::Read;

use super::bits::{Bits, Input};
use super::header::{Band, Huffman};
use super::scaled::{self, Geometry, UNWANTED};
use super::Plane;
use crate::images::ImageError;

/// A component's coefficients so far, block by block: the kept ones (by
/// the geometry's slots) and, by zigzag index, which are nonzero.
pub(super) struct Spectra {
    values: Vec<i16>,
    nonzero: Vec<u64>,
    slots: usize,
}

impl Spectra {
    pub(super) fn new(blocks: usize, geometry: &Geometry) -> Spectra {
        let slots = geometry.nx * geometry.ny;
        Spectra {
            values: zeroed(blocks * slots),
            nonzero: zeroed(blocks),
            slots,
        }
    }

    /// Block `block`'s kept coefficients and its nonzero word.
    fn block(&mut self, block: usize) -> (&mut [i16], &mut u64) {
        let values = &mut self.values[block * self.slots..(block + 1) * self.slots];
        (values, &mut self.nonzero[block])
    }

    /// Block `block`'s kept coefficients.
    fn kept(&self, block: usize) -> &[i16] {
        &self.values[block * self.slots..(block + 1) * self.slots]
    }
}

/// An AC scan's state across its blocks: the blocks left in an end-of-band
/// run.
#[derive(Default)]
pub(super) struct Run {
    pub blocks_left: u32,
}

/// Reads `n` bits (up to 16) as an unsigned number.
#[inline]
fn take<R: Read>(bits: &mut Bits, input: &mut Input<R>, n: u32) -> Result<u32, ImageError> {
    if n == 0 {
        return Ok(0);
    }
    if bits.count < n {
        bits.fill(input)?;
    }
    let v = u32::try_from(bits.peek(n)).unwrap_or(0);
    bits.consume(n);
    Ok(v)
}

/// The blocks an end-of-band code with `r` stands for: `2^r` plus `r` bits.
fn end_of_band<R: Read>(bits: &mut Bits, input: &mut Input<R>, r: u32) -> Result<u32, ImageError> {
    Ok((1 << r) + take(bits, input, r)?)
}

/// Decodes block `block`'s part of a first AC scan of `band`.
#[allow(clippy::too_many_arguments)]
pub(super) fn first<R: Read>(
    ac: &Huffman,
    bits: &mut Bits,
    input: &mut Input<R>,
    band: Band,
    run: &mut Run,
    geometry: &Geometry,
    spectra: &mut Spectra,
    block: usize,
) -> Result<(), ImageError> {
    if run.blocks_left > 0 {
        run.blocks_left -= 1;
        return Ok(());
    }
    let (values, nonzero) = spectra.block(block);
    let mut k = usize::from(band.start);
    let end = usize::from(band.end);
    while k <= end {
        bits.fill(input)?;
        let symbol = ac.symbol(bits)?;
        let (r, s) = (u32::from(symbol >> 4), u32::from(symbol & 15));
        if s == 0 {
            if r == 15 {
                k += 16;
                continue;
            }
            run.blocks_left = end_of_band(bits, input, r)? - 1;
            break;
        }
        k += r as usize;
        if k > 63 {
            break;
        }
        let value = bits.extend(s).wrapping_shl(u32::from(band.low));
        *nonzero |= 1 << k;
        let slot = geometry.compact[k];
        if slot != UNWANTED {
            values[usize::from(slot)] = coefficient(value);
        }
        k += 1;
    }
    Ok(())
}

/// A coefficient in 16 bits, as libjpeg keeps them: only a malformed file's
/// go past, and wrap as there.
#[allow(
    clippy::cast_possible_truncation,
    reason = "wrapping is the meaning: libjpeg's JCOEF"
)]
fn coefficient(value: i32) -> i16 {
    value as i16
}

/// Decodes block `block`'s part of an AC refinement scan of `band`.
#[allow(clippy::too_many_arguments)]
pub(super) fn refine<R: Read>(
    ac: &Huffman,
    bits: &mut Bits,
    input: &mut Input<R>,
    band: Band,
    run: &mut Run,
    geometry: &Geometry,
    spectra: &mut Spectra,
    block: usize,
) -> Result<(), ImageError> {
    let (values, nonzero) = spectra.block(block);
    let p1 = 1i16.wrapping_shl(u32::from(band.low));
    let end = u32::from(band.end);
    // The band's coefficients from zigzag index `k` on, as bits.
    let band_from = |k: u32| {
        let upto = u64::MAX >> (63 - end);
        u64::MAX.checked_shl(k).unwrap_or(0) & upto
    };
    let mut k = u32::from(band.start);
    if run.blocks_left == 0 {
        while k <= end {
            bits.fill(input)?;
            let symbol = ac.symbol(bits)?;
            let (r, s) = (u32::from(symbol >> 4), u32::from(symbol & 15));
            let mut new = 0i16;
            if s != 0 {
                new = if take(bits, input, 1)? == 1 { p1 } else { -p1 };
            } else if r != 15 {
                run.blocks_left = end_of_band(bits, input, r)?;
                break;
            }
            // Past the nonzero coefficients (each with its correction bit)
            // and `r` zero ones, to the zero one that becomes `new` (past
            // the band if there are not so many).
            let ahead = band_from(k);
            let mut zeros = !*nonzero & ahead;
            for _ in 0..r {
                zeros &= zeros.wrapping_sub(1);
            }
            let target = if zeros == 0 {
                end + 1
            } else {
                zeros.trailing_zeros()
            };
            let before = ahead & !u64::MAX.checked_shl(target).unwrap_or(0);
            corrections(*nonzero & before, bits, input, values, geometry, p1)?;
            k = target;
            if new != 0 && k <= end {
                *nonzero |= 1 << k;
                let slot = geometry.compact[k as usize];
                if slot != UNWANTED {
                    values[usize::from(slot)] = new;
                }
            }
            k += 1;
        }
    }
    if run.blocks_left > 0 {
        // In an end-of-band run: the nonzero coefficients' corrections.
        corrections(*nonzero & band_from(k), bits, input, values, geometry, p1)?;
        run.blocks_left -= 1;
    }
    Ok(())
}

/// Reads a correction bit for each coefficient in `nonzero` (zigzag
/// indices as bits, in order), and applies those of the kept ones: the
/// bits are read up to 32 at once, and only looked at one by one when a
/// kept coefficient is among them.
fn corrections<R: Read>(
    mut nonzero: u64,
    bits: &mut Bits,
    input: &mut Input<R>,
    values: &mut [i16],
    geometry: &Geometry,
    p1: i16,
) -> Result<(), ImageError> {
    while nonzero != 0 {
        bits.fill(input)?;
        let n = nonzero.count_ones().min(32);
        let word = bits.peek(n);
        bits.consume(n);
        if nonzero & geometry.kept == 0 && n == nonzero.count_ones() {
            return Ok(());
        }
        for i in (0..n).rev() {
            let k = nonzero.trailing_zeros() as usize;
            nonzero &= nonzero - 1;
            if (word >> i) & 1 == 1 {
                correct(values, geometry.compact[k], p1);
            }
        }
    }
    Ok(())
}

/// A nonzero coefficient's correction bit of 1: one more bit (`p1`) of
/// magnitude, unless it has it (kept coefficients only: the others'
/// magnitudes are not needed).
fn correct(values: &mut [i16], slot: u8, p1: i16) {
    if slot == UNWANTED {
        return;
    }
    let v = &mut values[usize::from(slot)];
    if *v & p1 == 0 {
        *v = if *v >= 0 {
            v.wrapping_add(p1)
        } else {
            v.wrapping_sub(p1)
        };
    }
}

/// Once every scan is read: each block of `plane` dequantised (its DC
/// coefficient from `dc`) and through the scaled IDCT into its samples.
pub(super) fn finish(plane: &mut Plane, steps: &[i32; 64]) {
    let (Some(geometry), Some(spectra)) = (&plane.geometry, &plane.spectra) else {
        return;
    };
    let stride = plane.stride;
    for (block, &dc) in plane.coefficients.iter().enumerate() {
        let (row, col) = (block / plane.width, block % plane.width);
        let values = spectra.kept(block);
        let start = row * geometry.ny * stride + col * geometry.nx;
        scaled::dequantised(
            dc,
            values,
            steps,
            geometry,
            &mut plane.values[start..],
            stride,
        );
    }
}
