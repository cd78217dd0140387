//! WebP decoding for filestore's image variants: libwebp's decoder (the one
//! browsers, libvips and sharp use), shrunk on load, behind a safe API.
//!
//! # Why a crate of its own
//!
//! The `filestore` crate forbids `unsafe` code, and libwebp is C: the calls
//! live here, in the single private module `ffi` (the rest of the crate
//! denies `unsafe` too), each with the reason it is sound. libwebp's source
//! is vendored by `libwebp-sys` and built with `cc`; the root crate already
//! builds it for its WebP encoder.
//!
//! # Why libwebp and not the pure-Rust `image-webp`
//!
//! Speed: a 12 MP lossy WebP took `image-webp` 0.2.4 about 380 ms to decode
//! in full, libwebp 190 ms, and libwebp shrinking it on load to 512 px wide
//! 160 ms, holding a few rows instead of the whole picture. A variant is
//! smaller than its source, so a render never needs the full picture.
//!
//! The price is C on hostile input. filestore therefore calls this crate
//! only in a child process that reads the file, gives up every system call
//! but reading, writing and memory (seccomp), and is killed after a
//! timeout; a crash or a compromise of the decoder stays in that process.
//!
//! # What is decoded
//!
//! A still WebP, lossy (VP8, with or without an alpha chunk) or lossless
//! (VP8L), as 8-bit RGB or RGBA (straight alpha), optionally shrunk by an
//! integer factor with libwebp's rescaler (an area average). An animated
//! WebP is [`WebpError::Animated`]: the caller decodes its first frame
//! another way.

mod ffi;

use libwebp_sys::VP8StatusCode;

/// What a WebP's headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
    /// Whether it has an alpha channel.
    pub has_alpha: bool,
    /// Whether it is an animation.
    pub animated: bool,
}

/// A decoded WebP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
    /// RGBA (straight alpha) when true, else RGB.
    pub has_alpha: bool,
    /// 8-bit samples, rows packed, top to bottom.
    pub pixels: Vec<u8>,
}

/// Why a file was not decoded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WebpError {
    /// It is not a WebP (or its header is cut short).
    #[error("not a WebP")]
    NotWebp,
    /// An animation: not decoded here.
    #[error("an animated WebP")]
    Animated,
    /// More pixels than the cap allows.
    #[error("{width}x{height} is over the pixel cap")]
    TooLarge {
        /// Pixels across, as the header says.
        width: u32,
        /// Pixels down, as the header says.
        height: u32,
    },
    /// libwebp refused the data.
    #[error("the WebP is damaged ({0})")]
    Corrupt(&'static str),
}

/// The headers of `data`.
pub fn features(data: &[u8]) -> Result<Features, WebpError> {
    let f = ffi::features(data).map_err(|_| WebpError::NotWebp)?;
    let side = |n: i32| u32::try_from(n).ok().filter(|n| *n > 0);
    let (Some(width), Some(height)) = (side(f.width), side(f.height)) else {
        return Err(WebpError::NotWebp);
    };
    Ok(Features {
        width,
        height,
        has_alpha: f.has_alpha != 0,
        animated: f.has_animation != 0,
    })
}

/// The size of a `width` × `height` picture shrunk by `shrink` (each side
/// divided, rounded up; 0 is taken as 1).
pub fn shrunk_size(width: u32, height: u32, shrink: u32) -> (u32, u32) {
    let shrink = shrink.max(1);
    (width.div_ceil(shrink), height.div_ceil(shrink))
}

/// Decodes the still WebP `data`, of at most `max_pixels` (width × height
/// as its header says), shrunk by `shrink` ([`shrunk_size`]).
pub fn decode(data: &[u8], max_pixels: u64, shrink: u32) -> Result<Image, WebpError> {
    let f = features(data)?;
    if f.animated {
        return Err(WebpError::Animated);
    }
    if u64::from(f.width) * u64::from(f.height) > max_pixels {
        return Err(WebpError::TooLarge {
            width: f.width,
            height: f.height,
        });
    }
    let (width, height) = shrunk_size(f.width, f.height, shrink);
    let channels: usize = if f.has_alpha { 4 } else { 3 };
    let len = usize::try_from(u64::from(width) * u64::from(height))
        .ok()
        .and_then(|n| n.checked_mul(channels))
        .ok_or(WebpError::TooLarge {
            width: f.width,
            height: f.height,
        })?;
    let mut pixels = vec![0; len];
    let scale = (width, height) != (f.width, f.height);
    ffi::decode_into(data, width, height, scale, f.has_alpha, &mut pixels).map_err(refusal)?;
    Ok(Image {
        width,
        height,
        has_alpha: f.has_alpha,
        pixels,
    })
}

/// libwebp's status as a refusal.
fn refusal(status: VP8StatusCode) -> WebpError {
    WebpError::Corrupt(match status {
        VP8StatusCode::VP8_STATUS_OUT_OF_MEMORY => "out of memory",
        VP8StatusCode::VP8_STATUS_BITSTREAM_ERROR => "bitstream error",
        VP8StatusCode::VP8_STATUS_UNSUPPORTED_FEATURE => "unsupported feature",
        VP8StatusCode::VP8_STATUS_NOT_ENOUGH_DATA => "cut short",
        _ => "refused",
    })
}

#[cfg(test)]
mod tests;
