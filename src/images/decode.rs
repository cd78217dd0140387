//! Decoding a source image, its header already checked: a JPEG at the
//! smallest DCT scale that covers the size needed (1/8, 1/4, 3/8 and 1/2
//! by `jpeg_dc`; the others by `jpeg-decoder`), an AVIF by `filestore-avif`
//! (rav1d) and a still WebP by `filestore-webp` (libwebp, shrunk on load to
//! the size needed) in a child process (`isolated`), a PNG by `png`
//! (`png_source`), GIF and animated WebP through the `image` crate with its
//! limits set. The first frame of an animation is the image.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use image::metadata::Orientation;
use image::{
    DynamicImage, GrayImage, ImageBuffer, ImageDecoder, ImageReader, Luma, RgbImage, RgbaImage,
};

use super::layout::Layout;
use super::png_source::PngSource;
use super::probe::image_format;
use super::read::{corrupt, from_image, open};
use super::{ImageError, Limits, Probe};
use crate::domain::transform::SourceFormat;

/// The bytes per pixel the decoders may allocate for the pixels themselves
/// (RGBA, 8 bits a channel); more (16-bit channels) is over the limit.
const BYTES_PER_PIXEL: u64 = 4;

/// A source opened for decoding, its header and orientation read.
pub(super) struct Source {
    decoder: Decoder,
    width: u32,
    height: u32,
    orientation: Orientation,
    max: u64,
    path: PathBuf,
}

enum Decoder {
    Jpeg(Box<jpeg_decoder::Decoder<BufReader<File>>>),
    /// Decoded when opened: its orientation is known only then.
    Avif(Box<DynamicImage>),
    Png(Box<PngSource>),
    /// libwebp in a child; `image`'s decoder when the child leaves it.
    Webp(Box<dyn ImageDecoder>),
    Other(Box<dyn ImageDecoder>),
}

impl Source {
    /// Opens `path` (whose header is `header`) with decoder limits drawn
    /// from `limits`, and reads its orientation.
    pub(super) fn open(path: &Path, header: Probe, limits: &Limits) -> Result<Source, ImageError> {
        let max = limits.max_source_pixels;
        let max_bytes = max.saturating_mul(BYTES_PER_PIXEL);
        let side = u32::try_from(max).unwrap_or(u32::MAX);
        let (decoder, orientation) = if header.format == SourceFormat::Jpeg {
            let mut decoder = jpeg_decoder::Decoder::new(open(path)?);
            decoder.set_max_decoding_buffer_size(usize::try_from(max_bytes).unwrap_or(usize::MAX));
            decoder.read_info().map_err(corrupt)?;
            let orientation = decoder
                .exif_data()
                .and_then(Orientation::from_exif_chunk)
                .unwrap_or(Orientation::NoTransforms);
            (Decoder::Jpeg(Box::new(decoder)), orientation)
        } else if header.format == SourceFormat::Avif {
            let image = super::isolated::decode(path, max)?;
            let orientation =
                Orientation::from_exif(image.orientation).unwrap_or(Orientation::NoTransforms);
            (Decoder::Avif(Box::new(child_image(image)?)), orientation)
        } else if header.format == SourceFormat::Png {
            let (png, orientation) = PngSource::open(path, max_bytes)?;
            (Decoder::Png(Box::new(png)), orientation)
        } else {
            let mut reader = ImageReader::with_format(open(path)?, image_format(header.format));
            let mut decoder_limits = image::Limits::default();
            decoder_limits.max_image_width = Some(side);
            decoder_limits.max_image_height = Some(side);
            decoder_limits.max_alloc = Some(max_bytes);
            reader.limits(decoder_limits);
            let mut decoder: Box<dyn ImageDecoder> =
                Box::new(reader.into_decoder().map_err(|e| from_image(path, e))?);
            // An unreadable EXIF block is no reason to refuse the pixels.
            let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
            if header.layout == (Layout::Webp { animated: false }) {
                (Decoder::Webp(decoder), orientation)
            } else {
                (Decoder::Other(decoder), orientation)
            }
        };
        // An AVIF is decoded already (and cropped): its own size.
        let (width, height) = match &decoder {
            Decoder::Avif(image) => (image.width(), image.height()),
            _ => (header.width, header.height),
        };
        Ok(Source {
            decoder,
            width,
            height,
            orientation,
            max,
            path: path.to_path_buf(),
        })
    }

