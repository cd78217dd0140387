//! A JPEG's layout from its markers (no bit decoded): its frame, for the
//! render's memory estimate, and whether its bytes can hold the image it
//! claims. `jpeg-decoder` reads zeros past a marker that comes before a
//! scan's data is done, so a file of headers alone claiming 7000×7000
//! pixels was a grey image of 147 MB; here it is refused, unread: every
//! block of a Huffman-coded scan takes at least one bit (its DC code; and
//! a sequential scan's block an end-of-block code too), and a file that
//! ends before its end-of-image marker is cut short (both decoders refuse
//! it, after allocating the image).

use std::io::Read;

use super::bits::Input;
use super::corrupt;
use crate::images::ImageError;

/// What the frame header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JpegLayout {
    pub width: u32,
    pub height: u32,
    pub components: u8,
    /// The largest sampling factors (1 to 4 each).
    pub sampling: (u8, u8),
    /// Progressive: `jpeg-decoder` keeps every coefficient (128 bytes a
    /// block and component) until the last scan.
    pub progressive: bool,
    /// Lossless (any precision up to 16 bits; 16-bit samples are 2 bytes).
    pub lossless: bool,
    /// A frame `jpeg_dc` decodes at 1/8, and at 1/4, 3/8 and 1/2 too when
    /// a luma block's side times these fit in 8: the largest factor by which
    /// a component is subsampled, across and down (Huffman, 8-bit, one or
    /// three components, each one's sampling dividing the largest).
    pub scaled: Option<(u8, u8)>,
}

/// One component of the frame: its id and sampling.
#[derive(Clone, Copy)]
struct Component {
    id: u8,
    h: u32,
    v: u32,
}

/// Reads the markers of the JPEG `input` to its frame header; with
/// `whole`, on to its end-of-image marker, refusing one whose scans are
/// shorter than their blocks' least bits, or that ends first.
pub(crate) fn layout(input: impl Read, whole: bool) -> Result<JpegLayout, ImageError> {
    let mut input = Input::new(input);
    if input.marker()? != 0xD8 {
        return Err(corrupt("no start of image"));
    }
    let mut frame: Option<(JpegLayout, Vec<Component>)> = None;
    let mut arithmetic = false;
    loop {
        match input.marker()? {
            code @ (0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF) => {
                if frame.is_some() {
                    return Err(corrupt("two frame headers"));
                }
                let parsed = parse_frame(code, &input.segment()?)?;
                if !whole {
                    return Ok(parsed.0);
                }
                frame = Some(parsed);
                arithmetic = code >= 0xC9;
            }
            0xDA => {
                let scan = input.segment()?;
                let Some((layout, components)) = &frame else {
                    return Err(corrupt("a scan before the frame header"));
                };
                // The scan's data, through its restart markers.
                let mut bytes = input.skip_to_marker()?;
                while matches!(input.peek_marker(), Some(0xD0..=0xD7)) {
                    input.marker()?;
                    bytes += input.skip_to_marker()?;
                }
                // Arithmetic coding has no least bits a block (and neither
                // decoder here reads it: refused when decoded).
                if !arithmetic {
                    let least = least_bits(layout, components, &scan)?;
                    if bytes.saturating_mul(8) < least {
                        return Err(ImageError::Corrupt(format!(
                            "the file's bytes end before its image data does: a scan of \
                             {bytes} bytes for a {}×{} image",
                            layout.width, layout.height
                        )));
                    }
                }
            }
            0xD9 => break,
            0xD0..=0xD7 | 0x01 => {}
            _ => {
                input.segment()?;
            }
        }
    }
    frame
        .map(|(layout, _)| layout)
        .ok_or_else(|| corrupt("no frame header"))
}

fn parse_frame(code: u8, s: &[u8]) -> Result<(JpegLayout, Vec<Component>), ImageError> {
    if s.len() < 6 {
        return Err(corrupt("a short frame header"));
    }
    let count = usize::from(s[5]);
    if count == 0 || s.len() < 6 + 3 * count {
        return Err(corrupt("a short frame header"));
    }
    let components: Vec<Component> = s[6..6 + 3 * count]
        .chunks_exact(3)
        .map(|c| Component {
            id: c[0],
            h: u32::from(c[1] >> 4).clamp(1, 4),
            v: u32::from(c[1] & 15).clamp(1, 4),
        })
        .collect();
    let max = |f: fn(&Component) -> u32| components.iter().map(f).max().unwrap_or(1);
    let sampling = (
        u8::try_from(max(|c| c.h)).unwrap_or(4),
        u8::try_from(max(|c| c.v)).unwrap_or(4),
    );
    let divides = components.iter().all(|c| {
        sampling.0 % u8::try_from(c.h).unwrap_or(1) == 0
            && sampling.1 % u8::try_from(c.v).unwrap_or(1) == 0
    });
    let least = |f: fn(&Component) -> u32| components.iter().map(f).min().unwrap_or(1);
    let ours = matches!(code, 0xC0..=0xC2) && s[0] == 8 && matches!(count, 1 | 3) && divides;
    let scaled = ours.then(|| {
        if count == 1 {
            (1, 1)
        } else {
            let ratio = |max: u8, least: u32| max / u8::try_from(least).unwrap_or(1);
            (
                ratio(sampling.0, least(|c| c.h)),
                ratio(sampling.1, least(|c| c.v)),
            )
        }
    });
    let layout = JpegLayout {
        height: u32::from(u16::from_be_bytes([s[1], s[2]])),
        width: u32::from(u16::from_be_bytes([s[3], s[4]])),
        components: s[5],
        sampling,
        progressive: matches!(code, 0xC2 | 0xC6 | 0xCA | 0xCE),
        lossless: matches!(code, 0xC3 | 0xC7 | 0xCB | 0xCF),
        scaled,
    };
    Ok((layout, components))
}

/// The fewest bits the scan `s` (its header) can take: a bit a block of
/// each of its components for a DC scan (a first scan's shortest code, a
/// refinement's one bit), two for a sequential scan's block (DC code and
/// end of block), a bit a sample for a lossless one, none for a
/// progressive AC scan (its end-of-band runs may skip thousands of blocks).
fn least_bits(layout: &JpegLayout, components: &[Component], s: &[u8]) -> Result<u64, ImageError> {
    let count = usize::from(*s.first().unwrap_or(&0));
    if count == 0 || s.len() < 1 + 2 * count + 3 {
        return Err(corrupt("a malformed scan header"));
    }
    let spectral_start = s[1 + 2 * count];
    let per_block = if layout.lossless {
        0
    } else if layout.progressive {
        u64::from(spectral_start == 0)
    } else {
        2
    };
    let (hmax, vmax) = (u32::from(layout.sampling.0), u32::from(layout.sampling.1));
    let mut bits = 0u64;
    for choice in s[1..=2 * count].chunks_exact(2) {
        let c = components
            .iter()
            .find(|c| c.id == choice[0])
            .ok_or_else(|| corrupt("a scan names a component not in the frame"))?;
        // The component's samples, and its 8×8 blocks (no padding counted).
        let across = u64::from((layout.width * c.h).div_ceil(hmax));
        let down = u64::from((layout.height * c.v).div_ceil(vmax));
        bits += if layout.lossless {
            across * down
        } else {
            across.div_ceil(8) * down.div_ceil(8) * per_block
        };
    }
    Ok(bits)
}
