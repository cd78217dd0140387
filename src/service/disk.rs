//! The free space the server keeps on its data dir's volume
//! (`storage.min_free_space`): uploads that would eat into it are refused
//! with 507, so that the database always has room to commit deletes (which
//! free space) and the machine keeps working. Health reports `error` below it.
//!
//! That reserve is only free space: another process may still fill the
//! volume to its last byte, and then SQLite cannot append a delete to its
//! log. So the server also keeps a *spare*: a file of real, allocated blocks
//! in the data dir ([`RESERVE_FILE`]). A delete that meets a full disk
//! gives the spare back to the volume and tries once more ([`Disk::freeing`]);
//! the collector takes the spare back once the volume has room for it and
//! as much again ([`Disk::retake_spare`]).

use crate::db::DbError;
use crate::service::error::ServiceError;
use std::future::Future;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The spare's file, in the data dir.
pub const RESERVE_FILE: &str = ".reserve";

/// Largest spare: room for thousands of deletes' log pages.
const SPARE_MAX: u64 = 16 << 20;

/// Default reserve: 1 GiB, or 5 % of the volume when that is smaller.
const DEFAULT_MAX: u64 = 1 << 30;

#[derive(Debug)]
pub struct Disk {
    dir: PathBuf,
    /// Bytes kept free.
    pub reserve: u64,
    /// The spare that deletes may free; None when none is kept.
    spare: Option<Spare>,
}

/// A preallocated file whose blocks a delete may give back to the volume.
#[derive(Debug)]
struct Spare {
    path: PathBuf,
    size: u64,
    /// Whether the file holds its blocks now.
    held: AtomicBool,
    /// One freeing or retaking at a time.
    turn: Mutex<()>,
}

impl Spare {
    /// Allocates the file's blocks (real ones, not a sparse file).
    fn take(&self) -> std::io::Result<()> {
        let _turn = self.turn.lock().expect("spare lock");
        if self.held.load(Ordering::Acquire) {
            return Ok(());
        }
        let taken = allocate(&self.path, self.size);
        if taken.is_err() {
            let _ = std::fs::remove_file(&self.path);
        }
        taken?;
        self.held.store(true, Ordering::Release);
        Ok(())
    }

    /// Gives the blocks back; true when it freed any.
    fn free(&self) -> bool {
        // Called on a request's thread: never waits for a retake in
        // progress (which means the spare is not held yet anyway).
        let Ok(_turn) = self.turn.try_lock() else {
            return false;
        };
        if !self.held.swap(false, Ordering::AcqRel) {
            return false;
        }
        let freed = std::fs::remove_file(&self.path).is_ok();
        if freed {
            tracing::warn!(
                bytes = self.size,
                "the data volume is full: the spare was freed so that deletes can commit"
            );
        }
        freed
    }
}

/// Creates a file at `path` holding `size` allocated bytes: `fallocate`
/// (blocks reserved without writing them), or zeros written where the
/// filesystem has no `fallocate`; synced.
fn allocate(path: &Path, size: u64) -> std::io::Result<()> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let mut f = o.open(path)?;
    match rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::empty(), 0, size) {
        Ok(()) => return f.sync_all(),
        Err(e) if e == rustix::io::Errno::NOSPC => return Err(e.into()),
        Err(_) => {}
    }
    let block = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        let n = usize::try_from(left.min(block.len() as u64)).expect("at most 1 MiB");
        f.write_all(&block[..n])?;
        left -= n as u64;
    }
    f.sync_all()
}

/// (free bytes for this user, total bytes) of the volume holding `dir`.
pub(crate) fn space(dir: &Path) -> std::io::Result<(u64, u64)> {
    let s = rustix::fs::statvfs(dir)?;
    let unit = s.f_frsize.max(1);
    Ok((
        s.f_bavail.saturating_mul(unit),
        s.f_blocks.saturating_mul(unit),
    ))
}

impl Disk {
    /// The reserve of `dir`'s volume: `configured`, else the default. With
    /// `spare`, a spare of half the reserve (at most 16 MiB) is kept in
    /// `dir` (taken now if there is room, else once there is).
    pub fn new(dir: &Path, configured: Option<u64>, spare: bool) -> std::io::Result<Disk> {
        let reserve = match configured {
            Some(r) => r,
            None => DEFAULT_MAX.min(space(dir)?.1 / 20),
        };
        let size = (reserve / 2).min(SPARE_MAX);
        let path = dir.join(RESERVE_FILE);
        let spare = (spare && size > 0).then(|| Spare {
            held: AtomicBool::new(std::fs::metadata(&path).is_ok_and(|m| m.len() == size)),
            path,
            size,
            turn: Mutex::new(()),
        });
        if spare.is_none() {
            let _ = std::fs::remove_file(dir.join(RESERVE_FILE));
        }
        let disk = Disk {
            dir: dir.to_path_buf(),
            reserve,
            spare,
        };
        disk.retake_spare();
        Ok(disk)
    }

