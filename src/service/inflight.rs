//! Uploads still arriving, per account: their bytes and their number.
//!
//! An upload's spool takes disk space long before its file counts in
//! `storage_bytes`, so the quota counts both: a tenant cannot fill the disk
//! with stalled or parallel uploads that each fit the quota alone. (Per
//! node: the database check at commit stays the final word.)
//!
//! The plan's `concurrent_uploads` caps the upload bodies (multipart
//! uploads and resumable PATCHes) an account has arriving at once: a slot is
//! taken before the body is read and given back when the request ends
//! ([`Slot`]'s drop), so one tenant's many slow uploads cannot take every
//! connection and spool of the server. Counted per node, in memory: on `n`
//! nodes behind a balancer an account may have up to `n` times its cap.
//! Of it, the account's strangers (public keys and upload tokens, all
//! together) hold at most their share (`[plans.*] public_share`), counted
//! exactly across nodes when the store is shared (PostgreSQL, `SlotRepo`):
//! whoever has the page or the link cannot take the account's own uploads'
//! room, on any node.

use crate::db::DynMetaStore;
use crate::domain::ids::KeyKind;
use crate::domain::quota::{Ask, Holdings, Quota, Refusal, Share};
use crate::service::error::ServiceError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

#[derive(Debug, Default, Clone)]
pub struct InFlight(Arc<Mutex<Tally>>);

#[derive(Debug, Default)]
struct Tally {
    /// Bytes in flight per account.
    bytes: HashMap<String, u64>,
    /// Upload bodies arriving per account.
    uploads: HashMap<String, u64>,
}

/// The upload bodies one caller may have arriving at once, of its account's
/// `concurrent` (the plan's `concurrent_uploads`), besides the account's
/// own cap: the account's strangers (its public keys and upload tokens,
/// all together) their `share` of it, at least one (anyone with the page
/// or the link has one, and slow bodies sent with them would otherwise hold
/// every slot: the account's own secret-key uploads always find room); an
/// upload token also its uploads left (`at_once`), so that it cannot hold
/// slots with bodies it could never all commit. None: the account's cap
/// alone (a secret key).
pub(crate) fn strangers_share(kind: KeyKind, share: Share, concurrent: u64) -> Option<u64> {
    kind.is_stranger().then(|| share.of(concurrent))
}

/// Seconds a client refused for too many concurrent uploads is told to wait.
pub(crate) const RETRY_AFTER_SECS: i64 = 1;

/// The refusal of a stranger's upload body past the strangers' share
/// (`max`) of the account's concurrent uploads (429, retried a second
/// later, as the account's own).
fn strangers_full(max: u64) -> String {
    format!(
        "too many uploads at once: {max} are arriving with this account's public keys and \
         upload tokens, their share of its concurrent uploads; retry when one has ended"
    )
}

/// The places one upload body holds (see [`InFlight::slots`]), until
/// dropped: those counted in this node's memory, and the strangers' one the
/// store counts for every node.
#[derive(Debug)]
pub struct Slots {
    _here: Vec<Slot>,
    _shared: Option<Shared>,
}

/// A strangers' slot the store counts (a row on PostgreSQL): given back on
/// drop, by a task that tries until the store answers (while it cannot,
/// the row holds the slot; should the node die first, its rows count no
/// more). Made before the slot is asked for, so that a request dropped
/// while asking gives back what it may have taken.
#[derive(Debug)]
struct Shared {
    meta: Option<DynMetaStore>,
    id: String,
}

impl Shared {
    fn new(meta: &DynMetaStore, id: String) -> Shared {
        Shared {
            meta: Some(meta.clone()),
            id,
        }
    }

    /// Nothing was taken: nothing to give back.
    fn forget(mut self) {
        self.meta = None;
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let Some(meta) = self.meta.take() else {
            return;
        };
        let id = std::mem::take(&mut self.id);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let mut wait = std::time::Duration::from_millis(500);
                while let Err(e) = meta.free_slot(&id).await {
                    tracing::warn!(error = %e, slot = %id, "a strangers' upload slot was not given back yet");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(std::time::Duration::from_secs(30));
                }
            });
        }
    }
}

