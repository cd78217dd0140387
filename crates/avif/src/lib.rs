//! AVIF decoding for filestore's image variants, in pure Rust: no system
//! library, no nasm, nothing fetched at build time.
//!
//! # Why a crate of its own
//!
//! The `filestore` crate forbids `unsafe` code. The only pure-Rust AV1
//! decoder, [rav1d] (the Rust port of dav1d), exposes dav1d's C API
//! (`dav1d_open`, `dav1d_send_data`, `dav1d_get_picture`, raw pointers and
//! all), so calling it takes `unsafe` blocks. They live here, in the single
//! private module `dav1d` (the rest of the crate denies `unsafe` too), each
//! with the reason it is sound, behind the safe [`dimensions`] and
//! [`decode`].
//!
//! rav1d is built without its `asm` feature (that one needs nasm), with its
//! 8-bit and 16-bit pixel paths. It decodes one still image at a time, with
//! the frame size capped before it allocates, on two threads: rav1d 1.1.0
//! aborts the process on corrupt data with a single frame context (see the
//! `dav1d` module), and a second context takes the path that returns the
//! error.
//!
//! # What is decoded
//!
//! The container (ISOBMFF / HEIF boxes) is read by a small parser in this
//! crate with bounds checks on every read: ftyp (brand avif or avis), meta
//! with hdlr, pitm, iloc (file or idat data), iinf, iref, iprp/ipco/ipma and
//! the properties ispe, colr (nclx and ICC), irot, imir, clap and auxC;
//! and, for sequences, moov down to the first sample of the first track.
//!
//! - The primary item, an `av01` image or a `grid` of `av01` tiles (which
//!   phones and some encoders write), stitched and cropped to the grid's size.
//! - Its alpha auxiliary item, if any (also a grid when the colour is one),
//!   as straight alpha (premultiplied colour, `prem`, is divided back).
//! - An animated AVIF (`avis`): its primary item when it has one (a still
//!   poster), else the first frame of its first AV1 track, without alpha.
//! - Y'CbCr to RGB with the nclx matrix coefficients (BT.601, BT.709,
//!   BT.2020, identity, YCgCo, ...; BT.601 when unspecified), or those of the
//!   AV1 sequence header when there is no nclx `colr`; full or limited
//!   range; 4:2:0, 4:2:2, 4:4:4 or monochrome; 8, 10 or 12 bits, output as
//!   8 bits. Chroma is upsampled nearest-neighbour. Transfer functions and
//!   primaries are not converted (an HDR or wide-gamut image comes out with
//!   its coded values; its ICC profile, if any, is in [`Image::icc_profile`]).
//! - Clean aperture, rotation and mirroring (`clap`, `irot`, `imir`) are
//!   reported in the [`Image`], not applied: crop to [`Image::crop`], then
//!   turn by [`Image::rotation`], then flip by [`Image::mirror`] (or apply
//!   [`Image::exif_orientation`] after the crop).
//! - Not decoded: layered (progressive) images, whose item holds one frame
//!   per layer ([`AvifError::Unsupported`]: see "Limits").
//!
//! # Limits
//!
//! The input is hostile (anyone may upload a file), so what a call costs is
//! bounded by the pixel cap [`decode`] takes and by the file's size, and
//! checked before rav1d is given anything:
//!
//! - Pixels: the declared size (`ispe`, grid) and each AV1 sequence header
//!   are checked against the cap, and rav1d itself refuses a frame header
//!   over it before allocating the frame. The tiles of a grid count
//!   together: all of them, as large as the sequence headers allow,
//!   overhang included.
//! - Frames: the OBUs of each AV1 item (and of a sequence's first sample)
//!   are walked first, and data holding more than one frame is refused, so
//!   there are no hidden frames to decode before the shown one (nor
//!   reference frames kept). Each image decoded (a tile, the alpha) must
//!   have bytes of its own in the file: tiles sharing an extent are
//!   refused. Tiles are decoded one at a time into the output. So a call
//!   decodes at most the cap's worth of pixels for the colour and as much
//!   for the alpha.
//! - Memory: the peak of a decode is estimated from each sequence header
//!   (size, bit depth, chroma layout) and refused ([`AvifError::TooLarge`])
//!   over 24 bytes per pixel of the cap, plus 16 MiB. It is rav1d's (for
//!   the frame rounded up to whole 128x128 superblocks: its planes, 1 to 3
//!   samples a pixel at 1 byte each, 2 over 8 bits, three times over, as
//!   picture and as the coefficients its two frame threads keep between
//!   their passes, and about 6 bytes a pixel of block state), the output
//!   (3 or 4 bytes a pixel) and a copy of the AV1 data. Peaks measured
//!   (resident memory, 4000x3000, rav1d 1.1.0), in bytes a pixel: 8-bit
//!   4:0:0 10.8, 4:2:0 13, 4:4:4 17.5 (18.7 with alpha); 10-bit 4:2:0 17.8;
//!   10 or 12-bit 4:4:4 27.8. So every 8-bit image, and 10 and 12-bit 4:2:0
//!   and 4:2:2 ones, decode up to the cap; 10 and 12-bit 4:4:4 up to about
//!   85% of it. Film grain is not applied (that would take a second
//!   picture).
//! - The container: the parsed boxes take at most a few MiB and a small
//!   multiple of the file; an item split in several extents is copied
//!   once, into at most the file's size (extents adding up to more are
//!   refused before allocating). [`dimensions`] reads boxes only, never an
//!   item's data.
//!
//! The file itself is the caller's, on top.
//!
//! # Licences of the dependencies
//!
//! - rav1d: BSD-2-Clause. Its own dependencies: MIT (raw-cpuid, strum),
//!   CC0-1.0 (to_method), the others MIT OR Apache-2.0 (zerocopy also
//!   BSD-2-Clause); no nasm-built code (nasm-rs, a build dependency, is
//!   unused without `asm`).
//! - libc and thiserror: MIT OR Apache-2.0.
//! - ravif (tests only, as the encoder of the test images): BSD-3-Clause,
//!   with rav1e (BSD-2-Clause).
//!
//! [rav1d]: https://github.com/memorysafety/rav1d

