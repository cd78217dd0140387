//! The local hash cache of `sync`: (absolute path, size, modification and
//! change times in nanoseconds, inode) → SHA-256, so a run over a tree that
//! has not changed reads no file content at all.
//!
//! Why: the goal of `sync` (issue 22) is a no-change run over 10,000 files in
//! under 3 s, hashing included. Reading and hashing every byte of a large tree
//! on every run cannot meet that, while a `stat` per file can; `rclone sync`
//! makes the same bet by comparing size and modification time only. Here the
//! decision stays content-based (the remote side is compared by SHA-256), and
//! only the local hash is remembered: a file whose size, mtime, ctime or
//! inode changed is hashed again. The ctime catches tools that restore the
//! mtime of new content (`cp -p`, `rsync -t`, `tar x`), the inode a file
//! replaced by a rename. A hash taken within [`RACY`] of the file's last
//! change is not remembered: a write of the same size in the same clock
//! tick would leave every time as it was (git's "racily clean" files). A
//! stale, unreadable or corrupt cache is ignored (everything is hashed),
//! never trusted in part.
//!
//! The file, one per synced directory under the user's cache dir, is a
//! header line then `SHA256 \t SIZE \t MTIME_NS \t CTIME_NS \t INODE \t PATH` lines (paths with a
//! newline or a tab are not cached); it is replaced atomically (a temporary
//! file renamed over it), and only when its content would change.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

/// First line of a cache file; another value means another format.
const HEADER: &str = "filestore-sync-hashes 2";

/// A hash is remembered only when the file's mtime is at least this old
/// when it is stored (coarse file-system clocks tick in up to 2 s).
pub(crate) const RACY: std::time::Duration = std::time::Duration::from_secs(3);

/// What identifies one version of a local file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub size: u64,
    pub mtime_ns: u128,
    /// The inode's change time (0 where the platform has none).
    pub ctime_ns: u128,
    /// The inode (0 where the platform has none).
    pub ino: u64,
}

impl Stamp {
    /// The stamp of `meta`; `None` when the platform gives no mtime.
    pub(crate) fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        let mtime = meta.modified().ok()?;
        let since = mtime.duration_since(std::time::UNIX_EPOCH).ok()?;
        let (ctime_ns, ino) = change_and_inode(meta);
        Some(Stamp {
            size: meta.len(),
            mtime_ns: since.as_nanos(),
            ctime_ns,
            ino,
        })
    }

    /// Whether the file was last modified at least [`RACY`] before `now`:
    /// only then may its hash be remembered.
    pub(crate) fn settled(&self, now: std::time::SystemTime) -> bool {
        let Ok(now) = now.duration_since(std::time::UNIX_EPOCH) else {
            return false;
        };
        now.as_nanos().saturating_sub(self.mtime_ns) >= RACY.as_nanos()
    }
}

#[cfg(unix)]
fn change_and_inode(meta: &std::fs::Metadata) -> (u128, u64) {
    use std::os::unix::fs::MetadataExt;
    let secs = u128::try_from(meta.ctime()).unwrap_or(0);
    let nanos = u128::try_from(meta.ctime_nsec()).unwrap_or(0);
    (secs * 1_000_000_000 + nanos, meta.ino())
}

#[cfg(not(unix))]
fn change_and_inode(_: &std::fs::Metadata) -> (u128, u64) {
    (0, 0)
}

/// The cache of one synced directory: what was read, and what this run saw.
#[derive(Debug, Default)]
pub(crate) struct HashCache {
    path: Option<PathBuf>,
    old: HashMap<String, (Stamp, String)>,
    fresh: HashMap<String, (Stamp, String)>,
}

