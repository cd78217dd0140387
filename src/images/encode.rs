//! Writing a variant: WebP (lossy, libwebp), AVIF (ravif, a fast speed),
//! JPEG and PNG (the `image` crate). No EXIF, ICC or other metadata is
//! written: the encoders are given pixels only.

use image::codecs::avif::AvifEncoder;
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{DynamicImage, ExtendedColorType, ImageEncoder};

use super::ImageError;
use crate::domain::transform::Output;

/// ravif's speed, 1 (slowest, smallest) to 10: thumbnails must be quick.
pub(super) const AVIF_SPEED: u8 = 9;

/// `image` (8-bit RGB or RGBA, as `resize::apply` leaves it) as `output` at
/// quality `q` (1–100; PNG ignores it).
pub(super) fn encode(image: DynamicImage, output: Output, q: u8) -> Result<Vec<u8>, ImageError> {
    let (w, h) = (image.width(), image.height());
    let (color, pixels) = if image.color().has_alpha() {
        (ExtendedColorType::Rgba8, image.into_rgba8().into_raw())
    } else {
        (ExtendedColorType::Rgb8, image.into_rgb8().into_raw())
    };
    let fail = |e: &dyn std::fmt::Display| ImageError::Encode(format!("{}: {e}", output.name()));
    let mut out = Vec::new();
    match output {
        Output::Webp => {
            let encoder = if color == ExtendedColorType::Rgba8 {
                webp::Encoder::from_rgba(&pixels, w, h)
            } else {
                webp::Encoder::from_rgb(&pixels, w, h)
            };
            let encoded = encoder
                .encode_simple(false, f32::from(q))
                .map_err(|e| fail(&format!("{e:?}")))?;
            out.extend_from_slice(&encoded);
        }
        Output::Avif => AvifEncoder::new_with_speed_quality(&mut out, AVIF_SPEED, q)
            .write_image(&pixels, w, h, color)
            .map_err(|e| fail(&e))?,
        Output::Jpeg => JpegEncoder::new_with_quality(&mut out, q)
            .write_image(&pixels, w, h, color)
            .map_err(|e| fail(&e))?,
        Output::Png => {
            PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Adaptive)
                .write_image(&pixels, w, h, color)
                .map_err(|e| fail(&e))?;
        }
    }
    Ok(out)
}
