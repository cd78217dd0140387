//! The calls into rav1d, whose API is dav1d's C API: the only module of the
//! crate with `unsafe` code, each block with the reason it is sound.
//!
//! Everything here is single-shot: one context per `decode` call, flushed
//! between the images it decodes (the tiles of a grid), the first operating
//! point and its highest layer only, film grain not applied (it adds
//! nothing to a thumbnail, and applying it copies the whole picture), no
//! logging, and the frame size capped by `frame_size_limit` (checked by
//! rav1d on the frame header, before it allocates the frame). What is sent
//! has been checked to hold a single frame (the `obu` module), and to fit
//! the memory budget (the crate documentation, "Limits"). Two frame
//! contexts and threads, not one: see [`Decoder::open`]. The picture's
//! planes are lent out as bounds-checked byte slices tied to the [`Frame`]
//! that owns the picture.
#![allow(unsafe_code)]

use std::mem::MaybeUninit;
use std::ptr::NonNull;

use rav1d::include::dav1d::data::Dav1dData;
use rav1d::include::dav1d::dav1d::{
    Dav1dContext, Dav1dLogger, Dav1dSettings, DAV1D_DECODEFRAMETYPE_ALL, DAV1D_INLOOPFILTER_ALL,
};
use rav1d::include::dav1d::headers::{
    Dav1dSequenceHeader, DAV1D_PIXEL_LAYOUT_I400, DAV1D_PIXEL_LAYOUT_I420, DAV1D_PIXEL_LAYOUT_I422,
    DAV1D_PIXEL_LAYOUT_I444,
};
use rav1d::include::dav1d::picture::Dav1dPicture;
use rav1d::src::lib::{
    dav1d_close, dav1d_data_create, dav1d_data_unref, dav1d_default_settings, dav1d_flush,
    dav1d_get_picture, dav1d_open, dav1d_parse_sequence_header, dav1d_picture_unref,
    dav1d_send_data,
};
use rav1d::Dav1dResult;

use crate::AvifError;

/// Chroma subsampling of a decoded frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Monochrome: luma only.
    I400,
    /// Chroma halved both ways.
    I420,
    /// Chroma halved horizontally.
    I422,
    /// Full-resolution chroma.
    I444,
}

impl Layout {
    fn from_dav1d(layout: u32) -> Option<Self> {
        match layout {
            DAV1D_PIXEL_LAYOUT_I400 => Some(Self::I400),
            DAV1D_PIXEL_LAYOUT_I420 => Some(Self::I420),
            DAV1D_PIXEL_LAYOUT_I422 => Some(Self::I422),
            DAV1D_PIXEL_LAYOUT_I444 => Some(Self::I444),
            _ => None,
        }
    }

    /// Horizontal and vertical chroma shifts.
    pub(crate) fn shifts(self) -> (u32, u32) {
        match self {
            Self::I400 | Self::I444 => (0, 0),
            Self::I420 => (1, 1),
            Self::I422 => (1, 0),
        }
    }
}

/// What an AV1 sequence header says, read without decoding anything.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SequenceInfo {
    /// The largest frame the sequence may hold.
    pub(crate) max_width: u32,
    pub(crate) max_height: u32,
    /// ISO/IEC 23091-4 matrix coefficients (2 when unspecified).
    pub(crate) matrix: u16,
    /// ISO/IEC 23091-4 colour primaries (2 when unspecified).
    pub(crate) primaries: u16,
    pub(crate) full_range: bool,
    /// Samples of 10 or 12 bits (two bytes each in a decoded picture).
    pub(crate) high_bit_depth: bool,
    pub(crate) layout: Layout,
}

/// rav1d's results are negative errno values (`-EAGAIN` means "feed more
/// data" or "take a picture out first").
fn errno(result: Dav1dResult) -> i32 {
    -result.0
}

