//! Group commit: the requests for one key (an account's uploads, an API
//! key's rate window) that arrive while a batch of that key is in flight
//! wait, and go together as the next batch: one statement, one transaction,
//! one WAL flush for all of them. A request that finds none in flight goes
//! once the tasks already runnable have run (those of its key join it): it
//! waits for no timer and no request still to come, only for work already
//! at hand; under load, a key's requests stop queueing one by one on its
//! row.
//!
//! Groups may have a gate (`Groups::gated`): before each batch that has
//! room left is taken, a wait with a bound of its own for requests about
//! to join it (an account's commits wait for its uploads' early reads in
//! flight, `flights`).
//!
//! A batch runs in a task of its own (a request that gives up waiting does
//! not cancel the others' work; one whose caller has gone before its batch
//! is taken is left out), and a batch that panics fails its requests and
//! the ones queued behind it, never leaving a key stuck.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::oneshot;

/// A request waiting for its key's next batch, and where its outcome goes.
type Waiting<T, R> = (T, oneshot::Sender<R>);

/// A wait that ends on its own.
pub(crate) type Wait = Pin<Box<dyn Future<Output = ()> + Send>>;

/// What a key's next batch waits for before it is taken, for requests
/// about to join it: nothing (None), or a [`Wait`].
pub(crate) type Gate<K> = Box<dyn Fn(&K) -> Option<Wait> + Send + Sync>;

/// The keys with a batch in flight, and what waits behind each.
pub(crate) struct Groups<K, T, R> {
    queues: Mutex<HashMap<K, Vec<Waiting<T, R>>>>,
    /// The most requests in one batch.
    max: usize,
    gate: Option<Gate<K>>,
}

impl<K, T, R> Groups<K, T, R>
where
    K: Eq + Hash + Clone + Send + 'static,
    T: Send + 'static,
    R: Send + 'static,
{
    /// Batches of at most `max` requests (at least 1).
    pub(crate) fn new(max: usize) -> Self {
        Groups {
            queues: Mutex::default(),
            max: max.max(1),
            gate: None,
        }
    }

    /// Batches of at most `max` requests, each taken once `gate` lets it.
    pub(crate) fn gated(max: usize, gate: Gate<K>) -> Self {
        Groups {
            gate: Some(gate),
            ..Groups::new(max)
        }
    }

    /// Runs `item` in the next batch of `key`; `run` takes a batch and gives
    /// one outcome per request, in order. None: the batch failed without
    /// an outcome (its task panicked).
    pub(crate) async fn submit<F, Fut>(self: &Arc<Self>, key: K, item: T, run: F) -> Option<R>
    where
        F: Fn(K, Vec<T>) -> Fut + Send + 'static,
        Fut: Future<Output = Vec<R>> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let lead = {
            let mut queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(waiting) = queues.get_mut(&key) {
                waiting.push((item, tx));
                false
            } else {
                queues.insert(key.clone(), vec![(item, tx)]);
                true
            }
        };
        if lead {
            // Made before the task: a task dropped before it ever runs (at
            // shutdown) frees the key too.
            let guard = Release {
                groups: Arc::clone(self),
                key: Some(key.clone()),
            };
            tokio::spawn(Arc::clone(self).drain(key, run, guard));
        }
        rx.await.ok()
    }

    /// Runs the batches of `key` until none waits.
    async fn drain<F, Fut>(self: Arc<Self>, key: K, run: F, mut guard: Release<K, T, R>)
    where
        F: Fn(K, Vec<T>) -> Fut + Send + 'static,
        Fut: Future<Output = Vec<R>> + Send + 'static,
    {
        // The tasks already runnable go first (the I/O driver is polled
        // too): those that ask for this key join its first batch, which so
        // waits for no timer and nothing else but its gate, if any. (Its
        // later batches form behind the statement in flight.)
        tokio::task::yield_now().await;
        loop {
            let waiting = self.waiting(&key);
            if waiting == 0 {
                break;
            }
            let gated = self.gate.as_ref().filter(|_| waiting < self.max);
            if let Some(wait) = gated.and_then(|gate| gate(&key)) {
                wait.await;
                // The requests it let on go first, and join (on several
                // runtime threads, those not yet run by then go next).
                tokio::task::yield_now().await;
            }
            let batch = {
                let mut queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
                // Only this task forgets the key while it runs.
                let Some(waiting) = queues.get_mut(&key) else {
                    break;
                };
                // Callers may have gone during the gate's wait.
                waiting.retain(|(_, sender)| !sender.is_closed());
                let n = waiting.len().min(self.max);
                waiting.drain(..n).collect::<Vec<_>>()
            };
            if batch.is_empty() {
                continue;
            }
            let (items, senders): (Vec<T>, Vec<oneshot::Sender<R>>) = batch.into_iter().unzip();
            let outcomes = run(key.clone(), items).await;
            // A missing outcome drops its sender: that request gets None.
            for (sender, outcome) in senders.into_iter().zip(outcomes) {
                let _ = sender.send(outcome);
            }
        }
        guard.key = None;
    }

    /// How many requests of `key` wait (one whose caller has gone is
    /// dropped); when none does, the key is forgotten, and the next
    /// request leads.
    fn waiting(&self, key: &K) -> usize {
        let mut queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(waiting) = queues.get_mut(key) else {
            return 0;
        };
        waiting.retain(|(_, sender)| !sender.is_closed());
        let n = waiting.len();
        if n == 0 {
            queues.remove(key);
        }
        n
    }
}

