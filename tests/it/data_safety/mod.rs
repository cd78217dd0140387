//! Data safety (CONTRACT §20), the serving side: the data dir's lock, the
//! PostgreSQL refusal of a data dir with files, the `damaged` mark and the
//! reads that never serve a damaged file whole, the scrub and `admin verify`.

mod damaged;
mod lock;
mod repair;
mod scrub;
mod verify;

use crate::common::process::admin;
use crate::common::{Backend, TestOptions, TestServer};

/// 300 KiB of varied bytes: several chunks of a download.
#[allow(non_snake_case)]
pub fn DATA() -> Vec<u8> {
    (0..300 * 1024u32).map(|i| (i * 31 % 251) as u8).collect()
}

/// A server with every file in the local blob store and the S3 door open;
/// `toml` adds to its config.
pub async fn safety_server(toml: Option<&str>) -> TestServer {
    TestServer::start_with(TestOptions {
        backend: Some(Backend::LocalBlobs),
        s3: true,
        plans_toml: toml.map(str::to_string),
        ..Default::default()
    })
    .await
}

/// Where file `id`'s blob is on disk.
pub fn blob_path(srv: &TestServer, id: &str) -> std::path::PathBuf {
    let key = srv.text(&format!("SELECT blob_key FROM files WHERE id = '{id}'"));
    srv.data_dir.join("blobs").join(key)
}

/// Flips the bits of byte `at` of the file at `path`, in place.
pub fn flip_byte(path: &std::path::Path, at: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at] ^= 0xff;
    std::fs::write(path, bytes).unwrap();
}

/// `admin ARGS` on `srv`'s data dir and database: (exit code, stdout, stderr).
pub fn run_admin(srv: &TestServer, args: &[&str]) -> (Option<i32>, String, String) {
    let url = srv
        .app
        .config
        .database_url
        .as_ref()
        .map(filestore::testing::config::Secret::expose);
    let out = admin(&srv.data_dir, url, args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
