//! A small tmpfs for tests of a volume that really fills up. Mounting needs
//! root (and CAP_SYS_ADMIN): outside CI a test without it says why it skips;
//! in CI (`FILESTORE_REQUIRE_TOOLS=1`) that is a failure.

use std::path::Path;
use std::process::Command;

/// A tmpfs of `mib` MiB mounted on a temp dir, unmounted when dropped.
pub struct Volume {
    dir: tempfile::TempDir,
}

impl Volume {
    pub fn mount(mib: u64) -> Option<Volume> {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={mib}m,mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Volume { dir }),
            other => {
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
                    Err(e) => e.to_string(),
                };
                let msg = format!("cannot mount a tmpfs ({why}); needs root");
                assert!(
                    std::env::var_os("FILESTORE_REQUIRE_TOOLS").is_none(),
                    "{msg} (required in CI)"
                );
                eprintln!("skipped: {msg}");
                None
            }
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Volume {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}
