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
        BoxShrink {
            k,
            width,
            channels,
            alpha: matches!(channels, 2 | 4).then(|| channels - 1),
            sample_bytes,
            sums: vec![0; out_width * channels],
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
        for (block, sums) in row.chunks(k * pixel).zip(self.sums.chunks_exact_mut(c)) {
            match (self.sample_bytes, self.alpha) {
                (1, None) => {
                    for p in block.chunks_exact(c) {
                        for (s, &v) in sums.iter_mut().zip(p) {
                            *s += u64::from(v);
                        }
                    }
                }
                (1, Some(a)) => {
                    for p in block.chunks_exact(c) {
                        let alpha = u64::from(p[a]);
                        for (s, &v) in sums[..a].iter_mut().zip(&p[..a]) {
                            *s += u64::from(v) * alpha;
                        }
                        sums[a] += alpha;
                    }
                }
                _ => {
                    let sample = |p: &[u8], i: usize| {
                        u64::from(u16::from_be_bytes([p[2 * i], p[2 * i + 1]]))
                    };
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
    /// bottom edge) as one output row.
    fn emit(&mut self) {
        let (c, rows) = (self.channels, self.rows_in_block as u64);
        let max: u64 = if self.sample_bytes == 2 { 65535 } else { 255 };
        let out_width = self.sums.len() / c;
        for (x, sums) in self.sums.chunks_exact_mut(c).enumerate() {
            // The block's pixels: a block at the right edge may be narrower.
            let cols = (self.width - x * self.k).min(self.k) as u64;
            let count = cols * rows;
            let to8 = |sum: u64, of: u64| -> u8 {
                // round(sum / of × 255 / max)
                let den = of * max;
                u8::try_from((sum * 255 + den / 2) / den).unwrap_or(u8::MAX)
            };
            match self.alpha {
                None => {
                    for s in sums.iter() {
                        self.out.push(to8(*s, count));
                    }
                }
                Some(a) => {
                    let alpha = sums[a];
                    for s in &sums[..a] {
                        // Colour weighted by alpha: its sum is in max² units.
                        self.out.push(if alpha == 0 { 0 } else { to8(*s, alpha) });
                    }
                    self.out.push(to8(alpha, count));
                }
            }
            sums.fill(0);
        }
        debug_assert_eq!(self.out.len() % (out_width * c), 0);
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
            prop_assert_eq!(got, want);
        }
    }
}