/// Reads the first sequence header among `obus` (a low-overhead AV1
/// bitstream, as an AVIF item holds).
pub(crate) fn sequence_header(obus: &[u8]) -> Result<SequenceInfo, AvifError> {
    let Some(ptr) = NonNull::new(obus.as_ptr().cast_mut()) else {
        return Err(AvifError::Corrupt("empty AV1 item".into()));
    };
    if obus.is_empty() {
        return Err(AvifError::Corrupt("empty AV1 item".into()));
    }
    let mut header = MaybeUninit::<Dav1dSequenceHeader>::uninit();
    // SAFETY: `ptr` is the start of `obus`, a live slice of `obus.len()`
    // bytes that rav1d only reads; `header` is valid to write a
    // `Dav1dSequenceHeader` to.
    let result = unsafe {
        dav1d_parse_sequence_header(
            Some(NonNull::from(&mut header).cast()),
            Some(ptr),
            obus.len(),
        )
    };
    if result.0 != 0 {
        return Err(AvifError::Corrupt(format!(
            "no valid AV1 sequence header (rav1d error {})",
            errno(result)
        )));
    }
    // SAFETY: on success `dav1d_parse_sequence_header` wrote a whole
    // `Dav1dSequenceHeader` to `header` (`out.as_ptr().write(seq_hdr)`).
    let header = unsafe { header.assume_init() };
    let dimension = |value: i32| {
        u32::try_from(value)
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| AvifError::Corrupt("bad AV1 sequence header size".into()))
    };
    Ok(SequenceInfo {
        max_width: dimension(header.max_width)?,
        max_height: dimension(header.max_height)?,
        matrix: u16::try_from(header.mtrx).unwrap_or(2),
        primaries: u16::try_from(header.pri).unwrap_or(2),
        full_range: header.color_range != 0,
        high_bit_depth: header.hbd != 0,
        layout: Layout::from_dav1d(header.layout)
            .ok_or_else(|| AvifError::Corrupt("bad AV1 chroma layout".into()))?,
    })
}

/// An open rav1d context, closed on drop. One decodes any number of
/// independent images (the tiles of a grid) one after the other.
pub(crate) struct Decoder {
    context: Option<Dav1dContext>,
    max_pixels: u32,
}

impl Decoder {
    /// A context refusing frames of more than `max_pixels` pixels.
    pub(crate) fn open(max_pixels: u32) -> Result<Self, AvifError> {
        let mut settings = MaybeUninit::<Dav1dSettings>::uninit();
        // SAFETY: `settings` is valid to write a `Dav1dSettings` to, which is
        // all `dav1d_default_settings` does.
        unsafe { dav1d_default_settings(NonNull::from(&mut settings).cast()) };
        // SAFETY: `dav1d_default_settings` initialised every field.
        let mut settings = unsafe { settings.assume_init() };
        // Two frame contexts, not one: with a single one (max_frame_delay
        // 1), rav1d 1.1.0 panics on any decode error (on_error unwraps a
        // frame header decode_frame_exit already took, rav1d issue #1497),
        // and a panic out of its `extern "C"` functions aborts the process.
        // Two contexts take the delayed-output path, which returns the
        // error; that needs a thread each. The picture is then drained.
        settings.n_threads = 2;
        settings.max_frame_delay = 2;
        // Film grain is noise for display: not worth a copy of the picture
        // (rav1d applies it into a second picture) for a thumbnail.
        settings.apply_grain = 0;
        settings.operating_point = 0;
        settings.all_layers = 0;
        // 0 would mean "no limit": callers never pass 0.
        settings.frame_size_limit = max_pixels.max(1);
        settings.strict_std_compliance = 0;
        settings.output_invisible_frames = 0;
        settings.inloop_filters = DAV1D_INLOOPFILTER_ALL;
        settings.decode_frame_type = DAV1D_DECODEFRAMETYPE_ALL;
        // SAFETY: a logger with no callback is `None` for rav1d: nothing is
        // ever called through it (the default would print to stderr).
        settings.logger = unsafe { Dav1dLogger::new(None, None) };

        let mut context: Option<Dav1dContext> = None;
        // SAFETY: `context` is valid to write the new context to, `settings`
        // to read from; both outlive the call.
        let result = unsafe {
            dav1d_open(
                Some(NonNull::from(&mut context)),
                Some(NonNull::from(&mut settings)),
            )
        };
        if result.0 != 0 || context.is_none() {
            return Err(AvifError::Corrupt(format!(
                "rav1d did not open (error {})",
                errno(result)
            )));
        }
        Ok(Self {
            context,
            max_pixels,
        })
    }

    /// Decodes the first shown frame of `obus` (a whole image: sequence
    /// header and frame), then resets the context for the next image.
    pub(crate) fn decode(&mut self, obus: &[u8]) -> Result<Frame, AvifError> {
        let result = self.decode_inner(obus);
        if let Some(context) = self.context {
            // SAFETY: the context is open (from `dav1d_open`, closed only
            // on drop); the flush drops whatever state this image left.
            // Frames already handed out hold their own picture references.
            unsafe { dav1d_flush(context) };
        }
        result
    }

