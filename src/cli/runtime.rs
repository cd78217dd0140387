//! The async runtimes of the binary. Clients get tokio's multi-thread
//! scheduler. `serve` gets it too, unless it is to run on one thread (a
//! node held to a CPU or less, `TOKIO_WORKER_THREADS=1`): then the
//! current-thread scheduler runs everything, the accept loop included, on
//! the thread that starts it. With one worker, the multi-thread scheduler
//! used two threads (the accept loop on the main one, the connections on
//! the worker) and paid its bookkeeping on every wake and park, which a
//! node held to a slice of a core feels (docs/decisions.md, "One thread,
//! one scheduler"). The count is handed to tokio, which so never reads the
//! variable itself (and never panics on it).

use crate::client::ClientError;
use tokio::runtime::{Builder, Runtime};

/// The number of runtime threads (tokio's name for it; the count is handed
/// to tokio, which so never reads it itself).
const THREADS_VAR: &str = "TOKIO_WORKER_THREADS";

/// The runtime of the client commands.
pub(crate) fn client() -> Result<Runtime, ClientError> {
    build(multi_thread(configured_threads()?))
}

/// The runtime of `serve`: on one thread, the current-thread scheduler.
pub(crate) fn serve() -> Result<Runtime, ClientError> {
    build(match configured_threads()? {
        1 => Builder::new_current_thread(),
        n => multi_thread(n),
    })
}

fn multi_thread(workers: usize) -> Builder {
    let mut builder = Builder::new_multi_thread();
    builder.worker_threads(workers);
    builder
}

/// [`threads`] from this process's environment and cores.
fn configured_threads() -> Result<usize, ClientError> {
    let set = match std::env::var(THREADS_VAR) {
        Ok(v) => Some(v),
        Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(v)) => Some(v.to_string_lossy().into_owned()),
    };
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    threads(set.as_deref(), cores)
}

fn build(mut builder: Builder) -> Result<Runtime, ClientError> {
    builder
        .enable_all()
        .build()
        .map_err(|e| ClientError::io("starting the async runtime", e))
}

/// How many threads a runtime runs on: `set` (`TOKIO_WORKER_THREADS`), else
/// one per core. A value that is no whole number of at least 1 (one that is
/// not Unicode comes here with its bytes replaced, and so is refused too)
/// is a usage error.
fn threads(set: Option<&str>, cores: usize) -> Result<usize, ClientError> {
    match set {
        None => Ok(cores.max(1)),
        Some(v) => match v.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(ClientError::usage(format!(
                "{THREADS_VAR} must be a whole number of at least 1, not {v:?}"
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::threads;

    #[test]
    fn the_variable_wins_over_the_cores_and_one_thread_is_one() {
        assert_eq!(threads(Some("1"), 8).unwrap(), 1);
        assert_eq!(threads(Some(" 3 "), 1).unwrap(), 3);
        assert_eq!(threads(None, 4).unwrap(), 4);
        assert_eq!(threads(None, 1).unwrap(), 1);
        assert_eq!(threads(None, 0).unwrap(), 1);
    }

    #[test]
    fn a_thread_count_that_is_not_one_or_more_is_a_usage_error() {
        for bad in ["0", "", "two", "-1", "1.5", "\u{fffd}"] {
            let e = threads(Some(bad), 2).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad:?}");
            assert!(e.message().contains("TOKIO_WORKER_THREADS"), "{bad:?}");
        }
    }
}
