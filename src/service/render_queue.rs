//! Admission of image renders: one queue for the node's render slots
//! (`images.concurrency`) and its render budget (`images.memory`), fair
//! across the accounts that own the files.
//!
//! A request takes a [`Place`] first (counted among its account's waiting
//! requests, refused at once when too many wait), reads its source's
//! header, then waits with its render's estimated bytes ([`Place::admit`]).
//! The next render admitted is the front request of the account whose last
//! render was admitted longest ago (an account with none running is first):
//! an account's next render comes after every other waiting account's, so a
//! third account's fresh variant waits for the renders already running, not
//! for two floods' queues. It starts when a slot is free and its bytes fit
//! what the running renders leave of the budget; the queue's order is kept
//! (a large render is not overtaken for ever by small ones). The slot and
//! bytes are held by the render itself (the [`Place`], moved into it) and
//! given back when it ends, whatever becomes of the request.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;

/// Why a request was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Too many wait already, or none came in time: try again (503).
    Busy,
    /// More than the whole budget: it would never start (400).
    OverBudget { bytes: u64, budget: u64 },
}

/// The render queue of a node.
#[derive(Debug)]
pub(crate) struct RenderQueue {
    state: Mutex<State>,
    concurrency: usize,
    memory: u64,
    /// Requests that may wait at once, all accounts together, and one
    /// account alone.
    node_waiting: usize,
    account_waiting: usize,
}

#[derive(Debug, Default)]
struct State {
    slots_used: usize,
    bytes_used: u64,
    /// Waiting requests (with or without their estimate yet).
    waiting: usize,
    accounts: HashMap<Arc<str>, Account>,
    /// The accounts with a request ready, by (the sequence number of their
    /// last admission, the order they became ready): the first is next.
    ready: BTreeMap<(u64, u64), Arc<str>>,
    /// Admissions so far, and readiness so far (the keys' two parts).
    admitted: u64,
    readied: u64,
}

/// An account with requests waiting or renders running (forgotten when it
/// has neither).
#[derive(Debug, Default)]
struct Account {
    waiting: usize,
    running: usize,
    /// The sequence number of its last admission (0: none while known).
    last_admitted: u64,
    /// Its key in `ready` while it has requests there.
    key: Option<(u64, u64)>,
    queue: VecDeque<Waiter>,
}

#[derive(Debug)]
struct Waiter {
    id: u64,
    bytes: u64,
    wake: oneshot::Sender<()>,
}

/// Where a request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Counted among the waiting, its estimate not known yet.
    Entered,
    /// In its account's queue with its estimate (or admitted since, not
    /// told yet).
    Queued { id: u64, bytes: u64 },
    /// Admitted: holds a slot and its bytes.
    Running { bytes: u64 },
}

/// A request's place: waiting, then running; given back when dropped.
#[derive(Debug)]
pub(crate) struct Place {
    queue: Arc<RenderQueue>,
    account: Arc<str>,
    stage: Stage,
}

