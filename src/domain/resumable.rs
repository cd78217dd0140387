//! The hashes of a resumable upload's bytes, saved between PATCHes: its
//! SHA-256 ([`ResumableSha256`]) and, for an upload begun by the release
//! that streamed MD5s, its MD5 ([`ResumableMd5`]), updated in one pass over
//! each chunk. An upload begun now keeps no MD5 state: its file commits
//! without one and `service::md5_fill` fills it in at idle priority
//! (docs/decisions.md, "MD5 after the fact"). An MD5 state that covers fewer
//! bytes than the SHA-256's (a node of an earlier release moved the upload
//! on) is dropped: the file's `md5` is then unknown (NULL) until filled,
//! never wrong.

use super::md5_state::ResumableMd5;
use super::sha256_state::ResumableSha256;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ResumableHashes {
    pub(crate) sha256: ResumableSha256,
    pub(crate) md5: Option<ResumableMd5>,
}

impl ResumableHashes {
    /// The hashes of no bytes yet: SHA-256's only.
    pub(crate) fn new() -> Self {
        ResumableHashes {
            sha256: ResumableSha256::new(),
            md5: None,
        }
    }

    pub(crate) fn update(&mut self, data: &[u8]) {
        self.sha256.update(data);
        if let Some(md5) = &mut self.md5 {
            md5.update(data);
        }
    }

    /// The states to keep with the upload (SHA-256's, MD5's).
    pub(crate) fn save(&self) -> (String, Option<String>) {
        (
            self.sha256.save(),
            self.md5.as_ref().map(ResumableMd5::save),
        )
    }

    /// The states [`ResumableHashes::save`] wrote; None when one is not a
    /// state. A missing MD5 state stays missing, and so does one of other
    /// bytes than the SHA-256's.
    pub(crate) fn restore(sha256: &str, md5: Option<&str>) -> Option<Self> {
        let sha256 = ResumableSha256::restore(sha256)?;
        let md5 = match md5 {
            Some(saved) => Some(ResumableMd5::restore(saved)?),
            None => None,
        };
        Some(ResumableHashes {
            md5: md5.filter(|m| m.len() == sha256.len()),
            sha256,
        })
    }

    /// The hex digests of the bytes so far: SHA-256's, and MD5's when known.
    pub(crate) fn hex(&self) -> (String, Option<String>) {
        (self.sha256.hex(), self.md5.as_ref().map(ResumableMd5::hex))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An upload an earlier release began, with its MD5 state.
    fn begun_with_md5() -> ResumableHashes {
        ResumableHashes {
            md5: Some(ResumableMd5::new()),
            ..ResumableHashes::new()
        }
    }

    #[test]
    fn an_upload_begun_now_keeps_no_md5_state() {
        let mut h = ResumableHashes::new();
        h.update(b"hello");
        assert_eq!(h.save().1, None);
        let (sha, md5) = h.save();
        assert_eq!(
            ResumableHashes::restore(&sha, md5.as_deref()).unwrap().md5,
            None
        );
    }

    #[test]
    fn both_hashes_survive_a_save_and_an_old_upload_stays_without_md5() {
        let mut h = begun_with_md5();
        h.update(b"hello ");
        let (sha, md5) = h.save();
        let mut back = ResumableHashes::restore(&sha, md5.as_deref()).unwrap();
        back.update(b"world");
        let (sha, md5) = back.hex();
        assert_eq!(
            sha,
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
        );
        assert_eq!(md5.as_deref(), Some("5eb63bbbe01eeed093cb22bb8f5acdc3"));
        let old = ResumableHashes::restore(&ResumableSha256::new().save(), None).unwrap();
        assert_eq!(old.hex().1, None);
        assert_eq!(ResumableHashes::restore(&sha, Some("garbage")), None);
    }

    #[test]
    fn an_md5_state_behind_the_sha256_state_is_dropped() {
        let mut h = begun_with_md5();
        h.update(b"hello ");
        let (_, md5) = h.save();
        // A node of an earlier release moved the SHA-256 on, not the MD5.
        h.sha256.update(b"world");
        let back = ResumableHashes::restore(&h.sha256.save(), md5.as_deref()).unwrap();
        assert_eq!(back.md5, None);
    }
}
