//! The image render pipeline behind the CDN's variants: read a source image's
//! header ([`probe()`]), then decode, orient, resize and encode it ([`prepare`], [`Job::render`]).
//! Pure and blocking (no HTTP, no database): the caller runs it off the async
//! runtime.
//!
//! The service is public, so every input is hostile: the header's pixel
//! count is checked against [`Limits`] before any pixel is allocated, the
//! decoders carry their own limits as a second line of defence, a JPEG is
//! decoded at the smallest DCT scale (1/8, 1/4, 3/8, 1/2, 1) that still covers the
//! size asked for, and a panic inside a codec is caught and reported as an
//! error. AVIF is read by `filestore-avif` (rav1d, in a crate of its own
//! that may call its C-style API) and written by ravif. A still WebP is
//! read by `filestore-webp` (libwebp, shrunk on load by a whole factor,
//! like a JPEG's DCT scale); both decoders run in a child process
//! (`isolated`), the WebP one under a system call filter (`sandbox`).

mod decode;
mod encode;
mod estimate;
pub(crate) mod isolated;
mod jpeg_dc;
mod layout;
mod png_source;
mod probe;
mod read;
mod resize;
mod sandbox;
mod shrink;
mod zeroed;

#[cfg(test)]
mod tests;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use crate::domain::transform::{Format, Output, SourceFormat, Transform};

pub(crate) use probe::probe;

/// What a render may take on (a struct, passed by reference, so that limits
/// can be added without touching the callers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The most pixels (width × height, as the header says) a source may have.
    pub max_source_pixels: u64,
    /// The most bytes a render may take ([`estimate`]): the whole render
    /// budget (`images.memory`).
    pub memory: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_source_pixels: crate::config::DEFAULT_MAX_SOURCE_PIXELS,
            memory: crate::config::DEFAULT_IMAGES_MEMORY,
        }
    }
}

/// A source image's header: its format and its stored dimensions (before any
/// EXIF orientation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Probe {
    pub format: SourceFormat,
    pub width: u32,
    pub height: u32,
    /// What the decoder's buffers will follow.
    pub layout: layout::Layout,
}

/// Why an image was not rendered. All but [`ImageError::Encode`] are the
/// client's (400); `Encode` is ours (500).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImageError {
    #[error("the file is not an image this service can transform (JPEG, PNG, WebP, GIF, AVIF)")]
    NotAnImage,
    #[error("the image is {width}×{height} pixels, over the {max} this service transforms")]
    TooLarge { width: u32, height: u32, max: u64 },
    /// The variant asked for, not the source: a side over what is written,
    /// or more pixels than `max` (the size asked for decides it).
    #[error(
        "a variant of {width}×{height} pixels is over what this service writes (sides of at \
         most 16383, {max} pixels in all): ask for a smaller size"
    )]
    OutputTooLarge { width: u32, height: u32, max: u64 },
    #[error("the image could not be decoded: {0}")]
    Corrupt(String),
    #[error("the image could not be rendered: {0}")]
    Encode(String),
    /// The render's estimate is over the whole render budget: the
    /// variant asked for decides it (a JPEG decodes smaller for a smaller
    /// variant), so it is not the source's fault alone.
    #[error(
        "this variant would take about {} MiB to render, more than the {} MiB this server \
         renders with (images.memory): ask for a smaller size",
        bytes.div_ceil(1 << 20),
        budget >> 20
    )]
    OverBudget { bytes: u64, budget: u64 },
    #[error(
        "an AVIF variant of {width}×{height} pixels is over the {max} this service writes \
         (AVIF is slow to encode): ask for a smaller size, or format=webp"
    )]
    AvifTooLarge { width: u32, height: u32, max: u64 },
}

/// The most pixels an AVIF variant may have (1024×1024): rav1e takes about
/// 1.6 s for 1024×768 here, 7.6 s for 2100×1575. `format=auto` writes WebP
/// past it; an explicit `format=avif` is refused.
pub(crate) const MAX_AVIF_PIXELS: u64 = 1 << 20;

/// The widest or tallest image written: WebP's own limit, which the other
/// formats exceed.
const MAX_OUTPUT_SIDE: u32 = 16_383;

/// A render settled from its source's header, before any pixel is
/// decoded: the bytes it takes at most ([`Job::bytes`]) are known, and
/// within `limits.memory`.
#[derive(Debug)]
pub(crate) struct Job {
    path: std::path::PathBuf,
    header: Probe,
    t: Transform,
    output: Output,
    limits: Limits,
    bytes: u64,
}

