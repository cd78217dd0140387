//! What the console's views read beside the rest of the metadata (CONTRACT
//! §19): the per-day usage readings the collector takes ([`HistoryRepo`])
//! and the log of webhook deliveries the sender keeps ([`DeliveryRepo`]).
//! Neither is written on a request's path: the upload's commit and the
//! CDN's counting are as they were.

use super::error::DbError;
use async_trait::async_trait;

/// One reading of an account's usage counters, the last taken on `day`:
/// its stored bytes then, and its period's totals then (the period's
/// counters, which only grow within a period).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageDay {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    /// The billing period of the totals (`YYYY-MM`).
    pub period: String,
    pub storage_bytes: u64,
    pub bandwidth_total: u64,
    pub upload_total: u64,
}

/// Per-account usage readings, one row per account and day at most.
#[async_trait]
pub trait HistoryRepo: std::fmt::Debug + Send + Sync {
    /// Records every account's reading for `day`, in `period`, in one
    /// statement: an account whose counters are those of its latest
    /// reading gets no row (an idle account costs nothing), the others'
    /// row of `day` is written or brought up to date. Returns the rows written.
    async fn snapshot_usage(&self, day: &str, period: &str) -> Result<u64, DbError>;

    /// The account's readings of the days `from..=to`, oldest first, after
    /// the latest one before `from` (the base the first day is measured
    /// from), if any.
    async fn usage_days(
        &self,
        account_id: &str,
        from: &str,
        to: &str,
    ) -> Result<Vec<UsageDay>, DbError>;

    /// Forgets the readings older than the latest one on or before
    /// `before` (that one stays: the base of the days after it). Returns
    /// how many went.
    async fn prune_usage_days(&self, before: &str) -> Result<u64, DbError>;
}

/// Where a webhook event's delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// A receiver answered 2xx.
    Delivered,
    /// The last attempt failed; another is due.
    Retrying,
    /// Given up (24 h of failures).
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Retrying => "retrying",
            DeliveryStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<DeliveryStatus> {
        match s {
            "delivered" => Some(DeliveryStatus::Delivered),
            "retrying" => Some(DeliveryStatus::Retrying),
            "failed" => Some(DeliveryStatus::Failed),
            _ => None,
        }
    }
}

/// The outcome of an event's latest attempt to one subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRow {
    pub webhook_id: String,
    /// `webhook-id` (the same on every attempt).
    pub event_id: String,
    /// `file.created`, …
    pub kind: String,
    pub status: DeliveryStatus,
    /// The receiver's answer; None when none came (refused, timed out).
    pub http_status: Option<u16>,
    pub attempts: u32,
    /// The latest attempt's end (unix ms).
    pub at: i64,
}

/// How many deliveries each subscription's log keeps (its latest).
pub(crate) const DELIVERIES_KEPT: u32 = 100;

/// The log of webhook deliveries: each event's latest attempt, per
/// subscription, the latest [`DELIVERIES_KEPT`] kept.
#[async_trait]
pub trait DeliveryRepo: std::fmt::Debug + Send + Sync {
    /// Records an attempt's outcome (replacing the event's earlier one) and
    /// trims the subscription's log to its latest [`DELIVERIES_KEPT`], in
    /// one transaction. A subscription deleted meanwhile records nothing.
    async fn record_delivery(&self, d: DeliveryRow) -> Result<(), DbError>;

    /// The subscription's latest deliveries, newest first, at most `limit`.
    async fn deliveries(&self, webhook_id: &str, limit: u32) -> Result<Vec<DeliveryRow>, DbError>;
}
