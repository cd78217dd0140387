//! The entropy-coded bits of a scan, and the file under them.

use crate::images::zeroed::zeroed;
use std::io::Read;

use super::corrupt;
use crate::images::ImageError;

/// The entropy-coded bits, most significant first, stuffed bytes removed.
#[derive(Default)]
pub(super) struct Bits {
    pub word: u64,
    pub count: u32,
    /// Of the `count` bits, how many at the end are zeros standing in past
    /// a marker or the end of the file; more than `count` once such a zero
    /// was used.
    pub padding: u32,
}

impl Bits {
    #[inline]
    pub(super) fn peek(&self, n: u32) -> usize {
        usize::try_from(self.word >> (64 - n)).unwrap_or(0)
    }

    #[inline]
    pub(super) fn consume(&mut self, n: u32) {
        self.word <<= n;
        self.count = self.count.saturating_sub(n);
    }

    /// `n` bits as a signed DC difference (JPEG's EXTEND).
    #[inline]
    pub(super) fn extend(&mut self, n: u32) -> i32 {
        if n == 0 {
            return 0;
        }
        let v = i32::try_from(self.peek(n)).unwrap_or(0);
        self.consume(n);
        if v < 1 << (n - 1) {
            v - (1 << n) + 1
        } else {
            v
        }
    }

    /// Tops the word up to at least 57 bits: eight bytes at once when none
    /// of them is 0xFF, else byte by byte ([`Bits::fill_slowly`]).
    #[inline]
    pub(super) fn fill<R: Read>(&mut self, input: &mut Input<R>) -> Result<(), ImageError> {
        if self.count > 56 {
            return Ok(());
        }
        if let Some(x) = input.peek8() {
            // Whether any byte is 0xFF: a zero byte in !x.
            let inverted = !x;
            let ones = 0x0101_0101_0101_0101;
            if inverted.wrapping_sub(ones) & !inverted & (ones << 7) == 0 {
                let take = (64 - self.count) / 8;
                let bytes = x >> (64 - 8 * take);
                self.word |= bytes << (64 - self.count - 8 * take);
                self.count += 8 * take;
                input.pos += take as usize;
                return Ok(());
            }
        }
        self.fill_slowly(input)
    }

    /// Byte by byte, the buffer refilled: a stuffed 0xFF00 is one 0xFF; a
    /// marker stops the bits, and zeros stand in past it (and past the end).
    #[cold]
    #[inline(never)]
    fn fill_slowly<R: Read>(&mut self, input: &mut Input<R>) -> Result<(), ImageError> {
        while self.count <= 56 {
            input.ensure(2)?;
            let byte = match input.peek2() {
                (Some(0xFF), Some(0x00)) => {
                    input.pos += 2;
                    0xFF
                }
                (Some(0xFF) | None, _) => {
                    self.padding += 8;
                    0
                }
                (Some(b), _) => {
                    input.pos += 1;
                    b
                }
            };
            self.word |= u64::from(byte) << (56 - self.count);
            self.count += 8;
        }
        input.ensure(8)
    }

    /// At a restart marker: drops the bits left, and reads up to and past
    /// the marker.
    pub(super) fn restart<R: Read>(&mut self, input: &mut Input<R>) -> Result<(), ImageError> {
        // An interval decoded from made-up bits: its data is missing (and a
        // file of markers alone would cost a whole decode a few bytes).
        if self.padding > self.count {
            return Err(corrupt("a restart interval's data is missing"));
        }
        *self = Bits::default();
        input.skip_to_marker()?;
        match input.marker()? {
            0xD0..=0xD7 => Ok(()),
            _ => Err(corrupt("a restart marker missing")),
        }
    }
}

/// The file through a buffer of its own, so that the bit reader can look at
/// eight bytes at once.
pub(super) struct Input<R> {
    reader: R,
    buf: Vec<u8>,
    pub pos: usize,
    end: usize,
    eof: bool,
}

