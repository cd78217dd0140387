//! The operator's frictions of CONTRACT §22: the bootstrap account's plan
//! (`owner`), `admin account delete` and `admin account usage`, the access
//! log's client and request id, the store's gauges, and the docs page's
//! upload example.

mod accounts;
mod docs_example;
mod observe;
mod owner;
