//! Early reads aloft: the statements in flight on this node that carry
//! the early checks of an account's uploads that commit in its batches (a
//! rate count with the commitments, `rates`, or a read of the commitments
//! alone for such an upload, `accounts`).
//!
//! The node's next commit statement (`bus`: of any account's uploads;
//! `batch`: of one account's, off the bus) waits for those aloft when it
//! is about to go: for a round trip, at most [`WAIT_MOST`]. The uploads
//! they carry, once their bodies are in, then go in that batch instead of
//! in one of their own behind it. An upload's two statements (its early
//! read, its commit) otherwise split a node's uploads of one account into
//! two convoys that take turns at the database, each batch half as big:
//! at 8 uploads in flight a node sent 0.6 statements and woke 0.6 times
//! per upload, where 16 in flight took half of each. Merged, 8 in flight
//! take 0.3–0.4, about what 16 did before (`benches/nodes.sh`, one
//! account).

use super::group::Wait;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::Notify;

/// The longest a commit waits for an early read aloft: many round trips
/// of a database that answers, and little next to a commit's own.
pub(super) const WAIT_MOST: Duration = Duration::from_millis(5);

/// The accounts with early reads aloft, and how to hear them land.
#[derive(Default)]
pub(super) struct Flights {
    aloft: Mutex<HashMap<String, Flight>>,
    /// Told of every landing, of any account.
    any: Arc<Notify>,
}

/// An account's early reads aloft.
struct Flight {
    statements: usize,
    landed: Arc<Notify>,
}

impl Flights {
    /// Marks a statement carrying uploads of `account` aloft until the
    /// guard drops (a statement that fails or panics lands too).
    pub(super) fn take_off(self: &Arc<Self>, account: String) -> Aloft {
        let mut aloft = self.aloft.lock().unwrap_or_else(PoisonError::into_inner);
        aloft
            .entry(account.clone())
            .or_insert_with(|| Flight {
                statements: 0,
                landed: Arc::default(),
            })
            .statements += 1;
        Aloft {
            flights: Arc::clone(self),
            account,
        }
    }

    /// When an early read of `account` is aloft: a wait until a read of
    /// the account lands (the first to, one aloft now or taking off
    /// later), or [`WAIT_MOST`]. None: none is aloft.
    pub(super) fn landing(&self, account: &str) -> Option<Wait> {
        let aloft = self.aloft.lock().unwrap_or_else(PoisonError::into_inner);
        // Made under the lock that a landing takes: it hears every landing
        // from now on, polled yet or not.
        let landed = Arc::clone(&aloft.get(account)?.landed).notified_owned();
        drop(aloft);
        Some(Box::pin(async move {
            let _ = tokio::time::timeout(WAIT_MOST, landed).await;
        }))
    }

    /// When an early read of any account is aloft: a wait until one lands,
    /// or [`WAIT_MOST`]. None: none is aloft. (The node's commit bus
    /// waits so, for the account batches the reads let on.)
    pub(super) fn landing_any(&self) -> Option<Wait> {
        let aloft = self.aloft.lock().unwrap_or_else(PoisonError::into_inner);
        if aloft.is_empty() {
            return None;
        }
        let landed = Arc::clone(&self.any).notified_owned();
        drop(aloft);
        Some(Box::pin(async move {
            let _ = tokio::time::timeout(WAIT_MOST, landed).await;
        }))
    }

    /// The accounts with a statement aloft (for tests).
    #[cfg(test)]
    fn accounts(&self) -> usize {
        self.aloft
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// A statement aloft; it lands when dropped.
pub(super) struct Aloft {
    flights: Arc<Flights>,
    account: String,
}

impl Drop for Aloft {
    fn drop(&mut self) {
        let mut aloft = self
            .flights
            .aloft
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(flight) = aloft.get_mut(&self.account) {
            flight.landed.notify_waiters();
            self.flights.any.notify_waiters();
            flight.statements -= 1;
            if flight.statements == 0 {
                aloft.remove(&self.account);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn nothing_aloft_means_no_wait() {
        let flights = Arc::new(Flights::default());
        assert!(flights.landing("a").is_none());
        let aloft = flights.take_off("b".into());
        assert!(flights.landing("a").is_none());
        assert!(flights.landing("b").is_some());
        drop(aloft);
        assert!(flights.landing("b").is_none());
        assert!(flights.landing_any().is_none());
        assert_eq!(flights.accounts(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_for_any_ends_when_any_account_lands() {
        let flights = Arc::new(Flights::default());
        let (a, b) = (flights.take_off("a".into()), flights.take_off("b".into()));
        let wait = flights.landing_any().unwrap();
        drop(b);
        let started = tokio::time::Instant::now();
        wait.await;
        assert_eq!(started.elapsed(), Duration::ZERO);
        let wait = flights.landing_any().unwrap();
        let started = tokio::time::Instant::now();
        wait.await;
        assert_eq!(
            started.elapsed(),
            WAIT_MOST,
            "a stays aloft: the wait is bounded"
        );
        drop(a);
        assert!(flights.landing_any().is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_ends_when_a_statement_aloft_lands() {
        let flights = Arc::new(Flights::default());
        let first = (flights.take_off("a".into()), flights.take_off("b".into()));
        let second = flights.take_off("a".into());
        let wait = flights.landing("a").unwrap();
        // It lands before the wait is first polled: heard all the same.
        drop(second);
        let started = tokio::time::Instant::now();
        wait.await;
        assert_eq!(started.elapsed(), Duration::ZERO);
        // The first is still aloft, for both accounts.
        assert!(flights.landing("a").is_some() && flights.landing("b").is_some());
        drop(first);
        assert_eq!(flights.accounts(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_for_a_statement_that_stays_aloft_is_bounded() {
        let flights = Arc::new(Flights::default());
        let _aloft = flights.take_off("a".into());
        let started = tokio::time::Instant::now();
        flights.landing("a").unwrap().await;
        let waited = started.elapsed();
        assert!(waited >= WAIT_MOST && waited < WAIT_MOST * 2, "{waited:?}");
    }
}
