//! The integration tests, as one binary (one link, one S3 store started for
//! all of them). Each module is one area; `common` is the in-process test
//! server, `cli_common` runs the real binary.

// The helpers are `pub` for their sibling modules: in a test binary nothing
// is reachable from outside anyway.
#![allow(unreachable_pub)]
// The cast lints guard the product's integer edges (the database, S3's
// signed lengths); test data generators, counters and timing statistics cast
// on purpose.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss
)]
// Tests print what they measured or skipped (`--nocapture` shows it); the
// product's own output goes through `cli::output`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

#[macro_use]
mod common;
mod cli_common;
mod data_safety;

mod api_files;
mod api_upload;
mod backup;
mod blob_store;
mod cdn;
mod checksums;
mod cli_checksums;
mod cli_config;
mod cli_errors;
mod cli_everyday;
mod cli_files;
mod cli_frictions;
mod cli_paths;
mod cli_profiles;
mod cli_publish;
mod cli_retry;
mod cli_sync;
mod cli_tokens;
mod cli_tus;
mod console;
mod console_api;
mod crash;
mod file_md5;
mod folders;
mod folders_ops;
mod full_volume;
mod generated_docs;
mod hardening;
mod http_edges;
mod images;
mod isolation;
mod lifecycle;
mod limits;
mod multinode;
mod names;
mod object_attrs;
mod one_thread;
mod operating;
mod operator;
mod outbox;
mod paths;
mod pg_deadlines;
mod plans;
mod postgres;
mod s3;
mod s3_core;
mod s3_credentials;
mod s3_dead_node;
mod s3_outage;
mod s3_rules;
mod s3_service_outage;
mod serve_admin_cli;
mod strangers;
mod tokens;
mod tokens_store;
mod tus;
mod tus_interop;
mod tus_owners;
mod webhooks;
