//! Webhooks (docs/decisions.md, "Webhooks"): the events, the subscription's rules, the
//! Standard Webhooks signature, the retry schedule, and how the sender
//! shares its attempts among subscriptions. No I/O here: the outbox lives in
//! the metadata store, the sender in `service::webhooks`.

mod claim;
mod limits;
mod message;
pub mod receivers;
mod scheduler;

pub use claim::{fair_pick, Budget, Candidate};
pub use limits::{
    retry_at, CIRCUIT, CLAIM_LEASE, DELIVERY_TIMEOUT, EVENT_BATCH, EXPANDED_PER_CLAIM,
    FAILING_SHARE, GIVE_UP_AFTER, NODE_IN_FLIGHT, PER_SUBSCRIPTION, PROBE, RETRY, STALLED,
    TRIP_AFTER,
};
pub use message::{
    events, message_id, new_secret, signature, url, EVENTS, FILE_CREATED, FILE_DELETED,
    FILE_EXPIRED, FILE_UPDATED,
};
pub use scheduler::{Scheduler, Started};
