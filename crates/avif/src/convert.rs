//! YUV (or monochrome) frames to 8-bit RGB(A): range expansion, the matrix
//! coefficients of ISO/IEC 23091-4 / ITU-T H.273, nearest-neighbour chroma
//! upsampling, and 10/12-bit samples scaled down to 8 bits.

use crate::dav1d::{Frame, Layout};
use crate::AvifError;

/// How Y'CbCr maps to R'G'B'.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Matrix {
    /// GBR stored as is (matrix 0): Y is G, Cb is B, Cr is R.
    Identity,
    /// The classic luma/colour-difference matrix, by its Kr and Kb.
    YCbCr { kr: f32, kb: f32 },
    /// YCgCo (matrix 8).
    YCgCo,
}

const BT601: Matrix = Matrix::YCbCr {
    kr: 0.299,
    kb: 0.114,
};
const BT709: Matrix = Matrix::YCbCr {
    kr: 0.2126,
    kb: 0.0722,
};
const BT2020: Matrix = Matrix::YCbCr {
    kr: 0.2627,
    kb: 0.0593,
};

impl Matrix {
    /// The matrix for an H.273 `matrix_coefficients` code. Unspecified (2)
    /// is BT.601, as AVIF decoders do. Chromaticity-derived (12) follows the
    /// colour primaries when they are BT.709 or BT.2020 (BT.601 otherwise);
    /// BT.2020 constant luminance (10) is approximated by its non-constant
    /// matrix.
    pub(crate) fn from_cicp(matrix: u16, primaries: u16) -> Result<Self, AvifError> {
        Ok(match matrix {
            0 => Self::Identity,
            1 => BT709,
            2 | 5 | 6 => BT601,
            4 => Self::YCbCr { kr: 0.30, kb: 0.11 },
            7 => Self::YCbCr {
                kr: 0.212,
                kb: 0.087,
            },
            8 => Self::YCgCo,
            9 | 10 => BT2020,
            12 => match primaries {
                1 => BT709,
                9 => BT2020,
                _ => BT601,
            },
            other => {
                return Err(AvifError::Unsupported(format!(
                    "matrix coefficients {other} (ISO/IEC 23091-4)"
                )))
            }
        })
    }
}

/// Colour interpretation of one frame's samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Colour {
    pub(crate) matrix: Matrix,
    pub(crate) full_range: bool,
}

/// The output pixels, RGB or RGBA, row-major with no padding.
pub(crate) struct Canvas {
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) channels: usize,
    pub(crate) pixels: Vec<u8>,
}

impl Canvas {
    /// A canvas of opaque black (alpha 255 where there is alpha). Fails
    /// rather than aborts when the memory is not there.
    pub(crate) fn new(width: usize, height: usize, channels: usize) -> Result<Self, AvifError> {
        let len = width
            .checked_mul(height)
            .and_then(|n| n.checked_mul(channels))
            .ok_or_else(|| AvifError::Unsupported("image too large for this machine".into()))?;
        let mut pixels = Vec::new();
        pixels
            .try_reserve_exact(len)
            .map_err(|_| AvifError::Unsupported("not enough memory for the image".into()))?;
        pixels.resize(len, 0);
        if channels == 4 {
            for px in pixels.chunks_exact_mut(4) {
                px[3] = 255;
            }
        }
        Ok(Self {
            width,
            height,
            channels,
            pixels,
        })
    }

    /// The rows and columns a frame placed at (x0, y0) covers, cropped to
    /// the canvas; `None` when it falls outside.
    fn region(&self, frame: &Frame, x0: usize, y0: usize) -> Option<(usize, usize)> {
        let w = frame.width().min(self.width.checked_sub(x0)?);
        let h = frame.height().min(self.height.checked_sub(y0)?);
        (w > 0 && h > 0).then_some((w, h))
    }
}

/// Sample normalisation for a bit depth and range: `(value - offset) * scale`
/// maps to 0..=1 (luma) or -0.5..=0.5 (chroma).
#[derive(Clone, Copy)]
struct Range {
    y_offset: f32,
    y_scale: f32,
    c_offset: f32,
    c_scale: f32,
}

