//! Pure rules of the service: no I/O here, so each is unit-tested on its own.

pub(crate) mod accounts;
pub(crate) mod backoff;
pub(crate) mod block_state;
pub mod digest;
pub mod filepath;
pub(crate) mod files;
pub mod ids;
pub mod keylist;
pub(crate) mod md5_state;
pub mod metadata;
pub mod multipart;
pub mod object;
pub(crate) mod origins;
pub(crate) mod paths;
pub(crate) mod policy;
pub(crate) mod quota;
pub mod ratelimit;
pub(crate) mod resumable;
pub mod secret;
pub(crate) mod sha256_state;
pub mod signing;
pub mod sniff;
pub mod transform;
pub mod tus;
pub(crate) mod units;
pub mod validate;
pub mod webhooks;
pub(crate) mod zip;

/// Characters percent-encoded in a URL path segment: everything but RFC
/// 3986's unreserved ones. The server builds File URLs with it and the client
/// escapes ids with it: one rule for both.
pub(crate) const PATH_SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// How long an upload's `Idempotency-Key` is remembered: 24 hours.
pub(crate) const IDEMPOTENCY_WINDOW_MS: i64 = 24 * 3600 * 1000;

#[cfg(test)]
mod proptests;