/// Forgets the queue of a key whose batches stopped by a panic: what waits
/// there is dropped (its requests get None), and the next request leads.
struct Release<K: Eq + Hash, T, R> {
    groups: Arc<Groups<K, T, R>>,
    key: Option<K>,
}

impl<K: Eq + Hash, T, R> Drop for Release<K, T, R> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let mut queues = self
                .groups
                .queues
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            queues.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn one_request_alone_runs_at_once_in_a_batch_of_one() {
        let groups = Arc::new(Groups::<u8, u32, u32>::new(8));
        let out = groups
            .submit(1, 5, |_, items: Vec<u32>| async move {
                assert_eq!(items, vec![5]);
                items.into_iter().map(|i| i * 2).collect()
            })
            .await;
        assert_eq!(out, Some(10));
        assert!(groups.queues.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn requests_behind_a_batch_in_flight_go_together_in_order() {
        let groups = Arc::new(Groups::<u8, u32, u32>::new(4));
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let run = {
            let sizes = Arc::clone(&sizes);
            move |_, items: Vec<u32>| {
                let sizes = Arc::clone(&sizes);
                async move {
                    sizes.lock().unwrap().push(items.len());
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    items.into_iter().map(|i| i + 100).collect::<Vec<_>>()
                }
            }
        };
        let mut tasks = Vec::new();
        for i in 0..9u32 {
            let (g, run) = (Arc::clone(&groups), run.clone());
            tasks.push(tokio::spawn(async move { g.submit(7, i, run).await }));
            if i == 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        for (i, t) in tasks.into_iter().enumerate() {
            assert_eq!(t.await.unwrap(), Some(u32::try_from(i).unwrap() + 100));
        }
        // The first alone; the 8 that came behind it in batches of at most 4.
        assert_eq!(*sizes.lock().unwrap(), vec![1, 4, 4]);
        assert!(groups.queues.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn keys_do_not_wait_for_each_other() {
        let groups = Arc::new(Groups::<u8, u32, u32>::new(4));
        let slow = {
            let g = Arc::clone(&groups);
            tokio::spawn(async move {
                g.submit(1, 1, |_, items: Vec<u32>| async move {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    items
                })
                .await
            })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        let fast = tokio::time::timeout(
            Duration::from_secs(2),
            groups.submit(2, 3, |_, items: Vec<u32>| async move { items }),
        )
        .await;
        assert_eq!(fast.unwrap(), Some(3));
        slow.abort();
    }

    #[tokio::test]
    async fn a_batch_that_panics_fails_its_requests_and_frees_the_key() {
        let groups = Arc::new(Groups::<u8, u32, u32>::new(4));
        let calls = Arc::new(AtomicUsize::new(0));
        let run = {
            let calls = Arc::clone(&calls);
            move |_, items: Vec<u32>| {
                let calls = Arc::clone(&calls);
                async move {
                    assert!(
                        calls.fetch_add(1, Ordering::SeqCst) != 0,
                        "the first batch fails"
                    );
                    items
                }
            }
        };
        assert_eq!(groups.submit(1, 1, run.clone()).await, None);
        assert_eq!(groups.submit(1, 2, run).await, Some(2));
    }

    #[tokio::test]
    async fn a_request_whose_caller_has_gone_is_left_out() {
        let groups = Arc::new(Groups::<u8, u32, u32>::new(8));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let run = {
            let seen = Arc::clone(&seen);
            move |_, items: Vec<u32>| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.lock().unwrap().extend(items.iter().copied());
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    items
                }
            }
        };
        let first = {
            let (g, run) = (Arc::clone(&groups), run.clone());
            tokio::spawn(async move { g.submit(1, 1, run).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        // Queued behind the first, then given up on.
        let gone =
            tokio::time::timeout(Duration::from_millis(10), groups.submit(1, 2, run.clone())).await;
        assert!(gone.is_err());
        let kept = groups.submit(1, 3, run).await;
        assert_eq!((first.await.unwrap(), kept), (Some(1), Some(3)));
        assert_eq!(*seen.lock().unwrap(), vec![1, 3]);
    }

    /// A gated key's batch goes once its gate lets it, with the requests
    /// that came meanwhile and one that the gate's opening let on; the
    /// gate is asked before each batch, and not once none waits.
    #[tokio::test(start_paused = true)]
    async fn a_gated_batch_takes_the_requests_that_came_during_its_wait() {
        let open = Arc::new(tokio::sync::Semaphore::new(0));
        let asked = Arc::new(AtomicUsize::new(0));
        let gate: Gate<u8> = {
            let (open, asked) = (Arc::clone(&open), Arc::clone(&asked));
            // Only the first batch finds something to wait for.
            Box::new(move |_| {
                let first = asked.fetch_add(1, Ordering::SeqCst) == 0;
                let open = Arc::clone(&open);
                first.then(|| -> Wait {
                    Box::pin(async move {
                        open.acquire().await.unwrap().forget();
                    })
                })
            })
        };
        let groups = Arc::new(Groups::<u8, u32, u32>::gated(8, gate));
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let run = {
            let sizes = Arc::clone(&sizes);
            move |_, items: Vec<u32>| {
                sizes.lock().unwrap().push(items.len());
                async move { items }
            }
        };
        let submit = |i: u32| {
            let (g, run) = (Arc::clone(&groups), run.clone());
            async move { g.submit(1, i, run).await }
        };
        let mut tasks = Vec::new();
        for i in 0..3u32 {
            tasks.push(tokio::spawn(submit(i)));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Woken with the gate's opening, as an upload whose early read
        // lands is: it asks after the gate let the batch on.
        let landed = Arc::new(tokio::sync::Notify::new());
        tasks.push(tokio::spawn({
            let (landed, submit) = (Arc::clone(&landed), submit(3));
            async move {
                landed.notified().await;
                submit.await
            }
        }));
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            sizes.lock().unwrap().is_empty(),
            "nothing goes before the gate"
        );
        open.add_permits(1);
        landed.notify_one();
        for (i, t) in tasks.into_iter().enumerate() {
            assert_eq!(t.await.unwrap(), Some(u32::try_from(i).unwrap()));
        }
        assert_eq!(*sizes.lock().unwrap(), vec![4]);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert!(groups.queues.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_short_answer_leaves_the_rest_without_an_outcome() {
        let groups = Arc::new(Groups::<u8, u32, u32>::new(4));
        let out = groups
            .submit(1, 1, |_, _items: Vec<u32>| async move { Vec::new() })
            .await;
        assert_eq!(out, None);
    }

    /// Requests of tasks already runnable when a key's batch is about to
    /// go join it, although the batch's task was spawned ahead of them
    /// (tokio runs a task just spawned first, from its LIFO slot).
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn runnable_requests_join_the_batch_about_to_go() {
        let groups = Arc::new(Groups::<u8, u32, u32>::new(16));
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let parent = {
            let (groups, sizes) = (Arc::clone(&groups), Arc::clone(&sizes));
            tokio::spawn(async move {
                let mut children = Vec::new();
                for i in 0..5 {
                    let (g, sizes) = (Arc::clone(&groups), Arc::clone(&sizes));
                    children.push(tokio::spawn(async move {
                        g.submit(1, i, move |_, items: Vec<u32>| {
                            sizes.lock().unwrap().push(items.len());
                            async move { items }
                        })
                        .await
                    }));
                }
                let mut out = Vec::new();
                for c in children {
                    out.push(c.await.unwrap());
                }
                out
            })
        };
        let mut out = parent.await.unwrap();
        out.sort_unstable();
        assert_eq!(out, (0..5).map(Some).collect::<Vec<_>>());
        assert_eq!(*sizes.lock().unwrap(), vec![5]);
    }
}
