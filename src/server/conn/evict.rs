//! Eviction: which open connection to close when all slots are taken (the
//! oldest idle one, else the longest-stalled download).

use super::phase::{millis_since_epoch, Phase};
use std::sync::{Arc, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

/// A response write that has made no progress for this long makes its
/// connection one that can be closed to make room for a new one.
pub(crate) const STALLED_AFTER: Duration = Duration::from_secs(2);
/// The open connections, in the order they were accepted, with their phase
/// and a way to close them.
#[derive(Clone, Default)]
pub(super) struct Registry(Arc<std::sync::Mutex<Open>>);

#[derive(Default)]
struct Open {
    next: u64,
    conns: std::collections::BTreeMap<u64, (Arc<Phase>, Arc<tokio::sync::Notify>)>,
}

impl Registry {
    pub(super) fn add(&self, phase: Arc<Phase>) -> (u64, Arc<tokio::sync::Notify>) {
        let mut o = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let id = o.next;
        o.next += 1;
        let shed = Arc::new(tokio::sync::Notify::new());
        o.conns.insert(id, (phase, shed.clone()));
        (id, shed)
    }

    pub(super) fn remove(&self, id: u64) {
        let mut o = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        o.conns.remove(&id);
    }

    /// Closes the oldest connection with no request in flight, or else the
    /// one whose writes have made no progress for longest, if that is over
    /// [`STALLED_AFTER`] at `now`; whether one was closed.
    pub(super) fn shed_one(&self, now: Instant) -> bool {
        let mut o = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let idle = o.conns.iter().find(|(_, (phase, _))| !phase.busy());
        let victim = idle.or_else(|| {
            let stall = u64::try_from(STALLED_AFTER.as_millis()).unwrap_or(u64::MAX);
            let limit = millis_since_epoch(now).saturating_sub(stall) + 1;
            o.conns
                .iter()
                .filter_map(|c| c.1 .0.stalled().filter(|s| *s <= limit).map(|s| (s, c)))
                .min_by_key(|(since, _)| *since)
                .map(|(_, c)| c)
        });
        let Some((id, shed)) = victim.map(|(id, (_, shed))| (*id, shed.clone())) else {
            return false;
        };
        o.conns.remove(&id);
        shed.notify_one();
        true
    }
}
