//! The bytes the CDN sent, added up in memory per (account, billing period)
//! until `bandwidth` flushes them to the database.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// An (account, billing period).
pub(crate) type Key = (String, String);

#[derive(Debug, Default)]
pub struct Meter {
    pending: Mutex<HashMap<Key, u64>>,
    /// Held while a flush moves bytes from `pending` to the database, and
    /// while a reader adds both up, so that no byte is counted twice or missed.
    pub(crate) flushing: tokio::sync::Mutex<()>,
}

impl Meter {
    /// Counts `bytes` sent from `account`'s files in `period`.
    pub fn add(&self, account: &str, period: &str, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let mut p = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        *p.entry((account.to_string(), period.to_string()))
            .or_default() += bytes;
    }

    pub(crate) fn unflushed(&self, account: &str, period: &str) -> u64 {
        let p = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        p.get(&(account.to_string(), period.to_string()))
            .copied()
            .unwrap_or(0)
    }

    pub(crate) fn take(&self) -> HashMap<Key, u64> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub(crate) fn put_back(&self, counts: HashMap<Key, u64>) {
        let mut p = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        for (k, v) in counts {
            *p.entry(k).or_default() += v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_per_account_and_period() {
        let m = Meter::default();
        m.add("a", "2026-11", 10);
        m.add("a", "2026-11", 5);
        m.add("a", "2026-12", 1);
        m.add("b", "2026-11", 0);
        assert_eq!(m.unflushed("a", "2026-11"), 15);
        assert_eq!(m.unflushed("b", "2026-11"), 0);
        let taken = m.take();
        assert_eq!(taken.len(), 2);
        assert_eq!(m.unflushed("a", "2026-11"), 0);
        m.put_back(taken);
        m.add("a", "2026-11", 1);
        assert_eq!(m.unflushed("a", "2026-11"), 16);
        assert_eq!(m.unflushed("a", "2026-12"), 1);
    }
}
