//! The free space the server keeps on its data dir's volume
//! (`storage.min_free_space`): uploads that would eat into it are refused
//! with 507, so that the database always has room to commit deletes (which
//! free space) and the machine keeps working. Health reports `error` below it.

use crate::error::ApiError;
use std::path::{Path, PathBuf};

/// Default reserve: 1 GiB, or 5 % of the volume when that is smaller.
const DEFAULT_MAX: u64 = 1 << 30;

#[derive(Debug, Clone)]
pub struct Disk {
    dir: PathBuf,
    /// Bytes kept free.
    pub reserve: u64,
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
    /// The reserve of `dir`'s volume: `configured`, else the default.
    pub fn new(dir: &Path, configured: Option<u64>) -> std::io::Result<Disk> {
        let reserve = match configured {
            Some(r) => r,
            None => DEFAULT_MAX.min(space(dir)?.1 / 20),
        };
        Ok(Disk {
            dir: dir.to_path_buf(),
            reserve,
        })
    }

    /// Refuses (507) when writing `more` bytes would leave less than the
    /// reserve free.
    pub fn check_room(&self, more: u64) -> Result<(), ApiError> {
        let (free, _) = space(&self.dir).map_err(ApiError::from_io)?;
        if more > free || free - more < self.reserve {
            return Err(ApiError::InsufficientStorage(format!(
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
        let d = Disk::new(dir.path(), None).unwrap();
        assert!(d.reserve <= DEFAULT_MAX && d.reserve <= total / 20);
        let all = Disk::new(dir.path(), Some(u64::MAX)).unwrap();
        assert_eq!(all.check_room(0).unwrap_err().status().as_u16(), 507);
        assert!(all.check().is_err());
        let none = Disk::new(dir.path(), Some(0)).unwrap();
        assert!(none.check_room(1).is_ok() && none.check().is_ok());
        assert!(
            none.check_room(u64::MAX).is_err(),
            "more than the volume holds"
        );
    }
}