    /// Runs `op`, a write that frees space (a delete); when it meets a full
    /// disk and the spare is held, frees the spare and runs it once more.
    pub(crate) async fn freeing<T, F, Fut>(&self, op: F) -> Result<T, DbError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, DbError>>,
    {
        match op().await {
            Err(DbError::DiskFull(_)) if self.spare.as_ref().is_some_and(Spare::free) => op().await,
            done => done,
        }
    }

    /// Takes the spare back if it was freed and the volume has room for it
    /// and as much again: not only once the volume is above the reserve, so
    /// that on a volume another process keeps nearly full, the next delete
    /// that meets a full disk finds a spare to free again. Cheap when the
    /// spare is held (the collector calls it every pass).
    pub fn retake_spare(&self) {
        let Some(spare) = &self.spare else { return };
        if spare.held.load(Ordering::Acquire) {
            return;
        }
        let room = space(&self.dir).is_ok_and(|(free, _)| free >= spare.size.saturating_mul(2));
        if !room {
            return;
        }
        match spare.take() {
            Ok(()) => tracing::info!(bytes = spare.size, "the spare is kept again"),
            Err(e) => tracing::warn!(error = %e, "the spare could not be taken back yet"),
        }
    }

    /// Whether the spare holds its blocks now.
    pub fn spare_held(&self) -> bool {
        self.spare
            .as_ref()
            .is_some_and(|s| s.held.load(Ordering::Acquire))
    }

    /// Refuses (507) when writing `more` bytes would leave less than the
    /// reserve free.
    pub fn check_room(&self, more: u64) -> Result<(), ServiceError> {
        let (free, _) = space(&self.dir).map_err(ServiceError::from_io)?;
        if more > free || free - more < self.reserve {
            return Err(ServiceError::InsufficientStorage(format!(
                "not enough free space on the server: {free} bytes free, {} kept in reserve",
                self.reserve
            )));
        }
        Ok(())
    }

    /// For health: an error below the reserve.
    pub fn check(&self) -> Result<(), String> {
        let (free, _) = space(&self.dir).map_err(|e| e.to_string())?;
        if free < self.reserve {
            return Err(format!(
                "{free} bytes free, below the reserve of {}",
                self.reserve
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_refuses_and_the_default_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let (free, total) = space(dir.path()).unwrap();
        assert!(free > 0 && total >= free);
        let d = Disk::new(dir.path(), None, false).unwrap();
        assert!(d.reserve <= DEFAULT_MAX && d.reserve <= total / 20);
        let all = Disk::new(dir.path(), Some(u64::MAX), false).unwrap();
        assert_eq!(
            all.check_room(0).unwrap_err().code(),
            "insufficient_storage"
        );
        assert!(all.check().is_err());
        let none = Disk::new(dir.path(), Some(0), false).unwrap();
        assert!(none.check_room(1).is_ok() && none.check().is_ok());
        assert!(
            none.check_room(u64::MAX).is_err(),
            "more than the volume holds"
        );
    }

    #[tokio::test]
    async fn a_full_disk_frees_the_spare_once_and_it_is_taken_back() {
        let dir = tempfile::tempdir().unwrap();
        let d = Disk::new(dir.path(), Some(4 << 20), true).unwrap();
        let path = dir.path().join(RESERVE_FILE);
        assert!(d.spare_held());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 2 << 20);
        let tries = std::sync::atomic::AtomicU32::new(0);
        let op = || async {
            match tries.fetch_add(1, Ordering::SeqCst) {
                0 => Err(DbError::DiskFull("full".into())),
                _ => Ok(7),
            }
        };
        assert_eq!(d.freeing(op).await.unwrap(), 7);
        assert_eq!(tries.load(Ordering::SeqCst), 2, "tried again once");
        assert!(!d.spare_held() && !path.exists(), "the spare was freed");
        // Freed already: a second full disk is the caller's error.
        let full = || async { Err::<(), _>(DbError::DiskFull("full".into())) };
        assert!(matches!(d.freeing(full).await, Err(DbError::DiskFull(_))));
        // Other errors are not retried.
        let again = Disk::new(dir.path(), Some(4 << 20), true).unwrap();
        assert!(again.spare_held(), "taken back at start");
        let n = std::sync::atomic::AtomicU32::new(0);
        let broken = || async {
            n.fetch_add(1, Ordering::SeqCst);
            Err::<(), _>(DbError::Invalid("no".into()))
        };
        assert!(again.freeing(broken).await.is_err());
        assert_eq!(n.load(Ordering::SeqCst), 1);
        assert!(again.spare_held());
        d.retake_spare();
        assert!(d.spare_held() && path.exists());
        let without = Disk::new(dir.path(), Some(4 << 20), false).unwrap();
        assert!(!without.spare_held() && !path.exists());
    }
}
