//! Bytes of uploads still arriving, per account. An upload's spool takes
//! disk space long before its file counts in `storage_bytes`, so the quota
//! counts both: a tenant cannot fill the disk with stalled or parallel
//! uploads that each fit the quota alone. (Per node: the database check at
//! commit stays the final word.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Debug, Default, Clone)]
pub struct InFlight(Arc<Mutex<HashMap<String, u64>>>);

/// One upload's share of its account's bytes in flight; given back on drop.
#[derive(Debug)]
pub struct Held {
    map: InFlight,
    account: String,
    bytes: u64,
}

impl InFlight {
    pub fn hold(&self, account: &str) -> Held {
        Held {
            map: self.clone(),
            account: account.to_string(),
            bytes: 0,
        }
    }

    /// Bytes in flight for `account`, all uploads together.
    pub fn of(&self, account: &str) -> u64 {
        let m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        m.get(account).copied().unwrap_or(0)
    }
}

impl Held {
    /// Takes `n` more bytes if the account's stored bytes (`used`) and every
    /// byte in flight still fit `quota`; false (nothing taken) otherwise.
    pub fn grow(&mut self, n: u64, used: u64, quota: u64) -> bool {
        let mut m = self.map.0.lock().unwrap_or_else(|e| e.into_inner());
        let total = m.entry(self.account.clone()).or_default();
        if used.saturating_add(*total).saturating_add(n) > quota {
            return false;
        }
        *total += n;
        self.bytes += n;
        true
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut m = self.map.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(total) = m.get_mut(&self.account) {
            *total = total.saturating_sub(self.bytes);
            if *total == 0 {
                m.remove(&self.account);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_uploads_share_the_room_and_give_it_back() {
        let f = InFlight::default();
        let mut a = f.hold("acc");
        let mut b = f.hold("acc");
        assert!(a.grow(60, 10, 100));
        assert!(!b.grow(31, 10, 100), "10 stored + 60 in flight + 31 > 100");
        assert!(b.grow(30, 10, 100));
        assert_eq!(f.of("acc"), 90);
        let mut other = f.hold("other");
        assert!(other.grow(100, 0, 100), "accounts are apart");
        drop(a);
        assert_eq!(f.of("acc"), 30);
        drop(b);
        assert_eq!(f.of("acc"), 0);
    }
}
