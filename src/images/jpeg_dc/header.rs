//! The markers before a scan: the frame, its tables, its scans; and the
//! Huffman tables in the form the 1/8-scale decoder looks codes up in.

use super::bits::Bits;
use super::corrupt;
use crate::images::ImageError;

/// The bits looked up at once when decoding a Huffman code.
pub(super) const LOOKAHEAD: u32 = 12;
/// The entries of a lookup table, and the mask that keeps an index in it
/// (so that the lookups need no bounds check).
pub(super) const ENTRIES: usize = 1 << LOOKAHEAD;
pub(super) const MASK: usize = ENTRIES - 1;

/// One component of the frame.
#[derive(Clone, Copy)]
pub(super) struct Component {
    pub id: u8,
    pub h: usize,
    pub v: usize,
    pub quant: usize,
}

/// What the markers before the scan said.
#[derive(Default)]
pub(super) struct Header {
    pub width: usize,
    pub height: usize,
    pub components: Vec<Component>,
    /// The DC step of each quantisation table (all a 1/8 decode needs),
    /// and its every step, in zigzag order (for the larger scales).
    pub dc_quant: [Option<i32>; 4],
    pub steps: [Steps; 4],
    pub dc_tables: [Option<Huffman>; 4],
    pub ac_tables: [Option<Huffman>; 4],
    pub restart_interval: usize,
    /// A progressive frame (SOF2): only its DC scans are decoded.
    pub progressive: bool,
    /// The Adobe marker's colour transform: 0 means the components are RGB.
    adobe_transform: Option<u8>,
}

impl Header {
    /// SOF0/SOF1, or SOF2 when `progressive`; `false` for a frame left to
    /// `jpeg-decoder`.
    pub(super) fn frame(&mut self, s: &[u8], progressive: bool) -> Result<bool, ImageError> {
        if self.width != 0 {
            return Err(corrupt("two frame headers"));
        }
        self.progressive = progressive;
        if s.len() < 6 {
            return Err(corrupt("a short frame header"));
        }
        let count = usize::from(s[5]);
        if s[0] != 8 || !(count == 1 || count == 3) {
            return Ok(false);
        }
        if s.len() < 6 + 3 * count {
            return Err(corrupt("a short frame header"));
        }
        self.height = usize::from(u16::from_be_bytes([s[1], s[2]]));
        self.width = usize::from(u16::from_be_bytes([s[3], s[4]]));
        if self.height == 0 {
            // The height comes later (a DNL marker): rare, not here.
            return Ok(false);
        }
        if self.width == 0 {
            return Err(corrupt("a frame of width 0"));
        }
        for c in s[6..6 + 3 * count].chunks_exact(3) {
            let (h, v) = (usize::from(c[1] >> 4), usize::from(c[1] & 15));
            if !(1..=4).contains(&h) || !(1..=4).contains(&v) || c[2] > 3 {
                return Err(corrupt("a component's sampling or table is out of range"));
            }
            self.components.push(Component {
                id: c[0],
                h,
                v,
                quant: usize::from(c[2]),
            });
        }
        Ok(true)
    }

    pub(super) fn huffman(&mut self, mut s: &[u8]) -> Result<(), ImageError> {
        while !s.is_empty() {
            if s.len() < 17 {
                return Err(corrupt("a short Huffman table"));
            }
            let (class, id) = (s[0] >> 4, usize::from(s[0] & 15));
            let mut counts = [0u8; 16];
            counts.copy_from_slice(&s[1..17]);
            let total: usize = counts.iter().map(|&c| usize::from(c)).sum();
            if class > 1 || id > 3 || total > 256 || s.len() < 17 + total {
                return Err(corrupt("a malformed Huffman table"));
            }
            let table = Huffman::new(&counts, &s[17..17 + total], class == 1)?;
            if class == 0 {
                self.dc_tables[id] = Some(table);
            } else {
                self.ac_tables[id] = Some(table);
            }
            s = &s[17 + total..];
        }
        Ok(())
    }

