//! Shrink on load by a whole factor, a row at a time: each `k`×`k` block of
//! the source becomes one pixel, the mean of its pixels (a block at the right
//! or bottom edge is the mean of what it has). libvips shrinks a PNG so
//! before its Lanczos3 step (`vips_shrink`, then `vips_reduce`): the whole
//! picture is never held, only one row of sums, and the resize after starts
//! from a picture `k`² times smaller.
//!
//! Colour is averaged weighted by alpha (transparent pixels lend no
//! colour, as the resize's premultiplied resampling does); samples of 8 or
//! 16 bits in, 8 bits out (what the resize takes).

/// One output row's running sums, and the output so far.
pub(super) struct BoxShrink {
    k: usize,
    width: usize,
    channels: usize,
    /// The alpha sample's index in a pixel, if it has one.
    alpha: Option<usize>,
    /// 2 for big-endian 16-bit samples, else 1.
    sample_bytes: usize,
    /// Per output pixel and channel; colour sums are alpha-weighted.
    sums: Vec<u64>,
    /// 8-bit samples without alpha: per source sample, the block row's
    /// column sums (at most 255 × 255), added a row at a time as one
    /// stretch of memory (vectorised), folded into `sums` once a block
    /// row. Empty otherwise.
    columns: Vec<u16>,
    rows_in_block: usize,
    out: Vec<u8>,
}

/// The largest factor taken: sums then stay far within `u64`.
pub(super) const MAX_FACTOR: u32 = 255;

impl BoxShrink {
    /// A shrink by `k` (at most [`MAX_FACTOR`]) of rows `width` pixels wide,
    /// `channels` samples a pixel (1 to 4; the last is alpha for 2 and 4),
    /// `sample_bytes` bytes a sample (1, or 2 big-endian), into
    /// `out_height` output rows.
    pub(super) fn new(
        k: u32,
        width: u32,
        channels: usize,
        sample_bytes: usize,
        out_height: u32,
    ) -> BoxShrink {
        let k = k.clamp(1, MAX_FACTOR) as usize;
        let width = width as usize;
        let out_width = width.div_ceil(k);
        let alpha = matches!(channels, 2 | 4).then(|| channels - 1);
        let by_columns = sample_bytes == 1 && alpha.is_none();
        BoxShrink {
            k,
            width,
            channels,
            alpha,
            sample_bytes,
            sums: vec![0; out_width * channels],
            columns: vec![0; if by_columns { width * channels } else { 0 }],
            rows_in_block: 0,
            out: Vec::with_capacity(out_width * channels * out_height as usize),
        }
    }

    /// The output's width for a source `width` wide shrunk by `k`.
    pub(super) fn out_side(side: u32, k: u32) -> u32 {
        side.div_ceil(k.clamp(1, MAX_FACTOR))
    }

    /// Adds a source row (`width` × channels × sample bytes, or longer:
    /// the rest is ignored).
    pub(super) fn push_row(&mut self, row: &[u8]) {
        let (c, k) = (self.channels, self.k);
        let pixel = c * self.sample_bytes;
        let row = &row[..self.width * pixel];
        match (self.sample_bytes, c) {
            _ if !self.columns.is_empty() => {
                for (s, v) in self.columns.iter_mut().zip(row) {
                    *s += u16::from(*v);
                }
            }
            (1, 2) => add_row8::<2>(row, &mut self.sums, k),
            (1, 4) => add_row8::<4>(row, &mut self.sums, k),
            _ => {
                let sample =
                    |p: &[u8], i: usize| u64::from(u16::from_be_bytes([p[2 * i], p[2 * i + 1]]));
                for (block, sums) in row.chunks(k * pixel).zip(self.sums.chunks_exact_mut(c)) {
                    for p in block.chunks_exact(pixel) {
                        let alpha = self.alpha.map(|a| sample(p, a));
                        for (i, s) in sums.iter_mut().enumerate() {
                            *s += match alpha {
                                Some(w) if Some(i) != self.alpha => sample(p, i) * w,
                                _ => sample(p, i),
                            };
                        }
                    }
                }
            }
        }
        self.rows_in_block += 1;
        if self.rows_in_block == k {
            self.emit();
        }
    }

