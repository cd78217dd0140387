//! What the resumable SHA-256 and MD5 states share: both are 64-byte-block
//! hashes of 32-bit words, so their saved text, their last blocks' padding
//! and their handling of an incomplete block are the same; only the words,
//! the compression and the length's byte order differ.

/// The state as text: `<16 hex: length>:<8 hex a word, big-endian>:<hex tail>`.
pub(crate) fn save<const N: usize>(len: u64, words: &[u32; N], tail: &[u8]) -> String {
    let words: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    format!("{len:016x}:{}:{}", hex::encode(words), hex::encode(tail))
}

/// A state [`save`] wrote with `N` words: (length, words, tail); None for
/// anything else.
pub(crate) fn restore<const N: usize>(saved: &str) -> Option<(u64, [u32; N], Vec<u8>)> {
    let mut parts = saved.split(':');
    let (len, words, tail) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || len.len() != 16 || words.len() != N * 8 {
        return None;
    }
    let len = u64::from_str_radix(len, 16).ok()?;
    let tail = hex::decode(tail).ok()?;
    if tail.len() as u64 != len % 64 {
        return None;
    }
    let mut state = [0u32; N];
    for (i, w) in state.iter_mut().enumerate() {
        *w = u32::from_str_radix(words.get(i * 8..i * 8 + 8)?, 16).ok()?;
    }
    Some((len, state, tail))
}

/// Fills `tail` from the front of `data`; the rest of `data`, and the
/// whole block `tail` made (then emptied), if it made one.
pub(crate) fn fill_tail<'a>(tail: &mut Vec<u8>, data: &'a [u8]) -> (&'a [u8], Option<[u8; 64]>) {
    if tail.is_empty() {
        return (data, None);
    }
    let take = (64 - tail.len()).min(data.len());
    tail.extend_from_slice(&data[..take]);
    if tail.len() < 64 {
        return (&data[take..], None);
    }
    let mut block = [0u8; 64];
    block.copy_from_slice(tail);
    tail.clear();
    (&data[take..], Some(block))
}

/// The last one or two blocks: `tail`, the 0x80 byte, zeros, and the bit
/// length of `len` bytes (`length` gives its eight bytes in the hash's order).
pub(crate) fn last_blocks(tail: &[u8], len: u64, length: fn(u64) -> [u8; 8]) -> Vec<u8> {
    let mut last = tail.to_vec();
    last.push(0x80);
    let blocks = if last.len() <= 56 { 1 } else { 2 };
    last.resize(blocks * 64 - 8, 0);
    last.extend_from_slice(&length(len.wrapping_mul(8)));
    last
}
