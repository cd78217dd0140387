//! An image's format (by its magic number) and dimensions (from its header),
//! read without decoding a pixel.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use image::{ImageDecoder, ImageFormat, ImageReader};

use super::layout::{self, Layout};
use super::read::{corrupt, from_image, io_error, open, read_up_to};
use super::{jpeg_dc, ImageError, Probe};
use crate::domain::transform::SourceFormat;

/// The bytes that tell the formats apart.
const MAGIC_LEN: usize = 21;

/// The largest AVIF source read: AVIF is decoded from memory (its boxes may
/// put the pixels before the header), so the file is read whole.
pub(super) const MAX_AVIF_BYTES: u64 = 64 << 20;

/// Reads the header only of the file at `path`: its format and dimensions
/// (EXIF orientation not applied). Never decodes pixels.
pub(crate) fn probe(path: &Path) -> Result<Probe, ImageError> {
    let mut file = File::open(path).map_err(|e| io_error(path, &e))?;
    let mut magic = [0u8; MAGIC_LEN];
    let n = read_up_to(&mut file, &mut magic).map_err(|e| io_error(path, &e))?;
    let format = sniff(&magic[..n]).ok_or(ImageError::NotAnImage)?;
    drop(file);
    let (width, height, layout) = match format {
        SourceFormat::Avif => {
            let data = avif_bytes(path)?;
            let (w, h) = super::caught(|| filestore_avif::dimensions(&data), ImageError::Corrupt)?
                .map_err(|e| from_avif(e, 0))?;
            (w, h, Layout::Avif)
        }
        SourceFormat::Jpeg => {
            let jpeg = super::caught(|| jpeg_dc::layout(open(path)?, false), ImageError::Corrupt)??;
            (jpeg.width, jpeg.height, Layout::Jpeg(jpeg))
        }
        SourceFormat::Png => layout::png(path)?,
        SourceFormat::Gif | SourceFormat::Webp => {
            // Only the header is read here: the limits apply to decoding.
            let mut reader = ImageReader::with_format(open(path)?, image_format(format));
            reader.no_limits();
            let decoder = super::caught(|| reader.into_decoder(), ImageError::Corrupt)?
                .map_err(|e| from_image(path, e))?;
            let (w, h) = decoder.dimensions();
            let layout = if format == SourceFormat::Gif {
                layout::gif(path, false)?
            } else {
                // RIFF, size, WEBP, VP8X, size, then its flags (animation: 2).
                let animated = n == MAGIC_LEN && &magic[12..16] == b"VP8X" && magic[20] & 2 != 0;
                Layout::Webp { animated }
            };
            (w, h, layout)
        }
    };
    if width == 0 || height == 0 {
        return Err(ImageError::Corrupt(format!(
            "the header says {width}×{height} pixels"
        )));
    }
    Ok(Probe {
        format,
        width,
        height,
        layout,
    })
}

/// The format whose magic number `bytes` start with.
pub(super) fn sniff(bytes: &[u8]) -> Option<SourceFormat> {
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(SourceFormat::Jpeg)
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(SourceFormat::Png)
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some(SourceFormat::Gif)
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some(SourceFormat::Webp)
    } else if bytes.len() >= 12
        && &bytes[4..8] == b"ftyp"
        && matches!(&bytes[8..12], b"avif" | b"avis")
    {
        Some(SourceFormat::Avif)
    } else {
        None
    }
}

/// The `image` crate's name for a format it decodes.
pub(super) fn image_format(format: SourceFormat) -> ImageFormat {
    match format {
        SourceFormat::Jpeg => ImageFormat::Jpeg,
        SourceFormat::Png => ImageFormat::Png,
        SourceFormat::Gif => ImageFormat::Gif,
        SourceFormat::Webp => ImageFormat::WebP,
        SourceFormat::Avif => ImageFormat::Avif,
    }
}

/// The whole of an AVIF file, at most [`MAX_AVIF_BYTES`].
pub(super) fn avif_bytes(path: &Path) -> Result<Vec<u8>, ImageError> {
    let file = File::open(path).map_err(|e| io_error(path, &e))?;
    read_avif(file)
        .map_err(|e| io_error(path, &e))?
        .ok_or_else(|| ImageError::Corrupt(avif_too_long()))
}

/// All of `r`, or `None` past [`MAX_AVIF_BYTES`] (the server's file, the
/// decoder child's stdin).
pub(super) fn read_avif(r: impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut data = Vec::new();
    r.take(MAX_AVIF_BYTES + 1).read_to_end(&mut data)?;
    Ok((data.len() as u64 <= MAX_AVIF_BYTES).then_some(data))
}

/// Why an AVIF over [`MAX_AVIF_BYTES`] is refused.
pub(super) fn avif_too_long() -> String {
    format!(
        "an AVIF file over {} MiB is not transformed here",
        MAX_AVIF_BYTES >> 20
    )
}

/// The AVIF decoder's error (`max`: the pixel limit it was given).
pub(super) fn from_avif(e: filestore_avif::AvifError, max: u64) -> ImageError {
    match e {
        filestore_avif::AvifError::NotAvif => ImageError::NotAnImage,
        filestore_avif::AvifError::TooLarge { width, height } => {
            ImageError::TooLarge { width, height, max }
        }
        e => corrupt(e),
    }
}