    /// Writes the block row summed so far (fewer than `k` rows at the
    /// bottom edge) as one output row. A mean is a multiplication by a
    /// 32.32 fixed-point reciprocal (within half a level of exact): one
    /// division a block row, or a pixel with alpha, where a division a
    /// sample took most of the shrink's time.
    fn emit(&mut self) {
        match self.channels {
            _ if self.columns.is_empty() => {}
            1 => fold::<1>(&self.columns, &mut self.sums, self.k),
            _ => fold::<3>(&self.columns, &mut self.sums, self.k),
        }
        self.columns.fill(0);
        let c = self.channels;
        let max: u64 = if self.sample_bytes == 2 { 65535 } else { 255 };
        let rows = self.rows_in_block as u64;
        // 2^32 × 255 / (max × pixels), rounded: sum × it >> 32 is the mean
        // in 8 bits. A sum is at most max × pixels: the product < 2^40.
        let reciprocal = |pixels: u64| ((255u64 << 32) + max * pixels / 2) / (max * pixels);
        let to8 = |sum: u64, r: u64| {
            u8::try_from(((sum * r + (1 << 31)) >> 32).min(255)).unwrap_or(u8::MAX)
        };
        let blocks = self.sums.len() / c;
        let full = reciprocal(rows * self.k as u64);
        let edge = reciprocal(rows * (self.width - (blocks - 1) * self.k) as u64);
        let start = self.out.len();
        self.out.resize(start + self.sums.len(), 0);
        let out = &mut self.out[start..];
        let pixels = self.sums.chunks_exact(c).zip(out.chunks_exact_mut(c));
        for (x, (sums, out)) in pixels.enumerate() {
            let r = if x + 1 == blocks { edge } else { full };
            match self.alpha {
                None => {
                    for (o, s) in out.iter_mut().zip(sums) {
                        *o = to8(*s, r);
                    }
                }
                Some(a) => {
                    let alpha = sums[a];
                    if alpha > 0 {
                        weighted(&mut out[..a], &sums[..a], max * alpha);
                    }
                    out[a] = to8(alpha, r);
                }
            }
        }
        self.sums.fill(0);
        self.rows_in_block = 0;
    }

    /// The output's samples, 8 bits each (the last block row emitted even
    /// if short).
    pub(super) fn finish(mut self) -> Vec<u8> {
        if self.rows_in_block > 0 {
            self.emit();
        }
        self.out
    }
}

/// Colour weighted by alpha: each colour sum (of colour × alpha, at most
/// `of`) over `of` (max × the alpha sum), in 8 bits. In `f64`, exact enough
/// where a fixed-point reciprocal of so large a divisor is not.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "sums below 2^53; the mean is clamped to 0..=255 before the cast"
)]
fn weighted(out: &mut [u8], sums: &[u64], of: u64) {
    let scale = 255.0 / of as f64;
    for (o, s) in out.iter_mut().zip(sums) {
        *o = (*s as f64 * scale + 0.5).clamp(0.0, 255.0) as u8;
    }
}

/// Adds column sums of pixels of `C` samples to `sums`, `k` pixels to a
/// block.
fn fold<const C: usize>(columns: &[u16], sums: &mut [u64], k: usize) {
    for (block, sums) in columns.chunks(k * C).zip(sums.chunks_exact_mut(C)) {
        let mut acc = [0u64; C];
        for p in block.chunks_exact(C) {
            for (a, v) in acc.iter_mut().zip(p) {
                *a += u64::from(*v);
            }
        }
        for (s, a) in sums.iter_mut().zip(acc) {
            *s += a;
        }
    }
}

