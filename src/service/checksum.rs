//! The checksum rules of an upload (docs/decisions.md, "Checksums"): the digest a sender gave
//! (the `sha256` form field, the `Content-Digest` header; parsed by
//! `domain::digest`) against the bytes, before anything is stored.

use crate::domain::digest::Sha256Digest;
use crate::service::error::ServiceError;

/// A `sha256` field and a `Content-Digest` header must name one digest.
pub(crate) fn agree(
    field: Option<Sha256Digest>,
    header: Option<Sha256Digest>,
) -> Result<(), ServiceError> {
    match (field, header) {
        (Some(f), Some(h)) if f != h => Err(ServiceError::bad_request(
            "the sha256 field and the Content-Digest header name different digests",
        )),
        _ => Ok(()),
    }
}

/// What an upload's digest is compared with, and what a mismatch leaves.
pub(crate) const RECEIVED: (&str, &str) = ("the received file", "nothing was stored");
pub(crate) const REPLAYED: (&str, &str) = (
    "the file stored under this Idempotency-Key",
    "that file is unchanged",
);

/// `checksum_mismatch` unless `actual` (hex) is the `expected` digest (when
/// one was given); `what` names the bytes `actual` is the hash of, and
/// what a mismatch leaves.
pub(crate) fn verify(
    expected: Option<Sha256Digest>,
    actual: &str,
    (what, left): (&str, &str),
) -> Result<(), ServiceError> {
    match expected {
        Some(want) if hex::encode(want) != actual => Err(ServiceError::ChecksumMismatch(format!(
            "the request gave SHA-256 {}, but {what} has {actual}; {left}",
            hex::encode(want)
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_must_agree_and_match() {
        let (a, b) = ([1u8; 32], [2u8; 32]);
        assert!(agree(Some(a), Some(a)).is_ok());
        assert!(agree(Some(a), None).is_ok() && agree(None, Some(b)).is_ok());
        assert_eq!(agree(Some(a), Some(b)).unwrap_err().code(), "bad_request");
        let hex_a = hex::encode(a);
        assert!(verify(None, &hex_a, RECEIVED).is_ok());
        assert!(verify(Some(a), &hex_a, RECEIVED).is_ok());
        let e = verify(Some(b), &hex_a, RECEIVED).unwrap_err();
        assert!(matches!(e, ServiceError::ChecksumMismatch(_)), "{e:?}");
        assert!(e.to_string().ends_with("nothing was stored"), "{e}");
    }
}