    fn decode_inner(&self, obus: &[u8]) -> Result<Frame, AvifError> {
        if obus.is_empty() {
            return Err(AvifError::Corrupt("empty AV1 item".into()));
        }
        let max_pixels = self.max_pixels;
        let context = self.context;
        let mut data = Data::copy_of(obus)?;
        let mut picture = Dav1dPicture::default();
        let eagain = libc::EAGAIN;
        let mut got_picture = false;

        // Feed everything, taking a picture out whenever rav1d asks to.
        while data.data.sz > 0 && !got_picture {
            let before = data.data.sz;
            // SAFETY: `context` is open (owned by `self`, alive here) and
            // `data.data` is a valid `Dav1dData` it may read and advance.
            let sent = unsafe { dav1d_send_data(context, Some(NonNull::from(&mut data.data))) };
            let sent = errno(sent);
            if sent != 0 && sent != eagain {
                return Err(decode_error(sent, max_pixels));
            }
            if sent == eagain {
                got_picture = take_picture(context, &mut picture, max_pixels)?;
                if !got_picture && data.data.sz == before {
                    return Err(AvifError::Corrupt(
                        "rav1d made no progress on the AV1 data".into(),
                    ));
                }
            }
        }
        drop(data);
        // Everything sent: the first call arms the drain, the next ones
        // wait for the frame threads and output.
        for _ in 0..4 {
            if got_picture {
                break;
            }
            got_picture = take_picture(context, &mut picture, max_pixels)?;
        }
        if !got_picture {
            return Err(AvifError::Corrupt("the AV1 data holds no frame".into()));
        }
        let layout = Layout::from_dav1d(picture.p.layout);
        let frame = Frame {
            width: usize::try_from(picture.p.w).unwrap_or(0),
            height: usize::try_from(picture.p.h).unwrap_or(0),
            bit_depth: u8::try_from(picture.p.bpc).unwrap_or(0),
            layout: layout.unwrap_or(Layout::I444),
            picture,
        };
        if frame.width == 0
            || frame.height == 0
            || layout.is_none()
            || !matches!(frame.bit_depth, 8 | 10 | 12)
            || frame.plane(0).is_none()
            || (frame.layout != Layout::I400
                && (frame.plane(1).is_none() || frame.plane(2).is_none()))
        {
            return Err(AvifError::Corrupt(
                "rav1d returned an unusable picture".into(),
            ));
        }
        if u64::try_from(frame.width * frame.height).unwrap_or(u64::MAX) > u64::from(max_pixels) {
            return Err(AvifError::TooLarge {
                width: u32::try_from(frame.width).unwrap_or(u32::MAX),
                height: u32::try_from(frame.height).unwrap_or(u32::MAX),
            });
        }
        Ok(frame)
    }
}

impl Drop for Decoder {
    fn drop(&mut self) {
        // SAFETY: `self.context` came from `dav1d_open` and is closed only
        // here, once; `dav1d_close` sets it back to `None`.
        unsafe { dav1d_close(Some(NonNull::from(&mut self.context))) };
    }
}

/// Bytes handed to rav1d (a copy it owns and refcounts), released on drop.
/// Their size is that of an item's data (at most its source, the file or
/// `idat`) or of a track's first sample and configOBUs (parts of the file).
struct Data {
    data: Dav1dData,
}

impl Data {
    fn copy_of(bytes: &[u8]) -> Result<Self, AvifError> {
        let mut data = Dav1dData::default();
        // SAFETY: `data` is valid to write to; on success `buf` is the start
        // of a fresh rav1d-owned allocation of `bytes.len()` bytes.
        let buf = unsafe { dav1d_data_create(Some(NonNull::from(&mut data)), bytes.len()) };
        if buf.is_null() || data.sz != bytes.len() {
            // Release whatever may have been created.
            drop(Self { data });
            return Err(AvifError::Corrupt(
                "rav1d could not take the AV1 data".into(),
            ));
        }
        // SAFETY: `buf` points to `bytes.len()` writable bytes that nothing
        // else references yet (just created, held only by `data`), and
        // cannot overlap `bytes`, which we borrow.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf, bytes.len()) };
        Ok(Self { data })
    }
}

impl Drop for Data {
    fn drop(&mut self) {
        // SAFETY: `self.data` is a `Dav1dData` from `dav1d_data_create`
        // (possibly partly consumed by `dav1d_send_data`, which keeps it
        // consistent); unref resets it, so a second call would be harmless.
        unsafe { dav1d_data_unref(Some(NonNull::from(&mut self.data))) };
    }
}

/// A decoded picture. It holds its own reference to the pixels (rav1d's
/// pictures are refcounted and outlive the context or its flushes).
pub(crate) struct Frame {
    picture: Dav1dPicture,
    width: usize,
    height: usize,
    bit_depth: u8,
    layout: Layout,
}

