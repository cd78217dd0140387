//! MD5 whose state can be saved between requests, as [`super::sha256_state`]
//! does for SHA-256: a resumable upload's bytes are hashed chunk by chunk
//! across PATCHes, possibly on different nodes, so the running state (four
//! words, the byte count and the unhashed tail of the last block) is written
//! to the database beside the SHA-256 state. The compression is `md-5`'s
//! (`block_api::compress`); only the padding at the end is done here (RFC
//! 1321 §3.1–3.2: the bit length little-endian).

use super::block_state;

/// The initial state A, B, C, D of MD5 (RFC 1321 §3.3).
const INIT: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// A running MD5 that can be saved ([`ResumableMd5::save`]) and restored
/// ([`ResumableMd5::restore`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResumableMd5 {
    state: [u32; 4],
    /// Bytes hashed so far, the tail included.
    len: u64,
    /// The bytes of an incomplete block (fewer than 64).
    tail: Vec<u8>,
}

impl Default for ResumableMd5 {
    fn default() -> Self {
        ResumableMd5 {
            state: INIT,
            len: 0,
            tail: Vec::with_capacity(64),
        }
    }
}

impl ResumableMd5 {
    /// Uploads begun now keep no MD5 state (`domain::resumable`); a state
    /// starts only in tests, to check those an earlier release saved.
    #[cfg(test)]
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn update(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        let (rest, block) = block_state::fill_tail(&mut self.tail, data);
        if let Some(block) = block {
            md5::block_api::compress(&mut self.state, &[block]);
        }
        data = rest;
        if !self.tail.is_empty() {
            return;
        }
        // Whole blocks straight from the caller's bytes: no copy.
        let (blocks, rest) = data.as_chunks::<64>();
        md5::block_api::compress(&mut self.state, blocks);
        self.tail.extend_from_slice(rest);
    }

    /// Bytes hashed so far.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// The digest of the bytes so far (the state itself is left as it is).
    pub(crate) fn digest(&self) -> [u8; 16] {
        let mut state = self.state;
        let last = block_state::last_blocks(&self.tail, self.len, u64::to_le_bytes);
        let (blocks, _) = last.as_chunks::<64>();
        md5::block_api::compress(&mut state, blocks);
        let mut out = [0u8; 16];
        for (o, w) in out.chunks_exact_mut(4).zip(state) {
            o.copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// The hex digest (lower case) of the bytes so far.
    pub(crate) fn hex(&self) -> String {
        hex::encode(self.digest())
    }

    /// The state as text: `<16 hex: length>:<32 hex: words>:<hex tail>`.
    pub(crate) fn save(&self) -> String {
        block_state::save(self.len, &self.state, &self.tail)
    }

    /// A state [`ResumableMd5::save`] wrote; None for anything else.
    pub(crate) fn restore(saved: &str) -> Option<ResumableMd5> {
        let (len, state, tail) = block_state::restore(saved)?;
        Some(ResumableMd5 { state, len, tail })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use md5::{Digest, Md5};
    use proptest::prelude::*;

    #[test]
    fn known_answers() {
        // RFC 1321 §A.5.
        for (input, hex) in [
            (&b""[..], "d41d8cd98f00b204e9800998ecf8427e"),
            (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
            (
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ] {
            let mut h = ResumableMd5::new();
            h.update(input);
            assert_eq!(h.hex(), hex, "{input:?}");
        }
    }

    #[test]
    fn garbage_is_not_a_state() {
        for bad in [
            "",
            "x",
            "0000000000000003:00:616263",
            &format!("{:016x}:{}:", 3, "0".repeat(32)),
            &format!("{:016x}:{}:zz", 1, "0".repeat(32)),
            &format!("{:016x}:{}:61:", 1, "0".repeat(32)),
            &format!("{:016x}:{}:61", 1, "0".repeat(64)),
        ] {
            assert_eq!(ResumableMd5::restore(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn odd_splits_saved_and_restored_equal_md5() {
        let data: Vec<u8> = (0..10_000u32)
            .map(|i| (i * 7 + i / 13).to_le_bytes()[0])
            .collect();
        // Around a block's edges, the 56-byte padding edge, and far apart.
        for cuts in [
            vec![1, 55, 56, 57, 63, 64, 65],
            vec![119, 120, 121, 127, 128, 129],
            vec![3, 4_099, 8_191, 9_999],
            vec![0, 0, 10_000],
        ] {
            let mut h = ResumableMd5::new();
            let mut at = 0;
            for cut in cuts.iter().copied().chain([data.len()]) {
                h.update(&data[at..cut]);
                at = cut;
                h = ResumableMd5::restore(&h.save()).expect("a saved state restores");
            }
            assert_eq!(h.hex(), hex::encode(Md5::digest(&data)), "{cuts:?}");
        }
    }

    proptest! {
        /// Any split of any input into chunks, saved and restored between
        /// every chunk, gives md-5's digest of the whole.
        #[test]
        fn chunked_saved_and_restored_equals_one_shot(
            data in proptest::collection::vec(any::<u8>(), 0..600),
            cuts in proptest::collection::vec(0usize..600, 0..8),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
            cuts.sort_unstable();
            let mut h = ResumableMd5::new();
            let mut at = 0;
            for cut in cuts.into_iter().chain([data.len()]) {
                h.update(&data[at..cut]);
                at = cut;
                h = ResumableMd5::restore(&h.save()).expect("a saved state restores");
            }
            prop_assert_eq!(h.len, data.len() as u64);
            prop_assert_eq!(h.hex(), hex::encode(Md5::digest(&data)));
        }

        #[test]
        fn restore_never_panics(s in ".{0,120}") {
            let _ = ResumableMd5::restore(&s);
        }
    }
}
