//! Directories only this user may read: the server's data dir and spool,
//! the client's caches and upload state (keys and private files pass
//! through them). Shared by the server and the clients, below both.

/// Creates `dir` (and its missing parents) readable by this user only (0700),
/// and narrows an existing one to 0700: the data dir holds the signing
/// secret, and blobs may be private files.
pub(crate) fn create(dir: &std::path::Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let mode = std::fs::metadata(dir)?.permissions().mode() & 0o777;
        if mode != 0o700 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}
