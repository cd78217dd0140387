//! The bytes the CDN sent, added up in memory per (account, billing period)
//! until `bandwidth` flushes them to the database.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// An (account, billing period).
pub(crate) type Key = (String, String);

#[derive(Debug, Default)]
pub struct Meter {
    /// Bytes by period, then account: a count on the CDN's hot path looks
    /// its entry up by `&str`, allocating nothing once the entry exists.
    pending: Mutex<HashMap<String, HashMap<String, u64>>>,
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
        let accounts = if let Some(a) = p.get_mut(period) {
            a
        } else {
            p.entry(period.to_string()).or_default()
        };
        if let Some(n) = accounts.get_mut(account) {
            *n += bytes;
        } else {
            accounts.insert(account.to_string(), bytes);
        }
    }

    pub(crate) fn unflushed(&self, account: &str, period: &str) -> u64 {
        let p = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        p.get(period)
            .and_then(|a| a.get(account))
            .copied()
            .unwrap_or(0)
    }

    pub(crate) fn take(&self) -> HashMap<Key, u64> {
        let taken =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner));
        taken
            .into_iter()
            .flat_map(|(period, accounts)| {
                accounts
                    .into_iter()
                    .map(move |(account, n)| ((account, period.clone()), n))
            })
            .collect()
    }

    pub(crate) fn put_back(&self, counts: HashMap<Key, u64>) {
        for ((account, period), n) in counts {
            self.add(&account, &period, n);
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
