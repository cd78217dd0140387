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

mod api;
mod cli;
mod client;
mod clock;
mod config;
mod db;
mod domain;
mod server;
mod service;
mod storage;

#[doc(hidden)]
pub mod testing;

/// The program `filestore` (the binary only picks its allocator).
pub use cli::entry::main;