    pub(super) fn orientation(&self) -> Orientation {
        self.orientation
    }

    /// The dimensions as displayed, after the EXIF orientation.
    pub(super) fn oriented_size(&self) -> (u32, u32) {
        if swaps_axes(self.orientation) {
            (self.height, self.width)
        } else {
            (self.width, self.height)
        }
    }

    /// Decodes the pixels, as stored (not yet oriented). A JPEG is decoded
    /// at the smallest scale still at least `need_w`×`need_h`, a still WebP
    /// or a PNG stored row by row (not interlaced) shrunk by the largest
    /// whole factor that leaves it so; the other formats at full size.
    pub(super) fn decode(self, need_w: u32, need_h: u32) -> Result<DynamicImage, ImageError> {
        let too_large = || ImageError::TooLarge {
            width: self.width,
            height: self.height,
            max: self.max,
        };
        let max_bytes = self.max.saturating_mul(BYTES_PER_PIXEL);
        match self.decoder {
            Decoder::Avif(image) => Ok(*image),
            Decoder::Png(png) => {
                let shrink = shrink_factor(self.width, self.height, need_w, need_h);
                png.decode(&self.path, max_bytes, shrink, too_large)
            }
            Decoder::Webp(decoder) => {
                let shrink = shrink_factor(self.width, self.height, need_w, need_h);
                let size = filestore_webp::shrunk_size(self.width, self.height, shrink);
                let answer = u64::from(size.0) * u64::from(size.1);
                match super::isolated::decode_webp(&self.path, self.max, shrink, answer)? {
                    Some(image) => {
                        if (image.width, image.height) != size {
                            return Err(ImageError::Corrupt(
                                "the WebP decoder answered another size".into(),
                            ));
                        }
                        child_image(image)
                    }
                    None => whole(decoder, max_bytes, &self.path, too_large),
                }
            }
            Decoder::Other(decoder) => whole(decoder, max_bytes, &self.path, too_large),
            Decoder::Jpeg(mut decoder) => {
                let eighths = jpeg_eighths(self.width, self.height, need_w, need_h);
                if eighths < 8 {
                    let input = open(&self.path)?;
                    if let Some(image) = super::jpeg_dc::decode(input, self.max, eighths)? {
                        return Ok(image);
                    }
                }
                super::jpeg_dc::check_scans(open(&self.path)?)?;
                let denominator = jpeg_decoder_denominator(eighths);
                if denominator > 1 {
                    let scaled =
                        |side: u32| u16::try_from(side.div_ceil(denominator)).unwrap_or(u16::MAX);
                    decoder
                        .scale(scaled(self.width), scaled(self.height))
                        .map_err(corrupt)?;
                }
                let pixels = decoder.decode().map_err(|e| match e {
                    jpeg_decoder::Error::Format(text)
                        if text.contains("exceeds maximum allowed size") =>
                    {
                        too_large()
                    }
                    e => corrupt(e),
                })?;
                let info = decoder
                    .info()
                    .ok_or_else(|| ImageError::Corrupt("no JPEG frame header".into()))?;
                jpeg_image(info, pixels)
            }
        }
    }
}

/// The whole picture from `image`'s `decoder`, of at most `max_bytes`.
fn whole(
    decoder: Box<dyn ImageDecoder>,
    max_bytes: u64,
    path: &Path,
    too_large: impl Fn() -> ImageError,
) -> Result<DynamicImage, ImageError> {
    // `from_decoder` does not hold the pixels to the decoder's limits
    // (`ImageReader::decode` would): checked here.
    if decoder.total_bytes() > max_bytes {
        return Err(too_large());
    }
    DynamicImage::from_decoder(decoder).map_err(|e| match e {
        image::ImageError::Limits(_) => too_large(),
        e => from_image(path, e),
    })
}

/// The whole factor a `width`×`height` still WebP or PNG is shrunk by on
/// load: the largest that leaves it at least `need_w`×`need_h` (each side
/// divided, rounded up), as libvips chooses it for sharp.
pub(super) fn shrink_factor(width: u32, height: u32, need_w: u32, need_h: u32) -> u32 {
    (width / need_w.max(1)).min(height / need_h.max(1)).max(1)
}