/// One plane of a [`Frame`]: `height` rows of `width` samples, `stride`
/// bytes apart; samples are one byte (8-bit) or two in native order.
#[derive(Clone, Copy)]
pub(crate) struct Plane<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) stride: usize,
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) high_bit_depth: bool,
}

impl Plane<'_> {
    /// Row `y` as samples widened to `u16`, written into `out`.
    pub(crate) fn read_row(&self, y: usize, out: &mut Vec<u16>) {
        out.clear();
        let start = y * self.stride;
        if self.high_bit_depth {
            let row = &self.data[start..start + 2 * self.width];
            out.extend(
                row.chunks_exact(2)
                    .map(|pair| u16::from_ne_bytes([pair[0], pair[1]])),
            );
        } else {
            let row = &self.data[start..start + self.width];
            out.extend(row.iter().map(|&v| u16::from(v)));
        }
    }
}

impl Frame {
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    pub(crate) fn height(&self) -> usize {
        self.height
    }

    pub(crate) fn bit_depth(&self) -> u8 {
        self.bit_depth
    }

    pub(crate) fn layout(&self) -> Layout {
        self.layout
    }

    /// Plane 0 (luma), 1 (Cb) or 2 (Cr); chroma planes are `None` for a
    /// monochrome frame.
    pub(crate) fn plane(&self, index: usize) -> Option<Plane<'_>> {
        if index > 2 || (index > 0 && self.layout == Layout::I400) {
            return None;
        }
        let (ss_x, ss_y) = if index == 0 {
            (0, 0)
        } else {
            self.layout.shifts()
        };
        let width = (self.width + (1 << ss_x) - 1) >> ss_x;
        let height = (self.height + (1 << ss_y) - 1) >> ss_y;
        let high_bit_depth = self.bit_depth > 8;
        let row_bytes = width << usize::from(high_bit_depth);
        let stride = usize::try_from(self.picture.stride[usize::from(index > 0)]).ok()?;
        if stride < row_bytes {
            return None;
        }
        let len = stride
            .checked_mul(height.checked_sub(1)?)?
            .checked_add(row_bytes)?;
        let ptr = self.picture.data[index]?;
        // SAFETY: rav1d allocated this plane (default allocator) as at
        // least `stride * aligned_height` initialised bytes, aligned_height
        // >= height, with a positive stride (checked above); `len` stays
        // within that (pool buffers are zero-initialised). The picture is
        // complete: `dav1d_get_picture` hands out only finished frames
        // (waiting for the frame threads), and rav1d never writes to an
        // output picture again; its buffer goes back to the pool only when
        // `self` unrefs it, after any slice borrowed from `self` is gone.
        let data =
            unsafe { std::slice::from_raw_parts(ptr.as_ptr().cast::<u8>().cast_const(), len) };
        Some(Plane {
            data,
            stride,
            width,
            height,
            high_bit_depth,
        })
    }
}

impl Drop for Frame {
    fn drop(&mut self) {
        // SAFETY: `self.picture` is a picture from `dav1d_get_picture`,
        // released only here; unref resets it to empty.
        unsafe { dav1d_picture_unref(Some(NonNull::from(&mut self.picture))) };
    }
}

/// One `dav1d_get_picture`: `Ok(true)` with a picture in `picture`,
/// `Ok(false)` when rav1d has none yet.
fn take_picture(
    context: Option<Dav1dContext>,
    picture: &mut Dav1dPicture,
    max_pixels: u32,
) -> Result<bool, AvifError> {
    // SAFETY: `context` is open (its `Decoder` is alive in the caller) and
    // `picture` is valid to write a `Dav1dPicture` to; it holds no picture
    // yet (callers stop at the first one), so nothing is leaked.
    let result = unsafe { dav1d_get_picture(context, Some(NonNull::from(picture))) };
    match errno(result) {
        0 => Ok(true),
        e if e == libc::EAGAIN => Ok(false),
        e => Err(decode_error(e, max_pixels)),
    }
}

fn decode_error(errno: i32, max_pixels: u32) -> AvifError {
    if errno == libc::ERANGE {
        AvifError::Corrupt(format!(
            "the AV1 frame is larger than its header said or than {max_pixels} pixels"
        ))
    } else if errno == libc::ENOMEM {
        AvifError::Corrupt("rav1d ran out of memory".into())
    } else {
        AvifError::Corrupt(format!("invalid AV1 data (rav1d error {errno})"))
    }
}
