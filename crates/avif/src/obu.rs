//! A walk over the OBUs (Open Bitstream Units, AV1 section 5.3) of an
//! item's AV1 data, in safe Rust, before rav1d sees them.
//!
//! rav1d decodes every frame it is given until the first one shown: an item
//! holding many hidden (`show_frame = 0`) frames before its shown one would
//! cost a full decode each, with up to 8 of them kept as references. An
//! AVIF image item is one frame (AV1 Image File Format, section 2.1: "a
//! single frame", an intra frame), so data with more than one frame header
//! is refused here, as is data whose OBU sizes do not add up.

use crate::AvifError;

/// OBU types (AV1 section 6.2.2) that start or repeat a frame header.
const OBU_FRAME_HEADER: u8 = 3;
const OBU_FRAME: u8 = 6;
/// A redundant frame header: ignored by rav1d inside a frame, but read as
/// a new frame's header once the previous frame is complete.
const OBU_REDUNDANT_FRAME_HEADER: u8 = 7;

fn corrupt(what: &str) -> AvifError {
    AvifError::Corrupt(what.to_owned())
}

/// An unsigned LEB128 value (AV1 section 4.10.5): at most 8 bytes, at most
/// 2^32 - 1, as the AV1 specification requires. Returns the value and the
/// bytes it took.
fn leb128(data: &[u8]) -> Result<(u64, usize), AvifError> {
    let mut value = 0u64;
    for (i, &byte) in data.iter().take(8).enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            if value > u64::from(u32::MAX) {
                return Err(corrupt("an AV1 OBU size over 2^32 - 1"));
            }
            return Ok((value, i + 1));
        }
    }
    Err(corrupt("an AV1 OBU size is cut short or over 8 bytes"))
}

/// Checks that `data` is a sequence of whole OBUs holding exactly one frame
/// (one OBU_FRAME, OBU_FRAME_HEADER or OBU_REDUNDANT_FRAME_HEADER), before
/// it is handed to rav1d. An OBU with no size field runs to the end of the
/// data, so it can only be the last one.
pub(crate) fn check_single_frame(data: &[u8]) -> Result<(), AvifError> {
    let mut pos = 0;
    let mut frame_headers = 0u32;
    while pos < data.len() {
        let header = data[pos];
        if header & 0x80 != 0 {
            return Err(corrupt("an AV1 OBU has its forbidden bit set"));
        }
        let obu_type = (header >> 3) & 0x0f;
        let has_extension = header & 0x04 != 0;
        let has_size_field = header & 0x02 != 0;
        pos += 1 + usize::from(has_extension);
        if pos > data.len() {
            return Err(corrupt("an AV1 OBU header is cut short"));
        }
        let size = if has_size_field {
            let (size, taken) = leb128(&data[pos..])?;
            pos += taken;
            usize::try_from(size).unwrap_or(usize::MAX)
        } else {
            data.len() - pos
        };
        pos = pos
            .checked_add(size)
            .filter(|&end| end <= data.len())
            .ok_or_else(|| corrupt("an AV1 OBU runs past the end of its item (truncated?)"))?;
        if matches!(
            obu_type,
            OBU_FRAME_HEADER | OBU_FRAME | OBU_REDUNDANT_FRAME_HEADER
        ) {
            frame_headers += 1;
            if frame_headers > 1 {
                return Err(AvifError::Unsupported(
                    "AV1 data holding more than one frame (hidden frames, redundant frame \
                     headers or layers): an AVIF image is a single frame"
                        .into(),
                ));
            }
        }
    }
    if frame_headers == 0 {
        return Err(corrupt("the AV1 data holds no frame"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An OBU of `obu_type` with a size field and `payload`.
    fn obu(obu_type: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![obu_type << 3 | 0x02];
        let mut len = payload.len();
        loop {
            let byte = u8::try_from(len & 0x7f).unwrap();
            len >>= 7;
            if len == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn leb128_values() {
        assert_eq!(leb128(&[0x05]).unwrap(), (5, 1));
        assert_eq!(leb128(&[0x80, 0x01]).unwrap(), (128, 2));
        // Padded with continuation bytes (allowed up to 8 bytes).
        assert_eq!(leb128(&[0x81, 0x80, 0x80, 0x00]).unwrap(), (1, 4));
        assert_eq!(
            leb128(&[0xff, 0xff, 0xff, 0xff, 0x0f]).unwrap(),
            (u64::from(u32::MAX), 5)
        );
        assert!(leb128(&[0x80, 0x80, 0x80, 0x80, 0x10]).is_err());
        assert!(leb128(&[0x80; 8]).is_err());
        assert!(leb128(&[0x80]).is_err());
        assert!(leb128(&[]).is_err());
    }

    #[test]
    fn one_frame_only() {
        let td = obu(2, &[]);
        let seq = obu(1, &[0; 10]);
        let frame = obu(OBU_FRAME, &[0; 40]);
        let header = obu(OBU_FRAME_HEADER, &[0; 5]);
        let tiles = obu(4, &[0; 30]);
        let redundant = obu(OBU_REDUNDANT_FRAME_HEADER, &[0; 5]);
        let padding = obu(15, &[0; 300]);
        assert!(check_single_frame(&[&seq[..], &frame].concat()).is_ok());
        assert!(check_single_frame(&[&td[..], &seq, &header, &tiles, &padding].concat()).is_ok());
        // The last OBU may leave out its size.
        let mut unsized_frame = frame.clone();
        unsized_frame[0] &= !0x02;
        unsized_frame.remove(1);
        assert!(check_single_frame(&[&seq[..], &unsized_frame].concat()).is_ok());
        // ... and then runs to the end: what follows is part of it.
        assert!(check_single_frame(&[&seq[..], &unsized_frame, &frame].concat()).is_ok());
        // With an extension byte.
        let mut extended = vec![OBU_FRAME << 3 | 0x06, 0];
        extended.extend_from_slice(&frame[1..]);
        assert!(check_single_frame(&[&seq[..], &extended].concat()).is_ok());

        for (data, unsupported) in [
            ([&seq[..], &frame, &frame].concat(), true),
            ([&seq[..], &header, &tiles, &frame].concat(), true),
            ([&seq[..], &frame, &redundant, &tiles].concat(), true),
            ([&seq[..], &header, &tiles, &header, &tiles].concat(), true),
            (seq.clone(), false),
            (Vec::new(), false),
            ([&seq[..], &frame[..frame.len() - 1]].concat(), false),
            ([&seq[..], &[0x80]].concat(), false),
            ([&seq[..], &[OBU_FRAME << 3 | 0x06]].concat(), false),
            ([&seq[..], &[OBU_FRAME << 3 | 0x02, 0xff]].concat(), false),
        ] {
            let result = check_single_frame(&data);
            if unsupported {
                assert!(matches!(result, Err(AvifError::Unsupported(_))), "{data:?}");
            } else {
                assert!(matches!(result, Err(AvifError::Corrupt(_))), "{data:?}");
            }
        }
    }
}