/// The JPEG DCT scale to decode at, in eighths (1, 2, 3, 4 or 8: samples
/// a block's side): the smallest whose result, `ceil(side × eighths / 8)`,
/// is still at least `need_w`×`need_h`. 3/8 is `jpeg_dc`'s alone (libjpeg's
/// scaled IDCTs have it too; libvips, so sharp, uses 1/2 there): a 4000 px
/// photo at 1080 px is decoded at 1500 px, not 2000, and the IDCT, colour
/// conversion and resize see 44 % fewer pixels.
pub(super) fn jpeg_eighths(width: u32, height: u32, need_w: u32, need_h: u32) -> u32 {
    [1, 2, 3, 4]
        .into_iter()
        .find(|&n| eighths_of(width, n) >= need_w && eighths_of(height, n) >= need_h)
        .unwrap_or(8)
}

/// A side decoded at `eighths`/8 scale: `ceil(side × eighths / 8)`.
pub(super) fn eighths_of(side: u32, eighths: u32) -> u32 {
    u32::try_from((u64::from(side) * u64::from(eighths)).div_ceil(8)).unwrap_or(u32::MAX)
}

/// The scale `jpeg-decoder` decodes at, as a denominator (8, 4, 2 or 1),
/// when `jpeg_dc` leaves a file to it: the smallest of its scales that is
/// at least `eighths`/8.
pub(super) fn jpeg_decoder_denominator(eighths: u32) -> u32 {
    match eighths {
        1 => 8,
        2 => 4,
        3 | 4 => 2,
        _ => 1,
    }
}

/// Whether an orientation turns the image a quarter (width and height swap).
pub(super) fn swaps_axes(orientation: Orientation) -> bool {
    matches!(
        orientation,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    )
}

/// A child decoder's pixels as an image, cropped to an AVIF's clean
/// aperture (`clap`) if it has one (before its rotation, as the box means).
fn child_image(image: super::isolated::Decoded) -> Result<DynamicImage, ImageError> {
    let (w, h) = (image.width, image.height);
    let short = || ImageError::Corrupt("the decoder returned too few pixels".into());
    let pixels = if image.has_alpha {
        DynamicImage::ImageRgba8(RgbaImage::from_raw(w, h, image.pixels).ok_or_else(short)?)
    } else {
        DynamicImage::ImageRgb8(RgbImage::from_raw(w, h, image.pixels).ok_or_else(short)?)
    };
    Ok(match image.crop {
        Some([x, y, cw, ch]) if cw > 0 && ch > 0 && (cw, ch) != (w, h) => {
            pixels.crop_imm(x, y, cw, ch)
        }
        _ => pixels,
    })
}

/// `jpeg-decoder`'s pixels as an image.
fn jpeg_image(info: jpeg_decoder::ImageInfo, pixels: Vec<u8>) -> Result<DynamicImage, ImageError> {
    let (w, h) = (u32::from(info.width), u32::from(info.height));
    let short = || ImageError::Corrupt("the JPEG decoder returned too few pixels".into());
    Ok(match info.pixel_format {
        jpeg_decoder::PixelFormat::L8 => {
            DynamicImage::ImageLuma8(GrayImage::from_raw(w, h, pixels).ok_or_else(short)?)
        }
        jpeg_decoder::PixelFormat::L16 => {
            let samples = pixels
                .chunks_exact(2)
                .map(|b| u16::from_ne_bytes([b[0], b[1]]))
                .collect();
            DynamicImage::ImageLuma16(
                ImageBuffer::<Luma<u16>, Vec<u16>>::from_raw(w, h, samples).ok_or_else(short)?,
            )
        }
        jpeg_decoder::PixelFormat::RGB24 => {
            DynamicImage::ImageRgb8(RgbImage::from_raw(w, h, pixels).ok_or_else(short)?)
        }
        jpeg_decoder::PixelFormat::CMYK32 => {
            let rgb = pixels.chunks_exact(4).flat_map(cmyk_to_rgb).collect();
            DynamicImage::ImageRgb8(RgbImage::from_raw(w, h, rgb).ok_or_else(short)?)
        }
    })
}

/// One CMYK pixel (as `jpeg-decoder` gives it, not inverted) as RGB.
fn cmyk_to_rgb(cmyk: &[u8]) -> [u8; 3] {
    let k = u32::from(cmyk[3]);
    let channel = |c: u8| {
        let v = (255 - u32::from(c)) * (255 - k) / 255;
        u8::try_from(v).unwrap_or(u8::MAX)
    };
    [channel(cmyk[0]), channel(cmyk[1]), channel(cmyk[2])]
}
