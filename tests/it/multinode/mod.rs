//! Two real `filestore serve` processes on one PostgreSQL database and one
//! S3 bucket (SeaweedFS), with requests alternated between them: every rule
//! of docs/decisions.md, "PostgreSQL" must hold across the nodes exactly as on one node —
//! quotas under concurrent uploads, monthly counts, the request rate window,
//! idempotency keys, expiry and blob deletion (run by both collectors at
//! once), signed URLs, and resumable uploads continued on the other node.
//!
//! Needs `FILESTORE_TEST_DATABASE_URL` (see `common::pg`; `contrib/pg-test.sh
//! multinode` starts a throwaway PostgreSQL) and an S3 store (`weed` on PATH,
//! see `common::s3`); each test skips, saying why, without them.

mod collector;
mod idempotency;
mod quota;
mod rate_limit;
mod signed_urls;
mod tus;
