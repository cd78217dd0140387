//! AVIF sources are decoded in a child process (this binary again, with
//! [`CHILD_ARG`]), so that the AV1 decoder cannot take the server down.
//! rav1d is called through dav1d's C API: a panic inside it cannot unwind
//! out of its `extern "C"` functions, so it aborts the process, and one in
//! its worker threads would leave the call waiting for ever
//! (memorysafety/rav1d #1497). In a child, an abort is a refused image, a
//! hang is killed after [`TIMEOUT`], and the CPU it may burn is capped
//! ([`CPU_SECONDS`]).
//!
//! The child reads the file on its stdin and writes one answer on its
//! stdout: `OK`, width, height, whether there is alpha, the EXIF
//! orientation, the clean-aperture crop, then the pixels; or `NO`, the kind
//! of refusal, the width and height it names, and a message.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use super::probe::{avif_too_long, from_avif, read_avif};
use super::read::io_error;
use super::ImageError;

/// The first argument that makes this binary an AVIF decoder.
pub(crate) const CHILD_ARG: &str = "__filestore-decode-avif";

/// How long a decode may take (a 12 MP AVIF takes about 0.4 s).
const TIMEOUT: Duration = Duration::from_mins(1);

/// The CPU seconds the child may use (its decoder runs two threads).
const CPU_SECONDS: u64 = 120;

/// The program run as the decoder, when not this one (the integration
/// tests run the server inside their own binary: they name `filestore`).
static PROGRAM: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Runs `program` (a `filestore` binary) as the AVIF decoder from now on.
pub fn use_program(program: std::path::PathBuf) {
    let _ = PROGRAM.set(program);
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
    if cfg!(test) {
        let data = super::probe::avif_bytes(path)?;
        return filestore_avif::decode(&data, max_pixels)
            .map(decoded)
            .map_err(|e| from_avif(e, max_pixels));
    }
    let program = if let Some(program) = PROGRAM.get() {
        program.clone()
    } else if Path::new("/proc/self/exe").exists() {
        // This binary even when an upgrade replaced its file.
        std::path::PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe().map_err(|e| ImageError::Encode(format!("this binary: {e}")))?
    };
    run(&program, path, max_pixels, TIMEOUT)
}

/// Runs `program` as the decoder of the file at `path`, for at most
/// `timeout`.
fn run(
    program: &Path,
    path: &Path,
    max_pixels: u64,
    timeout: Duration,
) -> Result<Decoded, ImageError> {
    let file = std::fs::File::open(path).map_err(|e| io_error(path, &e))?;
    let mut child = Command::new(program)
        .arg(CHILD_ARG)
        .arg(max_pixels.to_string())
        .stdin(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| ImageError::Encode(format!("starting the AVIF decoder: {e}")))?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| ImageError::Encode("the AVIF decoder's output".into()))?;
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let read = read_answer(&mut stdout, max_pixels);
        let _ = tx.send(());
        read
    });
    let timed_out = rx.recv_timeout(timeout).is_err();
    if timed_out {
        let _ = child.kill();
    }
    let answer = reader.join();
    let status = child.wait();
    if timed_out {
        return Err(ImageError::Corrupt(format!(
            "the AVIF took more than {} s to decode",
            timeout.as_secs()
        )));
    }
    let Ok(Ok(answer)) = answer else {
        return Err(ImageError::Encode(
            "reading the AVIF decoder's answer".into(),
        ));
    };
    parse(answer, max_pixels).ok_or_else(|| match status {
        Ok(status) if !status.success() => {
            ImageError::Corrupt(format!("the AVIF decoder failed on this file ({status})"))
        }
        _ => ImageError::Corrupt("the AVIF decoder gave no answer".into()),
    })?
}

/// The child's answer, its pixels read into a buffer of the size its
/// header announces (not grown by doubling, which held up to three times
/// the pixels at once).
fn read_answer(r: &mut impl Read, max_pixels: u64) -> std::io::Result<Vec<u8>> {
    let mut answer = Vec::new();
    r.by_ref().take(28).read_to_end(&mut answer)?;
    if answer.len() == 28 && answer.starts_with(b"OK") {
        let word = |at: usize| {
            u64::from(u32::from_le_bytes([
                answer[at],
                answer[at + 1],
                answer[at + 2],
                answer[at + 3],
            ]))
        };
        let pixels = word(2) * word(6);
        if pixels <= max_pixels {
            let channels = if answer[10] == 1 { 4 } else { 3 };
            answer.reserve_exact(usize::try_from(pixels * channels).unwrap_or(0));
        }
    }
    r.read_to_end(&mut answer)?;
    Ok(answer)
}

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

