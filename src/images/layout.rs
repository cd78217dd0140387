//! What a source's header says beyond its dimensions: the layout its
//! decoder's buffers follow (for the render's memory estimate,
//! `estimate`), read before any pixel is; and whether the file's bytes can
//! hold the pixels it claims, where a format bounds how far its data
//! compresses (a PNG's deflate at most 1032 to 1, a GIF's LZW code at most
//! 4096 pixels; a JPEG's blocks take bits each, `jpeg_dc::layout`). A file
//! that ends before its first frame's data does is refused here too,
//! before a decoder allocates the frame it would never fill.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use super::jpeg_dc::JpegLayout;
use super::read::{io_error, read_up_to};
use super::{ImageError, Probe};

/// A source's layout, by format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    Jpeg(JpegLayout),
    /// Bytes a decoded pixel takes (after palettes and low bit depths are
    /// expanded, transparency made alpha): 1 to 8; and bits a stored one
    /// takes (1 to 64).
    Png {
        bytes_per_pixel: u8,
        stored_bits: u8,
        /// Adam7: its rows come in seven passes, so it is decoded whole
        /// (a PNG stored row by row is shrunk as its rows come).
        interlaced: bool,
        /// 16-bit samples.
        wide: bool,
    },
    /// The first frame's size (it may differ from the canvas's).
    Gif {
        frame: (u32, u32),
    },
    /// Whether its VP8X header says it is an animation (decoded in the
    /// server by `image-webp`; a still one by libwebp in a child).
    Webp {
        animated: bool,
    },
    Avif,
}

/// The bytes a still WebP's file may hold beyond 4 a pixel (its metadata:
/// ICC, EXIF, XMP): a longer one is refused before libwebp's child reads it
/// whole (the render's estimate counts the file).
pub(super) const WEBP_SLACK: u64 = 8 << 20;

/// The most pixels a deflate stream's byte can inflate to (a 258-byte
/// match in two bits): a PNG's image data is at least its raw bytes over
/// this.
const DEFLATE_MAX_RATIO: u64 = 1032;

/// The most pixels one byte of a GIF's LZW data can give: a code of at
/// least two bits stands for at most 4096 pixels (the table's size).
const LZW_PIXELS_PER_BYTE: u64 = 4 * 4096;

/// Refuses a source whose bytes cannot hold the pixels its header
/// (`header`, as [`super::probe()`] read it) claims, or that ends inside its
/// first frame, and a still WebP longer than its pixels and [`WEBP_SLACK`]
/// of metadata can be. Reads the file through for a JPEG or a GIF (their data's
/// markers and blocks, no pixel decoded).
pub(super) fn plausible(path: &Path, header: &Probe) -> Result<(), ImageError> {
    match header.layout {
        Layout::Jpeg(_) => super::caught(
            || super::jpeg_dc::layout(super::read::open(path)?, true),
            ImageError::Corrupt,
        )?
        .map(|_| ()),
        Layout::Png { stored_bits, .. } => {
            let len = std::fs::metadata(path)
                .map_err(|e| io_error(path, &e))?
                .len();
            let raw = px(header.width, header.height) * u64::from(stored_bits) / 8;
            if len.saturating_mul(DEFLATE_MAX_RATIO) < raw {
                return Err(short_of(len, header.width, header.height));
            }
            Ok(())
        }
        Layout::Gif { .. } => gif(path, true).map(|_| ()),
        // libwebp's child holds the whole file: the estimate counts it.
        Layout::Webp { animated: false } => {
            let len = std::fs::metadata(path)
                .map_err(|e| io_error(path, &e))?
                .len();
            let most = px(header.width, header.height)
                .saturating_mul(4)
                .saturating_add(WEBP_SLACK);
            if len > most {
                return Err(ImageError::Corrupt(format!(
                    "a {}×{} WebP of {len} bytes is longer than its pixels and metadata can be",
                    header.width, header.height
                )));
            }
            Ok(())
        }
        Layout::Webp { animated: true } | Layout::Avif => Ok(()),
    }
}

fn px(w: u32, h: u32) -> u64 {
    u64::from(w) * u64::from(h)
}

