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
//! ([`CPU_SECONDS`]).
//!
//! The child reads the file on its stdin and writes one answer on its
//! stdout: `OK`, width, height, whether there is alpha, the EXIF
//! orientation, the clean-aperture crop, then the pixels; or `NO`, the kind
//! of refusal, the width and height it names, and a message. A WebP the
//! child leaves (an animation, or no sandbox on this system) is decoded in
//! the server by the pure-Rust decoder.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use super::probe::{avif_too_long, from_avif, read_avif};
use super::read::io_error;
use super::ImageError;

/// The first argument that makes this binary an AVIF decoder.
pub(crate) const CHILD_ARG: &str = "__filestore-decode-avif";

/// The first argument that makes this binary a WebP decoder.
pub(crate) const WEBP_CHILD_ARG: &str = "__filestore-decode-webp";

/// How long a decode may take (a 12 MP AVIF takes about 0.4 s).
const TIMEOUT: Duration = Duration::from_mins(1);

/// The CPU seconds the child may use (its decoder runs two threads).
const CPU_SECONDS: u64 = 120;

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

/// What a child answered.
enum Answer {
    Pixels(Decoded),
    Refused(ImageError),
    /// Not for this decoder: the caller decodes it another way.
    Left(String),
}

/// A decoded AVIF, as the child sent it.
pub(super) struct Decoded {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
    pub has_alpha: bool,
    pub orientation: u8,
    /// x, y, width, height.
    pub crop: Option<[u32; 4]>,
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

/// The child's answer: its header, then no more than the pixels it
/// announces (read into a buffer of that size, not grown by doubling),
/// and only when those are within `max_pixels`; a refusal's message up to
/// [`MESSAGE_BYTES`].
fn read_answer(r: &mut impl Read, max_pixels: u64) -> std::io::Result<Vec<u8>> {
    let mut answer = Vec::new();
    r.by_ref().take(28).read_to_end(&mut answer)?;
    let rest = if answer.len() == 28 && answer.starts_with(b"OK") {
        let word = |at: usize| {
            u64::from(u32::from_le_bytes([
                answer[at],
                answer[at + 1],
                answer[at + 2],
                answer[at + 3],
            ]))
        };
        let pixels = word(2) * word(6);
        if pixels > max_pixels {
            return Ok(answer);
        }
        let channels = if answer[10] == 1 { 4 } else { 3 };
        answer.reserve_exact(usize::try_from(pixels * channels).unwrap_or(0));
        pixels * channels
    } else {
        MESSAGE_BYTES
    };
    r.take(rest).read_to_end(&mut answer)?;
    Ok(answer)
}

/// The most of a refusal's message read.
const MESSAGE_BYTES: u64 = 4096;

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

/// The child's answer, of at most `most` pixels (`max_pixels`: the cap a
/// refusal names); `None` when it is not one (the child died first).
fn parse(mut answer: Vec<u8>, max_pixels: u64, most: u64) -> Option<Answer> {
    let u32_at = |at: usize| Some(u32::from_le_bytes(answer.get(at..at + 4)?.try_into().ok()?));
    match answer.get(..2)? {
        b"OK" => {
            let (width, height) = (u32_at(2)?, u32_at(6)?);
            let (has_alpha, orientation) = (*answer.get(10)? == 1, *answer.get(11)?);
            let crop = [u32_at(12)?, u32_at(16)?, u32_at(20)?, u32_at(24)?];
            let channels = if has_alpha { 4 } else { 3 };
            let expected = u64::from(width) * u64::from(height) * channels;
            if u64::from(width) * u64::from(height) > most || expected + 28 != answer.len() as u64 {
                return None;
            }
            // The pixels where they are: no second copy of them.
            answer.drain(..28);
            Some(Answer::Pixels(Decoded {
                width,
                height,
                pixels: answer,
                has_alpha,
                orientation,
                crop: (crop[2] > 0).then_some(crop),
            }))
        }
        b"NO" => {
            let kind = *answer.get(2)?;
            let (width, height) = (u32_at(3)?, u32_at(7)?);
            let message = String::from_utf8_lossy(answer.get(11..)?).into_owned();
            Some(match kind {
                0 => Answer::Refused(ImageError::NotAnImage),
                2 => Answer::Refused(ImageError::TooLarge {
                    width,
                    height,
                    max: max_pixels,
                }),
                3 => Answer::Left(message),
                _ => Answer::Refused(ImageError::Corrupt(message)),
            })
        }
        _ => None,
    }
}

/// An answer as the child writes it.
fn encode(answer: Answer) -> Vec<u8> {
    let refusal = |kind: u8, width: u32, height: u32, message: &str| {
        let mut out = b"NO".to_vec();
        out.push(kind);
        out.extend_from_slice(&width.to_le_bytes());
        out.extend_from_slice(&height.to_le_bytes());
        out.extend_from_slice(message.as_bytes());
        out
    };
    match answer {
        Answer::Pixels(d) => {
            let mut out = b"OK".to_vec();
            out.extend_from_slice(&d.width.to_le_bytes());
            out.extend_from_slice(&d.height.to_le_bytes());
            out.extend_from_slice(&[u8::from(d.has_alpha), d.orientation]);
            for n in d.crop.unwrap_or_default() {
                out.extend_from_slice(&n.to_le_bytes());
            }
            out.extend_from_slice(&d.pixels);
            out
        }
        Answer::Refused(ImageError::NotAnImage) => refusal(0, 0, 0, "not an image"),
        Answer::Refused(ImageError::TooLarge { width, height, .. }) => {
            refusal(2, width, height, "too large")
        }
        Answer::Refused(ImageError::Corrupt(m)) => refusal(1, 0, 0, &m),
        Answer::Refused(e) => refusal(1, 0, 0, &e.to_string()),
        Answer::Left(why) => refusal(3, 0, 0, &why),
    }
}

/// What the AVIF decoder makes of `data`.
fn avif_answer(data: &[u8], max_pixels: u64) -> Answer {
    match filestore_avif::decode(data, max_pixels) {
        Ok(image) => Answer::Pixels(decoded(image)),
        Err(e) => Answer::Refused(from_avif(e, max_pixels)),
    }
}

/// What libwebp makes of `data`, shrunk by `shrink`.
fn webp_answer(data: &[u8], max_pixels: u64, shrink: u32) -> Answer {
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
                let _ = super::sandbox::enter(super::sandbox::Threads::Allowed);
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
            Ok(_) => match super::sandbox::enter(super::sandbox::Threads::None) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A decoder that is a shell script.
    fn script(dir: &Path, body: &str) -> std::path::PathBuf {
        let path = dir.join("decoder");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn refused(answer: Option<Answer>) -> Option<ImageError> {
        match answer {
            Some(Answer::Refused(e)) => Some(e),
            _ => None,
        }
    }

    /// A decoder that aborts, or never answers, is a refused image, in
    /// bounded time; one that answers is read.
    #[test]
    fn a_decoder_that_dies_or_hangs_is_a_refusal() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("x.avif");
        std::fs::write(&source, b"anything").unwrap();
        let aborts = script(dir.path(), "kill -ABRT $$");
        let webp = Child::Webp {
            shrink: 2,
            pixels: 100,
        };
        let e = run(&aborts, webp, &source, 100, TIMEOUT).err().unwrap();
        assert!(
            matches!(e, ImageError::Corrupt(ref m) if m.contains("WebP decoder failed")),
            "{e:?}"
        );
        // Killed by its filter: the server's failure, not the file's.
        let filtered = script(dir.path(), "kill -SYS $$");
        let e = run(&filtered, webp, &source, 100, TIMEOUT).err().unwrap();
        assert!(
            matches!(e, ImageError::Encode(ref m) if m.contains("stopped")),
            "{e:?}"
        );
        let hangs = script(dir.path(), "exec sleep 30");
        let started = std::time::Instant::now();
        let e = run(
            &hangs,
            Child::Avif,
            &source,
            100,
            Duration::from_millis(300),
        )
        .err()
        .unwrap();
        assert!(
            matches!(e, ImageError::Corrupt(ref m) if m.contains("took more")),
            "{e:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        let answers = script(
            dir.path(),
            "printf 'NO\\002\\001\\0\\0\\0\\001\\0\\0\\0big'",
        );
        let e = refused(run(&answers, Child::Avif, &source, 100, TIMEOUT).ok());
        assert!(
            matches!(
                e,
                Some(ImageError::TooLarge {
                    width: 1,
                    height: 1,
                    max: 100
                })
            ),
            "{e:?}"
        );
        // The child's arguments: which decoder, the cap, the shrink.
        let echoes = script(
            dir.path(),
            "printf 'NO\\003\\0\\0\\0\\0\\0\\0\\0\\0%s' \"$*\"",
        );
        match run(&echoes, webp, &source, 100, TIMEOUT) {
            Ok(Answer::Left(args)) => assert_eq!(args, format!("{WEBP_CHILD_ARG} 100 2")),
            _ => panic!("no answer"),
        }
    }

    #[test]
    fn answers_are_read_back_and_broken_ones_are_none() {
        let pixels = Answer::Pixels(Decoded {
            width: 2,
            height: 1,
            has_alpha: false,
            orientation: 6,
            crop: Some([0, 0, 1, 1]),
            pixels: vec![1, 2, 3, 4, 5, 6],
        });
        let ok = encode(pixels);
        let Some(Answer::Pixels(d)) = parse(ok.clone(), 100, 100) else {
            panic!("not read back");
        };
        assert_eq!((d.width, d.height, d.orientation), (2, 1, 6));
        assert_eq!(d.crop, Some([0, 0, 1, 1]));
        assert_eq!(d.pixels, [1, 2, 3, 4, 5, 6]);
        // A pixel short: the child died while writing.
        assert!(parse(ok[..ok.len() - 1].to_vec(), 100, 100).is_none());
        assert!(parse(Vec::new(), 100, 100).is_none());
        let large = ImageError::TooLarge {
            width: 30_000,
            height: 30_000,
            max: 7,
        };
        assert!(matches!(
            refused(parse(encode(Answer::Refused(large)), 100, 100)),
            Some(ImageError::TooLarge {
                width: 30_000,
                height: 30_000,
                max: 100
            })
        ));
        assert!(matches!(
            refused(parse(
                encode(Answer::Refused(ImageError::NotAnImage)),
                100,
                100
            )),
            Some(ImageError::NotAnImage)
        ));
        let corrupt = Answer::Refused(ImageError::Corrupt("bad box".into()));
        assert!(matches!(
            refused(parse(encode(corrupt), 100, 100)),
            Some(ImageError::Corrupt(m)) if m == "bad box"
        ));
        // More pixels than the server expects: not an answer.
        assert!(parse(ok.clone(), 100, 1).is_none());
        // A child writing on past its pixels: no more is read than they
        // take; a header over the cap is read alone; a refusal's message
        // is cut.
        let endless: Vec<u8> = ok.iter().copied().chain(vec![9u8; 1 << 16]).collect();
        assert_eq!(read_answer(&mut endless.as_slice(), 100).unwrap(), ok);
        assert_eq!(read_answer(&mut endless.as_slice(), 1).unwrap().len(), 28);
        let long = encode(Answer::Left("x".repeat(1 << 16)));
        assert_eq!(
            read_answer(&mut long.as_slice(), 100).unwrap().len() as u64,
            28 + MESSAGE_BYTES
        );
        let left = parse(encode(Answer::Left("an animation".into())), 100, 100);
        assert!(matches!(left, Some(Answer::Left(m)) if m == "an animation"));
    }

    /// The real child: this test's own binary cannot be one, so the
    /// integration tests' server (which runs `filestore`) covers it; here
    /// the answers libwebp gives, shrunk and refused.
    #[test]
    fn libwebp_answers_shrunk_pixels_and_refusals() {
        let px: Vec<u8> = (0..40 * 30 * 3)
            .map(|i| u8::try_from(i % 251).unwrap())
            .collect();
        let file = webp::Encoder::from_rgb(&px, 40, 30).encode(90.0).to_vec();
        let Answer::Pixels(d) = webp_answer(&file, 1200, 4) else {
            panic!("not decoded");
        };
        assert_eq!(
            (d.width, d.height, d.has_alpha, d.pixels.len()),
            (10, 8, false, 240)
        );
        let Answer::Refused(e) = webp_answer(&file, 1199, 4) else {
            panic!("not refused");
        };
        assert!(matches!(
            e,
            ImageError::TooLarge {
                width: 40,
                height: 30,
                max: 1199
            }
        ));
        assert!(matches!(
            webp_answer(b"RIFF", 1200, 1),
            Answer::Refused(ImageError::NotAnImage)
        ));
    }
}
