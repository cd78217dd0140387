//! Reading a source image's file, and what its errors mean: a file cut
//! short or malformed is the client's, a failure to read it is ours.

use super::ImageError;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

/// The file, buffered, for a decoder.
pub(super) fn open(path: &Path) -> Result<BufReader<File>, ImageError> {
    File::open(path)
        .map(BufReader::new)
        .map_err(|e| io_error(path, &e))
}

/// A decoder's error: a file cut short or malformed is the client's, a
/// failure to read it is ours, a decoder's limit is a too-large image.
pub(super) fn from_image(path: &Path, e: image::ImageError) -> ImageError {
    match e {
        image::ImageError::IoError(e) => io_error(path, &e),
        image::ImageError::Limits(e) => ImageError::Corrupt(format!("over a decoder limit: {e}")),
        image::ImageError::Unsupported(e) => ImageError::Corrupt(e.to_string()),
        e => corrupt(e),
    }
}

/// A decode failure of a file that claimed to be an image.
pub(super) fn corrupt(e: impl std::fmt::Display) -> ImageError {
    ImageError::Corrupt(e.to_string())
}

/// A read error: the end of the file too soon is the file's fault, anything
/// else (the file gone, the disk failing) is ours.
pub(super) fn io_error(path: &Path, e: &io::Error) -> ImageError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        ImageError::Corrupt("the file ends too soon".into())
    } else {
        ImageError::Encode(format!("reading {}: {e}", path.display()))
    }
}

/// Fills `buf` as far as the reader goes; the count read.
pub(super) fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