mod container;
mod convert;
mod dav1d;
mod obu;

use std::panic::{catch_unwind, AssertUnwindSafe};

use container::{Container, Grid, Nclx, Property};
use convert::{Canvas, Colour, Matrix};
use dav1d::{Decoder, Frame, Layout, SequenceInfo};

/// Why a file could not be read or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AvifError {
    /// Not an AVIF file: no ftyp box first, or no avif or avis brand.
    #[error("not an AVIF file")]
    NotAvif,
    /// An AVIF file whose boxes or AV1 data are malformed or truncated.
    #[error("corrupt AVIF file: {0}")]
    Corrupt(String),
    /// The image (or one of its AV1 frames, or a grid's tiles together) has
    /// more pixels than allowed, or would take more memory to decode than
    /// the cap allows (see the crate documentation, "Limits").
    #[error("AVIF image of {width}x{height} pixels is over the pixel limit")]
    TooLarge {
        /// Width declared by the file (the frame's or, for a grid's
        /// tiles, all of them side by side).
        width: u32,
        /// Height declared by the file (likewise).
        height: u32,
    },
    /// A valid AVIF using a feature this decoder does not handle.
    #[error("unsupported AVIF file: {0}")]
    Unsupported(String),
}

/// A mirroring to apply to the decoded pixels (`imir`), after the rotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mirror {
    /// Top and bottom exchanged: a flip about the horizontal axis (`imir`
    /// axis 0, Exif orientation 4).
    TopBottom,
    /// Left and right exchanged: a flip about the vertical axis (`imir` axis
    /// 1, Exif orientation 2).
    LeftRight,
}

/// A decoded AVIF image: 8-bit RGB or RGBA pixels, as stored (rotation and
/// mirroring are reported, not applied).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Image {
    /// Width of `pixels`, before rotation.
    pub width: u32,
    /// Height of `pixels`, before rotation.
    pub height: u32,
    /// Row-major pixels, no padding: RGB (3 bytes) or, when `has_alpha`,
    /// RGBA with straight (not premultiplied) alpha.
    pub pixels: Vec<u8>,
    /// Whether `pixels` are RGBA (the file has an alpha auxiliary image).
    pub has_alpha: bool,
    /// Quarter turns anticlockwise (0 to 3) to display the image (`irot`),
    /// applied before `mirror`.
    pub rotation: u8,
    /// Mirroring to display the image (`imir`), applied after `rotation`.
    pub mirror: Option<Mirror>,
    /// The ICC profile of a `colr` box of type prof or rICC, if any.
    pub icc_profile: Option<Vec<u8>>,
    /// The clean aperture (`clap`) as a rectangle of `pixels`, to crop to
    /// before rotating; `None` without one (or with one that is not a whole
    /// rectangle inside the image). Not applied.
    pub crop: Option<Crop>,
}