/// Blocking: reads the header of `path` (never a pixel), refuses a source
/// over `limits.max_source_pixels` or whose bytes cannot hold the image it
/// claims, and estimates the render of `t` as `output`; refused when the
/// estimate is over `limits.memory`.
pub(crate) fn prepare(
    path: &Path,
    t: &Transform,
    output: Output,
    limits: &Limits,
) -> Result<Job, ImageError> {
    let header = probe(path)?;
    check_pixels(header.width, header.height, limits.max_source_pixels)?;
    layout::plausible(path, &header)?;
    let bytes = estimate::estimate(&header, t, output, limits.max_source_pixels)?;
    if bytes > limits.memory {
        return Err(ImageError::OverBudget {
            bytes,
            budget: limits.memory,
        });
    }
    Ok(Job {
        path: path.to_path_buf(),
        header,
        t: *t,
        output,
        limits: limits.clone(),
        bytes,
    })
}

impl Job {
    /// The bytes the render takes at most.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Blocking: decodes the source, applies its EXIF orientation, takes
    /// the first frame of an animation, resizes it per `t` (w, h, fit), and
    /// encodes it as `output` at quality `t.q`, with no metadata. Returns
    /// the encoded bytes and the format written.
    pub(crate) fn render(self) -> Result<(Vec<u8>, Output), ImageError> {
        let Job {
            path,
            header,
            t,
            output,
            limits,
            ..
        } = self;
        run(&path, header, &t, output, &limits)
    }
}

/// Blocking: [`prepare`], then [`Job::render`].
#[cfg(test)]
pub(crate) fn render(
    path: &Path,
    t: &Transform,
    output: Output,
    limits: &Limits,
) -> Result<(Vec<u8>, Output), ImageError> {
    prepare(path, t, output, limits)?.render()
}

fn run(
    path: &Path,
    header: Probe,
    t: &Transform,
    output: Output,
    limits: &Limits,
) -> Result<(Vec<u8>, Output), ImageError> {
    let image = caught(
        || {
            let source = decode::Source::open(path, header, limits)?;
            let (width, height) = source.oriented_size();
            let plan = resize::plan(width, height, t);
            let output = settle_output(&plan, t, output, limits.max_source_pixels)?;
            let orientation = source.orientation();
            let (need_w, need_h) = plan.source_size(orientation);
            let image = source.decode(need_w, need_h)?;
            Ok((image, plan, orientation, output))
        },
        ImageError::Corrupt,
    )??;
    let (image, plan, orientation, output) = image;
    // A failure from here on is ours, not the source's.
    let image = caught(
        || resize::apply(image, &plan, orientation, output),
        ImageError::Encode,
    )??;
    let bytes = caught(|| encode::encode(image, output, t.q), ImageError::Encode)??;
    Ok((bytes, output))
}

/// The format a variant of `plan` is written in (`format=auto` writes WebP
/// where AVIF would be too large); refused when it is too large to write
/// (a side over [`MAX_OUTPUT_SIDE`], more than `max` pixels).
fn settle_output(
    plan: &resize::Plan,
    t: &Transform,
    output: Output,
    max: u64,
) -> Result<Output, ImageError> {
    let (width, height) = plan.output_size();
    let pixels = u64::from(width) * u64::from(height);
    if width > MAX_OUTPUT_SIDE || height > MAX_OUTPUT_SIDE || pixels > max {
        return Err(ImageError::OutputTooLarge { width, height, max });
    }
    Ok(match output {
        Output::Avif if pixels > MAX_AVIF_PIXELS && t.format == Format::Auto => Output::Webp,
        Output::Avif if pixels > MAX_AVIF_PIXELS => {
            return Err(ImageError::AvifTooLarge {
                width,
                height,
                max: MAX_AVIF_PIXELS,
            })
        }
        other => other,
    })
}

/// Refuses more than `max` pixels.
fn check_pixels(width: u32, height: u32, max: u64) -> Result<(), ImageError> {
    if u64::from(width) * u64::from(height) > max {
        return Err(ImageError::TooLarge { width, height, max });
    }
    Ok(())
}

impl ImageError {
    /// Whether the source's bytes were refused (not an image, corrupt, over
    /// the pixels decoded), whatever variant of it is asked for.
    pub(crate) fn is_the_sources(&self) -> bool {
        matches!(
            self,
            ImageError::NotAnImage | ImageError::Corrupt(_) | ImageError::TooLarge { .. }
        )
    }
}

/// Runs `f`, turning a panic inside a codec into the error `wrap` makes.
fn caught<T>(f: impl FnOnce() -> T, wrap: fn(String) -> ImageError) -> Result<T, ImageError> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        let text = panic
            .downcast_ref::<&str>()
            .map(ToString::to_string)
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        wrap(format!("the codec failed: {text}"))
    })
}