impl HashCache {
    /// The cache of the directory `root` (absolute), from the user's cache
    /// dir; an empty one when there is no cache dir or no usable file.
    pub(crate) fn open(root: &Path) -> HashCache {
        let path = directories::ProjectDirs::from("", "", "filestore").map(|d| {
            let digest = Sha256::digest(root.to_string_lossy().as_bytes());
            d.cache_dir().join("sync").join(hex::encode(&digest[..16]))
        });
        let old = path
            .as_deref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|text| parse(&text))
            .unwrap_or_default();
        HashCache {
            path,
            old,
            fresh: HashMap::new(),
        }
    }

    /// The remembered hash of `abs` when its stamp is still `stamp`.
    pub(crate) fn get(&self, abs: &str, stamp: Stamp) -> Option<String> {
        self.old
            .get(abs)
            .filter(|(s, _)| *s == stamp)
            .map(|(_, h)| h.clone())
    }

    /// Remembers `sha256` for this version of `abs` (kept on [`save`](Self::save)),
    /// unless the file changed too recently to be sure of it ([`RACY`]).
    pub(crate) fn put(&mut self, abs: String, stamp: Stamp, sha256: String) {
        if !abs.contains(['\n', '\t']) && stamp.settled(std::time::SystemTime::now()) {
            self.fresh.insert(abs, (stamp, sha256));
        }
    }

    /// Writes the entries of this run (those of files gone are dropped),
    /// atomically, when they differ from the file's. Best effort: a cache
    /// that cannot be written only costs hashing next time.
    pub(crate) fn save(&self) {
        let Some(path) = &self.path else { return };
        if self.fresh == self.old {
            return;
        }
        let Some(dir) = path.parent() else { return };
        if crate::private_dir::create(dir).is_err() {
            return;
        }
        let mut entries: Vec<_> = self.fresh.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        let mut text = String::with_capacity(entries.len() * 120 + HEADER.len() + 1);
        text.push_str(HEADER);
        text.push('\n');
        for (abs, (stamp, sha)) in entries {
            let _ = writeln!(
                text,
                "{sha}\t{}\t{}\t{}\t{}\t{abs}",
                stamp.size, stamp.mtime_ns, stamp.ctime_ns, stamp.ino
            );
        }
        let written = tempfile::NamedTempFile::new_in(dir).and_then(|mut tmp| {
            std::io::Write::write_all(&mut tmp, text.as_bytes())?;
            tmp.persist(path).map_err(|e| e.error)?;
            Ok(())
        });
        if let Err(e) = written {
            tracing::debug!(error = %e, "the sync hash cache was not written");
        }
    }
}

/// The entries of a cache file; `None` for a file of another format or with
/// any malformed line (the whole file is then ignored).
fn parse(text: &str) -> Option<HashMap<String, (Stamp, String)>> {
    let mut lines = text.lines();
    if lines.next()? != HEADER {
        return None;
    }
    let mut map = HashMap::new();
    for line in lines {
        let mut parts = line.splitn(6, '\t');
        let sha = parts.next()?;
        let size = parts.next()?.parse().ok()?;
        let mtime_ns = parts.next()?.parse().ok()?;
        let ctime_ns = parts.next()?.parse().ok()?;
        let ino = parts.next()?.parse().ok()?;
        let abs = parts.next()?;
        let valid = sha.len() == 64
            && sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            && !abs.is_empty();
        if !valid {
            return None;
        }
        let stamp = Stamp {
            size,
            mtime_ns,
            ctime_ns,
            ino,
        };
        map.insert(abs.to_string(), (stamp, sha.to_string()));
    }
    Some(map)
}

/// The hex SHA-256 of the file at `path`, read in 256 KiB pieces.
pub(crate) fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn a_cache_file_round_trips_and_a_bad_one_is_ignored() {
        let text = format!("{HEADER}\n{SHA}\t0\t12\t13\t7\t/a/b c.txt\n");
        let map = parse(&text).unwrap();
        let stamp = Stamp {
            size: 0,
            mtime_ns: 12,
            ctime_ns: 13,
            ino: 7,
        };
        assert_eq!(map.get("/a/b c.txt"), Some(&(stamp, SHA.to_string())));
        assert!(parse("garbage").is_none());
        assert!(parse(&format!("{HEADER}\n{SHA}\tx\t12\t13\t7\t/a\n")).is_none());
        assert!(parse(&format!("{HEADER}\nabc\t1\t12\t13\t7\t/a\n")).is_none());
        assert!(parse(&format!("{HEADER}\n{SHA}\t1\t12\t13\t7\n")).is_none());
        let v1 = format!("filestore-sync-hashes 1\n{SHA}\t0\t12\t/a\n");
        assert!(parse(&v1).is_none(), "an older format is ignored");
        assert_eq!(parse(&format!("{HEADER}\n")).unwrap().len(), 0);
    }

    #[test]
    fn a_hash_of_a_file_changed_just_now_is_not_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let stamp = Stamp::of(&std::fs::metadata(&p).unwrap()).unwrap();
        let now = std::time::SystemTime::now();
        assert!(!stamp.settled(now), "written this instant");
        assert!(stamp.settled(now + RACY));
        let mut cache = HashCache::default();
        cache.put("/f".into(), stamp, SHA.into());
        assert!(
            cache.fresh.is_empty(),
            "a racily clean file is hashed again next run"
        );
    }

    #[cfg(unix)]
    #[test]
    fn new_content_under_an_old_mtime_changes_the_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"one").unwrap();
        let before = Stamp::of(&std::fs::metadata(&p).unwrap()).unwrap();
        let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
        // `cp -p`: same size, other bytes, the old mtime put back (ctime moves).
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&p, b"two").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let after = Stamp::of(&std::fs::metadata(&p).unwrap()).unwrap();
        assert_eq!((before.size, before.mtime_ns), (after.size, after.mtime_ns));
        assert_ne!(before, after, "the ctime tells them apart");
    }

    #[test]
    fn hashes_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("e");
        std::fs::write(&p, b"").unwrap();
        assert_eq!(sha256_file(&p).unwrap(), SHA);
    }
}