impl RenderQueue {
    /// A queue of `concurrency` slots and `memory` bytes, where
    /// `waiting_per_slot` requests may wait for each slot.
    pub(crate) fn new(concurrency: usize, memory: u64, waiting_per_slot: usize) -> RenderQueue {
        let node_waiting = concurrency.max(1) * waiting_per_slot;
        RenderQueue {
            state: Mutex::default(),
            concurrency: concurrency.max(1),
            memory,
            node_waiting,
            account_waiting: (node_waiting / 2).max(waiting_per_slot),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place among the waiting for a render of a file of `account`; busy
    /// when the account has its most waiting already, or the node has and
    /// the account holds its fair share of them (an account with none
    /// waiting always gets one).
    pub(crate) fn enter(self: &Arc<Self>, account: &str) -> Result<Place, Refused> {
        let mut state = self.lock();
        let waiting_accounts = state.accounts.values().filter(|a| a.waiting > 0).count();
        let total = state.waiting;
        let mine = state.accounts.get(account).map_or(0, |a| a.waiting);
        let fair = self.node_waiting / (waiting_accounts + usize::from(mine == 0)).max(1);
        if mine >= self.account_waiting || (total >= self.node_waiting && mine >= fair.max(1)) {
            return Err(Refused::Busy);
        }
        let key: Arc<str> = Arc::from(account);
        state.accounts.entry(Arc::clone(&key)).or_default().waiting += 1;
        state.waiting += 1;
        Ok(Place {
            queue: Arc::clone(self),
            account: key,
            stage: Stage::Entered,
        })
    }
}

impl Place {
    /// Waits, at most `wait`, for the render's slot and `bytes` of the
    /// budget, in the fair order; over the whole budget, refused at once.
    pub(crate) async fn admit(&mut self, bytes: u64, wait: Duration) -> Result<(), Refused> {
        let queue = Arc::clone(&self.queue);
        if bytes > queue.memory {
            return Err(Refused::OverBudget {
                bytes,
                budget: queue.memory,
            });
        }
        let (tx, rx) = oneshot::channel();
        {
            let mut state = queue.lock();
            state.readied += 1;
            let id = state.readied;
            let readied = state.readied;
            let account = state.accounts.entry(Arc::clone(&self.account)).or_default();
            account.queue.push_back(Waiter {
                id,
                bytes,
                wake: tx,
            });
            if account.key.is_none() {
                let key = (account.last_admitted, readied);
                account.key = Some(key);
                state.ready.insert(key, Arc::clone(&self.account));
            }
            self.stage = Stage::Queued { id, bytes };
            queue.dispatch(&mut state);
        }
        let woken = tokio::time::timeout(wait, rx).await;
        if matches!(woken, Ok(Ok(()))) || self.was_admitted() {
            self.stage = Stage::Running { bytes };
            return Ok(());
        }
        Err(Refused::Busy)
    }

    /// Whether the queue admitted this request (it left its account's
    /// queue) though it was not told in time.
    fn was_admitted(&self) -> bool {
        let Stage::Queued { id, .. } = self.stage else {
            return false;
        };
        let state = self.queue.lock();
        state
            .accounts
            .get(&self.account)
            .is_none_or(|a| a.queue.iter().all(|w| w.id != id))
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let queue = Arc::clone(&self.queue);
        let mut state = queue.lock();
        let state = &mut *state;
        let Some(account) = state.accounts.get_mut(&self.account) else {
            return;
        };
        let released = match self.stage {
            Stage::Entered => {
                account.waiting -= 1;
                state.waiting -= 1;
                None
            }
            Stage::Queued { id, bytes } => {
                if let Some(at) = account.queue.iter().position(|w| w.id == id) {
                    account.queue.remove(at);
                    account.waiting -= 1;
                    state.waiting -= 1;
                    if account.queue.is_empty() {
                        if let Some(key) = account.key.take() {
                            state.ready.remove(&key);
                        }
                    }
                    None
                } else {
                    // Admitted as it gave up: its slot and bytes go back.
                    Some(bytes)
                }
            }
            Stage::Running { bytes } => Some(bytes),
        };
        if let Some(bytes) = released {
            account.running -= 1;
            state.slots_used -= 1;
            state.bytes_used -= bytes;
        }
        if account.waiting == 0 && account.running == 0 {
            state.accounts.remove(&self.account);
        }
        queue.dispatch(state);
    }
}

impl RenderQueue {
    /// Admits the next requests in the fair order while a slot is free and
    /// the next one's bytes fit.
    fn dispatch(&self, state: &mut State) {
        while state.slots_used < self.concurrency {
            let Some((&key, name)) = state.ready.first_key_value() else {
                return;
            };
            let name = Arc::clone(name);
            let Some(account) = state.accounts.get_mut(&name) else {
                state.ready.remove(&key);
                continue;
            };
            let Some(front) = account.queue.front() else {
                state.ready.remove(&key);
                account.key = None;
                continue;
            };
            if state.bytes_used + front.bytes > self.memory {
                return;
            }
            let Some(waiter) = account.queue.pop_front() else {
                return;
            };
            state.ready.remove(&key);
            state.admitted += 1;
            state.slots_used += 1;
            state.bytes_used += waiter.bytes;
            state.waiting -= 1;
            account.waiting -= 1;
            account.running += 1;
            account.last_admitted = state.admitted;
            account.key = None;
            if !account.queue.is_empty() {
                state.readied += 1;
                let key = (state.admitted, state.readied);
                account.key = Some(key);
                state.ready.insert(key, name);
            }
            // A request that went away meanwhile finds itself admitted
            // when its place is dropped, and gives the slot back then.
            let _ = waiter.wake.send(());
        }
    }

    /// Slots and bytes held now (for the tests).
    #[cfg(test)]
    fn used(&self) -> (usize, u64) {
        let state = self.lock();
        (state.slots_used, state.bytes_used)
    }
}

#[cfg(test)]
mod tests;