/// A rectangle of the decoded pixels (from a `clap` box).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crop {
    /// Left column.
    pub x: u32,
    /// Top row.
    pub y: u32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Crop {
    /// The rectangle a `clap` box describes in a `width` x `height` image
    /// (ISO/IEC 14496-12 CleanApertureBox: a size, and the offset of its
    /// centre from the image's), when it is whole pixels and inside.
    fn from_clean_aperture(clap: [(i64, i64); 4], width: u32, height: u32) -> Option<Self> {
        // In i128: products of two 32-bit values, doubled, cannot overflow.
        let whole = |(n, d): (i128, i128)| (d > 0 && n % d == 0).then(|| n / d);
        let [w, h, off_x, off_y] = clap.map(|(n, d)| (i128::from(n), i128::from(d)));
        let (crop_w, crop_h) = (whole(w)?, whole(h)?);
        // Top-left = offset + (image - crop) / 2, as one fraction.
        let corner = |(n, d): (i128, i128), image: u32, crop: i128| {
            whole((2 * n + (i128::from(image) - crop) * d, 2 * d))
        };
        let (x, y) = (
            corner(off_x, width, crop_w)?,
            corner(off_y, height, crop_h)?,
        );
        let fits = |start: i128, len: i128, image: u32| {
            start >= 0 && len > 0 && start + len <= i128::from(image)
        };
        if !fits(x, crop_w, width) || !fits(y, crop_h, height) {
            return None;
        }
        Some(Self {
            x: u32::try_from(x).ok()?,
            y: u32::try_from(y).ok()?,
            width: u32::try_from(crop_w).ok()?,
            height: u32::try_from(crop_h).ok()?,
        })
    }
}

impl Image {
    /// The Exif orientation (1 to 8) equal to `rotation` then `mirror`:
    /// 1 when the pixels display as they are.
    pub fn exif_orientation(&self) -> u8 {
        let turns = usize::from(self.rotation & 3);
        let table: [u8; 4] = match self.mirror {
            None => [1, 8, 3, 6],
            Some(Mirror::TopBottom) => [4, 5, 2, 7],
            Some(Mirror::LeftRight) => [2, 7, 4, 5],
        };
        table[turns]
    }
}

/// Width and height of the primary image (its `ispe`, as stored: before
/// rotation), read from the container without decoding anything.
pub fn dimensions(data: &[u8]) -> Result<(u32, u32), AvifError> {
    let container = Container::parse(data)?;
    match container.primary() {
        Some(id) => item_size(&container, id),
        None => match container.first_sample()? {
            Some(sample) if sample.width > 0 && sample.height > 0 => {
                Ok((sample.width, sample.height))
            }
            Some(_) => Err(AvifError::Corrupt("a track of 0 pixels".into())),
            None => Err(AvifError::Corrupt("no primary item and no track".into())),
        },
    }
}

/// Decodes the primary image to 8-bit RGB, or RGBA when it has an alpha
/// channel, refusing with [`AvifError::TooLarge`] an image (or any AV1 frame
/// in it, or a grid's tiles together) of more than `max_pixels` pixels, or
/// one that would take more memory than the cap allows (see "Limits"),
/// before decoding it.
pub fn decode(data: &[u8], max_pixels: u64) -> Result<Image, AvifError> {
    // A bug of this crate's own (a slice index, an overflow) on a hostile
    // file is then an error for that file, not a crash of the caller;
    // contexts and pictures are released by their guards while unwinding.
    // (A panic inside rav1d cannot unwind out of its `extern "C"`
    // functions: see the `dav1d` module for the one known, and avoided.)
    catch_unwind(AssertUnwindSafe(|| decode_primary(data, max_pixels))).unwrap_or_else(|_| {
        Err(AvifError::Corrupt(
            "decoding failed on this file (internal error)".into(),
        ))
    })
}

