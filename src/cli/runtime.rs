//! The async runtimes of the binary. Clients get tokio's multi-thread
//! scheduler. `serve` gets it too, unless it is to run on one thread (a
//! node held to a CPU or less, `TOKIO_WORKER_THREADS=1`): then the
//! current-thread scheduler runs everything on the thread that starts it.
//! That is the same one thread without the multi-thread scheduler's
//! bookkeeping, which a node held to a slice of a core pays each time it
//! goes idle and wakes (docs/decisions.md, "One thread, one scheduler").

use crate::client::ClientError;
use tokio::runtime::{Builder, Runtime};

/// The variable tokio reads for its number of worker threads.
const THREADS_VAR: &str = "TOKIO_WORKER_THREADS";

/// The runtime of the client commands.
pub(crate) fn client() -> Result<Runtime, ClientError> {
    configured_threads()?;
    build(Builder::new_multi_thread())
}

/// The runtime of `serve`: on one thread, the current-thread scheduler.
pub(crate) fn serve() -> Result<Runtime, ClientError> {
    build(if configured_threads()? == 1 {
        Builder::new_current_thread()
    } else {
        Builder::new_multi_thread()
    })
}

/// [`threads`] from this process's environment and cores.
fn configured_threads() -> Result<usize, ClientError> {
    let set = std::env::var(THREADS_VAR).ok();
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    threads(set.as_deref(), cores)
}

fn build(mut builder: Builder) -> Result<Runtime, ClientError> {
    builder
        .enable_all()
        .build()
        .map_err(|e| ClientError::io("starting the async runtime", e))
}

/// How many threads the server runs on: `set` (`TOKIO_WORKER_THREADS`, which
/// tokio's multi-thread scheduler reads too), else one per core. A value
/// that is no whole number of at least 1 is refused, as a usage error
/// (tokio would panic on it).
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
        for bad in ["0", "", "two", "-1", "1.5"] {
            let e = threads(Some(bad), 2).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad:?}");
            assert!(e.message().contains("TOKIO_WORKER_THREADS"), "{bad:?}");
        }
    }
}
