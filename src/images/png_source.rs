//! A PNG decoded with the `png` crate itself rather than through `image`:
//! its ICC profile and text chunks are skipped unread (nothing here uses
//! them), so a profile that inflates to gigabytes, or megabytes of text,
//! costs nothing; `image` inflated a profile up to the whole pixel budget
//! on every render. The pixels keep the limit the other decoders have.

use super::zeroed::zeroed;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use image::metadata::Orientation;
use image::{DynamicImage, ImageBuffer};

use super::read::{corrupt, io_error, open};
use super::shrink::BoxShrink;
use super::ImageError;

/// A PNG whose header is read, ready for its first frame.
pub(super) struct PngSource {
    reader: png::Reader<BufReader<File>>,
}

impl PngSource {
    /// Opens `path`, its chunks before the pixels read within `max_bytes`
    /// (the ICC profile and text skipped), and its EXIF orientation.
    pub(super) fn open(
        path: &Path,
        max_bytes: u64,
    ) -> Result<(PngSource, Orientation), ImageError> {
        let bytes = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        let mut decoder = png::Decoder::new_with_limits(open(path)?, png::Limits { bytes });
        decoder.set_ignore_iccp_chunk(true);
        decoder.set_ignore_text_chunk(true);
        // Palettes and low bit depths to 8 bits, tRNS to alpha; 16 bits kept.
        decoder.set_transformations(png::Transformations::EXPAND);
        let reader = decoder.read_info().map_err(|e| refusal(path, e))?;
        let orientation = reader
            .info()
            .exif_metadata
            .as_deref()
            .and_then(Orientation::from_exif_chunk)
            .unwrap_or(Orientation::NoTransforms);
        Ok((PngSource { reader }, orientation))
    }

    /// The first frame (the image an APNG shows without animation), when
    /// its pixels take at most `max_bytes`; `too_large` otherwise. Read a
    /// row at a time where [`by_rows`] says so: shrunk by `shrink` as its
    /// rows are decoded ([`BoxShrink`]), in 8 bits, never held whole.
    pub(super) fn decode(
        mut self,
        path: &Path,
        max_bytes: u64,
        shrink: u32,
        too_large: impl Fn() -> ImageError,
    ) -> Result<DynamicImage, ImageError> {
        let wide = self.reader.output_color_type().1 == png::BitDepth::Sixteen;
        if by_rows(self.reader.info().interlaced, wide, shrink) {
            return self.shrunk(path, shrink);
        }
        let size = self.reader.output_buffer_size().ok_or_else(&too_large)?;
        if size as u64 > max_bytes {
            return Err(too_large());
        }
        let mut buf = zeroed::<u8>(size);
        let frame = self.reader.next_frame(&mut buf).map_err(|e| match e {
            png::DecodingError::LimitsExceeded => too_large(),
            e => refusal(path, e),
        })?;
        buf.truncate(frame.buffer_size());
        let (color, depth) = self.reader.output_color_type();
        // Its buffers go before the pixels are copied into an image.
        drop(self.reader);
        image_of(frame.width, frame.height, color, depth, buf)
    }