fn check_size(width: u32, height: u32, max_pixels: u64) -> Result<(), AvifError> {
    if u64::from(width) * u64::from(height) > max_pixels {
        return Err(AvifError::TooLarge { width, height });
    }
    Ok(())
}

fn usize_of(v: u32) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// An item's size: its `ispe`, or a grid's declared output size.
fn item_size(container: &Container<'_>, id: u32) -> Result<(u32, u32), AvifError> {
    let spatial = container.property(id, |p| match p {
        Property::Spatial(w, h) => Some((*w, *h)),
        _ => None,
    })?;
    let (width, height) = match spatial {
        Some(size) => size,
        None if container.item_kind(id) == Some(*b"grid") => {
            let grid = grid_of(container, id)?;
            (grid.width, grid.height)
        }
        None if container.item_kind(id).is_none() => {
            return Err(AvifError::Corrupt("the primary item is not in iinf".into()))
        }
        None => return Err(AvifError::Corrupt("the primary item has no ispe".into())),
    };
    if width == 0 || height == 0 {
        return Err(AvifError::Corrupt("an image of 0 pixels".into()));
    }
    Ok((width, height))
}

/// A grid item's descriptor, read from its first bytes (never copying the
/// item's data, whatever its extents say).
fn grid_of(container: &Container<'_>, id: u32) -> Result<Grid, AvifError> {
    let (head, len) = container.item_head::<{ Grid::MAX_LEN }>(id)?;
    Grid::parse(&head[..len])
}

/// The `av01` items an image item is decoded from: itself, or the tiles of
/// a grid (checked: their number and type, their essential properties).
fn av1_items(container: &Container<'_>, id: u32) -> Result<Vec<u32>, AvifError> {
    let kind = container
        .item_kind(id)
        .ok_or_else(|| AvifError::Corrupt("an image item is not in iinf".into()))?;
    match &kind {
        b"av01" => Ok(vec![id]),
        b"grid" => {
            let grid = grid_of(container, id)?;
            let tiles = container.references_from(id, *b"dimg");
            let (rows, columns) = (usize_of(grid.rows), usize_of(grid.columns));
            if tiles.len() != rows * columns {
                return Err(AvifError::Corrupt(format!(
                    "a {rows}x{columns} grid with {} tiles",
                    tiles.len()
                )));
            }
            for &tile in &tiles {
                if container.item_kind(tile) != Some(*b"av01") {
                    return Err(AvifError::Unsupported(
                        "grid tiles that are not AV1 images".into(),
                    ));
                }
                container.check_essentials(tile)?;
            }
            Ok(tiles)
        }
        other => Err(AvifError::Unsupported(format!(
            "image item of type {}",
            String::from_utf8_lossy(other)
        ))),
    }
}

/// Bytes a decode may take per pixel of the cap, beyond [`BUDGET_SLACK`]:
/// see the crate documentation, "Limits".
const BUDGET_BYTES_PER_PIXEL: u64 = 24;
/// Bytes a decode may take whatever the cap: room for small images, which
/// rav1d handles in whole 128x128 superblocks.
const BUDGET_SLACK: u64 = 16 << 20;

/// What rav1d 1.1.0 (with two frame contexts) holds at its peak decoding a
/// frame as large as `sequence` allows, as measured, over the frame rounded
/// up to whole 128x128 superblocks: the picture's planes (luma and chroma
/// as laid out, 1 byte a sample or 2 over 8 bits), twice that again for
/// the coefficients the frame threads keep between their two passes, and
/// about 6 bytes a pixel of block state (modes, loop filter levels).
fn rav1d_bytes(sequence: &SequenceInfo) -> u64 {
    let w = u64::from(sequence.max_width).next_multiple_of(128);
    let h = u64::from(sequence.max_height).next_multiple_of(128);
    let chroma = match sequence.layout {
        Layout::I400 => 0,
        layout => {
            let (sx, sy) = layout.shifts();
            2 * (w >> sx) * (h >> sy)
        }
    };
    let planes = (w * h + chroma) << u8::from(sequence.high_bit_depth);
    3 * planes + 6 * w * h
}

