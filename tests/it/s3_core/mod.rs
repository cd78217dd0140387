//! The S3 door's service core (CONTRACT §18): buckets as top-level folders,
//! folder markers, multipart uploads, called as the door calls them
//! (`filestore::testing::s3::Session`), on the database the tests run on
//! (SQLite, or PostgreSQL with FILESTORE_TEST_DATABASE_URL) and on each
//! blob store.

mod buckets;
mod multipart;
mod multipart_limits;
mod two_nodes;

use crate::common::{Backend, TestOptions, TestServer};
use filestore::testing::s3::{ObjectTemplate, S3Error, Session};

/// The tests' plan: room for a few 5 MiB parts, three open uploads.
pub const PLAN: &str = r#"
[plans.free]
max_file_size = 30_000_000
storage = 40_000_000
uploads = 1000
open_uploads = 3
concurrent_uploads = 8
rate_limit = 100_000
rate_window = "1m"
"#;

pub const MIB: usize = 1024 * 1024;

pub async fn server(backend: Backend) -> TestServer {
    TestServer::start_with(TestOptions {
        backend: Some(backend),
        plans_toml: Some(PLAN.into()),
        ..Default::default()
    })
    .await
}

pub async fn session(srv: &TestServer) -> Session {
    Session::of_secret(&srv.app, &srv.secret_key).await
}

/// `n` bytes of a pattern seeded by `seed`.
pub fn data(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

pub fn md5_hex(b: &[u8]) -> String {
    use md5::Digest;
    hex::encode(md5::Md5::digest(b))
}

pub fn template() -> ObjectTemplate {
    ObjectTemplate {
        content_type: Some("application/x-test".into()),
        ..ObjectTemplate::default()
    }
}

/// The account's storage_bytes as /v1/usage shows it.
pub async fn stored(srv: &TestServer) -> u64 {
    srv.usage().await["storage_bytes"].as_u64().unwrap()
}

/// The name of an error, for assertions.
pub fn kind(e: &S3Error) -> String {
    match e {
        S3Error::Service(s) => s.code().to_string(),
        other => format!("{other:?}").split('(').next().unwrap().to_string(),
    }
}