    /// The first frame shrunk by `k` (1: not shrunk), a row at a time, in
    /// 8 bits.
    fn shrunk(mut self, path: &Path, k: u32) -> Result<DynamicImage, ImageError> {
        let (width, height) = self.reader.info().size();
        let (color, depth) = self.reader.output_color_type();
        let channels = color.samples();
        let sample_bytes = if depth == png::BitDepth::Sixteen {
            2
        } else {
            1
        };
        let line = self
            .reader
            .output_line_size(width)
            .ok_or_else(|| ImageError::Corrupt("a PNG row too long".into()))?;
        let (out_w, out_h) = (
            BoxShrink::out_side(width, k),
            BoxShrink::out_side(height, k),
        );
        let mut boxes = BoxShrink::new(k, width, channels, sample_bytes, out_h);
        let mut row = zeroed::<u8>(line);
        let mut rows = 0u32;
        while self
            .reader
            .read_row(&mut row)
            .map_err(|e| refusal(path, e))?
            .is_some()
        {
            boxes.push_row(&row);
            rows += 1;
        }
        if rows != height {
            return Err(ImageError::Corrupt(format!(
                "a PNG of {height} rows gave {rows}"
            )));
        }
        let buf = boxes.finish();
        let image = match channels {
            1 => ImageBuffer::from_raw(out_w, out_h, buf).map(DynamicImage::ImageLuma8),
            2 => ImageBuffer::from_raw(out_w, out_h, buf).map(DynamicImage::ImageLumaA8),
            3 => ImageBuffer::from_raw(out_w, out_h, buf).map(DynamicImage::ImageRgb8),
            _ => ImageBuffer::from_raw(out_w, out_h, buf).map(DynamicImage::ImageRgba8),
        };
        image.ok_or_else(|| ImageError::Corrupt("the PNG shrink made too few pixels".into()))
    }
}

/// Whether a PNG is read a row at a time (and shrunk by `shrink`) rather
/// than whole: its rows must come in order (not interlaced: Adam7 sends
/// seven passes); then when it is shrunk, or its 16-bit samples would
/// otherwise be held whole twice (bytes, then words) only to be made 8
/// bits by the resize. The render's estimate asks the same.
pub(super) fn by_rows(interlaced: bool, wide: bool, shrink: u32) -> bool {
    !interlaced && (shrink > 1 || wide)
}

/// The decoder's pixels as an image.
fn image_of(
    w: u32,
    h: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    buf: Vec<u8>,
) -> Result<DynamicImage, ImageError> {
    use png::BitDepth::{Eight, Sixteen};
    use png::ColorType::{Grayscale, GrayscaleAlpha, Rgb, Rgba};
    let wide = |buf: Vec<u8>| -> Vec<u16> {
        buf.chunks_exact(2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .collect()
    };
    let image = match (color, depth) {
        (Grayscale, Eight) => ImageBuffer::from_raw(w, h, buf).map(DynamicImage::ImageLuma8),
        (GrayscaleAlpha, Eight) => ImageBuffer::from_raw(w, h, buf).map(DynamicImage::ImageLumaA8),
        (Rgb, Eight) => ImageBuffer::from_raw(w, h, buf).map(DynamicImage::ImageRgb8),
        (Rgba, Eight) => ImageBuffer::from_raw(w, h, buf).map(DynamicImage::ImageRgba8),
        (Grayscale, Sixteen) => {
            ImageBuffer::from_raw(w, h, wide(buf)).map(DynamicImage::ImageLuma16)
        }
        (GrayscaleAlpha, Sixteen) => {
            ImageBuffer::from_raw(w, h, wide(buf)).map(DynamicImage::ImageLumaA16)
        }
        (Rgb, Sixteen) => ImageBuffer::from_raw(w, h, wide(buf)).map(DynamicImage::ImageRgb16),
        (Rgba, Sixteen) => ImageBuffer::from_raw(w, h, wide(buf)).map(DynamicImage::ImageRgba16),
        (color, depth) => {
            return Err(ImageError::Corrupt(format!(
                "a PNG of {color:?} at {depth:?} after expansion"
            )))
        }
    };
    image.ok_or_else(|| ImageError::Corrupt("the PNG decoder returned too few pixels".into()))
}

/// A decoder's refusal: the file's fault (cut short, malformed) is the
/// client's, a failure to read it ours ([`io_error`]).
fn refusal(path: &Path, e: png::DecodingError) -> ImageError {
    match e {
        png::DecodingError::IoError(e) => io_error(path, &e),
        png::DecodingError::LimitsExceeded => {
            ImageError::Corrupt("over a decoder limit: Memory limit exceeded".into())
        }
        e => corrupt(e),
    }
}
