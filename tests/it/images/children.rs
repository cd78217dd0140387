//! The decoder children as the server runs them (`filestore` with the
//! child's first argument, the file on stdin, no environment): each
//! answers under its system call filter, which kills it on anything
//! else (so an answer at all is the filter letting a real decode through).

use super::picture;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs the child `args` on `input`: its exit status and its answer.
fn child(args: &[&str], input: &[u8]) -> (std::process::ExitStatus, Vec<u8>) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_filestore"))
        .args(args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(input).unwrap();
    let out = c.wait_with_output().unwrap();
    (out.status, out.stdout)
}

fn size(answer: &[u8]) -> (u32, u32) {
    let word = |at: usize| u32::from_le_bytes(answer[at..at + 4].try_into().unwrap());
    (word(2), word(6))
}

#[test]
fn the_decoder_children_answer_under_their_filter() {
    let pixels = picture(400, 300).to_rgb8();
    let lossy = webp::Encoder::from_rgb(&pixels, 400, 300)
        .encode(90.0)
        .to_vec();
    let (status, answer) = child(&["__filestore-decode-webp", "1000000", "4"], &lossy);
    assert!(status.success(), "{status}");
    assert_eq!(&answer[..2], b"OK");
    assert_eq!(size(&answer), (100, 75));
    assert_eq!(answer.len(), 28 + 100 * 75 * 3);
    // Lossless with alpha (libwebp's other decoder, and its whole ARGB).
    let mut rgba = picture(400, 300).to_rgba8();
    for (x, _, p) in rgba.enumerate_pixels_mut() {
        p[3] = if x < 200 { 128 } else { 255 };
    }
    let lossless = webp::Encoder::from_rgba(&rgba, 400, 300)
        .encode_lossless()
        .to_vec();
    let (status, answer) = child(&["__filestore-decode-webp", "1000000", "1"], &lossless);
    assert!(status.success(), "{status}");
    assert_eq!(size(&answer), (400, 300));
    assert_eq!(answer.len(), 28 + 400 * 300 * 4);
    // Over the cap, and not a WebP: refusals, not deaths.
    let (status, answer) = child(&["__filestore-decode-webp", "1000", "1"], &lossy);
    assert!(status.success());
    assert_eq!(&answer[..3], b"NO\x02");
    let (status, answer) = child(
        &["__filestore-decode-webp", "1000000", "1"],
        b"RIFF....WEBPVP8 ",
    );
    assert!(status.success());
    assert_eq!(&answer[..2], b"NO");
    // The AVIF child, with its decoder's threads.
    let mut avif = Vec::new();
    image::DynamicImage::ImageRgb8(picture(64, 48).to_rgb8())
        .write_to(
            &mut std::io::Cursor::new(&mut avif),
            image::ImageFormat::Avif,
        )
        .unwrap();
    let (status, answer) = child(&["__filestore-decode-avif", "1000000"], &avif);
    assert!(status.success(), "{status}");
    assert_eq!(&answer[..2], b"OK", "{}", String::from_utf8_lossy(&answer));
    assert_eq!(size(&answer), (64, 48));
}