impl<R: Read> Input<R> {
    pub(super) fn new(reader: R) -> Input<R> {
        Input {
            reader,
            buf: zeroed(1 << 16),
            pos: 0,
            end: 0,
            eof: false,
        }
    }

    /// At least `n` bytes buffered, unless the file ends first.
    #[inline]
    fn ensure(&mut self, n: usize) -> Result<(), ImageError> {
        if self.end - self.pos >= n || self.eof {
            return Ok(());
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        while self.end < n && !self.eof {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ImageError::Encode(format!("reading the image: {e}"))),
            }
        }
        Ok(())
    }

    /// The next eight bytes, when buffered.
    #[inline]
    fn peek8(&self) -> Option<u64> {
        let eight = self.buf[..self.end].get(self.pos..self.pos + 8)?;
        Some(u64::from_be_bytes(eight.try_into().ok()?))
    }

    fn peek2(&self) -> (Option<u8>, Option<u8>) {
        let available = &self.buf[self.pos..self.end];
        (available.first().copied(), available.get(1).copied())
    }

    pub(super) fn byte(&mut self) -> Result<u8, ImageError> {
        self.ensure(1)?;
        if self.pos == self.end {
            return Err(corrupt("the file ends too soon"));
        }
        self.pos += 1;
        Ok(self.buf[self.pos - 1])
    }

    /// Skips entropy-coded bytes (a stuffed 0xFF00 among them) up to the
    /// next marker, and stops at its 0xFF; the count of data bytes skipped
    /// (a stuffed 0xFF00 is one, fill bytes none).
    pub(super) fn skip_to_marker(&mut self) -> Result<u64, ImageError> {
        let mut skipped = 0u64;
        loop {
            self.ensure(2)?;
            // Straight to the next 0xFF.
            let rest = &self.buf[self.pos..self.end];
            if rest.len() > 2 {
                let skip = memchr::memchr(0xFF, &rest[..rest.len() - 1]).unwrap_or(rest.len() - 1);
                self.pos += skip;
                skipped += skip as u64;
                self.ensure(2)?;
            }
            match self.peek2() {
                (Some(0xFF), Some(0x00)) => {
                    self.pos += 2;
                    skipped += 1;
                }
                (Some(0xFF), Some(0xFF)) => self.pos += 1,
                (Some(0xFF), Some(_)) => return Ok(skipped),
                (Some(0xFF) | None, None) => return Err(corrupt("the file ends too soon")),
                (Some(_), _) => {
                    self.pos += 1;
                    skipped += 1;
                }
                (None, Some(_)) => unreachable!("a second byte without a first"),
            }
        }
    }

    /// The code of the marker at the read position (where
    /// [`Input::skip_to_marker`] stops), if one is there.
    pub(super) fn peek_marker(&mut self) -> Option<u8> {
        self.ensure(2).ok()?;
        match self.peek2() {
            (Some(0xFF), Some(code)) => Some(code),
            _ => None,
        }
    }

    /// The next marker's code, fill bytes skipped.
    pub(super) fn marker(&mut self) -> Result<u8, ImageError> {
        if self.byte()? != 0xFF {
            return Err(corrupt("a marker expected"));
        }
        loop {
            match self.byte()? {
                0xFF => {}
                code => return Ok(code),
            }
        }
    }

    /// A marker segment's contents (its length read and left out).
    pub(super) fn segment(&mut self) -> Result<Vec<u8>, ImageError> {
        let len = usize::from(u16::from_be_bytes([self.byte()?, self.byte()?]));
        let len = len
            .checked_sub(2)
            .ok_or_else(|| corrupt("a marker segment's length is under 2"))?;
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            self.ensure(1)?;
            if self.pos == self.end {
                return Err(corrupt("the file ends too soon"));
            }
            let n = (len - out.len()).min(self.end - self.pos);
            out.extend_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
        }
        Ok(out)
    }
}
