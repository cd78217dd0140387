//! The free space the server keeps on its data dir's volume
//! (`storage.min_free_space`): uploads that would eat into it are refused
//! with 507, so that the database always has room to commit deletes (which
//! free space) and the machine keeps working. Health reports `error` below it.
//!
//! That reserve is only free space: another process may still fill the
//! volume to its last byte, and keep it full, taking every block anything
//! frees the moment it is freed (a runaway log). A spare file given back to
//! the volume before a delete retries lost that race (23 of 24 deletes got
//! 507 under such a writer). So the room deletes need is kept *inside*
//! SQLite's own files instead ([`Room`]): blocks allocated past the end of
//! the database and its write-ahead log (`fallocate` with
//! `KEEP_SIZE`), which the files grow into without asking the volume for
//! anything, and which no other process can take. A delete writes a few
//! pages to the log (reused from its start after each checkpoint) and, at a
//! checkpoint, into the database where its rows were: it needs no new
//! space. The collector tops the room up on every pass where the volume has
//! room ([`Disk::keep_room`]).

use crate::db::SQLITE_FILE;
use crate::service::error::ServiceError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The spare file earlier versions kept in the data dir: removed at start.
const RESERVE_FILE: &str = ".reserve";

/// The room kept past the end of each of SQLite's files: its suffix (after
/// the database's name) and its part of the whole room, in fifths: the log
/// takes most (thousands of deletes' pages between two checkpoints at the
/// largest room). Not the index (`-shm`): SQLite maps it into memory, and
/// grows it itself, a byte a page, failing cleanly on a full volume.
const ROOM: [(&str, u64); 2] = [("", 1), ("-wal", 4)];

/// The largest room: 20 MiB (4 past the database, 16 past its log).
const ROOM_MAX: u64 = 20 << 20;

/// The smallest room (on a volume of 40 MiB or more): a log of 1 MiB was
/// used up by ten deletes between two checkpoints.
const ROOM_MIN: u64 = 5 << 20;

/// Default reserve: 1 GiB, or 5 % of the volume when that is smaller.
const DEFAULT_MAX: u64 = 1 << 30;

#[derive(Debug)]
pub struct Disk {
    dir: PathBuf,
    /// Bytes kept free.
    pub reserve: u64,
    /// The room kept in SQLite's files; None when the database is
    /// elsewhere (PostgreSQL).
    room: Option<Room>,
}

/// Allocated blocks past the end of SQLite's files, for deletes.
#[derive(Debug)]
struct Room {
    /// The database file; its log and index are beside it.
    db: PathBuf,
    /// Bytes of the whole room: half the reserve, from [`ROOM_MIN`] to
    /// [`ROOM_MAX`], and at most an eighth of the volume (a small volume is
    /// not taken by it).
    bytes: u64,
    /// Whether the last top-up kept all of it.
    kept: AtomicBool,
}

impl Room {
    /// Allocates what is missing of each file's room past its end (blocks
    /// already allocated are left as they are: cheap when nothing is
    /// missing). A file that does not exist yet is skipped: SQLite creates
    /// the log and index with the first connection, before any request.
    fn keep(&self) -> std::io::Result<()> {
        if self.bytes == 0 {
            return Ok(());
        }
        let parts = ROOM
            .iter()
            .map(|&(suffix, fifths)| (suffix, self.bytes / 5 * fifths));
        for (suffix, bytes) in parts {
            let mut path = self.db.clone().into_os_string();
            path.push(suffix);
            let file = match std::fs::OpenOptions::new().write(true).open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            let end = file.metadata()?.len();
            rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::KEEP_SIZE, end, bytes)?;
        }
        Ok(())
    }
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
    /// Free bytes on the data dir's volume now (for this user), None when
    /// the volume cannot say.
    pub fn free(&self) -> Option<u64> {
        space(&self.dir).ok().map(|(free, _)| free)
    }

    /// The reserve of `dir`'s volume: `configured`, else the default. With
    /// `room`, room for deletes is kept in the SQLite database in `dir`
    /// (now if there is space, else once there is).
    pub fn new(dir: &Path, configured: Option<u64>, room: bool) -> std::io::Result<Disk> {
        let total = space(dir)?.1;
        let reserve = configured.unwrap_or(DEFAULT_MAX.min(total / 20));
        let _ = std::fs::remove_file(dir.join(RESERVE_FILE));
        let disk = Disk {
            dir: dir.to_path_buf(),
            reserve,
            room: room.then(|| Room {
                db: dir.join(SQLITE_FILE),
                bytes: (reserve / 2).clamp(ROOM_MIN, ROOM_MAX).min(total / 8),
                kept: AtomicBool::new(false),
            }),
        };
        disk.keep_room();
        Ok(disk)
    }

    /// Tops up the room for deletes in SQLite's files. On a full volume it
    /// keeps what it could (the blocks allocated stay allocated) and says
    /// so once; the collector calls it every pass.
    pub fn keep_room(&self) {
        let Some(room) = &self.room else { return };
        match room.keep() {
            Ok(()) => {
                if !room.kept.swap(true, Ordering::AcqRel) {
                    tracing::debug!("room for deletes kept in the database's files");
                }
            }
            Err(e) => {
                if room.kept.swap(false, Ordering::AcqRel) {
                    tracing::warn!(error = %e, "the data volume is full: the room kept for deletes cannot be topped up yet");
                }
            }
        }
    }

    /// Whether the last top-up kept all of the room.
    pub fn room_kept(&self) -> bool {
        self.room
            .as_ref()
            .is_some_and(|r| r.kept.load(Ordering::Acquire))
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
    use std::io::Write as _;

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

    #[test]
    fn room_is_allocated_past_the_ends_of_the_database_files() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join(SQLITE_FILE);
        std::fs::write(&db, vec![1u8; 8192]).unwrap();
        let wal = dir.path().join(format!("{SQLITE_FILE}-wal"));
        std::fs::write(&wal, b"").unwrap();
        std::fs::write(dir.path().join(RESERVE_FILE), b"old").unwrap();
        let d = Disk::new(dir.path(), Some(1 << 30), true).unwrap();
        assert!(d.room_kept());
        assert!(
            !dir.path().join(RESERVE_FILE).exists(),
            "the old spare is gone"
        );
        let allocated = |p: &Path| {
            use std::os::unix::fs::MetadataExt as _;
            std::fs::metadata(p).unwrap().blocks() * 512
        };
        // The sizes SQLite sees are unchanged; the blocks are there.
        assert_eq!(std::fs::metadata(&db).unwrap().len(), 8192);
        assert_eq!(std::fs::metadata(&wal).unwrap().len(), 0);
        assert!(allocated(&db) >= 8192 + (4 << 20), "{}", allocated(&db));
        assert!(allocated(&wal) >= 16 << 20, "{}", allocated(&wal));
        // Grown into, topped up again from the new end.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&wal)
            .unwrap()
            .write_all(&vec![2u8; 1 << 20])
            .unwrap();
        d.keep_room();
        assert!(allocated(&wal) >= (1 << 20) + (16 << 20));
        // PostgreSQL: nothing kept.
        let other = tempfile::tempdir().unwrap();
        let none = Disk::new(other.path(), Some(0), false).unwrap();
        assert!(!none.room_kept());
    }
}