/// The child's answer; `None` when it is not one (the child died first).
fn parse(mut answer: Vec<u8>, max_pixels: u64) -> Option<Result<Decoded, ImageError>> {
    let u32_at = |at: usize| Some(u32::from_le_bytes(answer.get(at..at + 4)?.try_into().ok()?));
    match answer.get(..2)? {
        b"OK" => {
            let (width, height) = (u32_at(2)?, u32_at(6)?);
            let (has_alpha, orientation) = (*answer.get(10)? == 1, *answer.get(11)?);
            let crop = [u32_at(12)?, u32_at(16)?, u32_at(20)?, u32_at(24)?];
            let channels = if has_alpha { 4 } else { 3 };
            let expected = u64::from(width) * u64::from(height) * channels;
            if expected + 28 != answer.len() as u64 {
                return None;
            }
            // The pixels where they are: no second copy of them.
            answer.drain(..28);
            Some(Ok(Decoded {
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
            Some(Err(match kind {
                0 => ImageError::NotAnImage,
                2 => ImageError::TooLarge {
                    width,
                    height,
                    max: max_pixels,
                },
                _ => ImageError::Corrupt(message),
            }))
        }
        _ => None,
    }
}

/// In the child (this binary run with [`CHILD_ARG`] first): decodes its
/// stdin and answers on its stdout. `None` in any other process.
pub(crate) fn child_main() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != CHILD_ARG {
        return None;
    }
    let max_pixels = args
        .next()
        .and_then(|a| a.to_str()?.parse::<u64>().ok())
        .unwrap_or(0);
    let cap = rustix::process::Rlimit {
        current: Some(CPU_SECONDS),
        maximum: Some(CPU_SECONDS),
    };
    let _ = rustix::process::setrlimit(rustix::process::Resource::Cpu, cap);
    let answer = match read_avif(std::io::stdin().lock()) {
        Ok(None) => refusal(1, 0, 0, &avif_too_long()),
        Ok(Some(data)) => match filestore_avif::decode(&data, max_pixels) {
            Ok(image) => {
                let d = decoded(image);
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
            Err(filestore_avif::AvifError::NotAvif) => refusal(0, 0, 0, "not an AVIF"),
            Err(filestore_avif::AvifError::TooLarge { width, height }) => {
                refusal(2, width, height, "too large")
            }
            Err(e) => refusal(1, 0, 0, &e.to_string()),
        },
        Err(e) => refusal(1, 0, 0, &format!("reading the file: {e}")),
    };
    let mut out = std::io::stdout().lock();
    Some(
        if out.write_all(&answer).and_then(|()| out.flush()).is_ok() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        },
    )
}

fn refusal(kind: u8, width: u32, height: u32, message: &str) -> Vec<u8> {
    let mut out = b"NO".to_vec();
    out.push(kind);
    out.extend_from_slice(&width.to_le_bytes());
    out.extend_from_slice(&height.to_le_bytes());
    out.extend_from_slice(message.as_bytes());
    out
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

    /// A decoder that aborts, or never answers, is a refused image, in
    /// bounded time; one that answers is read.
    #[test]
    fn a_decoder_that_dies_or_hangs_is_a_refusal() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("x.avif");
        std::fs::write(&source, b"anything").unwrap();
        let aborts = script(dir.path(), "kill -ABRT $$");
        let e = run(&aborts, &source, 100, TIMEOUT).err().unwrap();
        assert!(
            matches!(e, ImageError::Corrupt(ref m) if m.contains("failed")),
            "{e:?}"
        );
        let hangs = script(dir.path(), "exec sleep 30");
        let started = std::time::Instant::now();
        let e = run(&hangs, &source, 100, Duration::from_millis(300))
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
        let e = run(&answers, &source, 100, TIMEOUT).err().unwrap();
        assert!(
            matches!(
                e,
                ImageError::TooLarge {
                    width: 1,
                    height: 1,
                    max: 100
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn answers_are_read_back_and_broken_ones_are_none() {
        let mut ok = b"OK".to_vec();
        for n in [2u32, 1] {
            ok.extend_from_slice(&n.to_le_bytes());
        }
        ok.extend_from_slice(&[0, 6]);
        for n in [0u32, 0, 1, 1] {
            ok.extend_from_slice(&n.to_le_bytes());
        }
        ok.extend_from_slice(&[1, 2, 3, 4, 5, 6]);
        let d = parse(ok.clone(), 100).unwrap().unwrap();
        assert_eq!((d.width, d.height, d.orientation), (2, 1, 6));
        assert_eq!(d.crop, Some([0, 0, 1, 1]));
        assert_eq!(d.pixels, [1, 2, 3, 4, 5, 6]);
        // A pixel short: the child died while writing.
        assert!(parse(ok[..ok.len() - 1].to_vec(), 100).is_none());
        assert!(parse(Vec::new(), 100).is_none());
        let no = refusal(2, 30_000, 30_000, "too large");
        assert!(matches!(
            parse(no, 100),
            Some(Err(ImageError::TooLarge {
                width: 30_000,
                height: 30_000,
                max: 100
            }))
        ));
        assert!(matches!(
            parse(refusal(0, 0, 0, "x"), 100),
            Some(Err(ImageError::NotAnImage))
        ));
        assert!(matches!(
            parse(refusal(1, 0, 0, "bad box"), 100),
            Some(Err(ImageError::Corrupt(m))) if m == "bad box"
        ));
    }
}