    pub(super) fn quantization(&mut self, mut s: &[u8]) -> Result<(), ImageError> {
        while !s.is_empty() {
            let (precision, id) = (s[0] >> 4, usize::from(s[0] & 15));
            let len = if precision == 0 { 64 } else { 128 };
            if precision > 1 || id > 3 || s.len() < 1 + len {
                return Err(corrupt("a malformed quantisation table"));
            }
            for (k, step) in self.steps[id].0.iter_mut().enumerate() {
                *step = if precision == 0 {
                    i32::from(s[1 + k])
                } else {
                    i32::from(u16::from_be_bytes([s[1 + 2 * k], s[2 + 2 * k]]))
                };
            }
            self.dc_quant[id] = Some(self.steps[id].0[0]);
            s = &s[1 + len..];
        }
        Ok(())
    }

    pub(super) fn restart_interval(&mut self, s: &[u8]) -> Result<(), ImageError> {
        let [a, b, ..] = *s else {
            return Err(corrupt("a short restart interval"));
        };
        self.restart_interval = usize::from(u16::from_be_bytes([a, b]));
        Ok(())
    }

    pub(super) fn adobe(&mut self, s: &[u8]) {
        if s.len() >= 12 && s.starts_with(b"Adobe") {
            self.adobe_transform = Some(s[11]);
        }
    }

    /// The scan's components and tables, and what it holds (a sequential
    /// frame's band and approximation ignored); an error for a progressive
    /// frame's malformed band or approximation.
    pub(super) fn scan(&self, s: &[u8]) -> Result<Scan, ImageError> {
        if self.width == 0 {
            return Err(corrupt("a scan before the frame header"));
        }
        let count = usize::from(*s.first().unwrap_or(&0));
        if count == 0 || count > self.components.len() || s.len() < 1 + 2 * count + 3 {
            return Err(corrupt("a malformed scan header"));
        }
        let mut components: Vec<(usize, usize, usize)> = Vec::with_capacity(count);
        for choice in s[1..=2 * count].chunks_exact(2) {
            let index = self
                .components
                .iter()
                .position(|c| c.id == choice[0])
                .filter(|i| components.iter().all(|c| c.0 != *i))
                .ok_or_else(|| corrupt("a scan names a component twice or not at all"))?;
            let (dc, ac) = (usize::from(choice[1] >> 4), usize::from(choice[1] & 15));
            if dc > 3 || ac > 3 {
                return Err(corrupt("a scan names a table out of range"));
            }
            components.push((index, dc, ac));
        }
        let (start, end, approximation) = (s[1 + 2 * count], s[2 + 2 * count], s[3 + 2 * count]);
        let (high, low) = (approximation >> 4, approximation & 15);
        let pass = match (self.progressive, start, end) {
            // A sequential scan's band and approximation are ignored, as
            // libjpeg (which warns) and `jpeg-decoder` ignore them.
            (false, _, _) => Pass::Sequential,
            // A first DC scan, then refinements of a bit each (the point
            // transform is at most 13).
            (true, 0, 0) if high == 0 && low <= 13 => Pass::DcFirst(low),
            (true, 0, 0) if high == low + 1 && low <= 12 => Pass::DcRefine(low),
            (true, 1..=63, _) if end >= start && end <= 63 => Pass::Ac(Band {
                start,
                end,
                high,
                low,
            }),
            // Anything else of a progressive frame is malformed, and libjpeg
            // refuses it too. Refused here rather than left to `jpeg-decoder`,
            // which would hold every coefficient first: more memory than the
            // render's estimate counted for a file this decoder takes.
            _ => {
                return Err(corrupt(
                    "a progressive scan of a band or bits no decoder reads",
                ))
            }
        };
        Ok(Scan { components, pass })
    }

    /// The largest horizontal and vertical sampling factors.
    pub(super) fn max_sampling(&self) -> (usize, usize) {
        (
            self.components.iter().map(|c| c.h).max().unwrap_or(1),
            self.components.iter().map(|c| c.v).max().unwrap_or(1),
        )
    }

    /// The MCUs across and down of an interleaved scan (of a frame of one
    /// component: its blocks).
    pub(super) fn mcus(&self) -> (usize, usize) {
        let (hmax, vmax) = if self.components.len() == 1 {
            (1, 1)
        } else {
            self.max_sampling()
        };
        (
            self.width.div_ceil(8 * hmax),
            self.height.div_ceil(8 * vmax),
        )
    }

