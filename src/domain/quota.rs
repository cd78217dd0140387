//! The quota rule: whether an account may take on more bytes, one more
//! upload this period or one more incomplete resumable upload. One rule for
//! every place that asks: the commit of a file and the creation of a
//! resumable upload (inside their transactions, on every database), the
//! checks an upload makes before reading its body, and the bytes an upload
//! takes while they stream in. And the strangers' share ([`Share`]): what
//! an account's public keys and upload tokens may hold together of each of
//! those limits (and of `concurrent_uploads`, counted by
//! `service::inflight`), so that the account's own keys keep the rest.

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

/// Which limit of the strangers' share an ask would pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareOf {
    /// Bytes reserved by incomplete resumable uploads (a share of the
    /// plan's storage).
    Reserved,
    /// Uploads this period (a share of the plan's monthly uploads).
    Uploads,
    /// Incomplete resumable uploads at once.
    OpenUploads,
}

/// Which limit an ask would pass, with what the account holds of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Storage {
        used: u64,
    },
    Uploads {
        count: u64,
    },
    OpenUploads {
        open: u64,
    },
    /// The account's strangers (its public keys and upload tokens, all
    /// together) hold `held` of `of`, their share `max` of it: the account
    /// itself has room, for its own keys.
    Strangers {
        of: ShareOf,
        held: u64,
        max: u64,
    },
}

/// The part of each per-account limit that an account's strangers may hold
/// together: its public keys (anyone with the page that holds one has it)
/// and its upload tokens (anyone with the link). A plan's `public_share`,
/// kept in millionths so that plans compare exactly. Of a `limit` the
/// strangers hold `floor(limit × share)`, at least one: whatever they do,
/// the account's own secret keys keep the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Share(u32);

const MILLION: u32 = 1_000_000;

impl Share {
    /// The default: half.
    pub const HALF: Share = Share(MILLION / 2);
    /// All of every limit (strangers as the account's own keys).
    pub const ALL: Share = Share(MILLION);

    /// The share of a fraction `0 < x ≤ 1` (to the millionth, rounded down,
    /// at least one millionth); else what is wrong with it.
    pub fn from_fraction(x: f64) -> Result<Share, String> {
        if !(x > 0.0 && x <= 1.0) {
            return Err(format!(
                "public_share must be more than 0 and at most 1, not {x}"
            ));
        }
        // In (0, 1e6] after the check above: the cast neither wraps nor
        // loses a sign.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let millionths = (x * f64::from(MILLION)).floor() as u32;
        Ok(Share(millionths.clamp(1, MILLION)))
    }

    /// The share as a fraction (for display and storage).
    pub fn fraction(self) -> f64 {
        f64::from(self.0) / f64::from(MILLION)
    }

    /// The strangers' part of `limit`: `floor(limit × share)`, at least one.
    pub fn of(self, limit: u64) -> u64 {
        let part = u128::from(limit) * u128::from(self.0) / u128::from(MILLION);
        u64::try_from(part).unwrap_or(u64::MAX).max(1)
    }
}

impl Default for Share {
    fn default() -> Share {
        Share::HALF
    }
}

impl Ask {
    /// The bytes the ask reserves: a resumable upload's declared length. A
    /// file's bytes are stored, the account's as any other file's, so they
    /// count against the storage quota but not against the strangers'
    /// share of reservations.
    fn reserved(self) -> u64 {
        if self.open {
            self.bytes
        } else {
            0
        }
    }
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

