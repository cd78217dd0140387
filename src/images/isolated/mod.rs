//! AVIF and still WebP sources are decoded in a child process (this binary
//! again, with [`CHILD_ARG`] or [`WEBP_CHILD_ARG`]), so that the decoder
//! cannot take the server down.
//! rav1d is called through dav1d's C API: a panic inside it cannot unwind
//! out of its `extern "C"` functions, so it aborts the process, and one in
//! its worker threads would leave the call waiting for ever
//! (memorysafety/rav1d #1497). libwebp is C: a hostile file that found a
//! flaw in it would run in the child, which has given up every system call
//! but writing its answer, memory and leaving ([`super::sandbox`]) before
//! it looks at the file; the AVIF child likewise, with its threads. In a child, an abort is a refused image, a hang is
//! killed after [`TIMEOUT`], and the CPU it may burn is capped
//! (`CPU_SECONDS`, in the child).
//!
//! The child reads the file on its stdin and writes one answer on its
//! stdout: `OK`, width, height, whether there is alpha, the EXIF
//! orientation, the clean-aperture crop, then the pixels; or `NO`, the kind
//! of refusal, the width and height it names, and a message. A WebP the
//! child leaves (an animation, or no sandbox on this system) is decoded in
//! the server by the pure-Rust decoder.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

mod answer;
mod child;

use super::read::io_error;
use super::ImageError;
pub(crate) use answer::Decoded;
use answer::{parse, read_answer, Answer};
use child::{avif_answer, webp_answer};
pub(crate) use child::{child_main, CHILD_ARG, WEBP_CHILD_ARG};

/// How long a decode may take (a 12 MP AVIF takes about 0.4 s).
const TIMEOUT: Duration = Duration::from_mins(1);

/// The program run as the decoder, when not this one (the integration
/// tests run the server inside their own binary: they name `filestore`).
static PROGRAM: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Runs `program` (a `filestore` binary) as the image decoder from now on.
pub fn use_program(program: std::path::PathBuf) {
    let _ = PROGRAM.set(program);
}

/// Which decoder a child runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Child {
    Avif,
    /// libwebp, the picture shrunk by `shrink` (each side, rounded up) to
    /// `pixels`.
    Webp {
        shrink: u32,
        pixels: u64,
    },
}

impl Child {
    fn name(self) -> &'static str {
        match self {
            Child::Avif => "AVIF",
            Child::Webp { .. } => "WebP",
        }
    }

    /// The most pixels its answer may hold.
    fn answer_pixels(self, max_pixels: u64) -> u64 {
        match self {
            Child::Avif => max_pixels,
            Child::Webp { pixels, .. } => pixels.min(max_pixels),
        }
    }

    fn args(self, max_pixels: u64) -> Vec<String> {
        match self {
            Child::Avif => vec![CHILD_ARG.into(), max_pixels.to_string()],
            Child::Webp { shrink, .. } => vec![
                WEBP_CHILD_ARG.into(),
                max_pixels.to_string(),
                shrink.to_string(),
            ],
        }
    }
}

/// Decodes the AVIF at `path` (at most `max_pixels`) in a child process.
/// The unit tests, whose binary is the test harness, decode in process.
pub(super) fn decode(path: &Path, max_pixels: u64) -> Result<Decoded, ImageError> {
    let answer = if cfg!(test) {
        let data = super::probe::avif_bytes(path)?;
        avif_answer(&data, max_pixels)
    } else {
        run(&program()?, Child::Avif, path, max_pixels, TIMEOUT)?
    };
    match answer {
        Answer::Pixels(d) => Ok(d),
        Answer::Refused(e) => Err(e),
        Answer::Left(why) => Err(ImageError::Corrupt(why)),
    }
}

/// Decodes the still WebP at `path` (at most `max_pixels`) shrunk by
/// `shrink` in a sandboxed child process; `None` when the child leaves it
/// (no system call filter on this system: [`webp_in_child`] says so from
/// then on). The unit tests decode in process.
pub(super) fn decode_webp(
    path: &Path,
    max_pixels: u64,
    shrink: u32,
    pixels: u64,
) -> Result<Option<Decoded>, ImageError> {
    let answer = if cfg!(test) {
        let data = std::fs::read(path).map_err(|e| io_error(path, &e))?;
        webp_answer(&data, max_pixels, shrink)
    } else {
        let child = Child::Webp { shrink, pixels };
        run(&program()?, child, path, max_pixels, TIMEOUT)?
    };
    match answer {
        Answer::Pixels(d) => Ok(Some(d)),
        Answer::Refused(e) => Err(e),
        Answer::Left(_) => {
            WEBP_CHILD_DECLINED.store(true, std::sync::atomic::Ordering::Relaxed);
            Ok(None)
        }
    }
}