/// Adds a row of 8-bit pixels of `C` samples, the last alpha, to `sums`
/// (colour weighted by alpha), `k` pixels to a block: each block summed in
/// 32 bits first (`C` known, the loop unrolled), then added.
fn add_row8<const C: usize>(row: &[u8], sums: &mut [u64], k: usize) {
    for (block, sums) in row.chunks(k * C).zip(sums.chunks_exact_mut(C)) {
        let mut acc = [0u32; C];
        for p in block.chunks_exact(C) {
            let alpha = u32::from(p[C - 1]);
            for (a, v) in acc[..C - 1].iter_mut().zip(p) {
                *a += u32::from(*v) * alpha;
            }
            acc[C - 1] += alpha;
        }
        for (s, a) in sums.iter_mut().zip(acc) {
            *s += u64::from(a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A source for the definition: `width`×`height` pixels of `channels`
    /// samples, `sample_bytes` each.
    struct Source<'a> {
        bytes: &'a [u8],
        width: usize,
        height: usize,
        channels: usize,
        sample_bytes: usize,
    }

    impl Source<'_> {
        fn at(&self, x: usize, y: usize, i: usize) -> u128 {
            let o = ((y * self.width + x) * self.channels + i) * self.sample_bytes;
            if self.sample_bytes == 2 {
                u128::from(u16::from_be_bytes([self.bytes[o], self.bytes[o + 1]]))
            } else {
                u128::from(self.bytes[o])
            }
        }

        /// The mean of each `factor`² block, by the definition
        /// (alpha-weighted colour), rounded, in 8 bits.
        fn means(&self, factor: usize) -> Vec<u8> {
            let max: u128 = if self.sample_bytes == 2 { 65535 } else { 255 };
            let alpha = matches!(self.channels, 2 | 4).then(|| self.channels - 1);
            let rounded = |num: u128, den: u128| {
                u8::try_from((num * 255 * 2 + den * max) / (2 * den * max)).unwrap()
            };
            let mut out = vec![];
            for by in (0..self.height).step_by(factor) {
                for bx in (0..self.width).step_by(factor) {
                    let block: Vec<(usize, usize)> = (by..(by + factor).min(self.height))
                        .flat_map(|y| (bx..(bx + factor).min(self.width)).map(move |x| (x, y)))
                        .collect();
                    let sum = |f: &dyn Fn(usize, usize) -> u128| -> u128 {
                        block.iter().map(|&(x, y)| f(x, y)).sum()
                    };
                    for i in 0..self.channels {
                        out.push(match alpha {
                            Some(a) if i != a => {
                                let weight = sum(&|x, y| self.at(x, y, a));
                                if weight == 0 {
                                    0
                                } else {
                                    rounded(
                                        sum(&|x, y| self.at(x, y, i) * self.at(x, y, a)),
                                        weight,
                                    )
                                }
                            }
                            _ => rounded(sum(&|x, y| self.at(x, y, i)), block.len() as u128),
                        });
                    }
                }
            }
            out
        }
    }

    fn shrink(source: &Source, factor: u32) -> Vec<u8> {
        let side = |n: usize| u32::try_from(n).unwrap();
        let out_h = BoxShrink::out_side(side(source.height), factor);
        let mut boxes = BoxShrink::new(
            factor,
            side(source.width),
            source.channels,
            source.sample_bytes,
            out_h,
        );
        let row = source.width * source.channels * source.sample_bytes;
        for line in source.bytes.chunks_exact(row) {
            boxes.push_row(line);
        }
        boxes.finish()
    }

    fn source(
        bytes: &[u8],
        width: usize,
        height: usize,
        channels: usize,
        wide: bool,
    ) -> Source<'_> {
        Source {
            bytes,
            width,
            height,
            channels,
            sample_bytes: if wide { 2 } else { 1 },
        }
    }

    #[test]
    fn a_block_is_its_mean_and_edges_mean_what_they_hold() {
        // 3×3 grey, k = 2: blocks of 4, 2, 2 and 1 pixels.
        let src = [0, 10, 20, 30, 40, 50, 60, 70, 80];
        assert_eq!(
            shrink(&source(&src, 3, 3, 1, false), 2),
            vec![20, 35, 65, 80]
        );
    }

    #[test]
    fn transparent_pixels_lend_no_colour() {
        // Grey + alpha: 200 opaque beside a transparent 0.
        let src = [200, 255, 0, 0];
        assert_eq!(shrink(&source(&src, 2, 1, 2, false), 2), vec![200, 128]);
        // All transparent: colour 0, alpha 0.
        assert_eq!(
            shrink(&source(&[9, 0, 7, 0], 2, 1, 2, false), 2),
            vec![0, 0]
        );
    }

    #[test]
    fn sixteen_bits_come_out_as_eight() {
        let src = [0xff, 0xff, 0x00, 0x00, 0x80, 0x00, 0x80, 0x00];
        // Two pixels of grey 16: (65535 + 0) / 2 → 128; (32768 + 32768) / 2 → 128.
        assert_eq!(shrink(&source(&src, 2, 2, 1, true), 2), vec![128]);
    }

    proptest! {
        #[test]
        fn matches_the_definition(
            w in 1usize..23, h in 1usize..23, c in 1usize..5, wide in any::<bool>(),
            k in 1u32..9, seed in any::<u64>(),
        ) {
            let mut x = seed | 1;
            let len = w * h * c * if wide { 2 } else { 1 };
            let bytes: Vec<u8> = (0..len)
                .map(|_| { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x.to_le_bytes()[3] })
                .collect();
            let src = source(&bytes, w, h, c, wide);
            let got = shrink(&src, k);
            let want = src.means(k as usize);
            // Fixed-point means: within one level of the exact rounding.
            prop_assert_eq!(got.len(), want.len());
            for (g, n) in got.iter().zip(&want) {
                prop_assert!(g.abs_diff(*n) <= 1, "{} vs {}", g, n);
            }
        }
    }
}
