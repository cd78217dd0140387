//! Pure rules of the service: no I/O here, so each is unit-tested on its own.

pub mod ids;
pub mod origins;
pub mod ratelimit;
pub mod signing;
pub mod validate;

#[cfg(test)]
mod proptests;
