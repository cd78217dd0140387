//! The keys a store found (with their accounts) in the last second, by the
//! hash of their secret, for both stores: a request of a key seen within
//! [`KEY_FRESH`] costs no lookup.
//!
//! A miss is not kept (a key made elsewhere works at once). A revocation or
//! an account change made through this store forgets them all at once; one
//! made elsewhere is seen at once too: on SQLite, whose other writer
//! (`admin`, another process) rewrites the store's stamp file ([`Stamp`]);
//! on PostgreSQL, as the node's session hears the notice the changing node
//! or `admin` sends after it commits (`postgres::node::KEYS_CHANNEL`), and
//! within [`KEY_FRESH`] should that session be down.

use super::error::DbError;
use super::model::{Account, KeyRecord};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a store answers a key from what it read: a key revoked, or an
/// account put in its grace period or on another plan, by another node is
/// seen by every node within this.
pub(crate) const KEY_FRESH: Duration = Duration::from_secs(1);

/// Keys kept at most: past it, what is older than [`KEY_FRESH`] goes, and
/// all of them if that is not enough.
const KEY_CACHE_MAX: usize = 10_000;

/// A live key with its account, as a lookup finds it.
type Found = Option<(KeyRecord, Account)>;

/// What one read found, with when it was read.
type Entry = (Instant, KeyRecord, Account);

/// The keys found in the last [`KEY_FRESH`] (see the module's text).
#[derive(Default)]
pub(crate) struct KeyCache {
    entries: Mutex<HashMap<[u8; 32], Entry>>,
    /// Bumped by every [`KeyCache::forget`]: a read that began before one
    /// is not kept (it may have seen the key before its revocation).
    generation: AtomicU64,
}

/// A read about to start: when, and in which generation of the cache.
#[derive(Debug, Clone, Copy)]
struct ReadStart {
    at: Instant,
    generation: u64,
}

impl KeyCache {
    /// The key of `hash` from memory when read in the last [`KEY_FRESH`],
    /// else what `read` finds in the store (kept, when found).
    pub(crate) async fn get_or_read<F, Fut>(
        &self,
        hash: [u8; 32],
        read: F,
    ) -> Result<Found, DbError>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Found, DbError>>,
    {
        if let Some(found) = self.get(&hash) {
            return Ok(Some(found));
        }
        let start = self.start();
        let found = read().await?;
        if let Some(found) = &found {
            self.put(hash, start, found);
        }
        Ok(found)
    }

    fn get(&self, hash: &[u8; 32]) -> Option<(KeyRecord, Account)> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .get(hash)
            .filter(|(at, ..)| at.elapsed() < KEY_FRESH)
            .map(|(_, key, account)| (key.clone(), account.clone()))
    }

    /// Taken just before the lookup whose result goes to [`KeyCache::put`].
    fn start(&self) -> ReadStart {
        ReadStart {
            at: Instant::now(),
            generation: self.generation.load(Ordering::Acquire),
        }
    }

    /// Keeps what a read begun at `start` found, unless the cache was
    /// forgotten since (then the next request reads again).
    fn put(&self, hash: [u8; 32], start: ReadStart, found: &(KeyRecord, Account)) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if self.generation.load(Ordering::Acquire) != start.generation {
            return;
        }
        if entries.len() >= KEY_CACHE_MAX {
            entries.retain(|_, (at, ..)| at.elapsed() < KEY_FRESH);
            if entries.len() >= KEY_CACHE_MAX {
                entries.clear();
            }
        }
        entries.insert(hash, (start.at, found.0.clone(), found.1.clone()));
    }

    pub(crate) fn forget(&self) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        self.generation.fetch_add(1, Ordering::AcqRel);
        entries.clear();
    }
}

/// A small file beside a SQLite database whose 32 bytes every change to
/// keys or accounts rewrites in place with a fresh nonce, after it commits:
/// a process that remembers keys ([`KeyCache`]) reads them (one `pread` on
/// the file it keeps open) before answering from memory, and forgets them
/// all when they changed. A read torn by a write at once counts as a change,
/// which only costs a lookup. Were the file removed while a server runs, the
/// server would see changes made after that within [`KEY_FRESH`], not at once.
#[derive(Debug)]
pub(crate) struct Stamp {
    path: PathBuf,
    /// None when it could not be opened: then nothing is answered from memory.
    file: Option<File>,
    seen: Mutex<[u8; NONCE]>,
}