impl Range {
    fn new(bit_depth: u8, full: bool) -> Self {
        // 8, 10 or 12 (checked by the decoder): all of these fit a u16.
        let depth = u32::from(bit_depth.clamp(8, 16));
        let max = f32::from(u16::MAX >> (16 - depth));
        let mid = f32::from(1u16 << (depth - 1));
        if full {
            Self {
                y_offset: 0.0,
                y_scale: 1.0 / max,
                c_offset: mid,
                c_scale: 1.0 / max,
            }
        } else {
            let unit = f32::from(1u16 << (depth - 8));
            Self {
                y_offset: 16.0 * unit,
                y_scale: 1.0 / (219.0 * unit),
                c_offset: mid,
                c_scale: 1.0 / (224.0 * unit),
            }
        }
    }

    fn luma(self, v: u16) -> f32 {
        (f32::from(v) - self.y_offset) * self.y_scale
    }

    fn chroma(self, v: u16) -> f32 {
        (f32::from(v) - self.c_offset) * self.c_scale
    }
}

/// 0..=1 to 0..=255, rounded and clamped.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn to_u8(v: f32) -> u8 {
    // In range after the clamp, so the cast is exact.
    (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8
}

/// One frame's sample-to-R'G'B' conversion.
struct Converter {
    matrix: Matrix,
    range: Range,
    /// Kr/Kb-derived factors (for `Matrix::YCbCr`): Cr to R, Cb and Cr to
    /// G, Cb to B.
    cr_r: f32,
    cb_g: f32,
    cr_g: f32,
    cb_b: f32,
}

impl Converter {
    fn new(colour: Colour, bit_depth: u8) -> Self {
        let (cr_r, cb_g, cr_g, cb_b) = match colour.matrix {
            Matrix::YCbCr { kr, kb } => {
                let kg = 1.0 - kr - kb;
                (
                    2.0 * (1.0 - kr),
                    2.0 * kb * (1.0 - kb) / kg,
                    2.0 * kr * (1.0 - kr) / kg,
                    2.0 * (1.0 - kb),
                )
            }
            Matrix::Identity | Matrix::YCgCo => (0.0, 0.0, 0.0, 0.0),
        };
        Self {
            matrix: colour.matrix,
            range: Range::new(bit_depth, colour.full_range),
            cr_r,
            cb_g,
            cr_g,
            cb_b,
        }
    }

    fn grey(&self, luma: u16) -> [u8; 3] {
        [to_u8(self.range.luma(luma)); 3]
    }

    fn rgb(&self, luma: u16, cb: u16, cr: u16) -> [u8; 3] {
        let range = self.range;
        let [red, green, blue] = match self.matrix {
            // GBR: Y is G, Cb is B, Cr is R, all with luma's range.
            Matrix::Identity => [range.luma(cr), range.luma(luma), range.luma(cb)],
            Matrix::YCbCr { .. } => {
                let (luma, cb, cr) = (range.luma(luma), range.chroma(cb), range.chroma(cr));
                [
                    luma + self.cr_r * cr,
                    luma - self.cb_g * cb - self.cr_g * cr,
                    luma + self.cb_b * cb,
                ]
            }
            Matrix::YCgCo => {
                let (luma, cg, co) = (range.luma(luma), range.chroma(cb), range.chroma(cr));
                let tmp = luma - cg;
                [tmp + co, luma + cg, tmp - co]
            }
        };
        [to_u8(red), to_u8(green), to_u8(blue)]
    }
}

/// Converts `frame` to RGB into the canvas at (x0, y0), cropping what
/// falls outside.
pub(crate) fn paint_color(
    frame: &Frame,
    colour: Colour,
    canvas: &mut Canvas,
    x0: usize,
    y0: usize,
) -> Result<(), AvifError> {
    let Some((width, height)) = canvas.region(frame, x0, y0) else {
        return Ok(());
    };
    let layout = frame.layout();
    if colour.matrix == Matrix::Identity && layout != Layout::I444 {
        return Err(AvifError::Corrupt(
            "identity matrix (GBR) with subsampled chroma".into(),
        ));
    }
    let converter = Converter::new(colour, frame.bit_depth());
    let luma = frame
        .plane(0)
        .ok_or_else(|| AvifError::Corrupt("no luma plane".into()))?;
    let chroma = match layout {
        Layout::I400 => None,
        _ => Some((
            frame
                .plane(1)
                .ok_or_else(|| AvifError::Corrupt("no Cb plane".into()))?,
            frame
                .plane(2)
                .ok_or_else(|| AvifError::Corrupt("no Cr plane".into()))?,
        )),
    };
    let (shift_x, shift_y) = layout.shifts();
    let channels = canvas.channels;
    let stride = canvas.width * channels;
    let (mut luma_row, mut cb_row, mut cr_row) = (Vec::new(), Vec::new(), Vec::new());

    for row in 0..height {
        luma.read_row(row, &mut luma_row);
        if let Some((cb, cr)) = &chroma {
            let chroma_row = (row >> shift_y).min(cb.height - 1);
            cb.read_row(chroma_row, &mut cb_row);
            cr.read_row(chroma_row, &mut cr_row);
        }
        let start = (y0 + row) * stride + x0 * channels;
        let out = &mut canvas.pixels[start..start + width * channels];
        for (column, px) in out.chunks_exact_mut(channels).enumerate() {
            let rgb = if chroma.is_some() {
                let chroma_column = column >> shift_x;
                converter.rgb(
                    luma_row[column],
                    cb_row[chroma_column],
                    cr_row[chroma_column],
                )
            } else {
                converter.grey(luma_row[column])
            };
            px[..3].copy_from_slice(&rgb);
        }
    }
    Ok(())
}

