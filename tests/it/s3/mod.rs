//! The S3 door (CONTRACT §18) as its clients see it: aws-cli, rclone and
//! boto3 run against a real server's door, and what they store is seen
//! through /v1 and the CDN, and back. `harness` starts the server and runs
//! the clients; each test starts its own server (a few hundred ms) and runs
//! one client's whole errand on it.
//!
//! Run: `cargo test --test it s3::` (also the `s3` modules of `both_stores!`
//! tests; the door's alone: `cargo test --test it s3::aws_cli s3::rclone
//! s3::boto3 s3::through_v1 s3::errors`). On PostgreSQL and the S3 blob store:
//! `FILESTORE_TEST_BLOB_STORE=s3 PGPORT=… sh contrib/pg-test.sh -- s3::aws_cli …`.

mod aws_cli;
mod boto3;
mod errors;
mod harness;
mod rclone;
mod through_v1;