    /// Whether three components are RGB rather than YCbCr: as an Adobe
    /// marker says, else by their ids spelling "RGB" (as libjpeg reads them).
    pub(super) fn is_rgb(&self) -> bool {
        match self.adobe_transform {
            Some(transform) => transform == 0,
            None => self.components.iter().map(|c| c.id).eq(*b"RGB"),
        }
    }
}

/// A quantisation table's steps, in zigzag order.
#[derive(Clone, Copy)]
pub(super) struct Steps(pub [i32; 64]);

impl Default for Steps {
    fn default() -> Steps {
        Steps([0; 64])
    }
}

/// A scan's components: each one's index in the frame, DC and AC table;
/// and what it holds.
pub(super) struct Scan {
    pub components: Vec<(usize, usize, usize)>,
    pub pass: Pass,
}

/// What a scan holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Pass {
    /// Every coefficient of its blocks (a sequential frame's scan).
    Sequential,
    /// Of a progressive frame: the DC coefficients' high bits, from the
    /// bit given up.
    DcFirst(u8),
    /// Of a progressive frame: one more bit of the DC coefficients, this one.
    DcRefine(u8),
    /// Of a progressive frame: AC coefficients (skipped unread at 1/8).
    Ac(Band),
}

/// A progressive AC scan's coefficients (zigzag `start..=end`) and their
/// bits: the first scan of a band when `high` is 0, else a refinement of
/// bit `low`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Band {
    pub start: u8,
    pub end: u8,
    pub high: u8,
    pub low: u8,
}

impl Band {
    /// Whether it is one decoders read: a first scan of bits from `low`
    /// (at most 13) or a refinement of one bit.
    pub(super) fn valid(self) -> bool {
        (self.high == 0 && self.low <= 13) || (self.high == self.low + 1 && self.low <= 12)
    }
}

/// A Huffman table: codes of up to [`LOOKAHEAD`] bits by one lookup, the
/// longer ones canonically.
pub(super) struct Huffman {
    /// By the next `LOOKAHEAD` bits: the code's length (0: longer) and its
    /// symbol.
    fast: Box<[(u8, u8); ENTRIES]>,
    /// By length (index 0 unused): the largest code of that length (or -1),
    /// and the index in `symbols` of its first code minus that code.
    max_code: [i32; 17],
    offset: [i32; 17],
    symbols: Vec<u8>,
    /// By the next `LOOKAHEAD` bits, for an AC table: up to two codes to
    /// skip with their coefficients' bits ([`Skip`]).
    pub skip: Box<[Skip; ENTRIES]>,
    /// By the next `LOOKAHEAD` bits, for an AC table: the code and its
    /// coefficient, when both are within them ([`FastAc`]).
    pub values: Box<[FastAc; ENTRIES]>,
}

/// An AC code and the coefficient after it, decoded at once: the bits both
/// take (0 when they are not within `LOOKAHEAD` bits), the zeros before the
/// coefficient (or [`EOB`]) and its value.
#[derive(Clone, Copy, Default)]
pub(super) struct FastAc {
    pub len: u8,
    pub run: u8,
    pub value: i16,
}

/// [`FastAc::run`] of the end-of-block code.
pub(super) const EOB: u8 = 255;

/// One or two AC codes, each with the coefficient bits that follow it, to
/// skip: for each, the bits it takes and the coefficients it covers (run +
/// 1; 0 for the end of the block). `first.0` is 0 for a code longer than
/// `LOOKAHEAD`; `second.0` is 0 when a second code is not wholly within
/// the `LOOKAHEAD` bits or the first ends the block.
#[derive(Clone, Copy, Default)]
pub(super) struct Skip {
    pub first: (u8, u8),
    pub second: (u8, u8),
}

