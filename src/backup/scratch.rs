//! A backup run's scratch directory, where its files are made before they
//! go into the repository (its dump and manifest as they are written, each
//! blob as it is checked): `<parent>/<prefix><id>/`, beside a lock file
//! `<prefix><id>.lock` the run holds (flock) while it lives. A run removes
//! its own when it ends; one killed (kill -9) leaves both, and the next run
//! removes them: a lock nobody holds is a run that is gone.

use super::BackupError;
use rustix::fs::{flock, FlockOperation};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A run's lock younger than this is never taken for a dead run's: the
/// moment between creating it and locking it.
const GRACE: Duration = Duration::from_mins(1);

/// A run's scratch directory, removed when dropped.
#[derive(Debug)]
pub(crate) struct Scratch {
    dir: PathBuf,
    lock_path: PathBuf,
    _lock: std::fs::File,
}

impl Scratch {
    /// Removes what dead runs left in `parent` (their names start with
    /// `prefix`), then makes and locks this run's, `id` (readable by this
    /// user only). `parent` must exist; its mode is left as it is (it may
    /// be the system's temporary directory).
    pub(crate) fn create(parent: &Path, prefix: &str, id: &str) -> Result<Scratch, BackupError> {
        sweep(parent, prefix);
        let lock_path = parent.join(format!("{prefix}{id}.lock"));
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| BackupError::io(&lock_path, e))?;
        flock(&lock, FlockOperation::NonBlockingLockExclusive)
            .map_err(|e| BackupError::io(&lock_path, e.into()))?;
        let dir = parent.join(format!("{prefix}{id}"));
        crate::private_dir::create(&dir).map_err(|e| BackupError::io(&dir, e))?;
        Ok(Scratch {
            dir,
            lock_path,
            _lock: lock,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = std::fs::remove_file(&self.lock_path);
    }
}

/// Removes the scratch directories (and locks) of runs that are gone:
/// their lock is older than [`GRACE`] and nobody holds it. Best effort: a
/// leftover it cannot remove waits for the next run.
fn sweep(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(run) = name
            .strip_suffix(".lock")
            .filter(|_| name.starts_with(prefix))
        else {
            continue;
        };
        let lock_path = entry.path();
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > GRACE));
        if !old {
            continue;
        }
        let Ok(lock) = std::fs::OpenOptions::new().write(true).open(&lock_path) else {
            continue;
        };
        if flock(&lock, FlockOperation::NonBlockingLockExclusive).is_err() {
            continue;
        }
        let dir = parent.join(run);
        tracing::info!(dir = %dir.display(), "removing what a backup cut short left");
        if std::fs::remove_dir_all(&dir).is_ok() || !dir.exists() {
            let _ = std::fs::remove_file(&lock_path);
        }
    }
}
