//! What `serve` claims of its data dir before it opens it (CONTRACT §20):
//! an exclusive lock while it keeps there what only one process may own
//! (the SQLite database, the local blob store), and, on PostgreSQL, a
//! refusal to start beside an SQLite database that holds files (they would
//! be silently left behind).
//!
//! The lock is `flock` on `DATA_DIR/serve.lock`, which holds the pid of the
//! `serve` that has it: the kernel drops it when that process ends, however
//! it ends (no stale lock after a kill -9). `admin` commands do not take it:
//! they run beside `serve`, as CONTRACT §3 says. Only `serve` takes it, not
//! the service itself: in-process nodes of the tests may share a dir.
//! PostgreSQL with an S3 store keeps nothing of its own in the data dir but
//! its spool, so nodes there are not locked out of one.

use super::StartError;
use crate::config::{BackendKind, Config};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The lock file's name in the data dir.
pub(crate) const LOCK_FILE: &str = "serve.lock";

/// The data dir's lock, held until dropped (or the process ends).
#[derive(Debug)]
pub(crate) struct DirLock {
    _file: std::fs::File,
}

/// Claims `config`'s data dir for this `serve`: the lock when it uses SQLite
/// or the local blob store ([`StartError::Locked`] naming the holder's pid
/// when another process has it); on PostgreSQL, refuses a data dir whose
/// SQLite database holds files ([`StartError::SqliteHoldsFiles`]).
pub(crate) fn claim(config: &Config) -> Result<Option<DirLock>, StartError> {
    let dir = &config.data_dir;
    if config.database_url.is_some() {
        refuse_sqlite_files(dir)?;
    }
    let owns = config.database_url.is_none() || config.storage.backend == BackendKind::Local;
    if !owns {
        return Ok(None);
    }
    let io = |source| StartError::Dir {
        path: dir.clone(),
        source,
    };
    crate::private_dir::create(dir).map_err(io)?;
    lock(&dir.join(LOCK_FILE), dir).map(Some)
}

/// Takes the lock at `path` and writes this process's pid into it.
fn lock(path: &Path, dir: &Path) -> Result<DirLock, StartError> {
    let io = |source| StartError::Dir {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    if let Err(e) = rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        if e != rustix::io::Errno::WOULDBLOCK {
            return Err(io(e.into()));
        }
        let mut text = String::new();
        let _ = file.read_to_string(&mut text);
        return Err(StartError::Locked {
            dir: dir.to_path_buf(),
            pid: text.trim().to_string(),
        });
    }
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    writeln!(file, "{}", std::process::id()).map_err(io)?;
    file.flush().map_err(io)?;
    Ok(DirLock { _file: file })
}

/// On PostgreSQL: 1 when `DATA_DIR/filestore.db` holds files (a node moved to
/// a database server without its files), naming the way to move them.
fn refuse_sqlite_files(dir: &Path) -> Result<(), StartError> {
    let db: PathBuf = dir.join(crate::db::SQLITE_FILE);
    match crate::db::sqlite::files_in(&db) {
        Ok(0) => Ok(()),
        Ok(files) => Err(StartError::SqliteHoldsFiles { db, files }),
        Err(e) => Err(StartError::Db(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_names_the_first_ones_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        let first = lock(&path, dir.path()).unwrap();
        let Err(StartError::Locked { pid, .. }) = lock(&path, dir.path()) else {
            panic!("a second lock while the first is held");
        };
        assert_eq!(pid, std::process::id().to_string());
        drop(first);
        lock(&path, dir.path()).unwrap();
    }
}