/// Whether decoding a frame of `sequence` into a canvas of `canvas_bytes`
/// stays within the memory budget of a `max_pixels` cap: rav1d's peak, the
/// canvas, and the copy of the AV1 data (`data_bytes`) rav1d takes.
fn fits_memory_budget(
    sequence: &SequenceInfo,
    canvas_bytes: u64,
    data_bytes: u64,
    max_pixels: u64,
) -> bool {
    let peak = rav1d_bytes(sequence)
        .saturating_add(canvas_bytes)
        .saturating_add(data_bytes);
    let budget = max_pixels
        .saturating_mul(BUDGET_BYTES_PER_PIXEL)
        .saturating_add(BUDGET_SLACK);
    peak <= budget
}

const ALPHA_URNS: [&[u8]; 2] = [
    b"urn:mpeg:mpegB:cicp:systems:auxiliary:alpha",
    b"urn:mpeg:hevc:2015:auxid:1",
];

/// The alpha auxiliary item of `primary`, if any.
fn alpha_item(container: &Container<'_>, primary: u32) -> Result<Option<u32>, AvifError> {
    for candidate in container.references_to(primary, *b"auxl") {
        let urn = container.property(candidate, |p| match p {
            Property::Auxiliary(urn) => Some(*urn),
            _ => None,
        })?;
        let is_image =
            matches!(container.item_kind(candidate), Some(k) if &k == b"av01" || &k == b"grid");
        if urn.is_some_and(|urn| ALPHA_URNS.contains(&urn)) && is_image {
            container.check_essentials(candidate)?;
            return Ok(Some(candidate));
        }
    }
    Ok(None)
}

fn nclx_of(container: &Container<'_>, id: u32) -> Result<Option<Nclx>, AvifError> {
    container.property(id, |p| match p {
        Property::Nclx(nclx) => Some(*nclx),
        _ => None,
    })
}

/// Which channel(s) an item paints into the canvas.
#[derive(Clone, Copy)]
enum Channel {
    /// Colour, with the nclx that applies (the item's or its grid's).
    Color(Option<Nclx>),
    Alpha,
}

/// What decodes and paints items: one rav1d context for all of them.
struct Painter<'c, 'a> {
    container: &'c Container<'a>,
    decoder: Decoder,
    max_pixels: u64,
}

impl Painter<'_, '_> {
    /// Decodes one AV1 image, one of the `columns` x `rows` tiles of an
    /// image (1 x 1 for an image of its own), into a canvas of
    /// `canvas_bytes` (`None`: an RGB one the size of the frame). Refuses
    /// it first, with rav1d not called yet, when its OBUs hold more than one
    /// frame, when its sequence header allows frames larger than the cap
    /// (all the tiles together, as large as this one), or when the decoded
    /// picture and the canvas together may take more than the memory
    /// budget: [`BUDGET_BYTES_PER_PIXEL`] bytes per pixel of the cap, plus
    /// [`BUDGET_SLACK`].
    fn decode_av1(
        &mut self,
        obus: &[u8],
        (columns, rows): (u64, u64),
        canvas_bytes: Option<u64>,
    ) -> Result<(Frame, SequenceInfo), AvifError> {
        obu::check_single_frame(obus)?;
        let sequence = dav1d::sequence_header(obus)?;
        let (max_width, max_height) = (
            u64::from(sequence.max_width),
            u64::from(sequence.max_height),
        );
        // At most 65,536 x 256 each way: no overflow.
        let (width, height) = (max_width * columns, max_height * rows);
        if width * height > self.max_pixels {
            return Err(AvifError::TooLarge {
                width: u32::try_from(width).unwrap_or(u32::MAX),
                height: u32::try_from(height).unwrap_or(u32::MAX),
            });
        }
        let canvas_bytes = canvas_bytes.unwrap_or(3 * max_width * max_height);
        let data_bytes = u64::try_from(obus.len()).unwrap_or(u64::MAX);
        if !fits_memory_budget(&sequence, canvas_bytes, data_bytes, self.max_pixels) {
            return Err(AvifError::TooLarge {
                width: sequence.max_width,
                height: sequence.max_height,
            });
        }
        let frame = self.decoder.decode(obus)?;
        Ok((frame, sequence))
    }

