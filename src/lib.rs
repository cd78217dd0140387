//! filestore: a self-hostable file storage service and its command-line client.
//!
//! Layers, from the wire inwards (each imports only those below it):
//! - `cli`: the command line (`entry.rs` is [`main`]); `client`: its HTTP client.
//! - `server`: the /v1 + CDN door: axum router, the layers that find what a
//!   request presents, thin handlers, the CDN's HTTP, and its own rendering of
//!   the service's values (/v1 records) and errors (`ApiError`).
//! - `service`: the core every door calls: who may do what (`caller`), the
//!   rules that touch I/O (uploads, tus, reads, the CDN's rules, the
//!   collector, admin), speaking domain values, with a transport-free error.
//! - `db`: the metadata seam (`MetaStore`, the sum of eight aggregate traits)
//!   and its SQLite and PostgreSQL implementations, one file per aggregate.
//! - `backup`: `admin backup` and `admin restore` (the metadata's logical
//!   dump, `db::dump`, and the blobs by SHA-256 in a directory or bucket).
//! - `storage`: the `BlobStore` trait with a local-disk and an S3 implementation.
//! - `config`; `domain`: the values (accounts, keys, stored files) and pure rules
//!   (validation, signing, the quota rule, …).
//!
//! The modules are private: [`testing`] is the door for the integration tests,
//! fuzz targets and benches.

mod api;
mod backup;
mod cli;
mod client;
mod clock;
mod config;
mod db;
mod domain;
mod images;
mod private_dir;
mod s3door;
mod server;
mod service;
mod storage;

#[doc(hidden)]
pub mod testing;

/// The program `filestore` (the binary only picks its allocator).
pub use cli::entry::main;
