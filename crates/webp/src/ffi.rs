//! The calls into libwebp, each `unsafe` block with the reason it is sound.
#![allow(unsafe_code)]

use libwebp_sys::{
    VP8StatusCode, WebPBitstreamFeatures, WebPDecode, WebPDecoderConfig, WebPFreeDecBuffer,
    WebPGetFeatures, WebPRGBABuffer, WEBP_CSP_MODE,
};

/// libwebp's reading of the file's headers (RIFF, VP8X, VP8 or VP8L).
pub(crate) fn features(data: &[u8]) -> Result<WebPBitstreamFeatures, VP8StatusCode> {
    let mut config =
        WebPDecoderConfig::new().map_err(|()| VP8StatusCode::VP8_STATUS_INVALID_PARAM)?;
    // SAFETY: `data` is a live slice of `data.len()` bytes that libwebp only
    // reads; `config.input` is a valid, initialised struct it writes into.
    let status = unsafe { WebPGetFeatures(data.as_ptr(), data.len(), &raw mut config.input) };
    match status {
        VP8StatusCode::VP8_STATUS_OK => Ok(config.input),
        e => Err(e),
    }
}

/// Decodes `data` into `out`, `width` × `height` pixels of 3 (RGB) or 4
/// (`alpha`: RGBA, not premultiplied) bytes, rows packed; libwebp's
/// rescaler shrinks it to that size when `scale`. One thread.
pub(crate) fn decode_into(
    data: &[u8],
    width: u32,
    height: u32,
    scale: bool,
    alpha: bool,
    out: &mut [u8],
) -> Result<(), VP8StatusCode> {
    let invalid = VP8StatusCode::VP8_STATUS_INVALID_PARAM;
    let channels: u32 = if alpha { 4 } else { 3 };
    let stride = width.checked_mul(channels).ok_or(invalid)?;
    let rows = usize::try_from(height).map_err(|_| invalid)?;
    let needed = usize::try_from(stride)
        .ok()
        .and_then(|s| s.checked_mul(rows))
        .ok_or(invalid)?;
    if out.len() < needed {
        return Err(invalid);
    }
    let mut config = WebPDecoderConfig::new().map_err(|()| invalid)?;
    config.options.use_threads = 0;
    if scale {
        config.options.use_scaling = 1;
        config.options.scaled_width = i32::try_from(width).map_err(|_| invalid)?;
        config.options.scaled_height = i32::try_from(height).map_err(|_| invalid)?;
    }
    config.output.colorspace = if alpha {
        WEBP_CSP_MODE::MODE_RGBA
    } else {
        WEBP_CSP_MODE::MODE_RGB
    };
    config.output.is_external_memory = 1;
    // The RGBA member of the output union: the one libwebp reads for the
    // RGB(A) colourspaces set above.
    config.output.u.RGBA = WebPRGBABuffer {
        rgba: out.as_mut_ptr(),
        stride: i32::try_from(stride).map_err(|_| invalid)?,
        size: out.len(),
    };
    // SAFETY: `data` is a live slice libwebp only reads; the output buffer
    // is `out`, borrowed mutably for the whole call, of `out.len()` bytes
    // (at least `stride` × `height`, checked above; libwebp checks it again
    // against the size it will write); external memory, so libwebp
    // allocates no output of its own and frees nothing of ours.
    let status = unsafe { WebPDecode(data.as_ptr(), data.len(), &raw mut config) };
    // SAFETY: `config.output` was set up above and filled by WebPDecode; with
    // external memory this frees only what libwebp allocated privately.
    unsafe { WebPFreeDecBuffer(&raw mut config.output) };
    match status {
        VP8StatusCode::VP8_STATUS_OK => Ok(()),
        e => Err(e),
    }
}
