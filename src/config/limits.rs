//! The connection limits of docs/decisions.md, "Serving limits", as configured (`server.*_timeout`,
//! `server.max_connections`, `server.min_upload_rate`, `server.memory_budget`);
//! `server::conn` enforces them.

use std::time::Duration;

/// The connection limits (docs/decisions.md, "Serving limits").
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub idle_timeout: Duration,
    pub shutdown_timeout: Duration,
    pub max_connections: usize,
    /// A download whose writes make no progress for this long is closed.
    pub stall_timeout: Duration,
    /// The most memory (bytes of peak RSS) the process may take; download
    /// buffers are sized from it (`service::download`).
    pub memory_budget: u64,
    /// Bytes per second a request body (an upload's) must average over
    /// `min_upload_window`; 0 turns the floor off.
    pub min_upload_rate: u64,
    /// The window `min_upload_rate` is averaged over: [`MIN_UPLOAD_WINDOW`]
    /// (not a config key; tests shorten it).
    pub min_upload_window: Duration,
}

/// The window a body's rate is averaged over: long enough that a slow
/// mobile link with pauses passes, short enough that a trickle is cut soon.
pub(crate) const MIN_UPLOAD_WINDOW: Duration = Duration::from_secs(30);

/// `server.memory_budget` when unset: 1 GiB, or half the machine's memory
/// (or of the control group's limit) when that is less.
pub(crate) fn default_memory_budget() -> u64 {
    const GIB: u64 = 1 << 30;
    machine_memory().map_or(GIB, |m| GIB.min(m / 2))
}

/// The memory this process may have: the machine's (`MemTotal`), or its
/// control group's limit (cgroup v2 `memory.max`) when lower. None where
/// neither can be read.
fn machine_memory() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let kib = m.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
        let kib: u64 = kib.trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kib * 1024)
    });
    let group = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|m| m.trim().parse::<u64>().ok());
    match (total, group) {
        (Some(t), Some(g)) => Some(t.min(g)),
        (t, g) => t.or(g),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_default_budget_is_at_most_a_gibibyte_and_half_the_machine() {
        let b = super::default_memory_budget();
        assert!(b <= 1 << 30, "{b}");
        if let Some(m) = super::machine_memory() {
            assert!(b <= m / 2, "{b} of {m}");
        }
        assert!(b > 0);
    }
}
