//! filestore: a self-hostable file storage service and its command-line client.
//!
//! Layers, from the wire inwards:
//! - [`server`]: axum router, auth/CORS/rate-limit layers, thin handlers, CDN routes.
//! - [`service`]: the upload pipeline, deletion and expiry (the rules that touch I/O).
//! - [`domain`]: pure rules: keys and origins, validation, signing, rate windows.
//! - [`db`]: the `MetaStore` trait (metadata) and its SQLite implementation
//!   (r2d2 pool, single writer with group commit, migrations, queries).
//! - [`storage`]: the `BlobStore` trait with a local-disk and an S3 implementation.
//! - [`client`] and [`cli`]: the HTTP client and the command line.

pub(crate) mod api;
pub mod cli;
pub mod client;
pub mod clock;
pub mod config;
pub mod db;
pub mod domain;
pub mod server;
pub mod service;
pub mod storage;

/// The program `filestore` (the binary only picks its allocator).
pub use cli::entry::main;