/// A PNG's width, height and layout from its IHDR chunk (always the
/// first; nothing else is read).
pub(super) fn png(path: &Path) -> Result<(u32, u32, Layout), ImageError> {
    let mut head = [0u8; 29];
    let mut file = File::open(path).map_err(|e| io_error(path, &e))?;
    let n = read_up_to(&mut file, &mut head).map_err(|e| io_error(path, &e))?;
    if n < head.len() || head[8..12] != [0, 0, 0, 13] || &head[12..16] != b"IHDR" {
        return Err(ImageError::Corrupt(
            "a PNG must start with its IHDR chunk".into(),
        ));
    }
    let be = |at: usize| u32::from_be_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    let (width, height, depth, color) = (be(16), be(20), head[24], head[25]);
    // Samples a pixel as stored, and as decoded (a palette or a tRNS
    // chunk may add alpha: counted).
    let (stored, decoded) = match color {
        0 => (1, 2),
        2 => (3, 4),
        3 => (1, 4),
        4 => (2, 2),
        6 => (4, 4),
        _ => return Err(ImageError::Corrupt(format!("a PNG of colour type {color}"))),
    };
    if !matches!(depth, 1 | 2 | 4 | 8 | 16) {
        return Err(ImageError::Corrupt(format!("a PNG of bit depth {depth}")));
    }
    let bytes_per_pixel = if depth == 16 { 2 * decoded } else { decoded };
    Ok((
        width,
        height,
        Layout::Png {
            bytes_per_pixel: u8::try_from(bytes_per_pixel).unwrap_or(8),
            stored_bits: stored * depth,
            interlaced: head[28] == 1,
            wide: depth == 16,
        },
    ))
}

/// A GIF's first frame: its size, read from its image descriptor; with
/// `check`, refused when its LZW data is too short for its pixels, or the
/// file ends inside it.
pub(super) fn gif(path: &Path, check: bool) -> Result<Layout, ImageError> {
    let r = &mut BufReader::new(File::open(path).map_err(|e| io_error(path, &e))?);
    let io = |e: std::io::Error| io_error(path, &e);
    // The header and the logical screen descriptor; its colour table.
    skip(r, 10).map_err(io)?;
    let flags = byte(r).map_err(io)?;
    skip(r, 2).map_err(io)?;
    if flags & 0x80 != 0 {
        skip(r, 3u64 << ((flags & 7) + 1)).map_err(io)?;
    }
    loop {
        match byte(r).map_err(io)? {
            0x21 => {
                byte(r).map_err(io)?;
                sub_blocks(r).map_err(io)?;
            }
            0x2C => {
                let mut d = [0u8; 9];
                r.read_exact(&mut d).map_err(io)?;
                let le = |at: usize| u32::from(u16::from_le_bytes([d[at], d[at + 1]]));
                let frame = (le(4), le(6));
                if d[8] & 0x80 != 0 {
                    skip(r, 3u64 << ((d[8] & 7) + 1)).map_err(io)?;
                }
                if !check {
                    return Ok(Layout::Gif { frame });
                }
                byte(r).map_err(io)?; // the LZW minimum code size
                let data = sub_blocks(r).map_err(io)?;
                let pixels = u64::from(frame.0) * u64::from(frame.1);
                if data.saturating_mul(LZW_PIXELS_PER_BYTE) < pixels {
                    return Err(short_of(data, frame.0, frame.1));
                }
                return Ok(Layout::Gif { frame });
            }
            0x3B => return Err(ImageError::Corrupt("a GIF with no image in it".into())),
            other => {
                return Err(ImageError::Corrupt(format!(
                    "a GIF block of an unknown kind ({other:#04x})"
                )))
            }
        }
    }
}

fn byte(r: &mut impl Read) -> std::io::Result<u8> {
    let mut b = [0u8; 1];
    r.read_exact(&mut b)?;
    Ok(b[0])
}

/// Skips `n` bytes, which must be there.
fn skip(r: &mut impl Read, n: u64) -> std::io::Result<()> {
    if std::io::copy(&mut r.take(n), &mut std::io::sink())? < n {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

/// Skips a GIF's sub-blocks to their terminator; the bytes they held.
fn sub_blocks(r: &mut impl Read) -> std::io::Result<u64> {
    let mut total = 0u64;
    loop {
        let len = byte(r)?;
        if len == 0 {
            return Ok(total);
        }
        skip(r, u64::from(len))?;
        total += u64::from(len);
    }
}

/// A file too short for the pixels its header claims.
fn short_of(bytes: u64, width: u32, height: u32) -> ImageError {
    ImageError::Corrupt(format!(
        "the file's bytes end before its image data does: {bytes} bytes cannot hold \
         {width}×{height} pixels"
    ))
}