    /// Paints an `av01` or `grid` item into the whole canvas, whose size is
    /// the one the item must have.
    fn paint_item(
        &mut self,
        id: u32,
        channel: Channel,
        canvas: &mut Canvas,
    ) -> Result<(), AvifError> {
        match self.container.item_kind(id) {
            Some(kind) if &kind == b"grid" => return self.paint_grid(id, channel, canvas),
            Some(kind) if &kind == b"av01" => {}
            _ => {
                return Err(AvifError::Unsupported(
                    "an image item that is not AV1".into(),
                ))
            }
        }
        let obus = self.container.item_data(id)?;
        let canvas_bytes = u64::try_from(canvas.pixels.len()).unwrap_or(u64::MAX);
        let (frame, sequence) = self.decode_av1(&obus, (1, 1), Some(canvas_bytes))?;
        if (frame.width(), frame.height()) != (canvas.width, canvas.height) {
            return Err(AvifError::Corrupt(format!(
                "the AV1 frame is {}x{}, the file says {}x{}",
                frame.width(),
                frame.height(),
                canvas.width,
                canvas.height
            )));
        }
        paint_frame(&frame, sequence, channel, canvas, 0, 0)
    }

    fn paint_grid(
        &mut self,
        id: u32,
        channel: Channel,
        canvas: &mut Canvas,
    ) -> Result<(), AvifError> {
        let grid = grid_of(self.container, id)?;
        if (usize_of(grid.width), usize_of(grid.height)) != (canvas.width, canvas.height) {
            return Err(AvifError::Corrupt("the grid's size is not its ispe".into()));
        }
        // Checked (number, type) by `av1_items`, before anything decoded.
        let tiles = av1_items(self.container, id)?;
        let (rows, columns) = (usize_of(grid.rows), usize_of(grid.columns));
        let canvas_bytes = u64::try_from(canvas.pixels.len()).unwrap_or(u64::MAX);
        let mut tile_size = None;
        for (index, &tile) in tiles.iter().enumerate() {
            let obus = self.container.item_data(tile)?;
            let (frame, sequence) = self.decode_av1(
                &obus,
                (u64::from(grid.columns), u64::from(grid.rows)),
                Some(canvas_bytes),
            )?;
            let size = (frame.width(), frame.height());
            match tile_size {
                None => {
                    let (w, h) = size;
                    // MIAF: tiles of at least 64x64 that cover the output,
                    // with no row or column entirely outside it.
                    if w < 64
                        || h < 64
                        || w * columns < canvas.width
                        || h * rows < canvas.height
                        || w * (columns - 1) >= canvas.width
                        || h * (rows - 1) >= canvas.height
                    {
                        return Err(AvifError::Corrupt(format!(
                            "{w}x{h} tiles do not fit a {rows}x{columns} grid of {}x{}",
                            canvas.width, canvas.height
                        )));
                    }
                    tile_size = Some(size);
                }
                Some(first) if first != size => {
                    return Err(AvifError::Corrupt("grid tiles of different sizes".into()));
                }
                Some(_) => {}
            }
            let channel = match channel {
                Channel::Color(inherited) => {
                    Channel::Color(nclx_of(self.container, tile)?.or(inherited))
                }
                Channel::Alpha => Channel::Alpha,
            };
            let (row, column) = (index / columns, index % columns);
            paint_frame(
                &frame,
                sequence,
                channel,
                canvas,
                column * size.0,
                row * size.1,
            )?;
        }
        Ok(())
    }
}

fn paint_frame(
    frame: &Frame,
    sequence: SequenceInfo,
    channel: Channel,
    canvas: &mut Canvas,
    x0: usize,
    y0: usize,
) -> Result<(), AvifError> {
    match channel {
        Channel::Color(nclx) => {
            let colour = match nclx {
                Some(nclx) => Colour {
                    matrix: Matrix::from_cicp(nclx.matrix, nclx.primaries)?,
                    full_range: nclx.full_range,
                },
                None => Colour {
                    matrix: Matrix::from_cicp(sequence.matrix, sequence.primaries)?,
                    full_range: sequence.full_range,
                },
            };
            convert::paint_color(frame, colour, canvas, x0, y0)
        }
        Channel::Alpha => convert::paint_alpha(frame, sequence.full_range, canvas, x0, y0),
    }
}