/// One upload body's place among its account's concurrent uploads; given
/// back on drop.
#[derive(Debug)]
pub struct Slot {
    map: InFlight,
    account: String,
}

/// One upload's share of its account's bytes in flight; given back on drop.
#[derive(Debug)]
pub struct Held {
    map: InFlight,
    account: String,
    bytes: u64,
}

impl InFlight {
    /// The counts (a panic elsewhere while they were held leaves them whole:
    /// every change is one statement).
    fn tally(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn hold(&self, account: &str) -> Held {
        Held {
            map: self.clone(),
            account: account.to_string(),
            bytes: 0,
        }
    }

    /// Bytes in flight for `account`, all uploads together.
    pub fn of(&self, account: &str) -> u64 {
        let m = self.tally();
        m.bytes.get(account).copied().unwrap_or(0)
    }

    /// A slot for one more upload body of `account`, if fewer than `max`
    /// are arriving; else 429 `rate_limit_exceeded` with `Retry-After`
    /// (`now`: the unix second).
    pub fn slot(&self, account: &str, max: u64, now: i64) -> Result<Slot, ServiceError> {
        self.slot_of(account, "account", max, now)
    }

    /// The slots an upload body of a caller takes: one of its account's
    /// (`concurrent`, the plan's), and, for a stranger, one of the
    /// strangers' `share` of it ([`strangers_share`]) and an upload token's
    /// own (`at_once`, its uploads left, when given). The strangers' share
    /// is counted by the store when several nodes share it (`meta`,
    /// `SlotRepo`: a round trip, for strangers only), else here.
    pub async fn slots(
        &self,
        meta: &DynMetaStore,
        account: &str,
        (concurrent, share): (u64, Share),
        caller: (KeyKind, &str, Option<u64>),
        now: i64,
    ) -> Result<Slots, ServiceError> {
        let (kind, key_id, at_once) = caller;
        let slot = self.slot(account, concurrent, now)?;
        let mut here = vec![slot];
        let Some(max) = strangers_share(kind, share, concurrent) else {
            return Ok(Slots {
                _here: here,
                _shared: None,
            });
        };
        if let (KeyKind::Token, Some(left)) = (kind, at_once) {
            here.push(self.slot_of(key_id, "upload token", left, now)?);
        }
        let mut shared = None;
        if meta.counts_slots() {
            let taken = Shared::new(meta, crate::domain::ids::upload_id());
            if !meta.take_slot(account, &taken.id, max, now).await? {
                taken.forget();
                return Err(ServiceError::RateLimited {
                    message: strangers_full(max),
                    limit: max,
                    reset: now + RETRY_AFTER_SECS,
                    now,
                });
            }
            shared = Some(taken);
        } else {
            let key = format!("strangers/{account}");
            here.push(self.take(key, max, now, || strangers_full(max))?);
        }
        Ok(Slots {
            _here: here,
            _shared: shared,
        })
    }

    /// The same for one caller of an account (`key`: a key's or an upload
    /// token's id), `whose` naming it in the refusal.
    pub fn slot_of(
        &self,
        key: &str,
        whose: &str,
        max: u64,
        now: i64,
    ) -> Result<Slot, ServiceError> {
        self.take(key.to_string(), max, now, || {
            format!(
                "too many uploads at once: {max} are arriving for this {whose}; \
                 retry when one has ended"
            )
        })
    }

    /// A place for one more folder archive being sent for `account`, if
    /// fewer than `max` are; else 429 as for uploads. (Each holds a few
    /// MiB of buffers while its client reads, however slowly.)
    pub fn archive_slot(&self, account: &str, max: u64, now: i64) -> Result<Slot, ServiceError> {
        self.take(format!("zip/{account}"), max, now, || {
            format!(
                "too many folder archives at once: {max} are being sent for this account; \
                 retry when one has ended"
            )
        })
    }

    fn take(
        &self,
        key: String,
        max: u64,
        now: i64,
        message: impl FnOnce() -> String,
    ) -> Result<Slot, ServiceError> {
        let mut m = self.tally();
        let n = m.uploads.entry(key.clone()).or_default();
        if *n >= max {
            return Err(ServiceError::RateLimited {
                message: message(),
                limit: max,
                reset: now + RETRY_AFTER_SECS,
                now,
            });
        }
        *n += 1;
        Ok(Slot {
            map: self.clone(),
            account: key,
        })
    }

    /// Upload bodies arriving for `account`.
    pub fn uploads_of(&self, account: &str) -> u64 {
        let m = self.tally();
        m.uploads.get(account).copied().unwrap_or(0)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        give_back(&mut self.map.tally().uploads, &self.account, 1);
    }
}

/// Takes `n` off `account`'s count, forgetting the account at zero.
fn give_back(counts: &mut HashMap<String, u64>, account: &str, n: u64) {
    if let Some(count) = counts.get_mut(account) {
        *count = count.saturating_sub(n);
        if *count == 0 {
            counts.remove(account);
        }
    }
}

impl Held {
    /// Takes `n` more bytes if the account's stored bytes (`used`) and every
    /// byte in flight still fit `quota`; the refusal (nothing taken) otherwise.
    pub fn grow(&mut self, n: u64, used: u64, quota: &Quota) -> Result<(), Refusal> {
        let mut m = self.map.tally();
        let total = m.bytes.entry(self.account.clone()).or_default();
        let held = Holdings {
            used: used.saturating_add(*total),
            ..Holdings::default()
        };
        quota.admit(held, Ask::bytes(n))?;
        *total += n;
        self.bytes += n;
        Ok(())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        give_back(&mut self.map.tally().bytes, &self.account, self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strangers_have_their_share_a_secret_key_all() {
        assert_eq!(strangers_share(KeyKind::Public, Share::HALF, 8), Some(4));
        assert_eq!(strangers_share(KeyKind::Token, Share::HALF, 8), Some(4));
        assert_eq!(strangers_share(KeyKind::Public, Share::HALF, 1), Some(1));
        assert_eq!(strangers_share(KeyKind::Secret, Share::HALF, 8), None);
    }

    #[test]
    fn concurrent_uploads_share_the_room_and_give_it_back() {
        let f = InFlight::default();
        let mut a = f.hold("acc");
        let mut b = f.hold("acc");
        let q = Quota {
            storage: 100,
            ..Quota::UNLIMITED
        };
        assert!(a.grow(60, 10, &q).is_ok());
        assert!(
            b.grow(31, 10, &q).is_err(),
            "10 stored + 60 in flight + 31 > 100"
        );
        assert!(b.grow(30, 10, &q).is_ok());
        assert_eq!(f.of("acc"), 90);
        let mut other = f.hold("other");
        assert!(other.grow(100, 0, &q).is_ok(), "accounts are apart");
        drop(a);
        assert_eq!(f.of("acc"), 30);
        drop(b);
        assert_eq!(f.of("acc"), 0);
    }

    #[test]
    fn slots_are_counted_per_account_and_given_back_on_drop() {
        let f = InFlight::default();
        let a = f.slot("acc", 2, 100).unwrap();
        let b = f.slot("acc", 2, 100).unwrap();
        let refused = f.slot("acc", 2, 100).unwrap_err();
        assert!(matches!(
            refused,
            ServiceError::RateLimited {
                limit: 2,
                reset: 101,
                now: 100,
                ..
            }
        ));
        assert_eq!(refused.code(), "rate_limit_exceeded");
        let other = f.slot("other", 2, 100).unwrap();
        assert_eq!((f.uploads_of("acc"), f.uploads_of("other")), (2, 1));
        drop(a);
        let c = f
            .slot("acc", 2, 100)
            .expect("a slot given back is free again");
        drop((b, c, other));
        assert_eq!(f.uploads_of("acc"), 0);
        assert!(
            f.0.lock().unwrap().uploads.is_empty(),
            "nothing left behind"
        );
    }
}
