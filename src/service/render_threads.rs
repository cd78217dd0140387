//! The threads renders run on: `images.concurrency` of them, started with
//! the server and kept for its life (named `filestore-render-N`).
//!
//! On tokio's blocking pool each render landed on whichever thread was
//! idle, and threads come and go there: jemalloc gives each new thread an
//! arena, and each arena keeps the pages a render freed for its decay
//! time, so a run of renders spread over the machine's arenas held far more
//! than the renders in flight (a full `benches/images.sh` run peaked at
//! 321 MiB). A few long-lived threads use a few arenas, and reuse what they
//! freed.

use std::panic::AssertUnwindSafe;
use std::sync::{mpsc, Arc, Mutex};

use crate::service::error::ServiceError;

type Job = Box<dyn FnOnce() + Send>;

/// A fixed set of threads running closures, one at a time each.
#[derive(Debug)]
pub(crate) struct RenderThreads {
    /// None when no thread could be started: work then goes to tokio's
    /// blocking pool, as before.
    jobs: Option<mpsc::Sender<Job>>,
}

impl RenderThreads {
    /// Starts `n` threads (at least 1). They end once this is dropped and
    /// their work is done.
    pub(crate) fn new(n: usize) -> RenderThreads {
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let mut started = 0;
        for i in 0..n.max(1) {
            let queue = Arc::clone(&queue);
            let spawned = std::thread::Builder::new()
                .name(format!("filestore-render-{i}"))
                .spawn(move || work(&queue));
            match spawned {
                Ok(_) => started += 1,
                Err(e) => tracing::warn!(error = %e, "a render thread could not start"),
            }
        }
        RenderThreads {
            jobs: (started > 0).then_some(jobs),
        }
    }

    /// Runs `f` on one of the threads and waits for its result; a panic in
    /// `f` is the server's failure (500), and the thread goes on.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ServiceError> {
        let Some(jobs) = &self.jobs else {
            return tokio::task::spawn_blocking(f)
                .await
                .map_err(|e| ServiceError::Internal(format!("render task: {e}")));
        };
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let result = std::panic::catch_unwind(AssertUnwindSafe(f));
            // The request may be gone: the result is dropped then.
            let _ = answer.send(result);
        });
        jobs.send(job)
            .map_err(|_| ServiceError::Internal("the render threads have ended".into()))?;
        match answered.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) => Err(ServiceError::Internal("a render panicked".into())),
            Err(_) => Err(ServiceError::Internal("a render thread ended".into())),
        }
    }
}

/// A thread's loop: the next job, until the sender is gone.
fn work(queue: &Mutex<mpsc::Receiver<Job>>) {
    loop {
        let job = {
            let Ok(queue) = queue.lock() else { return };
            match queue.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        job();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_runs_on_the_named_threads_and_a_panic_is_a_500() {
        let threads = RenderThreads::new(2);
        let name = threads
            .run(|| std::thread::current().name().map(str::to_owned))
            .await
            .unwrap()
            .unwrap();
        assert!(name.starts_with("filestore-render-"), "{name}");
        let panicked = threads.run(|| panic!("a render's bug")).await;
        assert!(
            matches!(panicked, Err(ServiceError::Internal(ref m)) if m.contains("panicked")),
            "{panicked:?}"
        );
        // The threads go on after it: ten more jobs, two at a time at most.
        let busy = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let runs = (0..10).map(|_| {
            let (busy, most) = (Arc::clone(&busy), Arc::clone(&most));
            threads.run(move || {
                use std::sync::atomic::Ordering::SeqCst;
                let now = busy.fetch_add(1, SeqCst) + 1;
                most.fetch_max(now, SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(20));
                busy.fetch_sub(1, SeqCst);
                7
            })
        });
        let results = futures_util::future::join_all(runs).await;
        assert!(results.into_iter().all(|r| r.unwrap() == 7));
        assert_eq!(most.load(std::sync::atomic::Ordering::SeqCst), 2);
    }
}