/// Set once the WebP child declined a file (it could not enter its filter
/// here): still WebPs are decoded in the server from then on.
static WEBP_CHILD_DECLINED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Whether still WebPs are decoded by the child (the render estimate
/// counts the in-server decoder when not).
pub(super) fn webp_in_child() -> bool {
    !WEBP_CHILD_DECLINED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The `filestore` binary to run as a decoder.
fn program() -> Result<PathBuf, ImageError> {
    Ok(if let Some(program) = PROGRAM.get() {
        program.clone()
    } else if Path::new("/proc/self/exe").exists() {
        // This binary even when an upgrade replaced its file.
        PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe().map_err(|e| ImageError::Encode(format!("this binary: {e}")))?
    })
}

/// Runs `program` as the `child` decoder of the file at `path`, for at
/// most `timeout`. The child gets no environment (the server's secrets
/// stay out of its memory), and no more of its answer is read than the
/// pixels it may hold.
fn run(
    program: &Path,
    child: Child,
    path: &Path,
    max_pixels: u64,
    timeout: Duration,
) -> Result<Answer, ImageError> {
    let name = child.name();
    let most = child.answer_pixels(max_pixels);
    let file = std::fs::File::open(path).map_err(|e| io_error(path, &e))?;
    let mut process = Command::new(program)
        .args(child.args(max_pixels))
        .env_clear()
        .stdin(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| ImageError::Encode(format!("starting the {name} decoder: {e}")))?;
    let mut stdout = process
        .stdout
        .take()
        .ok_or_else(|| ImageError::Encode(format!("the {name} decoder's output")))?;
    let (tx, rx) = std::sync::mpsc::channel();
    // The pipe's end goes with the thread: a child still writing then
    // gets EPIPE rather than waiting for ever.
    let reader = std::thread::Builder::new()
        .name("image-decoder-answer".into())
        .spawn(move || {
            let read = read_answer(&mut stdout, most);
            let _ = tx.send(());
            read
        });
    let reader = match reader {
        Ok(reader) => reader,
        Err(e) => {
            let _ = process.kill();
            let _ = process.wait();
            return Err(ImageError::Encode(format!(
                "reading the {name} decoder: {e}"
            )));
        }
    };
    let timed_out = rx.recv_timeout(timeout).is_err();
    if timed_out {
        let _ = process.kill();
    }
    let answer = reader.join();
    let status = process.wait();
    if timed_out {
        return Err(ImageError::Corrupt(format!(
            "the {name} took more than {} s to decode",
            timeout.as_secs()
        )));
    }
    let Ok(Ok(answer)) = answer else {
        return Err(ImageError::Encode(format!(
            "reading the {name} decoder's answer"
        )));
    };
    parse(answer, max_pixels, most).ok_or_else(|| died(name, &status))
}

/// Why a child gave no answer. Killed by its filter (a system call this
/// build did not allow: ours to mend, or a decoder taken over) or by the
/// kernel (memory): the server's failure, not the file's, so the file is
/// not remembered as refused. Any other death (a crash, an abort) is the
/// file's.
fn died(name: &str, status: &std::io::Result<std::process::ExitStatus>) -> ImageError {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(status) if matches!(status.signal(), Some(libc::SIGSYS | libc::SIGKILL)) => {
            tracing::error!(
                decoder = name,
                %status,
                "an image decoder's child was killed (its system call filter or the kernel)"
            );
            ImageError::Encode(format!("the {name} decoder was stopped ({status})"))
        }
        Ok(status) if !status.success() => {
            ImageError::Corrupt(format!("the {name} decoder failed on this file ({status})"))
        }
        _ => ImageError::Corrupt(format!("the {name} decoder gave no answer")),
    }
}

#[cfg(test)]
mod tests;
