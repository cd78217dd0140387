//! The child's side: this binary run with [`CHILD_ARG`] or
//! [`WEBP_CHILD_ARG`] first reads the file on its stdin, enters its system
//! call filter, decodes, and answers on its stdout.

use std::io::{Read, Write};
use std::process::ExitCode;

use super::answer::{encode, Answer, Decoded};
use crate::images::probe::{avif_too_long, from_avif, read_avif};
use crate::images::ImageError;

/// The first argument that makes this binary an AVIF decoder.
pub(crate) const CHILD_ARG: &str = "__filestore-decode-avif";

/// The first argument that makes this binary a WebP decoder.
pub(crate) const WEBP_CHILD_ARG: &str = "__filestore-decode-webp";

/// The CPU seconds the child may use (its decoder runs two threads).
const CPU_SECONDS: u64 = 120;

fn decoded(image: filestore_avif::Image) -> Decoded {
    Decoded {
        width: image.width,
        height: image.height,
        has_alpha: image.has_alpha,
        orientation: image.exif_orientation(),
        crop: image.crop.map(|c| [c.x, c.y, c.width, c.height]),
        pixels: image.pixels,
    }
}

/// What the AVIF decoder makes of `data`.
pub(super) fn avif_answer(data: &[u8], max_pixels: u64) -> Answer {
    match filestore_avif::decode(data, max_pixels) {
        Ok(image) => Answer::Pixels(decoded(image)),
        Err(e) => Answer::Refused(from_avif(e, max_pixels)),
    }
}

/// What libwebp makes of `data`, shrunk by `shrink`.
pub(super) fn webp_answer(data: &[u8], max_pixels: u64, shrink: u32) -> Answer {
    use filestore_webp::WebpError;
    match filestore_webp::decode(data, max_pixels, shrink) {
        Ok(image) => Answer::Pixels(Decoded {
            width: image.width,
            height: image.height,
            has_alpha: image.has_alpha,
            orientation: 1,
            crop: None,
            pixels: image.pixels,
        }),
        Err(WebpError::Animated) => Answer::Left("an animation".into()),
        Err(WebpError::NotWebp) => Answer::Refused(ImageError::NotAnImage),
        Err(WebpError::TooLarge { width, height }) => Answer::Refused(ImageError::TooLarge {
            width,
            height,
            max: max_pixels,
        }),
        Err(e @ WebpError::Corrupt(_)) => Answer::Refused(ImageError::Corrupt(e.to_string())),
    }
}

/// In the child (this binary run with [`CHILD_ARG`] or [`WEBP_CHILD_ARG`]
/// first): decodes its stdin and answers on its stdout. `None` in any
/// other process.
pub(crate) fn child_main() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    let which = args.next()?;
    if which != CHILD_ARG && which != WEBP_CHILD_ARG {
        return None;
    }
    let mut number = || {
        args.next()
            .and_then(|a| a.to_str()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let max_pixels = number();
    let shrink = u32::try_from(number()).unwrap_or(1);
    let cap = rustix::process::Rlimit {
        current: Some(CPU_SECONDS),
        maximum: Some(CPU_SECONDS),
    };
    let _ = rustix::process::setrlimit(rustix::process::Resource::Cpu, cap);
    // Short of memory, the kernel takes the decoder before the server.
    let _ = std::fs::write("/proc/self/oom_score_adj", "1000");
    let mut stdin = std::io::stdin().lock();
    let answer = if which == CHILD_ARG {
        match read_avif(stdin) {
            Ok(None) => Answer::Refused(ImageError::Corrupt(avif_too_long())),
            Ok(Some(data)) => {
                // rav1d is Rust: where there is no filter (another
                // architecture) it decodes without one, as it always did.
                let _ = crate::images::sandbox::enter(crate::images::sandbox::Threads::Allowed);
                avif_answer(&data, max_pixels)
            }
            Err(e) => Answer::Refused(ImageError::Corrupt(format!("reading the file: {e}"))),
        }
    } else {
        // The server checked the file's length against its pixels: the
        // whole of it in one buffer of its size (stdin is the file).
        let len = rustix::fs::fstat(&stdin).map_or(0, |st| st.st_size);
        let mut data = Vec::with_capacity(usize::try_from(len.clamp(0, 1 << 30)).unwrap_or(0));
        match stdin.read_to_end(&mut data) {
            Ok(_) => match crate::images::sandbox::enter(crate::images::sandbox::Threads::None) {
                Ok(()) => webp_answer(&data, max_pixels, shrink),
                Err(e) => Answer::Left(e),
            },
            Err(e) => Answer::Refused(ImageError::Corrupt(format!("reading the file: {e}"))),
        }
    };
    let answer = encode(answer);
    let mut out = std::io::stdout().lock();
    Some(
        if out.write_all(&answer).and_then(|()| out.flush()).is_ok() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        },
    )
}