impl Huffman {
    pub(super) fn new(counts: &[u8; 16], symbols: &[u8], ac: bool) -> Result<Huffman, ImageError> {
        let mut fast = Box::new([(0u8, 0u8); ENTRIES]);
        let mut max_code = [-1i32; 17];
        let mut offset = [0i32; 17];
        let (mut code, mut k) = (0i32, 0usize);
        for len in 1..=16u8 {
            let n = usize::from(counts[usize::from(len) - 1]);
            offset[usize::from(len)] = i32::try_from(k).unwrap_or(0) - code;
            for _ in 0..n {
                if code >= 1 << len {
                    return Err(corrupt("a Huffman table with too many codes"));
                }
                if u32::from(len) <= LOOKAHEAD {
                    let shift = LOOKAHEAD - u32::from(len);
                    let first = usize::try_from(code).unwrap_or(0) << shift;
                    fast[first..first + (1 << shift)].fill((len, symbols[k]));
                }
                code += 1;
                k += 1;
            }
            if n > 0 {
                max_code[usize::from(len)] = code - 1;
            }
            code <<= 1;
        }
        let mut skip = Box::new([Skip::default(); ENTRIES]);
        let mut values = Box::new([FastAc::default(); ENTRIES]);
        if ac {
            for (index, entry) in skip.iter_mut().enumerate() {
                *entry = pair(&fast, index);
            }
            for (index, entry) in values.iter_mut().enumerate() {
                *entry = fast_ac(&fast, index);
            }
        }
        Ok(Huffman {
            fast,
            max_code,
            offset,
            symbols: symbols.to_vec(),
            skip,
            values,
        })
    }

    /// The next symbol.
    #[allow(
        clippy::inline_always,
        reason = "called once a coefficient in the progressive scans' loops: a call \
                  there was 5% of a 1080-px render"
    )]
    #[inline(always)]
    pub(super) fn symbol(&self, bits: &mut Bits) -> Result<u8, ImageError> {
        let (len, symbol) = self.fast[bits.peek(LOOKAHEAD) & MASK];
        if len > 0 {
            bits.consume(u32::from(len));
            return Ok(symbol);
        }
        let word = i32::try_from(bits.peek(16)).unwrap_or(0);
        for len in LOOKAHEAD + 1..=16 {
            let code = word >> (16 - len);
            if code <= self.max_code[len as usize] {
                bits.consume(len);
                let index = usize::try_from(code + self.offset[len as usize])
                    .map_err(|_| corrupt("a bad Huffman code"))?;
                return self
                    .symbols
                    .get(index)
                    .copied()
                    .ok_or_else(|| corrupt("a bad Huffman code"));
            }
        }
        Err(corrupt("a bad Huffman code"))
    }
}

/// The AC code and coefficient at `index` (the next `LOOKAHEAD` bits) of a
/// table whose one-lookup codes are `fast`.
fn fast_ac(fast: &[(u8, u8); ENTRIES], index: usize) -> FastAc {
    let (len, symbol) = fast[index & MASK];
    let (run, size) = (symbol >> 4, u32::from(symbol & 15));
    let total = u32::from(len) + size;
    if len == 0 || total > LOOKAHEAD {
        return FastAc::default();
    }
    let (run, value) = match (run, size) {
        // ZRL; any other run without a coefficient ends the block, as
        // the slow path reads it.
        (15, 0) => (15, 0),
        (_, 0) => (EOB, 0),
        _ => {
            // The `size` bits after the code, extended (JPEG's EXTEND).
            let raw = (index >> (LOOKAHEAD - total)) & ((1 << size) - 1);
            let raw = i32::try_from(raw).unwrap_or(0);
            let value = if raw < 1 << (size - 1) {
                raw - (1 << size) + 1
            } else {
                raw
            };
            (run, i16::try_from(value).unwrap_or(0))
        }
    };
    FastAc {
        len: u8::try_from(total).unwrap_or(0),
        run,
        value,
    }
}

/// The codes to skip at `index` (the next `LOOKAHEAD` bits) of an AC table
/// whose one-lookup codes are `fast`.
fn pair(fast: &[(u8, u8); ENTRIES], index: usize) -> Skip {
    let one = |index: usize| {
        let (len, symbol) = fast[index & MASK];
        let (run, size) = (symbol >> 4, symbol & 15);
        let covers = match (run, size) {
            (0, 0) => 0,
            (15, 0) => 16,
            _ => run + 1,
        };
        (len, len + size, covers)
    };
    let (len, bits, covers) = one(index);
    if len == 0 {
        return Skip::default();
    }
    let mut skip = Skip {
        first: (bits, covers),
        second: (0, 0),
    };
    let used = u32::from(bits);
    if covers > 0 && used < LOOKAHEAD {
        let (len2, bits2, covers2) = one(index << used);
        if len2 > 0 && u32::from(len2) <= LOOKAHEAD - used {
            skip.second = (bits2, covers2);
        }
    }
    skip
}