fn decode_primary(data: &[u8], max_pixels: u64) -> Result<Image, AvifError> {
    let container = Container::parse(data)?;
    let Some(primary) = container.primary() else {
        return decode_first_frame(&container, max_pixels);
    };
    let (width, height) = item_size(&container, primary)?;
    check_size(width, height, max_pixels)?;
    container.check_essentials(primary)?;
    let alpha = alpha_item(&container, primary)?;
    let premultiplied = alpha.is_some_and(|alpha| {
        container
            .references_from(primary, *b"prem")
            .contains(&alpha)
    });
    let rotation = container
        .property(primary, |p| match p {
            Property::Rotation(r) => Some(*r),
            _ => None,
        })?
        .unwrap_or(0);
    let mirror = container.property(primary, |p| match p {
        Property::Mirror(0) => Some(Mirror::TopBottom),
        Property::Mirror(_) => Some(Mirror::LeftRight),
        _ => None,
    })?;
    let icc_profile = container.property(primary, |p| match p {
        Property::Icc(icc) => Some(icc.to_vec()),
        _ => None,
    })?;
    let nclx = nclx_of(&container, primary)?;
    let crop = container
        .property(primary, |p| match p {
            Property::CleanAperture(clap) => Some(**clap),
            _ => None,
        })?
        .and_then(|clap| Crop::from_clean_aperture(clap, width, height));

    // Every AV1 image this decodes, from bytes of its own (no tile twice,
    // no tiles sharing an extent): the file's size bounds the work.
    let mut images = av1_items(&container, primary)?;
    if let Some(alpha) = alpha {
        images.extend(av1_items(&container, alpha)?);
    }
    container.check_disjoint(&images)?;

    let channels = if alpha.is_some() { 4 } else { 3 };
    let mut canvas = Canvas::new(usize_of(width), usize_of(height), channels)?;
    let mut painter = Painter {
        container: &container,
        decoder: Decoder::open(u32::try_from(max_pixels).unwrap_or(u32::MAX))?,
        max_pixels,
    };
    painter.paint_item(primary, Channel::Color(nclx), &mut canvas)?;
    if let Some(alpha) = alpha {
        painter.paint_item(alpha, Channel::Alpha, &mut canvas)?;
        if premultiplied {
            convert::unpremultiply(&mut canvas);
        }
    }
    Ok(Image {
        width,
        height,
        pixels: canvas.pixels,
        has_alpha: alpha.is_some(),
        rotation,
        mirror,
        icc_profile,
        crop,
    })
}