/// Writes `frame`'s luma as the alpha channel of the canvas at (x0, y0).
pub(crate) fn paint_alpha(
    frame: &Frame,
    full_range: bool,
    canvas: &mut Canvas,
    x0: usize,
    y0: usize,
) -> Result<(), AvifError> {
    let Some((width, height)) = canvas.region(frame, x0, y0) else {
        return Ok(());
    };
    if canvas.channels != 4 {
        return Ok(());
    }
    let range = Range::new(frame.bit_depth(), full_range);
    let plane = frame
        .plane(0)
        .ok_or_else(|| AvifError::Corrupt("no alpha plane".into()))?;
    let stride = canvas.width * 4;
    let mut samples = Vec::new();
    for row in 0..height {
        plane.read_row(row, &mut samples);
        let start = (y0 + row) * stride + x0 * 4;
        let out = &mut canvas.pixels[start..start + width * 4];
        for (px, &alpha) in out.chunks_exact_mut(4).zip(&samples) {
            px[3] = to_u8(range.luma(alpha));
        }
    }
    Ok(())
}

/// Premultiplied colour back to straight alpha.
pub(crate) fn unpremultiply(canvas: &mut Canvas) {
    if canvas.channels != 4 {
        return;
    }
    for px in canvas.pixels.chunks_exact_mut(4) {
        let a = u16::from(px[3]);
        if a == 255 {
            continue;
        }
        for c in &mut px[..3] {
            // 255 * 255 + 127 fits a u16; alpha 0 gives black.
            *c = (u16::from(*c) * 255 + a / 2)
                .checked_div(a)
                .map_or(0, |v| u8::try_from(v.min(255)).unwrap_or(u8::MAX));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_map_the_extremes() {
        let full8 = Range::new(8, true);
        assert!((full8.luma(255) - 1.0).abs() < 1e-6);
        assert!(full8.chroma(128).abs() < 1e-6);
        let limited10 = Range::new(10, false);
        assert!(limited10.luma(64).abs() < 1e-6);
        assert!((limited10.luma(940) - 1.0).abs() < 1e-6);
        assert!(limited10.chroma(512).abs() < 1e-6);
        assert!((limited10.chroma(960) - 0.5).abs() < 1e-6);
        let full12 = Range::new(12, true);
        assert_eq!(to_u8(full12.luma(4095)), 255);
        assert_eq!(to_u8(full12.luma(0)), 0);
    }

    #[test]
    fn matrices_by_code() {
        assert_eq!(Matrix::from_cicp(2, 2).unwrap(), BT601);
        assert_eq!(Matrix::from_cicp(1, 1).unwrap(), BT709);
        assert_eq!(Matrix::from_cicp(9, 9).unwrap(), BT2020);
        assert_eq!(Matrix::from_cicp(12, 1).unwrap(), BT709);
        assert_eq!(Matrix::from_cicp(0, 1).unwrap(), Matrix::Identity);
        assert!(Matrix::from_cicp(14, 9).is_err());
        assert!(Matrix::from_cicp(3, 1).is_err());
    }

    #[test]
    fn unpremultiplies() {
        let mut canvas = Canvas {
            width: 3,
            height: 1,
            channels: 4,
            pixels: vec![64, 32, 0, 128, 10, 10, 10, 0, 200, 100, 50, 255],
        };
        unpremultiply(&mut canvas);
        assert_eq!(
            canvas.pixels,
            vec![128, 64, 0, 128, 0, 0, 0, 0, 200, 100, 50, 255]
        );
    }
}