/// The stamp's length: a nonce of 128 random bits, in hex.
const NONCE: usize = 32;

impl Stamp {
    /// Opens the stamp at `path`, made (with a nonce) when missing.
    pub(crate) fn new(path: PathBuf) -> Stamp {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .and_then(|f| {
                if f.metadata()?.len() < NONCE as u64 {
                    f.write_all_at(nonce().as_bytes(), 0)?;
                }
                Ok(f)
            });
        let file = match file {
            Ok(f) => Some(f),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e,
                    "cannot open the keys stamp: every request's key is read from the database");
                None
            }
        };
        let mut seen = [0; NONCE];
        if let Some(f) = &file {
            let _ = f.read_exact_at(&mut seen, 0);
        }
        Stamp {
            path,
            file,
            seen: Mutex::new(seen),
        }
    }

    /// Forgets `keys` when the stamp changed since the last look (or since
    /// [`Stamp::new`]), and always when it cannot be read. The forget happens
    /// under the lock the comparison takes: a request that compares after it
    /// finds the keys forgotten already, never the stamp new and the keys old.
    pub(crate) fn forget_if_changed(&self, keys: &KeyCache) {
        let mut now = [0; NONCE];
        let read = self
            .file
            .as_ref()
            .is_some_and(|f| f.read_exact_at(&mut now, 0).is_ok());
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if !read || *seen != now {
            keys.forget();
            *seen = now;
        }
    }

    /// Writes a fresh nonce over the stamp.
    pub(crate) fn touch(&self) {
        let written = match &self.file {
            Some(f) => f.write_all_at(nonce().as_bytes(), 0),
            None => Err(std::io::Error::other("the stamp could not be opened")),
        };
        if let Err(e) = written {
            tracing::warn!(path = %self.path.display(), error = %e,
                "could not rewrite the keys stamp: a running server may answer a changed key from memory for up to a second");
        }
    }
}

fn nonce() -> String {
    crate::domain::ids::random_hex(NONCE / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_forgets_the_keys_once_per_touch_of_another_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db-keys");
        let keys = KeyCache::default();
        let kept = |keys: &KeyCache| {
            keys.put([1; 32], keys.start(), &found("k1"));
        };
        let reader = Stamp::new(path.clone());
        kept(&keys);
        reader.forget_if_changed(&keys);
        assert!(keys.get(&[1; 32]).is_some(), "made, and not changed since");
        let writer = Stamp::new(path.clone());
        reader.forget_if_changed(&keys);
        assert!(
            keys.get(&[1; 32]).is_some(),
            "a second process opening it changes nothing"
        );
        writer.touch();
        reader.forget_if_changed(&keys);
        assert!(keys.get(&[1; 32]).is_none(), "a touch forgets");
        kept(&keys);
        reader.forget_if_changed(&keys);
        assert!(keys.get(&[1; 32]).is_some(), "once");
        writer.touch();
        writer.touch();
        reader.forget_if_changed(&keys);
        assert!(
            keys.get(&[1; 32]).is_none(),
            "two touches at once are still a change"
        );
        let unreadable = Stamp::new(dir.path().join("no-such-dir/db-keys"));
        for _ in 0..2 {
            kept(&keys);
            unreadable.forget_if_changed(&keys);
            assert!(keys.get(&[1; 32]).is_none(), "no stamp: never from memory");
        }
    }

    fn found(id: &str) -> (KeyRecord, Account) {
        let key = KeyRecord {
            id: id.into(),
            account_id: "acc".into(),
            kind: crate::domain::ids::KeyKind::Secret,
            name: None,
            origins: Vec::new(),
            created_at: 0,
            revoked_at: None,
            policy: crate::domain::policy::UploadPolicy::default(),
        };
        let account = Account {
            id: "acc".into(),
            name: "acc".into(),
            plan: "free".into(),
            grace_period: false,
            storage_bytes: 0,
            created_at: 0,
        };
        (key, account)
    }

    #[test]
    fn a_read_begun_before_a_forget_is_not_kept() {
        let cache = KeyCache::default();
        let before = cache.start();
        cache.forget();
        cache.put([1; 32], before, &found("k1"));
        assert!(cache.get(&[1; 32]).is_none());
        let after = cache.start();
        cache.put([1; 32], after, &found("k1"));
        assert_eq!(cache.get(&[1; 32]).unwrap().0.id, "k1");
        cache.forget();
        assert!(cache.get(&[1; 32]).is_none());
    }
}