/// An image sequence with no primary item: its first frame.
fn decode_first_frame(container: &Container<'_>, max_pixels: u64) -> Result<Image, AvifError> {
    let Some(sample) = container.first_sample()? else {
        return Err(AvifError::Corrupt("no primary item and no track".into()));
    };
    check_size(sample.width, sample.height, max_pixels)?;
    // Both are parts of the file: at most its size.
    let mut obus = Vec::new();
    obus.try_reserve_exact(sample.config_obus.len() + sample.sample.len())
        .map_err(|_| AvifError::Unsupported("not enough memory for the first frame".into()))?;
    obus.extend_from_slice(sample.config_obus);
    obus.extend_from_slice(sample.sample);
    let mut painter = Painter {
        container,
        decoder: Decoder::open(u32::try_from(max_pixels).unwrap_or(u32::MAX))?,
        max_pixels,
    };
    let (frame, sequence) = painter.decode_av1(&obus, (1, 1), None)?;
    let mut canvas = Canvas::new(frame.width(), frame.height(), 3)?;
    paint_frame(
        &frame,
        sequence,
        Channel::Color(sample.nclx),
        &mut canvas,
        0,
        0,
    )?;
    Ok(Image {
        width: u32::try_from(canvas.width).unwrap_or(u32::MAX),
        height: u32::try_from(canvas.height).unwrap_or(u32::MAX),
        pixels: canvas.pixels,
        has_alpha: false,
        rotation: 0,
        mirror: None,
        icc_profile: None,
        crop: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_aperture_rectangles() {
        // Centred 60x40 in 100x50: (20, 5).
        let centred = [(60, 1), (40, 1), (0, 1), (0, 1)];
        assert_eq!(
            Crop::from_clean_aperture(centred, 100, 50),
            Some(Crop {
                x: 20,
                y: 5,
                width: 60,
                height: 40
            })
        );
        // Moved left by 20 (as -40/2): (0, 5).
        let left = [(120, 2), (40, 1), (-40, 2), (0, 1)];
        assert_eq!(
            Crop::from_clean_aperture(left, 100, 50).map(|c| (c.x, c.y)),
            Some((0, 5))
        );
        // Outside, fractional, zero denominators: none.
        for clap in [
            [(60, 1), (40, 1), (-30, 1), (0, 1)],
            [(61, 2), (40, 1), (0, 1), (0, 1)],
            [(60, 1), (40, 1), (1, 2), (0, 1)],
            [(60, 0), (40, 1), (0, 1), (0, 1)],
            [(200, 1), (40, 1), (0, 1), (0, 1)],
            [(0, 1), (40, 1), (0, 1), (0, 1)],
            [(60, 1), (40, 1), (i64::from(i32::MIN), 0xffff_ffff), (0, 1)],
            [(0xffff_ffff, 1), (40, 1), (i64::from(i32::MAX), 1), (0, 1)],
        ] {
            assert_eq!(Crop::from_clean_aperture(clap, 100, 50), None, "{clap:?}");
        }
    }

    #[test]
    fn memory_budget_by_format() {
        // A 4000x3000 frame under a cap of exactly its pixels.
        let (width, height) = (4000u32, 3000u32);
        let pixels = u64::from(width) * u64::from(height);
        let sequence = |layout, high_bit_depth| SequenceInfo {
            max_width: width,
            max_height: height,
            matrix: 1,
            primaries: 1,
            full_range: true,
            high_bit_depth,
            layout,
        };
        let fits = |layout, high_bit_depth, channels: u64| {
            fits_memory_budget(
                &sequence(layout, high_bit_depth),
                channels * pixels,
                1 << 20,
                pixels,
            )
        };
        // Everything 8-bit, and 10/12-bit 4:2:0 and 4:2:2, even with alpha.
        for layout in [Layout::I400, Layout::I420, Layout::I422, Layout::I444] {
            assert!(fits(layout, false, 4), "{layout:?}");
        }
        assert!(fits(Layout::I420, true, 4));
        assert!(fits(Layout::I422, true, 4));
        // 10/12-bit 4:4:4 only under about 85% of the cap.
        assert!(!fits(Layout::I444, true, 3));
        assert!(fitting_share(&sequence(Layout::I444, true)) > 0.8);

        // A frame of 1 row still costs rav1d a 128-row superblock.
        let thin = SequenceInfo {
            max_width: 65_536,
            max_height: 16,
            ..sequence(Layout::I420, false)
        };
        assert!(!fits_memory_budget(&thin, 3 << 20, 0, 1 << 20));
    }

    /// The share of the cap a frame of `sequence` may have and fit.
    fn fitting_share(sequence: &SequenceInfo) -> f64 {
        let pixels = u64::from(sequence.max_width) * u64::from(sequence.max_height);
        let (mut low, mut high) = (pixels / 2, pixels * 2);
        while low + 1 < high {
            let cap = u64::midpoint(low, high);
            if fits_memory_budget(sequence, 3 * pixels, 0, cap) {
                high = cap;
            } else {
                low = cap;
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let share = pixels as f64 / high as f64;
        share
    }

    #[test]
    fn exif_orientations() {
        let mut image = Image {
            width: 1,
            height: 1,
            pixels: vec![0; 3],
            has_alpha: false,
            rotation: 0,
            mirror: None,
            icc_profile: None,
            crop: None,
        };
        let mut seen = Vec::new();
        for mirror in [None, Some(Mirror::TopBottom), Some(Mirror::LeftRight)] {
            for rotation in 0..4 {
                image.rotation = rotation;
                image.mirror = mirror;
                seen.push(image.exif_orientation());
            }
        }
        assert_eq!(seen, [1, 8, 3, 6, 4, 5, 2, 7, 2, 7, 4, 5]);
    }
}
