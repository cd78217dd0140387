//! The child's answer on its stdout, as the child writes it and as the
//! server reads it back: `OK`, width, height, whether there is alpha, the
//! EXIF orientation, the clean-aperture crop, then the pixels; or `NO`, the
//! kind of refusal, the width and height it names, and a message.

use std::io::Read;

use crate::images::ImageError;

/// What a child answered.
pub(super) enum Answer {
    Pixels(Decoded),
    Refused(ImageError),
    /// Not for this decoder: the caller decodes it another way.
    Left(String),
}

/// A decoded AVIF, as the child sent it.
pub(crate) struct Decoded {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
    pub has_alpha: bool,
    pub orientation: u8,
    /// x, y, width, height.
    pub crop: Option<[u32; 4]>,
}

/// The child's answer: its header, then no more than the pixels it
/// announces (read into a buffer of that size, not grown by doubling),
/// and only when those are within `max_pixels`; a refusal's message up to
/// [`MESSAGE_BYTES`].
pub(super) fn read_answer(r: &mut impl Read, max_pixels: u64) -> std::io::Result<Vec<u8>> {
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
pub(super) const MESSAGE_BYTES: u64 = 4096;

/// The child's answer, of at most `most` pixels (`max_pixels`: the cap a
/// refusal names); `None` when it is not one (the child died first).
pub(super) fn parse(mut answer: Vec<u8>, max_pixels: u64, most: u64) -> Option<Answer> {
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
pub(super) fn encode(answer: Answer) -> Vec<u8> {
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