    /// Admits the ask of a stranger (a public key or an upload token): the
    /// account's limits first (`held`, as [`Quota::admit`]), then the
    /// strangers' `share` of each, with what the account's strangers hold
    /// together (`theirs`: the bytes their incomplete resumable uploads
    /// reserve, their uploads this period, those incomplete uploads). Only
    /// reservations count against the share of storage: a stranger's file,
    /// once stored, is the account's.
    pub fn admit_stranger(
        &self,
        share: Share,
        held: Holdings,
        theirs: Holdings,
        ask: Ask,
    ) -> Result<(), Refusal> {
        self.admit(held, ask)?;
        let max = Quota {
            storage: share.of(self.storage),
            uploads_per_period: share.of(self.uploads_per_period),
            open_uploads: share.of(self.open_uploads),
        };
        let reserving = Ask {
            bytes: ask.reserved(),
            ..ask
        };
        max.admit(theirs, reserving)
            .map_err(|refusal| match refusal {
                Refusal::Storage { used } => Refusal::Strangers {
                    of: ShareOf::Reserved,
                    held: used,
                    max: max.storage,
                },
                Refusal::Uploads { count } => Refusal::Strangers {
                    of: ShareOf::Uploads,
                    held: count,
                    max: max.uploads_per_period,
                },
                Refusal::OpenUploads { open } => Refusal::Strangers {
                    of: ShareOf::OpenUploads,
                    held: open,
                    max: max.open_uploads,
                },
                strangers @ Refusal::Strangers { .. } => strangers,
            })
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

    #[test]
    fn a_share_is_rounded_down_and_at_least_one() {
        assert_eq!(Share::HALF.of(8), 4);
        assert_eq!(Share::HALF.of(7), 3);
        assert_eq!(Share::HALF.of(1), 1);
        assert_eq!(Share::HALF.of(0), 1);
        assert_eq!(Share::HALF.of(1_000_000_000), 500_000_000);
        assert_eq!(Share::ALL.of(u64::MAX), u64::MAX);
        assert_eq!(Share::HALF.of(u64::MAX), u64::MAX / 2);
        let tenth = Share::from_fraction(0.1).unwrap();
        assert_eq!((tenth.of(16), tenth.of(9), tenth.of(1_000)), (1, 1, 100));
        assert_eq!(Share::from_fraction(1.0), Ok(Share::ALL));
        assert_eq!(Share::from_fraction(0.5), Ok(Share::HALF));
        assert_eq!(Share::from_fraction(1e-9).unwrap().of(1_000_000_000), 1000);
        for bad in [0.0, -0.5, 1.000_001, f64::NAN, f64::INFINITY] {
            assert!(Share::from_fraction(bad).is_err(), "{bad}");
        }
    }

    const STRANGER_Q: Quota = Quota {
        storage: 1_000,
        uploads_per_period: 10,
        open_uploads: 16,
    };

    #[test]
    fn strangers_hold_half_of_each_limit_together() {
        let none = Holdings::default();
        let q = STRANGER_Q;
        let share = Share::HALF;
        // Reservations: 500 of the 1,000 bytes.
        let reserved = Holdings {
            used: 500,
            uploads: 1,
            open: 1,
        };
        assert_eq!(
            q.admit_stranger(share, reserved, reserved, Ask::resumable(1)),
            Err(Refusal::Strangers {
                of: ShareOf::Reserved,
                held: 500,
                max: 500
            })
        );
        // A file's bytes are stored, not reserved: only the account's room counts.
        assert_eq!(
            q.admit_stranger(share, reserved, reserved, Ask::file(500)),
            Ok(())
        );
        // Monthly uploads: 5 of 10.
        let five = Holdings { uploads: 5, ..none };
        assert_eq!(
            q.admit_stranger(share, five, five, Ask::file(1)),
            Err(Refusal::Strangers {
                of: ShareOf::Uploads,
                held: 5,
                max: 5
            })
        );
        // Open uploads: 8 of 16.
        let open = Holdings {
            uploads: 8,
            open: 8,
            used: 0,
        };
        let open_refused = q.admit_stranger(
            share,
            open,
            open,
            Ask {
                upload: false,
                ..Ask::resumable(0)
            },
        );
        assert_eq!(
            open_refused,
            Err(Refusal::Strangers {
                of: ShareOf::OpenUploads,
                held: 8,
                max: 8
            })
        );
        // The account's own limit is named first when it is reached.
        let full = Holdings {
            uploads: 10,
            ..none
        };
        assert_eq!(
            q.admit_stranger(share, full, five, Ask::file(1)),
            Err(Refusal::Uploads { count: 10 })
        );
    }

    proptest! {
        /// A share is within the limit (or one), never more than asked, and
        /// grows with the limit.
        #[test]
        fn a_share_is_floor_of_limit_times_share(limit: u64, millionths in 1u32..=1_000_000) {
            let share = Share::from_fraction(f64::from(millionths) / 1e6).unwrap();
            let part = share.of(limit);
            prop_assert!(part >= 1);
            prop_assert!(part <= limit.max(1));
            let exact = u128::from(limit) * u128::from(share.0) / 1_000_000;
            prop_assert_eq!(u128::from(part), exact.max(1));
            prop_assert!(share.of(limit.saturating_add(1)) >= part);
        }

        /// A stranger is admitted exactly when the account's limits admit
        /// the ask and the strangers stay within their share of each (only
        /// a reservation counting against the share of storage).
        #[test]
        fn strangers_admitted_exactly_within_account_and_share(
            storage in 0u64..1_000, uploads_per_period in 0u64..10, open_uploads in 0u64..10,
            used in 0u64..1_200, uploads in 0u64..12, open in 0u64..12,
            t_used in 0u64..1_200, t_uploads in 0u64..12, t_open in 0u64..12,
            bytes in 0u64..1_200, upload: bool, open_one: bool, millionths in 1u32..=1_000_000,
        ) {
            let q = Quota { storage, uploads_per_period, open_uploads };
            let share = Share::from_fraction(f64::from(millionths) / 1e6).unwrap();
            let held = Holdings { used, uploads, open };
            let theirs = Holdings { used: t_used, uploads: t_uploads, open: t_open };
            let ask = Ask { bytes, upload, open: open_one };
            let reserved = if open_one { bytes } else { 0 };
            let within_share = t_used + reserved <= share.of(storage)
                && (!upload || t_uploads < share.of(uploads_per_period))
                && (!open_one || t_open < share.of(open_uploads));
            let ok = q.admit_stranger(share, held, theirs, ask).is_ok();
            prop_assert_eq!(ok, q.admit(held, ask).is_ok() && within_share);
        }
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
