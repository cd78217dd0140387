//! The quota rule: whether an account may take on more bytes, one more
//! upload this period or one more incomplete resumable upload. One rule for
//! every place that asks: the commit of a file and the creation of a
//! resumable upload (inside their transactions, on every database), the
//! checks an upload makes before reading its body, and the bytes an upload
//! takes while they stream in.

/// What a plan allows an account: the one limits type every check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Bytes stored (and reserved by incomplete resumable uploads).
    pub storage: u64,
    /// Uploads per billing period (an incomplete resumable upload counts).
    pub uploads_per_period: u64,
    /// Incomplete resumable uploads at once.
    pub open_uploads: u64,
}

/// What an account holds when it asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Holdings {
    /// Bytes stored, and any other bytes that count as used (those that
    /// incomplete resumable uploads reserve, those streaming in).
    pub used: u64,
    /// Uploads committed this period, and incomplete resumable uploads.
    pub uploads: u64,
    /// Incomplete resumable uploads.
    pub open: u64,
}

/// What is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ask {
    pub bytes: u64,
    /// One more upload this period.
    pub upload: bool,
    /// One more incomplete resumable upload.
    pub open: bool,
}

impl Ask {
    /// A file committed (or checked for before its body): its bytes and one upload.
    pub fn file(bytes: u64) -> Ask {
        Ask {
            bytes,
            upload: true,
            open: false,
        }
    }

    /// A resumable upload created: room for its length, one upload, one open upload.
    pub fn resumable(length: u64) -> Ask {
        Ask {
            bytes: length,
            upload: true,
            open: true,
        }
    }

    /// Bytes alone (an upload's body as it streams in).
    pub fn bytes(bytes: u64) -> Ask {
        Ask {
            bytes,
            ..Ask::default()
        }
    }
}

/// Which limit an ask would pass, with what the account holds of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Storage { used: u64 },
    Uploads { count: u64 },
    OpenUploads { open: u64 },
}

/// Of an account's `limit` (concurrent uploads, incomplete uploads), what
/// its public keys may hold together: half, at least one. Anyone with the
/// page that holds one has it; the account's own keys keep the rest.
pub(crate) fn public_share(limit: u64) -> u64 {
    (limit / 2).max(1)
}

impl Quota {
    /// No limit at all (a replayed upload, whose bytes are counted already).
    pub const UNLIMITED: Quota = Quota {
        storage: u64::MAX,
        uploads_per_period: u64::MAX,
        open_uploads: u64::MAX,
    };

    /// Admits `ask` when the account's holdings and it stay within every
    /// limit; otherwise the first limit it would pass, in the order storage,
    /// uploads, open uploads.
    pub fn admit(&self, held: Holdings, ask: Ask) -> Result<(), Refusal> {
        if held.used.saturating_add(ask.bytes) > self.storage {
            return Err(Refusal::Storage { used: held.used });
        }
        if ask.upload && held.uploads >= self.uploads_per_period {
            return Err(Refusal::Uploads {
                count: held.uploads,
            });
        }
        if ask.open && held.open >= self.open_uploads {
            return Err(Refusal::OpenUploads { open: held.open });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const Q: Quota = Quota {
        storage: 100,
        uploads_per_period: 3,
        open_uploads: 2,
    };

    #[test]
    fn a_file_that_fills_the_quota_exactly_fits() {
        let held = Holdings {
            used: 60,
            uploads: 2,
            open: 0,
        };
        assert_eq!(Q.admit(held, Ask::file(40)), Ok(()));
        assert_eq!(
            Q.admit(held, Ask::file(41)),
            Err(Refusal::Storage { used: 60 })
        );
    }

    #[test]
    fn the_period_s_last_upload_is_the_limit() {
        let held = Holdings {
            used: 0,
            uploads: 3,
            open: 0,
        };
        assert_eq!(
            Q.admit(held, Ask::file(1)),
            Err(Refusal::Uploads { count: 3 })
        );
        // Bytes alone do not count as an upload.
        assert_eq!(Q.admit(held, Ask::bytes(1)), Ok(()));
    }

    #[test]
    fn only_a_resumable_upload_asks_for_an_open_one() {
        let held = Holdings {
            used: 0,
            uploads: 2,
            open: 2,
        };
        assert_eq!(Q.admit(held, Ask::file(1)), Ok(()));
        assert_eq!(
            Q.admit(held, Ask::resumable(1)),
            Err(Refusal::OpenUploads { open: 2 })
        );
    }

    #[test]
    fn storage_is_named_first_when_every_limit_is_passed() {
        let held = Holdings {
            used: 100,
            uploads: 3,
            open: 2,
        };
        assert_eq!(
            Q.admit(held, Ask::resumable(1)),
            Err(Refusal::Storage { used: 100 })
        );
    }

    #[test]
    fn sums_saturate_instead_of_wrapping() {
        let held = Holdings {
            used: u64::MAX,
            uploads: 0,
            open: 0,
        };
        assert!(Q.admit(held, Ask::bytes(u64::MAX)).is_err());
        let roomy = Quota {
            storage: u64::MAX,
            ..Q
        };
        assert_eq!(roomy.admit(held, Ask::bytes(0)), Ok(()));
    }

    proptest! {
        /// Admitted means within every limit afterwards; refused means one
        /// limit would be passed.
        #[test]
        fn admitted_exactly_when_within_every_limit(
            storage in 0u64..1_000, uploads_per_period in 0u64..10, open_uploads in 0u64..10,
            used in 0u64..1_200, uploads in 0u64..12, open in 0u64..12,
            bytes in 0u64..1_200, upload: bool, open_one: bool,
        ) {
            let q = Quota { storage, uploads_per_period, open_uploads };
            let held = Holdings { used, uploads, open };
            let ask = Ask { bytes, upload, open: open_one };
            let within = used + bytes <= storage
                && (!upload || uploads < uploads_per_period)
                && (!open_one || open < open_uploads);
            prop_assert_eq!(q.admit(held, ask).is_ok(), within);
        }
    }
}
